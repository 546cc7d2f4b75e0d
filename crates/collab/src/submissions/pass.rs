//! The approval pass (`SubmissionPass`, §4.2, §4.7–4.8): a hand-over's checks settle it — a
//! failing gate sends it back (the ticket moves only if it had been handed over), a passing
//! one hands the ticket over and queues it to its reviewer, or, with none, core's
//! `approval_decision` approves it, sends it back, waits, or leaves it to the user's word. It
//! runs when checks finish and again on every change to its inputs (a check confirmed, a board
//! edit); Deliverables II's supervisor tick calls it too.

use super::hooks::{Hooks, RequiredItems};
use super::mail;
use troupe_core::delegation::Expects;
use troupe_core::large_job::LargeState;
use troupe_core::submission::{
    ApprovalDecision, ApprovalFacts, ApprovedBy, BoundCheck, CheckResult, OneGoFacts,
    SubmissionState, approval_decision, is_undecided,
};
use troupe_core::ticket::{
    AppPass, Approval, AutoApproval, PartEvent, SendBack, StageEvent, TicketStage, next_part_stage,
    next_stage, stage_source,
};
use troupe_core::{BotId, PartId, PlanId, SessionMessageId, SubmissionId};
use troupe_store::{PartRecord, Store, StoreError, SubmissionRecord, TicketRecord, Tx};

/// What the pass did to a hand-over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Moved {
    /// A gate failed when it was handed over; the details go back to the producer.
    FailedChecks {
        text: String,
    },
    /// A gate has not finished.
    WaitingOnChecks,
    /// Queued to the reviewer now.
    ToReviewer {
        reviewer: BotId,
    },
    /// With its reviewer already; the review decides.
    InReview,
    Approved(ApprovedBy),
    /// A gate failed after it had passed; back to the producer.
    Rework {
        text: String,
    },
    /// Waiting on the user's word, for these reasons.
    AwaitingUser {
        reasons: Vec<String>,
    },
    /// Decided before; nothing to do.
    Decided(SubmissionState),
}

/// The approval pass with its hooks. Cheap to clone.
#[derive(Clone, Default)]
pub struct SubmissionPass {
    pub hooks: Hooks,
}

impl SubmissionPass {
    pub fn new(hooks: Hooks) -> Self {
        SubmissionPass { hooks }
    }

    /// Run the hand-over's bound checks, then settle it.
    pub async fn run(
        &self,
        store: &Store,
        sub: SubmissionId,
        pass: AppPass,
    ) -> Result<Moved, String> {
        let checks = self.hooks.checks.run(store, sub).await?;
        store
            .write(|tx| settle(tx, self.hooks.required.as_ref(), sub, &checks, pass))
            .map_err(|e| e.to_string())
    }

    /// The user's word let a hand-over waiting on it through (WU2): its gates rerun, then a
    /// failing one sends it back, a pending one leaves it waiting, else it is approved
    /// `by: user` with `line`. One no longer waiting on the word is left as it is.
    pub async fn let_through(
        &self,
        store: &Store,
        sub: SubmissionId,
        line: SessionMessageId,
    ) -> Result<Moved, String> {
        let waiting = |s: &SubmissionRecord| s.state == SubmissionState::AwaitingUser;
        let s = store
            .read(|tx| tx.submission(sub))
            .map_err(|e| e.to_string())?;
        if !waiting(&s) {
            return Ok(Moved::Decided(s.state));
        }
        let checks = self.hooks.checks.run(store, sub).await?;
        store
            .write(|tx| {
                let s = tx.submission(sub)?;
                if !waiting(&s) {
                    return Ok(Moved::Decided(s.state));
                }
                let required = self.hooks.required.as_ref();
                decide(tx, required, sub, &checks, AppPass::Checks, Some(line))
            })
            .map_err(|e| e.to_string())
    }

