//! The BlueprintLoop's model-facing tools. `blueprint_loop_stop` belongs to the loop's
//! execution session; `blueprint_loop_approve` and `_reject` to the recorded audit session
//! only. Availability shows each tool to its owner; the handler checks ownership again in the
//! transaction that applies the call.

use crate::blueprint_loop::commit::{self, bound_loop};
use crate::blueprint_loop::looked::{looked_since, not_looked};
use crate::blueprint_loop::machine::{self, Ack, Event, Refusal, StopClaim};
use crate::lightloop::host::LoopHost;
use crate::review::{VerdictArgs, parse_verdict};
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

pub const OWNER: &str = "workflows.blueprint_loop";
pub const STOP: &str = "blueprint_loop_stop";
pub const APPROVE: &str = "blueprint_loop_approve";
pub const REJECT: &str = "blueprint_loop_reject";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StopArgs {
    summary: String,
    #[serde(default)]
    completed: Vec<String>,
    #[serde(default)]
    evidence: Vec<String>,
    #[serde(default)]
    remaining: Vec<String>,
}

const STOP_CONTRACT: &str = r#"{"summary": string (required), "completed"?: [string], "evidence"?: [string], "remaining"?: [string]}; e.g. {"summary": "parser per the Blueprint", "completed": ["parser"], "evidence": ["cargo test parser: 12 passed"]}"#;
const APPROVE_CONTRACT: &str = r#"{"summary": string (required, what you verified)}; e.g. {"summary": "all 4 outcomes verified: ..."}"#;
const REJECT_CONTRACT: &str = r#"{"reason": string, "remaining": [string, each marked BLOCKING or NON-BLOCKING], "instructions": string, "completed"?: [string]}; e.g. {"reason": "outcome 2 unverified", "remaining": ["BLOCKING: no test covers outcome 2"], "instructions": "add the test and run it"}"#;

const PROHIBITED: [&str; 5] = [
    "further tool calls in this turn",
    "editing files or artifacts",
    "polling for the audit",
    "adjacent work outside the Blueprint's change scope",
    "starting the next step",
];

fn refusal(r: Refusal, contract: &str) -> ToolReply {
    let message = r.to_string();
    match r {
        Refusal::InvalidArguments(m) => invalid(m, contract),
        Refusal::Waits(waits) => waits_refusal(message, &waits),
        Refusal::NotExecution => unavailable(
            &message,
            "not_the_execution_session",
            "execution_session",
            "end_turn",
        ),
        Refusal::NotAuditor => unavailable(
            &message,
            "not_the_recorded_audit_session",
            "recorded_audit_session",
            "end_turn",
        ),
        Refusal::State { current, required } => {
            unavailable(&message, current, required, "follow_current_state")
        }
    }
}

fn no_loop(tool: &str) -> ToolReply {
    unavailable(
        &format!("{tool}: this session is bound to no active BlueprintLoop"),
        "no_blueprint_loop",
        "bound_blueprint_loop",
        "end_turn",
    )
}

struct Stop;
struct Verdict {
    approve: bool,
    host: Arc<LoopHost>,
}

