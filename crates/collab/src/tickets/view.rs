//! How tickets are shown (T14, T19): the stage label with parts passed, "Dropped: <reason>"
//! or "Parked", what a ticket waits for, who has its ball (C §13), and the job's counter
//! "N open · M in all · K dropped/set aside".

use super::ball::JobBall;
use super::folders::folder_name;
use super::graph::nodes;
use super::who::{BotShareView, JobPeople, TurnsRun};
use serde::Serialize;
use troupe_core::ball::Ball;
use troupe_core::ticket::{PartStage, StageSource, TicketStage, TicketStatus, waits_for};
use troupe_core::{BotId, PlanId, TicketId};
use troupe_store::{PartRecord, StoreError, TicketRecord, Tx};

/// T14: open tickets (neither approved, dropped nor set aside), all tickets but the dropped
/// and set-aside ones, and those.
pub fn counter(open: usize, all: usize, dropped: usize) -> String {
    let mut out = format!("{open} open · {all} in all");
    if dropped > 0 {
        out.push_str(&format!(" · {dropped} dropped/set aside"));
    }
    out
}

/// T14 over a job's tickets.
pub fn counter_of(tickets: &[TicketRecord]) -> (usize, usize, usize, String) {
    let dropped = tickets
        .iter()
        .filter(|t| t.stage == TicketStage::Dropped)
        .count();
    let all = tickets.len() - dropped;
    let open = tickets
        .iter()
        .filter(|t| !matches!(t.stage, TicketStage::Dropped | TicketStage::Approved))
        .count();
    (open, all, dropped, counter(open, all, dropped))
}

/// Whether a dropped ticket was set aside by the user (no reason) rather than dropped by the
/// lead (Q4).
pub fn set_aside(t: &TicketRecord) -> bool {
    t.stage == TicketStage::Dropped && t.drop_reason.as_deref().is_none_or(|r| r.trim().is_empty())
}

/// T19's label: the stage's word, with the parts approved when it has parts ("In review ·
/// 11/12 approved"); a lead's drop is "Dropped", a set-aside ticket "Parked".
pub fn label(t: &TicketRecord, parts: &[PartRecord]) -> String {
    let word = match t.stage {
        TicketStage::ToDo => "To do",
        TicketStage::InProgress => "In progress",
        TicketStage::Submitted => "Submitted",
        TicketStage::InReview => "In review",
        TicketStage::Rework => "Rework",
        TicketStage::Approved => "Approved",
        TicketStage::Dropped if set_aside(t) => "Parked",
        TicketStage::Dropped => "Dropped",
    };
    if parts.is_empty() || t.stage == TicketStage::Dropped {
        return word.to_string();
    }
    let passed = parts
        .iter()
        .filter(|p| p.stage == PartStage::Approved)
        .count();
    format!("{word} · {passed}/{} approved", parts.len())
}

/// One ticket as the API shows it (B §1.1).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct TicketView {
    pub id: TicketId,
    /// The job.
    pub task_id: PlanId,
    /// Shown `#NN`.
    pub number: i64,
    pub key: Option<String>,
    pub title: String,
    pub description: String,
    pub done_when: String,
    pub stage: TicketStage,
    pub status: TicketStatus,
    /// Who moved the stage last.
    pub stage_source: Option<StageSource>,
    /// None on a dropped or set-aside ticket (T19: it shows nobody).
    pub owner_bot_id: Option<BotId>,
    pub reviewer_bot_id: Option<BotId>,
    /// Who made the approved version ("By X").
    pub approved_by_bot_id: Option<BotId>,
    pub depends_on: Vec<TicketId>,
    pub is_sample: bool,
    /// The lead's reason; none when the user set it aside.
    pub drop_reason: Option<String>,
    /// "Dropped: <reason>" under a lead's drop.
    pub drop_line: Option<String>,
    /// T19: "In review · 2/3 approved", "Dropped", "Parked", …
    pub label: String,
    /// Its folder's name under the job's folder (`01-Poster`).
    pub folder: String,
    /// Handed over at least once (T17).
    pub through: bool,
    /// T19: "Waits for #01 to be handed over", "Waits for sample #02 to be handed over".
    pub waits_for: Vec<String>,
    /// Who it waits on now (C §13, BH-7); null in a parked, done or dormant job and on an
    /// approved, dropped or parked ticket.
    pub ball: Option<Ball>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub parts: Vec<PartRecord>,
    /// The Bots that ran its turns, most first (ADR 0086: "who actually ran it").
    pub ran_by: Vec<TurnsRun>,
    /// "Actually: X" (its owner ran none of it) or "Also X" (another Bot ran it too and it has
    /// no reviewer); none on a dropped or set-aside ticket.
    pub ran_line: Option<String>,
    /// "Make X the reviewer": with no reviewer, a Bot of the job's conversation that is not its
    /// owner and ran at least five of its turns. Shown only; never applied by itself.
    pub reviewer_suggestion: Option<BotId>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A job's tickets with the counter (T14).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct TicketList {
    pub task_id: PlanId,
    /// "3 open · 3 in all · 2 dropped/set aside"
    pub counter: String,
    pub open: usize,
    pub all: usize,
    pub dropped: usize,
    pub tickets: Vec<TicketView>,
    /// Who does what in this job: each Bot's tickets owned and reviewed and the turns it ran,
    /// the job conversation's Bots first.
    pub who_does_what: Vec<BotShareView>,
    /// "N need you": the job's failed checks, blocked progress and requirements waiting for
    /// the person's word.
    pub need_you: super::need_you::NeedYou,
    /// The job's size facts (LJ1–LJ5): large or not, by whom, the evidence, "No need", laid
    /// out, the sample, delivered.
    pub large: troupe_store::PlanDeliverables,
}

