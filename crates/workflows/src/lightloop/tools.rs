//! The Light Loop's model-facing tools. `loop_stop` belongs to the executor (a thread whose slot
//! holds an active Light Loop); `light_loop_approve` and `light_loop_reject` belong to the
//! recorded reviewer only — both are checked by the availability predicate and again in the
//! handler, inside the transaction that applies the call. Results follow the shared tool
//! contract: argument errors are repairable and persist nothing; state and ownership conflicts
//! are not retryable; a recorded stop says it is durably queued, that the host owns the
//! transition, and ends the turn.

use crate::lightloop::commit::{self, light_loop};
use crate::lightloop::host::LoopHost;
use crate::lightloop::machine::{self, Ack, LoopEvent, LoopRefusal, StopClaim};
use crate::lightloop::reviewer;
use crate::review::{VerdictArgs, parse_verdict};
use crate::slot::WorkflowSlot;
use crate::tool_results::{args, invalid, reply, unavailable, waits_refusal};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use troupe_core::thread::Thread;
use troupe_engine::extension::{
    EffectGuard, GuardContext, Narrowed, ToolCallContext, ToolHandler, ToolRegistration, ToolReply,
    ToolScope,
};
use troupe_llm::ToolSpec;
use troupe_store::StoreError;

pub const OWNER: &str = "workflows.lightloop";
pub const LOOP_STOP: &str = "loop_stop";
pub const APPROVE: &str = "light_loop_approve";
pub const REJECT: &str = "light_loop_reject";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StopArgs {
    summary: String,
    // The contract's words are "the items completed": a model reading them may send `items`.
    #[serde(default, alias = "items")]
    completed: Vec<String>,
    #[serde(default)]
    evidence: Vec<String>,
    #[serde(default)]
    limitations: Vec<String>,
}

const STOP_CONTRACT: &str = r#"{"summary": string (required), "completed"?: [string], "evidence"?: [string], "limitations"?: [string]}; e.g. {"summary": "parser done", "completed": ["parser"], "evidence": ["cargo test: 12 passed"]}"#;
const APPROVE_CONTRACT: &str = r#"{"summary": string (required, what you verified)}; e.g. {"summary": "tests pass, docs written"}"#;
const REJECT_CONTRACT: &str = r#"{"reason": string, "remaining": [string, each marked BLOCKING or NON-BLOCKING], "instructions": string, "completed"?: [string]}; e.g. {"reason": "tests fail", "remaining": ["BLOCKING: fix test_x"], "instructions": "make test_x pass"}"#;

fn refusal(r: LoopRefusal, contract: &str, role: &str) -> ToolReply {
    let message = r.to_string();
    match r {
        LoopRefusal::InvalidArguments(m) => invalid(m, contract),
        LoopRefusal::Waits(waits) => waits_refusal(message, &waits),
        LoopRefusal::NotActive => {
            unavailable(&message, "no_light_loop", "light_loop_active", "end_turn")
        }
        LoopRefusal::NotReviewer => unavailable(
            &format!("{message}; this thread is not it ({role})"),
            "not_the_recorded_reviewer",
            "recorded_reviewer",
            "end_turn",
        ),
        _ => unavailable(
            &message,
            "no_review_pending",
            "review_pending",
            "follow_current_state",
        ),
    }
}

struct LoopStop;
struct Verdict {
    approve: bool,
    host: Arc<LoopHost>,
}

