//! The ball of a ticket read from the records (digest C §13): the facts
//! `troupe_core::ball` derives the holder from, the plan lead of §13 (derived on every read,
//! never written — BH-1), and where to wake a holder with no work item (BH-3) or tell the
//! user (BH-4). Nothing here writes.

use super::graph::node;
use crate::checks::{lexical, plan_workspace};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use troupe_core::ball::{
    Ball, BallFacts, BotFacts, HandOver, RequestFacts, ball_holder, first_able,
};
use troupe_core::conversation::SessionKind;
use troupe_core::delegation::{DelegationState, Expects};
use troupe_core::hold::{Hold, TurnFacts, covers};
use troupe_core::plan::{PlanStatus, RevisionCause};
use troupe_core::submission::{CheckSource, SubmissionState};
use troupe_core::ticket::TicketStage;
use troupe_core::work_item::WorkState;
use troupe_core::{BotId, PlanId, SessionId, ThreadId, WorkItemId};
use troupe_store::{
    CheckKind, CheckRecord, DelegationRecord, PlanRecord, RunOutcome, StoreError, SubmissionRecord,
    TicketRecord, Tx, WorkItemRecord,
};

/// The job's conversations (BH-2): its home, then those the user spoke about it in, the
/// latest first.
fn job_places(tx: &Tx<'_>, plan: &PlanRecord) -> Result<Vec<SessionId>, StoreError> {
    let mut out: Vec<SessionId> = plan.home_session_id.into_iter().collect();
    for s in tx.sessions_user_spoke_about(plan.id)? {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

/// BH-2: the Bots that can take work on the job — not archived, and present in one of its
/// conversations that is not archived.
pub fn able_bots(tx: &Tx<'_>, plan: &PlanRecord) -> Result<BTreeSet<BotId>, StoreError> {
    let mut out = BTreeSet::new();
    for s in job_places(tx, plan)? {
        let session = tx.session(s)?;
        if session.archived {
            continue;
        }
        for b in session.bot_ids {
            if !out.contains(&b) && !tx.bot(b)?.archived {
                out.insert(b);
            }
        }
    }
    Ok(out)
}

/// Bot facts with names read once per Bot.
struct Bots<'t, 'c> {
    tx: &'t Tx<'c>,
    able: BTreeSet<BotId>,
    names: BTreeMap<BotId, String>,
}

impl Bots<'_, '_> {
    fn facts(&mut self, bot: BotId, item: Option<WorkItemId>) -> Result<BotFacts, StoreError> {
        let name = match self.names.get(&bot) {
            Some(n) => n.clone(),
            None => {
                let n = self.tx.bot(bot)?.name;
                self.names.insert(bot, n.clone());
                n
            }
        };
        Ok(BotFacts {
            bot_id: bot,
            name,
            work_item_id: item,
            can_take_work: self.able.contains(&bot),
        })
    }
}

/// The Bot's work on the ticket, else its work on the whole job.
fn work_of(tx: &Tx<'_>, bot: BotId, t: &TicketRecord) -> Result<Option<WorkItemId>, StoreError> {
    if let Some(item) = tx.ticket_item(bot, t.plan_id, t.id)? {
        return Ok(Some(item.id));
    }
    Ok(tx.job_item(bot, t.plan_id)?.map(|w| w.id))
}

/// §13's plan lead: the stored lead (the home group's confirmed lead), the Bot whose turn
/// opened the job, a confirmed lead of the job's other conversations (where the user spoke
/// last first), the Bot with most turns on it; the first that can take work.
fn plan_lead(
    tx: &Tx<'_>,
    plan: &PlanRecord,
    bots: &mut Bots<'_, '_>,
) -> Result<Option<BotFacts>, StoreError> {
    let mut order: Vec<BotId> = Vec::new();
    let places = job_places(tx, plan)?;
    if let Some(home) = plan.home_session_id
        && let Some(lead) = tx.lead(home)?
    {
        order.push(lead);
    }
    let opened_by = tx
        .plan_revisions(plan.id)?
        .into_iter()
        .find_map(|r| match r.cause {
            RevisionCause::Turn(run) => Some(run),
            _ => None,
        });
    if let Some(run) = opened_by
        && let Some(seg) = tx.segment(run)?
    {
        order.push(seg.bot_id);
    }
    for s in places.iter().filter(|s| Some(**s) != plan.home_session_id) {
        order.extend(tx.lead(*s)?);
    }
    order.extend(tx.turns_per_bot_on(plan.id)?.into_iter().map(|(b, _)| b));
    let mut seen = BTreeSet::new();
    let mut candidates = Vec::new();
    for b in order {
        if seen.insert(b) {
            let item = tx.job_item(b, plan.id)?.map(|w| w.id);
            candidates.push(bots.facts(b, item)?);
        }
    }
    Ok(first_able(candidates))
}

/// The ticket's folder, absolute.
fn ticket_dir(plan: &PlanRecord, t: &TicketRecord) -> PathBuf {
    let p = Path::new(t.folder.trim());
    lexical(&if p.is_absolute() {
        p.to_path_buf()
    } else {
        Path::new(&plan.folder).join(p)
    })
}

/// A check bound to the ticket (by its id, or a path or command folder inside the ticket's
/// folder) whose last run failed. Offers from words not yet confirmed hold nothing (CK3), nor
/// a run judged on pictures (for reference only).
fn bound_check_failed(checks: &[CheckRecord], plan: &PlanRecord, t: &TicketRecord) -> bool {
    let ws = plan_workspace(&plan.folder);
    let folder = ticket_dir(plan, t);
    let inside = |p: &Option<String>| {
        p.as_deref()
            .is_some_and(|p| lexical(&ws.join(p.trim())).starts_with(&folder))
    };
    checks.iter().any(|c| {
        let bound = match c.ticket_id {
            Some(id) => id == t.id,
            // A command, or a seams check's list command, is bound by the folder it runs in.
            None if c.kind == CheckKind::Command || c.command.is_some() => inside(&c.cwd),
            None => c.kind != CheckKind::Standard && inside(&c.path),
        };
        bound
            && c.removed_at.is_none()
            && (c.source != CheckSource::Words || c.confirmed)
            && c.runs
                .first()
                .is_some_and(|r| r.outcome == RunOutcome::Failed && !r.for_reference)
    })
}

fn in_checks_or_review(s: &SubmissionRecord) -> bool {
    matches!(
        s.state,
        SubmissionState::Checking
            | SubmissionState::Submitted
            | SubmissionState::InReview
            | SubmissionState::AwaitingUser
    )
}

/// The latest hand-over that still decides something (superseded ones are not read; an
/// approved one leaves the ticket to its owner).
fn hand_over(
    subs: &[SubmissionRecord],
    t: &TicketRecord,
    bots: &mut Bots<'_, '_>,
) -> Result<Option<HandOver>, StoreError> {
    let Some(s) = subs.iter().find(|s| s.state != SubmissionState::Superseded) else {
        return Ok(None);
    };
    Ok(match s.state {
        SubmissionState::Checking => Some(HandOver::Checking),
        SubmissionState::FailedChecks => Some(HandOver::FailedChecks),
        SubmissionState::Submitted | SubmissionState::InReview => Some(HandOver::InReview {
            reviewer: match t.reviewer_bot_id {
                Some(r) => Some(bots.facts(r, None)?),
                None => None,
            },
        }),
        SubmissionState::AwaitingUser => Some(HandOver::AwaitingWord),
        SubmissionState::Rework => Some(HandOver::Rework),
        SubmissionState::Approved | SubmissionState::Superseded => None,
    })
}

/// Whether a hold in force covers work on `t`: its owner's (or, with none, anybody's) work
/// there, speaking where that work speaks.
fn held(
    holds: &[Hold],
    plan: &PlanRecord,
    t: &TicketRecord,
    owner_work: Option<&WorkItemRecord>,
) -> bool {
    let Some(session) = owner_work
        .and_then(|w| w.speaks_in)
        .or(plan.home_session_id)
    else {
        return false;
    };
    let facts = TurnFacts {
        bot_id: t.owner_bot_id.unwrap_or(BotId(0)),
        session_id: session,
        thread_id: owner_work.map_or(ThreadId(0), |w| w.thread_id),
        plan_id: Some(plan.id),
        plan_home: plan.home_session_id,
        ticket_id: Some(t.id),
    };
    holds.iter().any(|h| covers(h, &facts))
}

fn owner_work<'a>(items: &'a [WorkItemRecord], t: &TicketRecord) -> Option<&'a WorkItemRecord> {
    let owner = t.owner_bot_id?;
    let mine = |w: &&WorkItemRecord| w.bot_id == owner;
    items
        .iter()
        .filter(mine)
        .find(|w| w.ticket_id == Some(t.id.0))
        .or_else(|| items.iter().filter(mine).find(|w| w.ticket_id.is_none()))
}

