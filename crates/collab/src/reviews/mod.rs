//! Reviews (digest 003-B §5): `review({submission_id?, verdicts, outcome, note?})` by the
//! ticket's reviewer. Permission is core's `review_permission`; an approve is processed in
//! §5.3's order by core's `process_approve` (gates rerun, required items, pictures looked at,
//! the same model) and takes effect, waits on the user, or is refused with every reason; a
//! reject sends the work back and wakes its producer with the note. Only the recorded
//! reviewer's verdict counts; words never approve.

mod viewed;

pub use viewed::ViewedImages;

use crate::submissions::Hooks;
use crate::submissions::pass::{approve, send_back};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use troupe_core::delegation::{DelegationState, Expects};
use troupe_core::review::{
    ApproveFacts, ApproveResult, ItemVerdict, ReviewOutcome, ReviewPermissionFacts, ReviewVerdict,
    process_approve, review_permission, same_model,
};
use troupe_core::submission::{BoundCheck, CheckResult, SubmissionState};
use troupe_core::ticket::{Approval, SendBack, TicketStage};
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, RunId, SubmissionId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolReply};
use troupe_store::{
    NewReview, ReviewResult, StoreError, SubmissionRecord, Tx, VerdictRecord, WorkItemRecord,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewArgs {
    #[serde(default)]
    submission_id: Option<serde_json::Value>,
    #[serde(default)]
    verdicts: Vec<VerdictArg>,
    outcome: String,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VerdictArg {
    requirement_id: serde_json::Value,
    verdict: String,
    #[serde(default)]
    evidence: Option<String>,
}

fn text_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.trim().to_string(),
        other => other.to_string(),
    }
}

/// `review` where no hand-over waits for this Bot's verdict.
const NOTHING_TO_REVIEW: &str = "not_reviewable: nothing here waits for your review (review \
    is a verdict on another Bot's hand-over). To check something yourself, read the files and \
    run the checks right here, then say what you found.";

struct Parsed {
    submission: Option<SubmissionId>,
    verdicts: Vec<ItemVerdict>,
    outcome: ReviewOutcome,
    note: String,
}

fn parse(arguments: &str) -> Result<Parsed, String> {
    let a: ReviewArgs = serde_json::from_str(arguments).map_err(|e| {
        // The caller names the tool.
        let full = crate::tools::bad_arguments("review", &e, &spec());
        full.trim_start_matches("review: ").to_string()
    })?;
    let outcome = ReviewOutcome::parse(a.outcome.trim())?;
    let submission = match a.submission_id {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => Some(
            text_of(&v)
                .parse::<SubmissionId>()
                .map_err(|e| format!("submission_id: {e}"))?,
        ),
    };
    let mut verdicts = Vec::new();
    for (i, v) in a.verdicts.into_iter().enumerate() {
        let id = text_of(&v.requirement_id);
        if id.is_empty() {
            return Err(format!("verdicts[{i}].requirement_id: must not be empty"));
        }
        if verdicts
            .iter()
            .any(|w: &ItemVerdict| w.requirement_id == id)
        {
            return Err(format!(
                "verdicts[{i}]: requirement {id} has a verdict already"
            ));
        }
        verdicts.push(ItemVerdict {
            requirement_id: id,
            verdict: ReviewVerdict::parse(v.verdict.trim())
                .map_err(|e| format!("verdicts[{i}].{e}"))?,
            evidence: v.evidence.filter(|e| !e.trim().is_empty()),
        });
    }
    Ok(Parsed {
        submission,
        verdicts,
        outcome,
        note: a.note.unwrap_or_default().trim().to_string(),
    })
}