    /// Run the pass over every undecided hand-over of the job (an input changed: a check
    /// confirmed, a board edit). Answers what moved, by submission.
    pub async fn run_plan(
        &self,
        store: &Store,
        plan: PlanId,
        pass: AppPass,
    ) -> Result<Vec<(SubmissionId, Moved)>, String> {
        let open: Vec<SubmissionId> = store
            .read(|tx| tx.submissions_of_plan(plan, None))
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|s| is_undecided(s.state))
            .map(|s| s.id)
            .collect();
        let mut out = Vec::with_capacity(open.len());
        for id in open {
            out.push((id, self.run(store, id, pass).await?));
        }
        Ok(out)
    }
}

fn gate_failures(
    tx: &Tx<'_>,
    s: &SubmissionRecord,
    checks: &[BoundCheck],
) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    for c in checks
        .iter()
        .filter(|c| c.is_gate() && c.result == CheckResult::Fail)
    {
        let rec = tx.check(c.check_id)?;
        let run = rec
            .runs
            .iter()
            .find(|r| r.submission_id == Some(s.id))
            .or(rec.runs.first());
        let what = match (&rec.path, &rec.command) {
            (Some(p), _) => format!("{} {p}", rec.kind),
            (None, Some(cmd)) => format!("command `{cmd}`"),
            (None, None) => rec.kind.to_string(),
        };
        let detail = run.map(|r| r.detail.trim().to_string()).unwrap_or_default();
        out.push(if detail.is_empty() {
            format!("check {} ({what}) failed", c.check_id)
        } else {
            format!("check {} ({what}) failed: {detail}", c.check_id)
        });
    }
    Ok(out)
}

/// Settle a hand-over against its checks' results: the pass itself (a pub function so the
/// supervisor's tick and any input change can call it inside their own write).
pub fn settle(
    tx: &mut Tx<'_>,
    required: &dyn RequiredItems,
    sub: SubmissionId,
    checks: &[BoundCheck],
    pass: AppPass,
) -> Result<Moved, StoreError> {
    let s = tx.submission(sub)?;
    match s.state {
        SubmissionState::Checking => {
            let failing = gate_failures(tx, &s, checks)?;
            if !failing.is_empty() {
                return failed_checks(tx, &s, failing);
            }
            if checks
                .iter()
                .any(|c| c.is_gate() && c.result == CheckResult::Pending)
            {
                return Ok(Moved::WaitingOnChecks);
            }
            handed_over(tx, &s)?;
        }
        SubmissionState::Submitted | SubmissionState::InReview | SubmissionState::AwaitingUser => {}
        other => return Ok(Moved::Decided(other)),
    }
    decide(tx, required, sub, checks, pass, None)
}

/// The reviewer of the hand-over's ticket: the one set on it, else a Bot asked to review by an
/// open request on the ticket (or the job, naming no ticket) — never its producer (T8, Q15).
pub fn reviewer_of(
    tx: &Tx<'_>,
    ticket: &TicketRecord,
    producer: Option<BotId>,
) -> Result<Option<BotId>, StoreError> {
    if let Some(r) = ticket.reviewer_bot_id
        && Some(r) != producer
    {
        return Ok(Some(r));
    }
    for d in tx.delegations_of_plan(ticket.plan_id)? {
        if d.expects != Expects::Review
            || d.state != troupe_core::delegation::DelegationState::Open
            || d.ticket_id.is_some_and(|t| t != ticket.id.0)
        {
            continue;
        }
        let bot = tx.work_item(d.recipient_work_item)?.bot_id;
        if Some(bot) != producer {
            return Ok(Some(bot));
        }
    }
    Ok(None)
}

/// The parts a hand-over covers: those it names, else the whole ticket's (T15).
fn covered(tx: &Tx<'_>, s: &SubmissionRecord) -> Result<Vec<PartRecord>, StoreError> {
    let all = tx.parts_of_ticket(s.ticket_id)?;
    Ok(if s.parts.is_empty() {
        all
    } else {
        all.into_iter()
            .filter(|p| s.parts.contains(&p.id))
            .collect()
    })
}

fn move_parts(
    tx: &mut Tx<'_>,
    parts: &[PartRecord],
    event: PartEvent,
    source: troupe_core::ticket::StageSource,
) -> Result<(), StoreError> {
    for p in parts {
        let cur = tx.part(p.id)?;
        if let Ok(to) = next_part_stage(cur.stage, event) {
            tx.set_part_stage(p.id, to, source)?;
        }
    }
    Ok(())
}

