//! Capability ceiling (digest 003-B §7): why each failed hand-over failed
//! (`handover_failures`, once per hand-over) and the cards that asked the user how a stuck part
//! or whole ticket goes on (`ceiling_cards`). Counting is `troupe_core::ceiling`'s.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use troupe_core::ceiling::{CardOption, Case, FailureKind};
use troupe_core::ids::RequirementId;
use troupe_core::{PartId, PlanId, SessionMessageId, SubmissionId, TicketId};

/// Why one hand-over failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandOverFailure {
    pub submission_id: SubmissionId,
    pub kind: FailureKind,
    pub requirements: Vec<String>,
    pub at: i64,
}

/// Where a ceiling card stands.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CardState {
    Open,
    Answered,
    Closed,
}

impl CardState {
    pub fn as_str(self) -> &'static str {
        match self {
            CardState::Open => "open",
            CardState::Answered => "answered",
            CardState::Closed => "closed",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        match s {
            "open" => Ok(CardState::Open),
            "answered" => Ok(CardState::Answered),
            "closed" => Ok(CardState::Closed),
            other => Err(StoreError::Corrupt(format!("ceiling card state '{other}'"))),
        }
    }
}

/// A `ceiling_cards` row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CeilingCard {
    pub id: i64,
    pub plan_id: PlanId,
    pub ticket_id: TicketId,
    /// None: the whole ticket.
    pub part_id: Option<PartId>,
    pub case: Case,
    /// The hand-over that tipped it.
    pub submission_id: SubmissionId,
    pub message_id: Option<SessionMessageId>,
    pub state: CardState,
    pub answer: Option<CardOption>,
    pub relaxed_requirement_id: Option<RequirementId>,
    pub closed_reason: Option<String>,
    pub created_at: i64,
    pub decided_at: Option<i64>,
}

/// A card to record.
#[derive(Clone, Debug)]
pub struct NewCeilingCard {
    pub plan_id: PlanId,
    pub ticket_id: TicketId,
    pub part_id: Option<PartId>,
    pub case: Case,
    pub submission_id: SubmissionId,
}

const COLUMNS: &str = "id, plan_id, ticket_id, part_id, case_kind, requirement, submission_id, \
    message_id, state, answer, relaxed_requirement_id, closed_reason, created_at, decided_at";

fn corrupt(e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("ceiling card: {e}"))
}

fn card_from_row(r: &crate::Row) -> Result<CeilingCard> {
    let case: String = r.get(4)?;
    let requirement: Option<String> = r.get(5)?;
    Ok(CeilingCard {
        id: r.get(0)?,
        plan_id: PlanId(r.get(1)?),
        ticket_id: TicketId(r.get(2)?),
        part_id: r.get::<Option<i64>>(3)?.map(PartId),
        case: Case::parse(&case, requirement.as_deref()).map_err(corrupt)?,
        submission_id: SubmissionId(r.get(6)?),
        message_id: r.get::<Option<i64>>(7)?.map(SessionMessageId),
        state: CardState::parse(&r.get::<String>(8)?)?,
        answer: r
            .get::<Option<String>>(9)?
            .map(|a| CardOption::parse(&a).map_err(corrupt))
            .transpose()?,
        relaxed_requirement_id: r.get::<Option<i64>>(10)?.map(RequirementId),
        closed_reason: r.get(11)?,
        created_at: r.get(12)?,
        decided_at: r.get(13)?,
    })
}