/// §5.1 default: the newest hand-over waiting for a review, looked for in the Bot's current
/// ticket, its job, a ticket it reviews, then a job of the conversation it runs in.
fn default_submission(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
    run: RunId,
) -> Result<Option<SubmissionId>, StoreError> {
    let waiting = |s: &SubmissionRecord| {
        matches!(
            s.state,
            SubmissionState::Submitted | SubmissionState::InReview
        ) && s.producer_bot_id != Some(item.bot_id)
    };
    let Some(plan) = item.plan_id else {
        return Ok(None);
    };
    let subs = tx.submissions_of_plan(plan, None)?;
    if let Some(t) = item.ticket_id
        && let Some(s) = subs.iter().find(|s| s.ticket_id.0 == t && waiting(s))
    {
        return Ok(Some(s.id));
    }
    if let Some(s) = subs.iter().find(|s| waiting(s)) {
        return Ok(Some(s.id));
    }
    let Some(session) = tx.segment(run)?.map(|s| s.session_id) else {
        return Ok(None);
    };
    for p in tx.plans_of_session(session, false)? {
        if let Some(s) = tx.submissions_of_plan(p.id, None)?.iter().find(|s| {
            waiting(s)
                && tx
                    .ticket(s.ticket_id)
                    .is_ok_and(|t| t.reviewer_bot_id == Some(item.bot_id))
        }) {
            return Ok(Some(s.id));
        }
    }
    Ok(None)
}

/// Whether the Bot may review the hand-over (§5.1, T8, Q15).
fn permission(
    tx: &Tx<'_>,
    me: BotId,
    s: &SubmissionRecord,
) -> Result<Result<(), String>, StoreError> {
    let ticket = tx.ticket(s.ticket_id)?;
    let plan = tx.plan(s.plan_id)?;
    let mut asked = Vec::new();
    for d in tx.delegations_of_plan(s.plan_id)? {
        if d.expects == Expects::Review
            && d.state == DelegationState::Open
            && d.ticket_id.is_none_or(|t| t == ticket.id.0)
        {
            asked.push(tx.work_item(d.recipient_work_item)?.bot_id);
        }
    }
    let in_conversation = match plan.home_session_id {
        Some(h) => tx.session(h)?.bot_ids.contains(&me),
        None => false,
    };
    let mut names = Vec::new();
    for b in ticket.reviewer_bot_id.iter().chain(asked.iter()) {
        names.push((*b, tx.bot(*b)?.name));
    }
    let facts = ReviewPermissionFacts {
        reviewer: me,
        producer: s.producer_bot_id.unwrap_or(BotId(0)),
        owner: ticket.owner_bot_id,
        ticket_stage: ticket.stage,
        ticket_reviewer: ticket.reviewer_bot_id,
        review_requested_of: asked,
        in_plan_conversation: in_conversation,
        names,
    };
    if let Err(r) = review_permission(&facts) {
        return Ok(Err(format!("{}: {r}", r.code())));
    }
    if !matches!(
        s.state,
        SubmissionState::Submitted | SubmissionState::InReview
    ) {
        return Ok(Err(format!(
            "not_reviewable: submission {} is {}; only a hand-over waiting for its review can \
             be reviewed",
            s.id, s.state
        )));
    }
    Ok(Ok(()))
}

fn model_of(tx: &Tx<'_>, run: Option<RunId>) -> Result<Option<String>, StoreError> {
    match run {
        Some(r) => Ok(tx.models_of_run(r)?.into_iter().next()),
        None => Ok(None),
    }
}

fn verdict_records(v: &[ItemVerdict]) -> Vec<VerdictRecord> {
    v.iter()
        .map(|v| VerdictRecord {
            requirement_id: v.requirement_id.clone(),
            verdict: v.verdict,
            evidence: v.evidence.clone(),
        })
        .collect()
}

struct Asked {
    me: BotId,
    sub: SubmissionRecord,
}

fn who_and_what(
    tx: &mut Tx<'_>,
    run: RunId,
    wanted: Option<SubmissionId>,
) -> Result<Result<Asked, String>, StoreError> {
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(Err(
            "not_bound: this turn is not a Bot's work on a job".into()
        ));
    };
    let item = tx.work_item(seg.work_item_id)?;
    if seg.mode != WorkMode::Work {
        // Sent to work_on for a review nobody asked of it, a desk spends its refusals there
        // (a person's direct, where the work is done right here, most of all).
        let session = item.session_id.or(item.speaks_in);
        let waits = match session {
            Some(s) => tx.review_waits_for(s, item.bot_id)?,
            None => false,
        };
        if !waits {
            return Ok(Err(NOTHING_TO_REVIEW.into()));
        }
        return Ok(Err(
            "not_bound: a review is given in your work on the job; choose it with work_on".into(),
        ));
    }
    viewed::record_views(tx, run)?;
    let id = match wanted {
        Some(id) => id,
        None => match default_submission(tx, &item, run)? {
            Some(id) => id,
            None => {
                return Ok(Err(
                    "not_reviewable: no hand-over waits for your review; name its submission_id"
                        .into(),
                ));
            }
        },
    };
    let sub = match tx.submission(id) {
        Ok(s) => s,
        Err(StoreError::NotFound { .. }) => {
            return Ok(Err(format!("submission_id: {id} does not exist")));
        }
        Err(e) => return Err(e),
    };
    if let Err(m) = permission(tx, item.bot_id, &sub)? {
        return Ok(Err(m));
    }
    Ok(Ok(Asked {
        me: item.bot_id,
        sub,
    }))
}