#[async_trait]
impl ToolHandler for LoopStop {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: StopArgs = match args(raw, STOP_CONTRACT) {
            Ok(a) => a,
            Err(r) => return r,
        };
        let executor = ctx.thread.id;
        let Some(requester) = ctx.message_id else {
            return troupe_engine::extension::no_reply_id("loop_stop");
        };
        let at = ctx.store.now();
        let res = ctx.store.write(|tx| {
            let Some(ll) = light_loop(tx, executor)? else {
                return Ok(Err(LoopRefusal::NotActive));
            };
            let event = LoopEvent::LoopStop {
                claim: StopClaim {
                    summary: a.summary.clone(),
                    completed: a.completed.clone(),
                    evidence: a.evidence.clone(),
                    limitations: a.limitations.clone(),
                },
                requester,
                at,
                // Checked in the transaction that would write the intent (AG-1).
                waits: crate::agenda::service::blocker_commands(tx, executor)?,
            };
            let step = match machine::step(Some(&ll), event) {
                Ok(s) => s,
                Err(r) => return Ok(Err(r)),
            };
            if step.ack == Ack::Recorded {
                commit::commit(tx, executor, &ll, &step)?;
            }
            Ok(Ok(step.ack))
        });
        let ack = match res {
            Ok(Ok(ack)) => ack,
            Ok(Err(r)) => return refusal(r, STOP_CONTRACT, "executor"),
            Err(e) => return ToolReply::error(format!("loop_stop could not be recorded: {e}")),
        };
        let (disposition, reviewer) = match ack {
            Ack::AlreadyPending { reviewer } => ("already_queued", reviewer),
            _ => ("queued", None),
        };
        reply(
            json!({
                "ok": true,
                "code": "stop_requested",
                "disposition": disposition,
                "persisted": true,
                "reviewer_thread_id": reviewer.map(|r| r.0),
                "state": {
                    "current": if reviewer.is_some() { "reviewing" } else { "stop_pending" },
                    "changed_synchronously": false,
                    "transition_owner": "host",
                    "advances_after_assistant_turn": true,
                },
                "required_agent_action": {
                    "kind": "end_turn",
                    "instruction": "Your completion claim is durably queued. The host owns the transition: an independent reviewer starts after this turn ends and decides. End your turn now; do not poll, wait for the review, or call loop_stop again.",
                },
                "prohibited_actions": ["polling for the review", "calling loop_stop again", "continuing the task in this turn"],
            }),
            false,
            true,
        )
    }
}

#[async_trait]
impl ToolHandler for Verdict {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let contract = if self.approve {
            APPROVE_CONTRACT
        } else {
            REJECT_CONTRACT
        };
        let caller = ctx.thread.id;
        let event = match parse_verdict(self.approve, raw, APPROVE_CONTRACT, REJECT_CONTRACT) {
            Ok(VerdictArgs::Approve { summary }) => LoopEvent::Approve { caller, summary },
            Ok(VerdictArgs::Reject(rejection)) => LoopEvent::Reject {
                caller,
                rejection,
                at: ctx.store.now(),
            },
            Err(r) => return r,
        };
        let Some(executor) = ctx.thread.parent_id else {
            return refusal(LoopRefusal::NotReviewer, contract, "no parent thread");
        };
        let res = ctx.store.write(|tx| {
            let Some(ll) = light_loop(tx, executor)? else {
                return Ok(Err(LoopRefusal::NotActive));
            };
            let step = match machine::step(Some(&ll), event.clone()) {
                Ok(s) => s,
                Err(r) => return Ok(Err(r)),
            };
            Ok(Ok(commit::commit(tx, executor, &ll, &step)?))
        });
        let after = match res {
            Ok(Ok(a)) => a,
            Ok(Err(r)) => return refusal(r, contract, "caller"),
            Err(e) => return ToolReply::error(format!("the verdict could not be recorded: {e}")),
        };
        if after.drive_executor {
            self.host.drive_later(executor, "light_loop_rejected");
        }
        let outcome = match (self.approve, after.ended) {
            (true, _) => "completed",
            (false, true) => "iteration_exhausted",
            (false, false) => "rejected",
        };
        reply(
            json!({
                "ok": true,
                "code": if self.approve { "approved" } else { "rejected" },
                "persisted": true,
                "loop": outcome,
                "state": {"current": outcome, "transition_owner": "host"},
                "required_agent_action": {
                    "kind": "end_turn",
                    "instruction": "Your verdict is recorded and delivered by the host. End your turn now.",
                },
            }),
            false,
            true,
        )
    }
}

fn executor_available(t: &Thread) -> bool {
    t.agent.name != crate::lightloop::texts::REVIEWER_AGENT
        && matches!(
            WorkflowSlot::of(t.workflow.as_ref()),
            Some(WorkflowSlot::LightLoop(_))
        )
}

fn reviewer_available(host: &LoopHost, t: &Thread) -> bool {
    host.store()
        .is_some_and(|s| reviewer::is_bound_reviewer(s, t))
}