/// The views of `tickets` (all of one job, `all` being the job's every ticket).
pub(crate) fn views(
    tx: &Tx<'_>,
    plan: PlanId,
    all: &[TicketRecord],
    tickets: &[TicketRecord],
    people: &mut JobPeople,
) -> Result<Vec<TicketView>, StoreError> {
    let graph = nodes(all);
    let sample = tx.plan_deliverables(plan)?.sample_ticket_id;
    let mut job = JobBall::read(tx, plan)?;
    let mut out = Vec::with_capacity(tickets.len());
    for t in tickets {
        let parts = tx.parts_of_ticket(t.id)?;
        let ran = people.ticket(tx, t)?;
        let dropped = t.stage == TicketStage::Dropped;
        out.push(TicketView {
            id: t.id,
            task_id: t.plan_id,
            number: t.number,
            key: t.key.clone(),
            title: t.title.clone(),
            description: t.description.clone(),
            done_when: t.done_when.clone(),
            stage: t.stage,
            status: t.status,
            stage_source: t.stage_source,
            owner_bot_id: if dropped { None } else { t.owner_bot_id },
            reviewer_bot_id: t.reviewer_bot_id,
            approved_by_bot_id: t.approved_by_bot_id,
            depends_on: t.depends_on.clone(),
            is_sample: t.is_sample,
            drop_reason: t.drop_reason.clone(),
            drop_line: (dropped && !set_aside(t)).then(|| {
                format!(
                    "Dropped: {}",
                    t.drop_reason.as_deref().unwrap_or_default().trim()
                )
            }),
            label: label(t, &parts),
            folder: folder_name(t),
            through: t.handed_over_once,
            waits_for: waits_for(&graph, sample, t.id)
                .iter()
                .map(|w| w.text())
                .collect(),
            ball: job.ball(t)?,
            parts,
            ran_by: ran.ran_by,
            ran_line: ran.ran_line,
            reviewer_suggestion: ran.reviewer_suggestion,
            created_at: t.created_at,
            updated_at: t.updated_at,
        });
    }
    Ok(out)
}

pub fn list(tx: &Tx<'_>, plan: PlanId) -> Result<TicketList, StoreError> {
    tx.plan(plan)?;
    let all = tx.tickets_of_plan(plan)?;
    let (open, in_all, dropped, text) = counter_of(&all);
    let mut people = JobPeople::read(tx, plan)?;
    Ok(TicketList {
        task_id: plan,
        counter: text,
        open,
        all: in_all,
        dropped,
        tickets: views(tx, plan, &all, &all, &mut people)?,
        who_does_what: people.shares(tx, &all)?,
        need_you: super::need_you::read(tx, plan, &all)?,
        large: tx.plan_deliverables(plan)?,
    })
}

pub fn one(tx: &Tx<'_>, ticket: TicketId) -> Result<TicketView, StoreError> {
    let t = tx.ticket(ticket)?;
    let all = tx.tickets_of_plan(t.plan_id)?;
    let mut people = JobPeople::read(tx, t.plan_id)?;
    Ok(views(tx, t.plan_id, &all, &[t], &mut people)?.remove(0))
}

#[cfg(test)]
mod tests {
    use super::counter;

    #[test]
    fn t14_counter_omits_zero_dropped() {
        assert_eq!(counter(3, 3, 2), "3 open · 3 in all · 2 dropped/set aside");
        assert_eq!(counter(1, 4, 0), "1 open · 4 in all");
    }
}
