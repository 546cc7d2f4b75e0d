//! The Lattice tools, offered under the lattice slot and withdrawn while a Step executes
//! (LAT-14): `pathway_read`, `pathway_write` (the pending suffix only) and `lattice_submit`
//! (one pending action). They never move the Run (LAT-2): the controller does, after the turn.

use super::controller::note_facts;
use super::texts::EXECUTING_REFUSAL;
use crate::slot::WorkflowSlot;
use crate::tool_results::reply;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::lattice::{
    ActionKind, ActionSource, FutureStep, LatticeRun, Requirements, SubmitFacts, SubmitRefusal,
    Submitted, WorkState, pathway, submit,
};
use troupe_core::message::Origin;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;
use troupe_store::{StoreError, Tx};

pub const OWNER: &str = "workflows.lattice";
pub const READ: &str = "pathway_read";
pub const WRITE: &str = "pathway_write";
pub const SUBMIT: &str = "lattice_submit";

const SUBMIT_CONTRACTS: &str = r#"lattice_submit takes "action" plus exactly that action's fields:
- {"action":"submit_requirements","goal":string,"success_criteria":[string, at least one],"constraints"?:[string],"non_goals"?:[string],"assumptions"?:[string]}
- {"action":"submit_pathway","reason":string}
- {"action":"submit_pathway_review","reason":string}
- {"action":"submit_blueprint","blueprint_id":number or "note_N"}
- {"action":"submit_blueprint_review","reason":string}
- {"action":"approve_execution","reason":string}
e.g. {"action":"submit_pathway","reason":"three Steps cover the success criteria"}"#;

const WRITE_CONTRACT: &str = r#"{"future_steps":[{"id"?: an existing pending Step's id to revise or reorder it, "title": string, "objective": string, "acceptance_criteria"?: [string], "assumptions"?: [string], "addresses_failed_step_ids"?: [failed Step ids]}, ...at least one]}; e.g. {"future_steps":[{"title":"Parser","objective":"parse the config file","acceptance_criteria":["tests pass"]}]}"#;

fn lattice_of(thread: &troupe_core::thread::Thread) -> bool {
    matches!(
        WorkflowSlot::of(thread.workflow.as_ref()),
        Some(WorkflowSlot::Lattice(ref s)) if !s.executing
    )
}

/// A refusal with the seed's shape: a `LATTICE_*` code, its class and what to do next.
fn refusal(
    code: &str,
    class: &str,
    run: Option<&LatticeRun>,
    action: &str,
    reason: String,
) -> ToolReply {
    let retryable = class == "invalid_arguments";
    reply(
        json!({
            "ok": false,
            "code": code,
            "class": class,
            "submitted": false,
            "persisted": false,
            "retryable": retryable,
            "current_state": run.map(|r| r.state.as_str()),
            "valid_action_for_current_state": run.map(LatticeRun::valid_action),
            "required_agent_action": action,
            "reason": reason,
        }),
        true,
        false,
    )
}

fn invalid(message: String) -> ToolReply {
    reply(
        json!({
            "ok": false,
            "code": "LATTICE_SUBMIT_INVALID_ARGUMENTS",
            "class": "invalid_arguments",
            "retryable": true,
            "persisted": false,
            "message": message,
            "contract": SUBMIT_CONTRACTS,
            "required_agent_action": "repair the arguments and call lattice_submit again once",
        }),
        true,
        false,
    )
}

fn not_found() -> ToolReply {
    refusal(
        "LATTICE_RUN_NOT_FOUND",
        "tool_unavailable",
        None,
        "end_turn",
        "this session has no Lattice Run".into(),
    )
}

fn executing(run: &LatticeRun) -> ToolReply {
    refusal(
        "tool_unavailable",
        "tool_unavailable",
        Some(run),
        "continue_current_blueprint_or_end_turn_after_stop",
        EXECUTING_REFUSAL.into(),
    )
}