impl Tx<'_> {
    /// Record why `sub` failed; a hand-over fails once (a second reason is not counted
    /// again). Answers whether this was its first.
    pub fn record_handover_failure(
        &mut self,
        sub: SubmissionId,
        kind: FailureKind,
        requirements: &[String],
    ) -> Result<bool> {
        let s = self.submission(sub)?;
        let reqs = serde_json::to_string(requirements).map_err(corrupt)?;
        let n = self.exec(
            "INSERT INTO handover_failures (submission_id, ticket_id, kind, requirements, at)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
            args![sub.0, s.ticket_id.0, kind.as_str(), reqs, self.now],
        )?;
        Ok(n == 1)
    }

    /// Why the ticket's hand-overs failed, by hand-over.
    pub fn handover_failures(&self, ticket: TicketId) -> Result<Vec<HandOverFailure>> {
        self.query_all(
            "SELECT submission_id, kind, requirements, at FROM handover_failures
             WHERE ticket_id = ?1 ORDER BY submission_id",
            args![ticket.0],
            |r| {
                let reqs: String = r.get(2)?;
                Ok(HandOverFailure {
                    submission_id: SubmissionId(r.get(0)?),
                    kind: FailureKind::parse(&r.get::<String>(1)?).map_err(corrupt)?,
                    requirements: serde_json::from_str(&reqs).map_err(corrupt)?,
                    at: r.get(3)?,
                })
            },
        )
    }

    /// Record a card, open, with no line yet.
    pub fn create_ceiling_card(&mut self, c: &NewCeilingCard) -> Result<CeilingCard> {
        let id = self.insert(
            "INSERT INTO ceiling_cards (plan_id, ticket_id, part_id, case_kind, requirement,
                 submission_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            args![
                c.plan_id.0,
                c.ticket_id.0,
                c.part_id.map(|p| p.0),
                c.case.as_str(),
                c.case.requirement(),
                c.submission_id.0,
                self.now
            ],
        )?;
        self.ceiling_card(id)
    }

    pub fn ceiling_card(&self, id: i64) -> Result<CeilingCard> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM ceiling_cards WHERE id = ?1"),
            args![id],
            card_from_row,
        )?
        .ok_or_else(|| StoreError::not_found("ceiling card", id))
    }

    /// The card posted on `line`, if it is one.
    pub fn ceiling_card_on_line(&self, line: SessionMessageId) -> Result<Option<CeilingCard>> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM ceiling_cards WHERE message_id = ?1"),
            args![line.0],
            card_from_row,
        )
    }

    /// The ticket's cards, oldest first.
    pub fn ceiling_cards_of_ticket(&self, ticket: TicketId) -> Result<Vec<CeilingCard>> {
        self.query_all(
            &format!("SELECT {COLUMNS} FROM ceiling_cards WHERE ticket_id = ?1 ORDER BY id"),
            args![ticket.0],
            card_from_row,
        )
    }

    /// Whether anything of the ticket (a part, or the whole) waits on an open card: the ball
    /// is then the user's.
    pub fn ticket_at_ceiling(&self, ticket: TicketId) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT id FROM ceiling_cards WHERE ticket_id = ?1 AND state = 'open' LIMIT 1",
                args![ticket.0],
                |r| r.get::<i64>(0),
            )?
            .is_some())
    }

    pub fn set_ceiling_card_line(&mut self, id: i64, line: SessionMessageId) -> Result<()> {
        self.exec(
            "UPDATE ceiling_cards SET message_id = ?2 WHERE id = ?1",
            args![id, line.0],
        )?;
        Ok(())
    }

    /// Answer an open card; answers false when it was no longer open (answered or closed
    /// meanwhile), writing nothing.
    pub fn answer_ceiling_card(
        &mut self,
        id: i64,
        answer: CardOption,
        relaxed: Option<RequirementId>,
    ) -> Result<bool> {
        let n = self.exec(
            "UPDATE ceiling_cards SET state = 'answered', answer = ?2,
                 relaxed_requirement_id = ?3, decided_at = ?4
             WHERE id = ?1 AND state = 'open'",
            args![id, answer.as_str(), relaxed.map(|r| r.0), self.now],
        )?;
        Ok(n == 1)
    }

    /// Close the ticket's open cards (it closed another way), each with `why`; answers those
    /// closed.
    pub fn close_ceiling_cards(&mut self, ticket: TicketId, why: &str) -> Result<Vec<CeilingCard>> {
        let open: Vec<CeilingCard> = self
            .ceiling_cards_of_ticket(ticket)?
            .into_iter()
            .filter(|c| c.state == CardState::Open)
            .collect();
        for c in &open {
            self.exec(
                "UPDATE ceiling_cards SET state = 'closed', closed_reason = ?2, decided_at = ?3
                 WHERE id = ?1 AND state = 'open'",
                args![c.id, why, self.now],
            )?;
        }
        Ok(open)
    }
}