/// Move the ticket by `event` (refused moves are the caller's bug, reported). Every stage
/// write of the hand-over rules comes through here, so delivery and reopening (T9, T10) follow
/// each one.
pub(crate) fn move_ticket(
    tx: &mut Tx<'_>,
    ticket: TicketId,
    event: StageEvent,
) -> Result<Option<TicketStage>, StoreError> {
    let cur = tx.ticket(ticket)?;
    let to = next_stage(cur.stage, event).map_err(|e| StoreError::Invalid(e.to_string()))?;
    if to == cur.stage {
        return Ok(None);
    }
    tx.set_ticket_stage(ticket, to, stage_source(event))?;
    crate::tickets::after_stage_change(tx, ticket)?;
    Ok(Some(to))
}

use troupe_core::TicketId;

/// A gate failed at hand-over: kept on record (SP3); the ticket moves back only if it had been
/// handed over before; the details go back to the producer.
fn failed_checks(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    failing: Vec<String>,
) -> Result<Moved, StoreError> {
    tx.set_submission_state(s.id, SubmissionState::FailedChecks)?;
    crate::quality::checks_failed(tx, s, &failing)?;
    crate::ceiling::after_failure(tx, s, troupe_core::ceiling::FailureKind::Checks)?;
    let ticket = tx.ticket(s.ticket_id)?;
    move_ticket(
        tx,
        s.ticket_id,
        StageEvent::SentBack(SendBack::GateFailed {
            handed_over_before: ticket.handed_over_once,
        }),
    )?;
    Ok(Moved::FailedChecks {
        text: format!(
            "Not handed over — a check failed: {}. Fix it and hand it over again.",
            failing.join("; ")
        ),
    })
}

/// Gates passed: the hand-over is submitted, older undecided ones are superseded (SP1), the
/// ticket is handed over, and each part it covers counts an attempt with its file (T16).
fn handed_over(tx: &mut Tx<'_>, s: &SubmissionRecord) -> Result<(), StoreError> {
    tx.set_submission_state(s.id, SubmissionState::Submitted)?;
    tx.supersede_undecided(s.ticket_id, Some(s.id))?;
    move_ticket(tx, s.ticket_id, StageEvent::HandedOver)?;
    let file = s.files.first().map(|f| f.path.as_str());
    let parts = covered(tx, s)?;
    for p in &parts {
        tx.count_part_attempt(p.id, file)?;
    }
    move_parts(
        tx,
        &parts,
        PartEvent::HandedOver,
        troupe_core::ticket::StageSource::Check,
    )
}

fn approval_facts(
    tx: &Tx<'_>,
    required: &dyn RequiredItems,
    s: &SubmissionRecord,
    checks: &[BoundCheck],
    has_reviewer: bool,
) -> Result<ApprovalFacts, StoreError> {
    let plan = tx.plan(s.plan_id)?;
    let tickets = tx.tickets_of_plan(s.plan_id)?;
    let unbacked = required
        .requirements(tx, s)?
        .into_iter()
        .filter(|r| r.is_required() && !r.user_backed)
        .map(|r| r.id)
        .collect();
    let live: Vec<&TicketRecord> = tickets
        .iter()
        .filter(|t| t.stage != TicketStage::Dropped)
        .collect();
    let since = tx
        .last_approval_at(s.plan_id)?
        .unwrap_or(plan.created_at - 1);
    let segments = tx.job_segments_between(s.plan_id, since, s.created_at)?;
    let d = tx.plan_deliverables(s.plan_id)?;
    let others_open = live
        .iter()
        .any(|t| t.id != s.ticket_id && t.stage != TicketStage::Approved);
    Ok(ApprovalFacts {
        origin: s.origin,
        has_reviewer,
        checks: checks.to_vec(),
        unbacked_required_items: unbacked,
        routine_plan: tx.is_routine_plan(plan.id)?,
        one_go: OneGoFacts {
            one_ticket: live.len() == 1,
            // No approval or required-items cards exist since ADR 0084: nobody was asked.
            never_asked_on_card: true,
            only_segment: s.run_id.is_some_and(|r| segments == [r]),
        },
        large_job_last_ticket: d.large_state == LargeState::Large && d.laid_out && !others_open,
        user_let_through: false,
    })
}