/// The job-wide records every ticket's ball reads, read once per job: a list of tickets (or
/// a supervisor pass over many) costs one read of these, not one per ticket.
pub struct JobBall<'t, 'c> {
    tx: &'t Tx<'c>,
    plan: PlanRecord,
    quiet: bool,
    bots: Bots<'t, 'c>,
    tickets: Vec<TicketRecord>,
    /// Its work items that are not closed.
    items: Vec<WorkItemRecord>,
    open_requests: Vec<DelegationRecord>,
    holds: Vec<Hold>,
    checks: Vec<CheckRecord>,
    lead: Option<BotFacts>,
}

impl<'t, 'c> JobBall<'t, 'c> {
    pub fn read(tx: &'t Tx<'c>, plan: PlanId) -> Result<Self, StoreError> {
        let plan = tx.plan(plan)?;
        let quiet = plan.status != PlanStatus::Active || plan.is_dormant();
        let mut bots = Bots {
            tx,
            able: BTreeSet::new(),
            names: BTreeMap::new(),
        };
        if quiet {
            // Nothing is shown: nothing more is read.
            return Ok(JobBall {
                tx,
                plan,
                quiet,
                bots,
                tickets: Vec::new(),
                items: Vec::new(),
                open_requests: Vec::new(),
                holds: Vec::new(),
                checks: Vec::new(),
                lead: None,
            });
        }
        bots.able = able_bots(tx, &plan)?;
        let lead = plan_lead(tx, &plan, &mut bots)?;
        Ok(JobBall {
            tx,
            quiet,
            tickets: tx.tickets_of_plan(plan.id)?,
            items: tx
                .work_items_of_plan(plan.id)?
                .into_iter()
                .filter(|w| w.state != WorkState::Closed)
                .collect(),
            open_requests: tx
                .delegations_of_plan(plan.id)?
                .into_iter()
                .filter(|d| d.state == DelegationState::Open)
                .collect(),
            holds: tx.holds_in_force()?,
            checks: tx.checks_of_plan(plan.id, false)?,
            plan,
            bots,
            lead,
        })
    }