/// The session's current Run, or the reply that says why there is none to act on.
fn current(
    tx: &Tx<'_>,
    ctx: &ToolCallContext,
) -> Result<Result<LatticeRun, ToolReply>, StoreError> {
    Ok(match tx.peek_current_lattice_run(ctx.thread.id)? {
        None => Err(not_found()),
        Some(r) if r.state == WorkState::Executing && !r.status.is_terminal() => Err(executing(&r)),
        Some(r) => Ok(r),
    })
}

struct Read;
struct Write;
struct Submit;

#[async_trait]
impl ToolHandler for Read {
    async fn call(&self, ctx: &ToolCallContext, _raw: &str) -> ToolReply {
        match ctx.store.read(|tx| current(tx, ctx)) {
            Err(e) => ToolReply::error(format!("pathway_read failed: {e}")),
            Ok(Err(r)) => r,
            Ok(Ok(run)) => reply(
                json!({
                    "ok": true,
                    "run_id": run.id.0,
                    "status": run.status.as_str(),
                    "state": run.state.as_str(),
                    "state_revision": run.state_revision,
                    "pathway_revision": run.pathway_revision,
                    "valid_action": run.valid_action(),
                    "requirements": run.requirements,
                    "pathway": pathway::split(&run),
                }),
                false,
                false,
            ),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    future_steps: Vec<FutureStep>,
}

#[async_trait]
impl ToolHandler for Write {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: WriteArgs = match serde_json::from_str(raw) {
            Ok(a) => a,
            Err(e) => return crate::tool_results::invalid(e.to_string(), WRITE_CONTRACT),
        };
        let now = ctx.store.now();
        let res = ctx.store.write(|tx| {
            let run = match current(tx, ctx)? {
                Ok(r) => r,
                Err(reply) => return Ok(Err(reply)),
            };
            match pathway::write_future(&run, &a.future_steps, now) {
                Ok(next) => {
                    let preserved = next.pathway.len() - next.pending_steps().count();
                    let saved = tx.save_lattice_run(
                        &next,
                        &[(
                            "pathway_replaced",
                            json!({"pathway_revision": next.pathway_revision, "future": next.pending_steps().count()}),
                        )],
                    )?;
                    Ok(Ok((saved, preserved)))
                }
                Err(pathway::PathwayError::Invalid(m)) => {
                    Ok(Err(crate::tool_results::invalid(m, WRITE_CONTRACT)))
                }
                Err(e @ pathway::PathwayError::WrongState { .. }) => Ok(Err(refusal(
                    "tool_unavailable",
                    "tool_unavailable",
                    Some(&run),
                    "follow_current_state",
                    e.to_string(),
                ))),
            }
        });
        match res {
            Err(e) => ToolReply::error(format!("pathway_write failed: {e}")),
            Ok(Err(r)) => r,
            Ok(Ok((run, preserved))) => reply(
                json!({
                    "ok": true,
                    "pathway_revision": run.pathway_revision,
                    "preserved_steps": preserved,
                    "editable_future": pathway::split(&run).editable_future,
                }),
                false,
                false,
            ),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequirementsArgs {
    goal: String,
    success_criteria: Vec<String>,
    #[serde(default)]
    constraints: Vec<String>,
    #[serde(default)]
    non_goals: Vec<String>,
    #[serde(default)]
    assumptions: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReasonArgs {
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BlueprintArgs {
    blueprint_id: Value,
}

fn clean(items: Vec<String>) -> Vec<String> {
    items
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn reason_of(fields: Value) -> Result<String, String> {
    let r: ReasonArgs = serde_json::from_value(fields).map_err(|e| e.to_string())?;
    let reason = r.reason.trim().to_string();
    if reason.is_empty() {
        return Err("reason: must not be empty".into());
    }
    Ok(reason)
}

/// What the model asked for, before any live fact is read: the action, and the note its
/// Blueprint fields are to be read from (`None` for the current Step's bound one).
enum Parsed {
    Requirements(Requirements),
    Pathway(String),
    PathwayReview(String),
    Blueprint(i64),
    BlueprintReview(String),
    Approve(String),
}

fn parse(raw: &str) -> Result<Parsed, String> {
    let mut v: Value =
        serde_json::from_str(raw).map_err(|e| format!("arguments are not JSON: {e}"))?;
    let obj = v.as_object_mut().ok_or("arguments must be a JSON object")?;
    let action = obj
        .remove("action")
        .and_then(|a| a.as_str().map(str::to_string))
        .ok_or("action: required, one of the six action names")?;
    let fields = Value::Object(obj.clone());
    Ok(match action.as_str() {
        "submit_requirements" => {
            let r: RequirementsArgs = serde_json::from_value(fields).map_err(|e| e.to_string())?;
            let goal = r.goal.trim().to_string();
            let success_criteria = clean(r.success_criteria);
            if goal.is_empty() {
                return Err("goal: must not be empty".into());
            }
            if success_criteria.is_empty() {
                return Err("success_criteria: at least one criterion is required".into());
            }
            Parsed::Requirements(Requirements {
                goal,
                success_criteria,
                constraints: clean(r.constraints),
                non_goals: clean(r.non_goals),
                assumptions: clean(r.assumptions),
            })
        }
        "submit_pathway" => Parsed::Pathway(reason_of(fields)?),
        "submit_pathway_review" => Parsed::PathwayReview(reason_of(fields)?),
        "submit_blueprint" => {
            let b: BlueprintArgs = serde_json::from_value(fields).map_err(|e| e.to_string())?;
            let id = match &b.blueprint_id {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.trim().trim_start_matches("note_").parse().ok(),
                _ => None,
            }
            .ok_or("blueprint_id: a note id (a number or \"note_N\")")?;
            Parsed::Blueprint(id)
        }
        "submit_blueprint_review" => Parsed::BlueprintReview(reason_of(fields)?),
        "approve_execution" => Parsed::Approve(reason_of(fields)?),
        other => return Err(format!("action: unknown action '{other}'")),
    })
}

/// A person wrote in the conversation after the Run entered its state.
fn person_spoke(tx: &Tx<'_>, run: &LatticeRun) -> Result<bool, StoreError> {
    Ok(tx
        .messages_tail(run.thread_id, 40)?
        .iter()
        .any(|m| m.origin == Origin::User && m.created_at > run.state_entered_at))
}

/// Submit `approve_execution` for exactly the current Step's bound Blueprint as it is now (the
/// panel's Approve; the model's goes through the tool).
pub fn submit_approval(
    tx: &mut Tx<'_>,
    run: &LatticeRun,
    source: ActionSource,
    reason: Option<String>,
) -> Result<Result<Submitted, SubmitRefusal>, StoreError> {
    let bound = run
        .current_step()
        .and_then(|s| s.blueprint.as_ref())
        .map(|b| b.note_id);
    let note = match bound {
        Some(id) => note_facts(tx, id)?.map(|(f, _)| f),
        None => None,
    };
    let Some(n) = note.clone() else {
        return Ok(Err(SubmitRefusal::BlueprintUnavailable(
            "the current Step has no Blueprint to approve".into(),
        )));
    };
    let kind = ActionKind::ApproveExecution {
        reason: reason.unwrap_or_else(|| "approved by the person".into()),
        blueprint_version: n.version,
        content_digest: n.digest.clone(),
    };
    let facts = SubmitFacts {
        note,
        person_spoke: person_spoke(tx, run)?,
    };
    Ok(submit(run, kind, source, &facts, tx.now()))
}

fn queued(run: &LatticeRun, duplicate: bool) -> ToolReply {
    let action = run
        .pending_action
        .as_ref()
        .map_or("the action", |a| a.kind.name());
    reply(
        json!({
            "ok": true,
            "code": if duplicate { "LATTICE_ACTION_ALREADY_QUEUED" } else { "LATTICE_ACTION_QUEUED" },
            "disposition": if duplicate { "already_queued" } else { "queued" },
            "persisted": !duplicate,
            "duplicate": duplicate,
            "state": {
                "current": run.state.as_str(),
                "changed_synchronously": false,
                "transition_owner": "lattice_host",
                "advances_after_assistant_turn": true,
            },
            "required_agent_action": {
                "kind": "end_turn",
                "instruction": format!("{action} is durably queued; end your turn now: the host applies it after the turn ends"),
            },
            "prohibited_actions": ["further tool calls in this turn", "work on a future Step", "polling the Run"],
            "scope_boundary": "only the current state's work is authorized",
        }),
        false,
        true,
    )
}

fn submit_refusal(r: SubmitRefusal, run: &LatticeRun) -> ToolReply {
    let message = r.to_string();
    match r {
        SubmitRefusal::NotActive { .. } => refusal(
            "LATTICE_RUN_NOT_ACTIVE",
            "tool_unavailable",
            Some(run),
            "wait_for_run_recovery",
            message,
        ),
        SubmitRefusal::WrongState { .. } => refusal(
            "LATTICE_ACTION_WRONG_STATE",
            "tool_unavailable",
            Some(run),
            "follow_current_state",
            message,
        ),
        SubmitRefusal::Conflict { .. } => refusal(
            "LATTICE_ACTION_CONFLICT",
            "tool_unavailable",
            Some(run),
            "end_turn",
            message,
        ),
        SubmitRefusal::ReviewStale => refusal(
            "LATTICE_BLUEPRINT_REVIEW_STALE",
            "tool_unavailable",
            Some(run),
            "end_turn_and_wait_for_blueprint_review",
            message,
        ),
        SubmitRefusal::BlueprintUnavailable(_) => refusal(
            "LATTICE_BLUEPRINT_UNAVAILABLE",
            "invalid_arguments",
            Some(run),
            "repair_current_artifact_then_retry_once",
            message,
        ),
        SubmitRefusal::AwaitsPerson => refusal(
            "LATTICE_ACTION_WRONG_STATE",
            "tool_unavailable",
            Some(run),
            "end_turn",
            message,
        ),
    }
}

#[async_trait]
impl ToolHandler for Submit {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let parsed = match parse(raw) {
            Ok(p) => p,
            Err(m) => return invalid(m),
        };
        let res = ctx.store.write(|tx| {
            let run = match current(tx, ctx)? {
                Ok(r) => r,
                Err(reply) => return Ok(Err(reply)),
            };
            let now = tx.now();
            let bound = run
                .current_step()
                .and_then(|s| s.blueprint.as_ref())
                .map(|b| b.note_id);
            let live = |tx: &Tx<'_>, id: Option<i64>| -> Result<_, StoreError> {
                Ok(match id {
                    Some(id) => note_facts(tx, id)?.map(|(f, _)| f),
                    None => None,
                })
            };
            let (kind, note) = match parsed {
                Parsed::Requirements(requirements) => (ActionKind::SubmitRequirements { requirements }, None),
                Parsed::Pathway(reason) => (ActionKind::SubmitPathway { reason }, None),
                Parsed::PathwayReview(reason) => (ActionKind::SubmitPathwayReview { reason }, None),
                Parsed::Blueprint(id) => {
                    let n = live(tx, Some(id))?;
                    let (v, d) = n.as_ref().map_or((0, String::new()), |n| (n.version, n.digest.clone()));
                    (ActionKind::SubmitBlueprint { blueprint_id: id, blueprint_version: v, content_digest: d }, n)
                }
                Parsed::BlueprintReview(reason) => {
                    let n = live(tx, bound)?;
                    let (v, d) = n.as_ref().map_or((0, String::new()), |n| (n.version, n.digest.clone()));
                    (ActionKind::SubmitBlueprintReview { reason, blueprint_version: v, content_digest: d }, n)
                }
                Parsed::Approve(reason) => {
                    let n = live(tx, bound)?;
                    let (v, d) = n.as_ref().map_or((0, String::new()), |n| (n.version, n.digest.clone()));
                    (ActionKind::ApproveExecution { reason, blueprint_version: v, content_digest: d }, n)
                }
            };
            let facts = SubmitFacts {
                note,
                person_spoke: person_spoke(tx, &run)?,
            };
            match submit(&run, kind, ActionSource::Agent, &facts, now) {
                Err(r) => Ok(Err(submit_refusal(r, &run))),
                Ok(Submitted::AlreadyQueued) => Ok(Ok((run, true))),
                Ok(Submitted::Queued(next)) => {
                    let a = next.pending_action.as_ref().map(|a| (a.kind.name(), a.id));
                    let saved = tx.save_lattice_run(
                        &next,
                        &[("action_submitted", json!({"action": a.map(|a| a.0), "id": a.map(|a| a.1), "source": "agent"}))],
                    )?;
                    Ok(Ok((saved, false)))
                }
            }
        });
        match res {
            Err(e) => ToolReply::error(format!("lattice_submit failed: {e}")),
            Ok(Err(r)) => r,
            Ok(Ok((run, duplicate))) => queued(&run, duplicate),
        }
    }
}

fn spec(name: &str) -> ToolSpec {
    let (description, parameters) = match name {
        READ => (
            "Read the Lattice Run: state, the one valid action, requirements and the Pathway split into history, the current Step and the editable future.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
        WRITE => (
            "Replace the Lattice Pathway's unstarted (pending) Steps, in order: keep an id to revise or reorder that Step, omit a pending id to delete it, leave out the id to add a Step. Only in planning or reviewing_pathway.",
            json!({
                "type": "object",
                "properties": {"future_steps": {"type": "array", "minItems": 1, "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "objective": {"type": "string"},
                        "acceptance_criteria": {"type": "array", "items": {"type": "string"}},
                        "assumptions": {"type": "array", "items": {"type": "string"}},
                        "addresses_failed_step_ids": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["title", "objective"],
                    "additionalProperties": false
                }}},
                "required": ["future_steps"],
                "additionalProperties": false
            }),
        ),
        _ => (
            "Ask the Lattice host to take the one action valid in the Run's state; it is applied after your turn ends, so end the turn after a successful submit. Actions: submit_requirements {goal, success_criteria[], constraints?, non_goals?, assumptions?}, submit_pathway {reason}, submit_pathway_review {reason}, submit_blueprint {blueprint_id}, submit_blueprint_review {reason}, approve_execution {reason}.",
            json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["submit_requirements", "submit_pathway", "submit_pathway_review", "submit_blueprint", "submit_blueprint_review", "approve_execution"]},
                    "goal": {"type": "string"},
                    "success_criteria": {"type": "array", "items": {"type": "string"}},
                    "constraints": {"type": "array", "items": {"type": "string"}},
                    "non_goals": {"type": "array", "items": {"type": "string"}},
                    "assumptions": {"type": "array", "items": {"type": "string"}},
                    "reason": {"type": "string"},
                    "blueprint_id": {"type": ["integer", "string"]}
                },
                "required": ["action"]
            }),
        ),
    };
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
    }
}

pub fn registrations() -> Vec<ToolRegistration> {
    let make = |name: &str, handler: Arc<dyn ToolHandler>, read_only: bool| ToolRegistration {
        owner: OWNER.into(),
        spec: spec(name),
        effectful: false,
        read_only,
        available: Arc::new(lattice_of),
        handler,
    };
    vec![
        make(READ, Arc::new(Read), true),
        make(WRITE, Arc::new(Write), false),
        make(SUBMIT, Arc::new(Submit), false),
    ]
}