#[async_trait]
impl ToolHandler for Stop {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: StopArgs = match args(raw, STOP_CONTRACT) {
            Ok(a) => a,
            Err(r) => return r,
        };
        let caller = ctx.thread.id;
        let Some(requester) = ctx.message_id else {
            return troupe_engine::extension::no_reply_id("blueprint_loop_stop");
        };
        let at = ctx.store.now();
        let res = ctx.store.write(|tx| {
            let l = match bound_loop(tx, caller)? {
                Some((_, l)) => l,
                None => match tx.active_loop_of_thread(caller)? {
                    Some(l) => l,
                    None => return Ok(Err(None)),
                },
            };
            let event = Event::Stop {
                caller,
                claim: StopClaim {
                    summary: a.summary.clone(),
                    completed: a.completed.clone(),
                    evidence: a.evidence.clone(),
                    remaining: a.remaining.clone(),
                },
                requester,
                at,
                // Checked in the transaction that would write the intent (AG-1).
                waits: crate::agenda::service::blocker_commands(tx, caller)?,
            };
            let step = match machine::step(&l, event) {
                Ok(s) => s,
                Err(r) => return Ok(Err(Some(r))),
            };
            if step.ack == Ack::Recorded {
                commit::commit(tx, &l, &step)?;
            }
            Ok(Ok((l, step.ack)))
        });
        let (l, ack) = match res {
            Ok(Ok(v)) => v,
            Ok(Err(None)) => return no_loop(STOP),
            Ok(Err(Some(r))) => return refusal(r, STOP_CONTRACT),
            Err(e) => {
                return ToolReply::error(format!("blueprint_loop_stop could not be recorded: {e}"));
            }
        };
        let (code, duplicate, started) = match ack {
            Ack::AlreadyQueued {
                audit_started: true,
            } => ("BLUEPRINT_LOOP_REVIEW_ALREADY_STARTED", true, true),
            Ack::AlreadyQueued {
                audit_started: false,
            } => ("BLUEPRINT_LOOP_REVIEW_ALREADY_QUEUED", true, false),
            _ => ("BLUEPRINT_LOOP_REVIEW_QUEUED", false, false),
        };
        reply(
            json!({
                "ok": true,
                "code": code,
                "persisted": !duplicate,
                "duplicate": duplicate,
                "disposition": if duplicate { "already_queued" } else { "queued" },
                "loop_id": l.id.0,
                "execution_closed": true,
                "review": {"requested": true, "started": started, "starts_after_assistant_turn": !started},
                "state": {
                    "current": if started { "auditing" } else { "running (stop intent queued)" },
                    "changed_synchronously": false,
                    "transition_owner": "host",
                    "advances_after_assistant_turn": true,
                },
                "required_agent_action": {
                    "kind": "end_turn",
                    "instruction": "Your stop intent is durably queued. Execution is closed: the host owns the transition and starts an independent supervisor audit after this turn ends. End your turn now.",
                },
                "prohibited_actions": PROHIBITED,
                "scope_boundary": format!("BlueprintLoop {} covers only note_{} (version {}); nothing in this result authorizes further work.", l.id, l.note_id, l.note_version),
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
            Ok(VerdictArgs::Approve { summary }) => Event::Approve { caller, summary },
            Ok(VerdictArgs::Reject(rejection)) => Event::Reject {
                caller,
                rejection,
                at: ctx.store.now(),
            },
            Err(r) => return r,
        };
        let res = ctx.store.write(|tx| {
            let Some((_, l)) = bound_loop(tx, caller)? else {
                return Ok(Err(refusal(Refusal::NotAuditor, contract)));
            };
            let step = match machine::step(&l, event.clone()) {
                Ok(s) => s,
                Err(r) => return Ok(Err(refusal(r, contract))),
            };
            let (claimed, recovery) = l.stop_request.as_ref().map_or((0, false), |s| {
                (s.requested_at, s.review_recovery_attempts > 0)
            });
            if self.approve && !looked_since(tx, caller, claimed)? {
                return Ok(Err(not_looked(recovery)));
            }
            Ok(Ok(commit::commit(tx, &l, &step)?))
        });
        let after = match res {
            Ok(Ok(a)) => a,
            Ok(Err(refused)) => return refused,
            Err(e) => return ToolReply::error(format!("the verdict could not be recorded: {e}")),
        };
        let Some(l) = after.saved else {
            return ToolReply::error("the verdict was not recorded");
        };
        if after.drive_execution {
            self.host
                .drive_later(l.thread_id, "blueprint_loop_rejected");
        }
        reply(
            json!({
                "ok": true,
                "code": if self.approve { "BLUEPRINT_LOOP_APPROVED" } else { "BLUEPRINT_LOOP_REJECTED" },
                "persisted": true,
                "loop_id": l.id.0,
                "state": {"current": l.status.as_str(), "transition_owner": "host", "changed_synchronously": true},
                "required_agent_action": {
                    "kind": "end_turn",
                    "instruction": "Your verdict is recorded and the host delivers it. End your turn now.",
                },
            }),
            false,
            true,
        )
    }
}

fn role_of(host: &LoopHost, t: &Thread) -> Option<String> {
    let store = host.store()?;
    store
        .read(|tx| bound_loop(tx, t.id))
        .ok()
        .flatten()
        .map(|(role, _)| role)
}

pub fn registrations(host: &Arc<LoopHost>) -> Vec<ToolRegistration> {
    let h = host.clone();
    let stop = ToolRegistration {
        owner: OWNER.into(),
        spec: ToolSpec {
            name: STOP.into(),
            description: "Claim that the BlueprintLoop's Blueprint is carried out and verified. Records a durable stop intent; execution is then closed and an independent supervisor audits the work after your turn ends. End your turn after calling it.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "summary": {"type": "string", "description": "What was carried out (required, non-empty)."},
                    "completed": {"type": "array", "items": {"type": "string"}, "description": "The Blueprint outcomes completed."},
                    "evidence": {"type": "array", "items": {"type": "string"}, "description": "Evidence for each, of matching strength."},
                    "remaining": {"type": "array", "items": {"type": "string"}, "description": "Anything not done."}
                },
                "required": ["summary"],
                "additionalProperties": false
            }),
        },
        effectful: false,
        read_only: false,
        available: Arc::new(move |t: &Thread| role_of(&h, t).as_deref() == Some("execution")),
        handler: Arc::new(Stop),
    };
    let verdict = |approve: bool| {
        let h = host.clone();
        let (name, description, parameters) = if approve {
            (
                APPROVE,
                "Approve the BlueprintLoop you are auditing: every required outcome is verified with evidence of matching strength. Completes the loop.",
                json!({
                    "type": "object",
                    "properties": {"summary": {"type": "string", "description": "What you verified, outcome by outcome."}},
                    "required": ["summary"],
                    "additionalProperties": false
                }),
            )
        } else {
            (
                REJECT,
                "Reject the BlueprintLoop's stop claim you are auditing; execution reopens with your reason, remaining items and instructions.",
                json!({
                    "type": "object",
                    "properties": {
                        "reason": {"type": "string"},
                        "remaining": {"type": "array", "items": {"type": "string"}, "description": "Each item marked BLOCKING or NON-BLOCKING."},
                        "instructions": {"type": "string", "description": "Concrete instructions for the executor."},
                        "completed": {"type": "array", "items": {"type": "string"}, "description": "Outcomes accepted as done."}
                    },
                    "required": ["reason", "remaining", "instructions"],
                    "additionalProperties": false
                }),
            )
        };
        let a = h.clone();
        ToolRegistration {
            owner: OWNER.into(),
            spec: ToolSpec {
                name: name.into(),
                description: description.into(),
                parameters,
            },
            effectful: false,
            read_only: false,
            available: Arc::new(move |t: &Thread| role_of(&a, t).as_deref() == Some("audit")),
            handler: Arc::new(Verdict { approve, host: h }),
        }
    };
    vec![stop, verdict(true), verdict(false)]
}