    /// Everything the ball of `ticket` (one of this job's) is derived from.
    pub fn facts(&mut self, ticket: &TicketRecord) -> Result<BallFacts, StoreError> {
        let tx = self.tx;
        let open = !matches!(ticket.stage, TicketStage::Approved | TicketStage::Dropped);
        if self.quiet || !open {
            return Ok(BallFacts {
                plan_quiet: self.quiet,
                ticket_open: open,
                ..BallFacts::default()
            });
        }
        let bots = &mut self.bots;
        // The work on the ticket: its own items, and its owner's work on the whole job.
        let on_ticket = |w: &&WorkItemRecord| match w.ticket_id {
            Some(id) => id == ticket.id.0,
            None => Some(w.bot_id) == ticket.owner_bot_id,
        };
        let mut question = None;
        for w in self.items.iter().filter(on_ticket) {
            if tx.open_ask_of_thread(w.thread_id)?.is_some() {
                question = Some(bots.facts(w.bot_id, Some(w.id))?);
                break;
            }
        }
        let blocked = self
            .items
            .iter()
            .filter(on_ticket)
            .find(|w| w.state == WorkState::Blocked);
        let blocked = match blocked {
            Some(w) => Some(bots.facts(w.bot_id, Some(w.id))?),
            None => None,
        };
        let subs = tx.submissions_of_ticket(ticket.id)?;
        let mut requests = Vec::new();
        for d in self
            .open_requests
            .iter()
            .filter(|d| d.ticket_id == Some(ticket.id.0))
        {
            let to = tx.work_item(d.recipient_work_item)?;
            let deliverable_in_review = d.expects == Expects::Deliverable
                && subs
                    .iter()
                    .any(|s| s.producer_bot_id == Some(to.bot_id) && in_checks_or_review(s));
            requests.push(RequestFacts {
                recipient: bots.facts(to.bot_id, Some(to.id))?,
                deliverable_in_review,
            });
        }
        let mut held_dependency = None;
        for d in self
            .tickets
            .iter()
            .filter(|d| ticket.depends_on.contains(&d.id))
        {
            // Only a dependency still awaited keeps the ticket waiting (BH-5).
            if node(d).holds_back() && held(&self.holds, &self.plan, d, owner_work(&self.items, d))
            {
                held_dependency = Some(u32::try_from(d.number).unwrap_or(u32::MAX));
                break;
            }
        }
        let hand_over = hand_over(&subs, ticket, bots)?;
        let owner = match ticket.owner_bot_id {
            Some(o) => Some(bots.facts(o, work_of(tx, o, ticket)?)?),
            None => None,
        };
        Ok(BallFacts {
            plan_quiet: false,
            ticket_open: true,
            requests,
            question,
            blocked,
            held: held(
                &self.holds,
                &self.plan,
                ticket,
                owner_work(&self.items, ticket),
            ),
            held_dependency,
            in_review_without_hand_over: hand_over.is_none()
                && matches!(ticket.stage, TicketStage::Submitted | TicketStage::InReview)
                && !subs.iter().any(|s| s.state == SubmissionState::Approved),
            hand_over,
            bound_check_failed: bound_check_failed(&self.checks, &self.plan, ticket),
            owner,
            lead: self.lead.clone(),
            external_job_running: tx.running_job_on_ticket(ticket.id)?,
            // B §7: a part marked stuck, or the whole ticket, waiting on a ceiling card.
            at_ceiling: tx.parts_of_ticket(ticket.id)?.iter().any(|p| p.blocked)
                || tx.ticket_at_ceiling(ticket.id)?,
        })
    }