/// Decide the hand-over; `word` is the user's line that let it through, if one did.
fn decide(
    tx: &mut Tx<'_>,
    required: &dyn RequiredItems,
    sub: SubmissionId,
    checks: &[BoundCheck],
    pass: AppPass,
    word: Option<SessionMessageId>,
) -> Result<Moved, StoreError> {
    let s = tx.submission(sub)?;
    let ticket = tx.ticket(s.ticket_id)?;
    let reviewer = reviewer_of(tx, &ticket, s.producer_bot_id)?;
    let mut facts = approval_facts(tx, required, &s, checks, reviewer.is_some())?;
    facts.user_let_through = word.is_some();
    let facts = approval_decision(&facts);
    Ok(match facts {
        ApprovalDecision::WaitForChecks => Moved::WaitingOnChecks,
        ApprovalDecision::ToReviewer => match (s.state, reviewer) {
            (SubmissionState::Submitted, Some(r)) => {
                to_reviewer(tx, &s, r, required, pass)?;
                Moved::ToReviewer { reviewer: r }
            }
            _ => Moved::InReview,
        },
        ApprovalDecision::Approve(by) => {
            let approval = match by {
                ApprovedBy::User => Approval::User,
                ApprovedBy::Reviewer => Approval::Reviewer,
                ApprovedBy::NoReviewer => Approval::OnChecks {
                    by: AutoApproval::NoReviewer,
                    pass,
                },
                ApprovedBy::Routine => Approval::OnChecks {
                    by: AutoApproval::Routine,
                    pass,
                },
                ApprovedBy::OneGo => Approval::OnChecks {
                    by: AutoApproval::OneGo,
                    pass,
                },
            };
            approve(tx, &s, by, None, word, approval)?;
            Moved::Approved(by)
        }
        ApprovalDecision::Rework { .. } => {
            let failing = gate_failures(tx, &s, checks)?;
            let text = format!(
                "Your hand-over {} of #{:02} went back to rework — a check failed: {}.",
                s.id,
                ticket.number,
                failing.join("; ")
            );
            let back = match pass {
                AppPass::Checks => SendBack::GateFailed {
                    handed_over_before: true,
                },
                AppPass::Tick => SendBack::Supervisor,
            };
            send_back(tx, &s, back, Some(("check", text.clone())))?;
            Moved::Rework { text }
        }
        ApprovalDecision::AwaitingUser { reasons } => {
            if s.state != SubmissionState::AwaitingUser {
                tx.set_submission_state(s.id, SubmissionState::AwaitingUser)?;
            }
            Moved::AwaitingUser {
                reasons: reasons.iter().map(|r| r.to_string()).collect(),
            }
        }
    })
}

/// Approve the hand-over (`submission_approved {by}`): the ticket and the parts it covers are
/// approved, its maker recorded, and a deliverable request it answers is answered (DEL-13).
/// The producer is not woken: it reads the result at its next wake.
pub(crate) fn approve(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    by: ApprovedBy,
    bot: Option<BotId>,
    word: Option<SessionMessageId>,
    approval: Approval,
) -> Result<(), StoreError> {
    tx.approve_submission(s.id, by, bot, word)?;
    let event = StageEvent::Approved(approval);
    move_ticket(tx, s.ticket_id, event)?;
    let parts = covered(tx, s)?;
    move_parts(tx, &parts, PartEvent::Approved, stage_source(event))?;
    mail::answer_deliverables(tx, s)?;
    Ok(())
}

/// Send the hand-over back: it and its ticket and parts go to rework; with `wake`, the
/// producer's work item is woken with the words (a check's failure, a reviewer's note).
pub(crate) fn send_back(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    why: SendBack,
    wake: Option<(&str, String)>,
) -> Result<(), StoreError> {
    send_back_parts(tx, s, why, wake, &[])
}