pub fn registrations(host: &Arc<LoopHost>) -> Vec<ToolRegistration> {
    let stop = ToolRegistration {
        owner: OWNER.into(),
        spec: ToolSpec {
            name: LOOP_STOP.into(),
            description: "Claim that the Light Loop's task is complete. Records the claim durably; an independent reviewer starts after your turn ends and decides. End your turn after calling it.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "summary": {"type": "string", "description": "What was done (required, non-empty)."},
                    "completed": {"type": "array", "items": {"type": "string"}, "description": "The deliverables completed."},
                    "evidence": {"type": "array", "items": {"type": "string"}, "description": "Evidence for each (tests run, output seen)."},
                    "limitations": {"type": "array", "items": {"type": "string"}, "description": "Known limitations or items not done."}
                },
                "required": ["summary"],
                "additionalProperties": false
            }),
        },
        effectful: false,
        read_only: false,
        available: Arc::new(executor_available),
        handler: Arc::new(LoopStop),
    };
    let verdict = |approve: bool| {
        let h = host.clone();
        let (name, description, parameters) = if approve {
            (
                APPROVE,
                "Approve the Light Loop's completion claim you are reviewing: every requested deliverable is done and verified. Ends the loop.",
                json!({
                    "type": "object",
                    "properties": {"summary": {"type": "string", "description": "What you verified."}},
                    "required": ["summary"],
                    "additionalProperties": false
                }),
            )
        } else {
            (
                REJECT,
                "Reject the Light Loop's completion claim you are reviewing; the executor gets your reason, remaining items and instructions and continues.",
                json!({
                    "type": "object",
                    "properties": {
                        "reason": {"type": "string"},
                        "remaining": {"type": "array", "items": {"type": "string"}, "description": "Each item marked BLOCKING or NON-BLOCKING."},
                        "instructions": {"type": "string", "description": "Concrete instructions for the executor."},
                        "completed": {"type": "array", "items": {"type": "string"}, "description": "Items accepted as done."}
                    },
                    "required": ["reason", "remaining", "instructions"],
                    "additionalProperties": false
                }),
            )
        };
        ToolRegistration {
            owner: OWNER.into(),
            spec: ToolSpec {
                name: name.into(),
                description: description.into(),
                parameters,
            },
            effectful: false,
            read_only: false,
            available: Arc::new(move |t: &Thread| reviewer_available(&h, t)),
            handler: Arc::new(Verdict {
                approve,
                host: host.clone(),
            }),
        }
    };
    vec![stop, verdict(true), verdict(false)]
}

/// During a recovery turn the reviewer may only give its verdict: effectful calls (shell,
/// writes) are refused. The kernel lists its built-in tools on every thread, so this guard is
/// how "only the two tools" is enforced for them.
pub struct RecoveryGuard {
    pub host: Arc<LoopHost>,
}

const REVIEW_RECOVERY: &str = "this is a review recovery turn: only light_loop_approve or light_loop_reject may be called now";

/// Whether `thread` is the bound reviewer of a claim in a recovery turn.
fn in_review_recovery(thread: &Thread, store: &troupe_store::Store) -> Result<bool, String> {
    if thread.agent.name != crate::lightloop::texts::REVIEWER_AGENT {
        return Ok(false);
    }
    Ok(store
        .read(|tx| reviewer::bound_loop(tx, thread))
        .map_err(|e: StoreError| e.to_string())?
        .and_then(|(_, ll)| ll.stop_request)
        .is_some_and(|s| s.review_recovery_attempts > 0))
}

impl EffectGuard for RecoveryGuard {
    fn name(&self) -> &str {
        "light_loop_recovery"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), troupe_engine::extension::Refusal> {
        if in_review_recovery(ctx.thread, ctx.store)? {
            return Err(REVIEW_RECOVERY.into());
        }
        Ok(())
    }
}

/// In a recovery turn the reviewer is offered only the two verdict tools.
impl ToolScope for RecoveryGuard {
    fn name(&self) -> &str {
        "light_loop_recovery"
    }

    fn narrow(
        &self,
        thread: &Thread,
        store: &troupe_store::Store,
    ) -> Result<Option<Narrowed>, String> {
        Ok(in_review_recovery(thread, store)?.then(|| Narrowed {
            only: vec![APPROVE.into(), REJECT.into()],
            reason: REVIEW_RECOVERY.into(),
            keep_sourced_read_only: false,
        }))
    }
}