fn reject(tx: &mut Tx<'_>, run: RunId, a: &Asked, p: &Parsed) -> Result<String, StoreError> {
    let reviewer = tx.bot(a.me)?.name;
    let producer_model = model_of(tx, a.sub.run_id)?;
    let reviewer_model = model_of(tx, Some(run))?;
    tx.record_review(&NewReview {
        submission_id: a.sub.id,
        reviewer_bot_id: a.me,
        run_id: Some(run),
        outcome: ReviewOutcome::Reject,
        note: p.note.clone(),
        result: ReviewResult::Recorded,
        reasons: Vec::new(),
        same_model: same_model(producer_model.as_deref(), reviewer_model.as_deref()),
        reviewer_model,
        producer_model,
        verdicts: verdict_records(&p.verdicts),
    })?;
    let ticket = tx.ticket(a.sub.ticket_id)?;
    let failed: Vec<String> = p
        .verdicts
        .iter()
        .filter(|v| v.verdict == ReviewVerdict::Fail)
        .map(|v| match &v.evidence {
            Some(e) => format!("{} ({e})", v.requirement_id),
            None => v.requirement_id.clone(),
        })
        .collect();
    let mut text = format!(
        "{reviewer} sent your hand-over {} of #{:02} \"{}\" back to rework.",
        a.sub.id, ticket.number, ticket.title
    );
    if !p.note.is_empty() {
        text.push_str(&format!(" Their note: {}", p.note));
    }
    if !failed.is_empty() {
        text.push_str(&format!(" Failed: {}.", failed.join("; ")));
    }
    text.push_str(" Fix it and hand it over again with submit.");
    send_back(tx, &a.sub, SendBack::Rejected, Some(("review", text)))?;
    Ok(format!(
        "Rejected: #{:02} went back to its maker with your note.",
        ticket.number
    ))
}

/// §5.3 for an approve, with the gates' results just rerun.
fn approve_review(
    tx: &mut Tx<'_>,
    hooks: &Hooks,
    run: RunId,
    a: &Asked,
    p: &Parsed,
    gates: &[BoundCheck],
) -> Result<ToolReply, StoreError> {
    let s = tx.submission(a.sub.id)?;
    if !matches!(
        s.state,
        SubmissionState::Submitted | SubmissionState::InReview
    ) {
        return Ok(ToolReply::error(format!(
            "not_reviewable: submission {} is {} now",
            s.id, s.state
        )));
    }
    let ticket = tx.ticket(s.ticket_id)?;
    let requirements = hooks.required.requirements(tx, &s)?;
    let job_images_read = viewed::read_images_since(tx, run, s.plan_id, s.created_at)?;
    let producer_model = model_of(tx, s.run_id)?;
    let reviewer_model = model_of(tx, Some(run))?;
    let d = tx.plan_deliverables(s.plan_id)?;
    let others_open = tx.tickets_of_plan(s.plan_id)?.iter().any(|t| {
        t.id != s.ticket_id && !matches!(t.stage, TicketStage::Approved | TicketStage::Dropped)
    });
    let facts = ApproveFacts {
        origin: s.origin,
        failing_gates: gates
            .iter()
            .filter(|c| c.is_gate() && c.result == CheckResult::Fail)
            .map(|c| c.check_id)
            .collect(),
        pending_gates: gates
            .iter()
            .filter(|c| c.is_gate() && c.result == CheckResult::Pending)
            .map(|c| c.check_id)
            .collect(),
        requirements,
        verdicts: p.verdicts.clone(),
        read_image_after_submission: job_images_read,
        producer_model: producer_model.clone(),
        reviewer_model: reviewer_model.clone(),
        user_check_backs: gates.iter().any(|c| c.backs()),
        large_job_last_ticket: d.large_state == troupe_core::large_job::LargeState::Large
            && d.laid_out
            && !others_open,
    };
    let result = process_approve(&facts);
    let (kind, reasons) = match &result {
        ApproveResult::Refused { reasons } => (ReviewResult::Refused, reasons.clone()),
        ApproveResult::AwaitingUser { reasons } => (ReviewResult::AwaitingUser, reasons.clone()),
        ApproveResult::Effective => (ReviewResult::Recorded, Vec::new()),
    };
    let said: Vec<String> = reasons.iter().map(|r| r.to_string()).collect();
    tx.record_review(&NewReview {
        submission_id: s.id,
        reviewer_bot_id: a.me,
        run_id: Some(run),
        outcome: ReviewOutcome::Approve,
        note: p.note.clone(),
        result: kind,
        reasons: said.clone(),
        same_model: same_model(producer_model.as_deref(), reviewer_model.as_deref()),
        reviewer_model,
        producer_model,
        verdicts: verdict_records(&p.verdicts),
    })?;
    Ok(match result {
        ApproveResult::Refused { .. } => ToolReply::error(format!(
            "review refused — nothing changed: {}",
            said.join("; ")
        )),
        ApproveResult::AwaitingUser { .. } => {
            tx.set_submission_state(s.id, SubmissionState::AwaitingUser)?;
            ToolReply::ok(
                json!({"submission_id": s.id, "result": "awaiting_user",
                       "note": format!("Your approve is kept, but it does not take effect: {}. \
                                        The user decides.", said.join("; "))})
                .to_string(),
            )
        }
        ApproveResult::Effective => {
            approve(
                tx,
                &s,
                troupe_core::submission::ApprovedBy::Reviewer,
                Some(a.me),
                None,
                Approval::Reviewer,
            )?;
            ToolReply::ok(
                json!({"submission_id": s.id, "result": "approved",
                       "note": format!("Approved: #{:02} is done.", ticket.number)})
                .to_string(),
            )
        }
    })
}