/// [`send_back`], moving only the parts in `only` of those it covers (CP3: the parts a
/// complaint is filed under); none named moves every part it covers.
pub(crate) fn send_back_parts(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    why: SendBack,
    wake: Option<(&str, String)>,
    only: &[PartId],
) -> Result<(), StoreError> {
    tx.set_submission_state(s.id, SubmissionState::Rework)?;
    crate::quality::sent_back(tx, s, why)?;
    crate::ceiling::after_failure(tx, s, crate::ceiling::kind_of(why))?;
    let event = StageEvent::SentBack(why);
    move_ticket(tx, s.ticket_id, event)?;
    let mut parts = covered(tx, s)?;
    if !only.is_empty() {
        parts.retain(|p| only.contains(&p.id));
    }
    move_parts(tx, &parts, PartEvent::SentBack, stage_source(event))?;
    if let Some((source, text)) = wake {
        mail::to_producer(tx, s, source, text)?;
    }
    Ok(())
}

/// §5.1 dispatch, Q16: queue the hand-over into the reviewer's work item; the ticket goes
/// in_review once it is queued.
fn to_reviewer(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    reviewer: BotId,
    required: &dyn RequiredItems,
    pass: AppPass,
) -> Result<(), StoreError> {
    let ticket = tx.ticket(s.ticket_id)?;
    let producer = match s.producer_bot_id {
        Some(b) => tx.bot(b)?.name,
        None => "the organizer".into(),
    };
    let what = if s.files.is_empty() {
        format!("the words: {}", s.content.clone().unwrap_or_default())
    } else {
        s.files
            .iter()
            .map(|f| format!("{} (sha256 {})", f.path, &f.sha256[..12]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let reqs = required.requirements(tx, s)?;
    let items = if reqs.is_empty() {
        "none recorded".to_string()
    } else {
        reqs.iter()
            .map(|r| {
                format!(
                    "{}{}",
                    r.id,
                    if r.is_required() { " (required)" } else { "" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = format!(
        "Review request: {producer} handed over ticket #{:02} \"{}\" — submission {}: {what}.",
        ticket.number, ticket.title, s.id
    );
    if !s.note.trim().is_empty() {
        text.push_str(&format!("\nTheir note: {}", s.note.trim()));
    }
    if !s.claims.is_empty() {
        text.push_str(&format!("\nThey claim: {}", s.claims.join("; ")));
    }
    text.push_str(&format!(
        "\nRequirements: {items}. Look at the work itself (read_file the files), then call \
         review({{\"submission_id\": {}, \"verdicts\": [{{\"requirement_id\": \"…\", \"verdict\": \
         \"pass|fail|unknown|n/a\", \"evidence\": \"…\"}}], \"outcome\": \"approve|reject\", \
         \"note\": \"…\"}}). Saying \"approved\" in words moves nothing.",
        s.id.0
    ));
    mail::to_reviewer(tx, s, reviewer, text)?;
    move_ticket(tx, s.ticket_id, StageEvent::QueuedToReviewer { pass })?;
    tx.set_submission_state(s.id, SubmissionState::InReview)?;
    Ok(())
}

/// Parts named by id on a ticket, for `submit({parts})`.
pub fn part_ids(parts: &[PartRecord], named: &[String]) -> Result<Vec<PartId>, String> {
    let mut out = Vec::new();
    for n in named {
        let want = n.trim();
        let found = parts.iter().find(|p| {
            p.id.to_string() == want
                || p.label.eq_ignore_ascii_case(want)
                || want
                    .parse::<i64>()
                    .is_ok_and(|k| k == p.number || k == p.id.0)
        });
        match found {
            Some(p) if !out.contains(&p.id) => out.push(p.id),
            Some(_) => {}
            None => {
                let known: Vec<String> = parts
                    .iter()
                    .map(|p| format!("{} ({})", p.label, p.id))
                    .collect();
                return Err(format!(
                    "parts: '{want}' is not a part of this ticket; its parts are: {}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
        }
    }
    Ok(out)
}
