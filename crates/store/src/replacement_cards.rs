//! Replacement cards (digest 003-C §16 CW-18): a check from the user's words is in force and a
//! different number was said later. The card asks which stands; it is open until pressed once,
//! withdrawn when the new number is, or reposted when it is said again. Which of those happens
//! is the caller's (collab's `checks::replacement`); the database keeps one open card per job
//! and dimension and one answer per card.

use crate::{Result, StoreError, Tx, args};
use troupe_core::words_check::Dimension;
use troupe_core::{CheckId, PlanId, SessionMessageId};

/// A `replacement_cards` row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplacementCard {
    pub id: i64,
    pub plan_id: PlanId,
    pub dimension: Dimension,
    pub in_force_check_id: CheckId,
    pub offer_check_id: CheckId,
    /// How many times the new number had been said when the card went up.
    pub said_count: u32,
    pub message_id: SessionMessageId,
    /// `open`, `answered`, `withdrawn` or `reposted`.
    pub state: String,
    /// `use_new`, `change` or `keep_old` once answered.
    pub answer: Option<String>,
    pub created_at: i64,
    pub closed_at: Option<i64>,
}

const COLUMNS: &str = "id, plan_id, dimension, in_force_check_id, offer_check_id, said_count, \
    message_id, state, answer, created_at, closed_at";

fn from_row(r: &crate::Row) -> Result<ReplacementCard> {
    let dimension: String = r.get(2)?;
    Ok(ReplacementCard {
        id: r.get(0)?,
        plan_id: PlanId(r.get(1)?),
        dimension: Dimension::parse(&dimension)
            .map_err(|e| StoreError::Corrupt(format!("replacement card: {e}")))?,
        in_force_check_id: CheckId(r.get(3)?),
        offer_check_id: CheckId(r.get(4)?),
        said_count: u32::try_from(r.get::<i64>(5)?).unwrap_or(u32::MAX),
        message_id: SessionMessageId(r.get(6)?),
        state: r.get(7)?,
        answer: r.get(8)?,
        created_at: r.get(9)?,
        closed_at: r.get(10)?,
    })
}

/// A card to record, on the line just posted.
#[derive(Clone, Debug)]
pub struct NewReplacementCard {
    pub plan_id: PlanId,
    pub dimension: Dimension,
    pub in_force_check_id: CheckId,
    pub offer_check_id: CheckId,
    pub said_count: u32,
    pub message_id: SessionMessageId,
}

impl Tx<'_> {
    pub fn create_replacement_card(&mut self, c: &NewReplacementCard) -> Result<ReplacementCard> {
        let id = self.insert(
            "INSERT INTO replacement_cards (plan_id, dimension, in_force_check_id,
                 offer_check_id, said_count, message_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            args![
                c.plan_id.0,
                c.dimension.as_str(),
                c.in_force_check_id.0,
                c.offer_check_id.0,
                i64::from(c.said_count),
                c.message_id.0,
                self.now
            ],
        )?;
        self.replacement_card(id)
    }

    pub fn replacement_card(&self, id: i64) -> Result<ReplacementCard> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM replacement_cards WHERE id = ?1"),
            args![id],
            from_row,
        )?
        .ok_or_else(|| StoreError::not_found("replacement card", id))
    }

    /// The card posted on `line`, if it is one.
    pub fn replacement_card_on_line(
        &self,
        line: SessionMessageId,
    ) -> Result<Option<ReplacementCard>> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM replacement_cards WHERE message_id = ?1"),
            args![line.0],
            from_row,
        )
    }

    /// The job's latest card of each dimension, whatever its state.
    pub fn latest_replacement_cards(&self, plan: PlanId) -> Result<Vec<ReplacementCard>> {
        self.query_all(
            &format!(
                "SELECT {COLUMNS} FROM replacement_cards WHERE id IN
                     (SELECT MAX(id) FROM replacement_cards WHERE plan_id = ?1 GROUP BY dimension)
                 ORDER BY dimension"
            ),
            args![plan.0],
            from_row,
        )
    }

    /// Close an open card: `answered` with its answer, or `withdrawn` / `reposted` with none.
    /// False when it was no longer open (one press per card).
    pub fn close_replacement_card(
        &mut self,
        id: i64,
        state: &str,
        answer: Option<&str>,
    ) -> Result<bool> {
        let n = self.exec(
            "UPDATE replacement_cards SET state = ?2, answer = ?3, closed_at = ?4
             WHERE id = ?1 AND state = 'open'",
            args![id, state, answer, self.now],
        )?;
        Ok(n == 1)
    }
}