pub(crate) struct Review {
    pub(crate) hooks: Hooks,
}

#[async_trait]
impl ToolHandler for Review {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let p = match parse(arguments) {
            Ok(p) => p,
            Err(m) => return ToolReply::error(format!("review: {m}")),
        };
        let run = ctx.run_id;
        let asked = match ctx.store.write(|tx| who_and_what(tx, run, p.submission)) {
            Ok(Ok(a)) => a,
            Ok(Err(m)) => return ToolReply::error(format!("review refused — {m}")),
            Err(e) => return ToolReply::error(format!("review: {e}; nothing was recorded")),
        };
        if p.outcome == ReviewOutcome::Reject {
            return match ctx.store.write(|tx| reject(tx, run, &asked, &p)) {
                Ok(text) => ToolReply::ok(
                    json!({"submission_id": asked.sub.id, "result": "rework", "note": text})
                        .to_string(),
                ),
                Err(e) => ToolReply::error(format!("review: {e}; nothing was recorded")),
            };
        }
        // §5.3 step 1: the gates are rerun before an approve is weighed.
        let gates = match self.hooks.checks.run(&ctx.store, asked.sub.id).await {
            Ok(g) => g,
            Err(e) => {
                return ToolReply::error(format!(
                    "review: the checks could not be rerun ({e}); nothing was recorded"
                ));
            }
        };
        match ctx
            .store
            .write(|tx| approve_review(tx, &self.hooks, run, &asked, &p, &gates))
        {
            Ok(reply) => reply,
            Err(e) => ToolReply::error(format!("review: {e}; nothing was recorded")),
        }
    }
}

pub(crate) fn spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "submission_id": {"type": ["integer", "string"], "description": "The hand-over (default: the newest waiting for your review)."},
            "verdicts": {"type": "array", "items": {"type": "object", "properties": {
                "requirement_id": {"type": ["string", "integer"]},
                "verdict": {"type": "string", "enum": ["pass", "fail", "unknown", "n/a"]},
                "evidence": {"type": "string", "description": "What you saw that shows it (needed for a pass)."}
            }, "required": ["requirement_id", "verdict"], "additionalProperties": false}},
            "outcome": {"type": "string", "enum": ["approve", "reject"]},
            "note": {"type": "string", "description": "For the maker: what to change (a reject's note reaches them word for word)."}
        },
        "required": ["outcome"],
        "additionalProperties": false
    })
}