    /// The ball of `ticket`, one of this job's.
    pub fn ball(&mut self, ticket: &TicketRecord) -> Result<Option<Ball>, StoreError> {
        Ok(ball_holder(&self.facts(ticket)?))
    }
}

/// Everything the ball of `ticket` is derived from.
pub fn ball_facts(tx: &Tx<'_>, ticket: &TicketRecord) -> Result<BallFacts, StoreError> {
    JobBall::read(tx, ticket.plan_id)?.facts(ticket)
}

/// The ball of `ticket`, or none (parked, done or dormant plan; closed ticket).
pub fn ball_of(tx: &Tx<'_>, ticket: &TicketRecord) -> Result<Option<Ball>, StoreError> {
    Ok(ball_holder(&ball_facts(tx, ticket)?))
}

fn present(tx: &Tx<'_>, s: SessionId, bot: BotId) -> Result<bool, StoreError> {
    let session = tx.session(s)?;
    Ok(!session.archived && session.bot_ids.contains(&bot))
}

/// BH-3: where to wake `bot` on the job when it has no work item to wake — where it last
/// worked on the job in a conversation the user sees; else a job conversation it is in,
/// where the user last spoke about the job first.
pub fn wake_place(tx: &Tx<'_>, plan: PlanId, bot: BotId) -> Result<Option<SessionId>, StoreError> {
    if let Some(s) = tx.last_visible_session_on(plan, bot)?
        && present(tx, s, bot)?
    {
        return Ok(Some(s));
    }
    let record = tx.plan(plan)?;
    let mut order = tx.sessions_user_spoke_about(plan)?;
    order.extend(record.home_session_id);
    for s in order {
        if present(tx, s, bot)? {
            return Ok(Some(s));
        }
    }
    Ok(None)
}

/// BH-4: where the supervisor's notices about the job go — where the user last spoke about
/// it (else its home), never a direct whose Bot is archived, nor an archived conversation.
pub fn notice_place(tx: &Tx<'_>, plan: PlanId) -> Result<Option<SessionId>, StoreError> {
    let record = tx.plan(plan)?;
    let mut order = tx.sessions_user_spoke_about(plan)?;
    order.extend(record.home_session_id);
    for s in order {
        let session = tx.session(s)?;
        if session.archived {
            continue;
        }
        if session.kind == SessionKind::Direct {
            let mut gone = false;
            for b in &session.bot_ids {
                gone |= tx.bot(*b)?.archived;
            }
            if gone || session.bot_ids.is_empty() {
                continue;
            }
        }
        return Ok(Some(s));
    }
    Ok(None)
}

/// The job's ball: its first open ticket's, none in a parked, done or dormant job.
pub fn job_ball(tx: &Tx<'_>, plan: &PlanRecord) -> Result<Option<Ball>, StoreError> {
    if plan.status != PlanStatus::Active || plan.is_dormant() {
        return Ok(None);
    }
    let mut job = JobBall::read(tx, plan.id)?;
    let first = job
        .tickets
        .iter()
        .filter(|t| !matches!(t.stage, TicketStage::Approved | TicketStage::Dropped))
        .min_by_key(|t| t.number)
        .cloned();
    match first {
        Some(t) => job.ball(&t),
        None => Ok(None),
    }
}