/// During a recovery turn the auditor may only give its verdict: effectful calls are refused.
pub struct AuditRecoveryGuard;

const AUDIT_RECOVERY: &str = "this is an audit recovery turn: only blueprint_loop_approve or blueprint_loop_reject may be called now";

/// Whether `thread` is the audit session of a loop in a recovery turn.
fn in_audit_recovery(thread: &Thread, store: &troupe_store::Store) -> Result<bool, String> {
    // Audit sessions are child threads; most threads are not, and need no read.
    if thread.parent_id.is_none() {
        return Ok(false);
    }
    Ok(store
        .read(|tx| bound_loop(tx, thread.id))
        .map_err(|e: StoreError| e.to_string())?
        .filter(|(role, _)| role == "audit")
        .and_then(|(_, l)| l.stop_request)
        .is_some_and(|s| s.review_recovery_attempts > 0))
}

impl EffectGuard for AuditRecoveryGuard {
    fn name(&self) -> &str {
        "blueprint_loop_audit_recovery"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), troupe_engine::extension::Refusal> {
        if in_audit_recovery(ctx.thread, ctx.store)? {
            return Err(AUDIT_RECOVERY.into());
        }
        Ok(())
    }
}

/// In a recovery turn the auditor is offered only the two verdict tools.
impl ToolScope for AuditRecoveryGuard {
    fn name(&self) -> &str {
        "blueprint_loop_audit_recovery"
    }

    fn narrow(
        &self,
        thread: &Thread,
        store: &troupe_store::Store,
    ) -> Result<Option<Narrowed>, String> {
        Ok(in_audit_recovery(thread, store)?.then(|| Narrowed {
            only: vec![APPROVE.into(), REJECT.into()],
            reason: AUDIT_RECOVERY.into(),
            keep_sourced_read_only: false,
        }))
    }
}
