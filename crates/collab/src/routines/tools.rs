//! A Bot's routine tools: `list_routines` reads (a hold leaves it offered: HOLD-T2);
//! `set_routine` makes or changes one of its own, speaking where the turn speaks, and
//! `delete_routine` ends one — both refused under a hold like every effect (HOLD-T1).

use super::{NewRoutineRequest, RoutinePatchRequest, create_in, delete_in, patch_in};
use crate::skills::refusal;
use crate::tools::{ToolHost, bad_arguments};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::plan::RevisionCause;
use troupe_core::routine::{INSTRUCTION_MAX, NAME_MAX, PER_BOT_MAX};
use troupe_core::schedule::Trigger;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolReply};
use troupe_store::{Routine, RoutineStatus, StoreError, Tx};

pub(crate) fn list_spec() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

pub(crate) fn set_spec() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": format!("At most {NAME_MAX} characters; the name of one of yours changes that routine.")},
            "instruction": {"type": "string", "description": format!("What each run does, at most {INSTRUCTION_MAX} characters. Needed for a new routine.")},
            "schedule": {
                "type": "object",
                "description": "{\"kind\":\"every\",\"seconds\":N} (N at least 900) or {\"kind\":\"cron\",\"expr\":\"0 9 * * MON-FRI\",\"tz\":\"Europe/Paris\"}. Needed for a new routine."
            },
            "paused": {"type": "boolean", "description": "Pause (true) or resume (false) it."}
        },
        "required": ["name"],
        "additionalProperties": false
    })
}

pub(crate) fn delete_spec() -> Value {
    json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": false
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetArgs {
    name: String,
    instruction: Option<String>,
    schedule: Option<Value>,
    paused: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteArgs {
    name: String,
}

fn line(r: &Routine) -> String {
    let schedule = Trigger::parse(&r.schedule).ok();
    let when = match (r.status, r.next_due_at) {
        (RoutineStatus::Paused, _) => "paused".to_string(),
        (_, Some(at)) => format!(
            "next {}",
            troupe_core::routine::due_label(schedule.as_ref(), at)
        ),
        (_, None) => "no time left on its schedule".to_string(),
    };
    format!(
        "- {} ({when}; {} runs; schedule {}): {}",
        r.name, r.runs, r.schedule, r.instruction
    )
}

/// `list_routines`: the calling Bot's routines. Reads only.
pub(crate) struct ListRoutines;

#[async_trait]
impl ToolHandler for ListRoutines {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        if let Err(e) = serde_json::from_str::<serde_json::Map<String, Value>>(arguments) {
            return ToolReply::error(bad_arguments("list_routines", &e, &list_spec()));
        }
        let found = ctx.store.read(|tx| {
            let Some((_, bot)) = tx.thread_session(ctx.thread.id)? else {
                return Ok(None);
            };
            Ok(Some(tx.routines(Some(bot), None)?))
        });
        match found {
            Ok(None) => ToolReply::error("list_routines: only a Bot has routines"),
            Ok(Some(rs)) if rs.is_empty() => ToolReply::ok("You have no routines."),
            Ok(Some(rs)) => ToolReply::ok(format!(
                "Your routines ({} of {PER_BOT_MAX}):\n{}",
                rs.len(),
                rs.iter().map(line).collect::<Vec<_>>().join("\n")
            )),
            Err(e) => ToolReply::error(format!("list_routines: internal: {e}")),
        }
    }
}

/// Where the calling turn speaks, and its Bot.
fn caller(
    tx: &Tx<'_>,
    ctx: &ToolCallContext,
) -> Result<Option<(troupe_core::SessionId, troupe_core::BotId)>, StoreError> {
    tx.thread_session(ctx.thread.id)
}

/// `set_routine`: make one (speaking where this turn speaks) or change one of the Bot's own.
pub(crate) struct SetRoutine {
    pub(crate) host: Arc<ToolHost>,
}

#[async_trait]
impl ToolHandler for SetRoutine {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: SetArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => return ToolReply::error(bad_arguments("set_routine", &e, &set_spec())),
        };
        let Some(workspaces) = self.host.workspaces() else {
            return ToolReply::error("set_routine: internal: the collaboration layer is not up");
        };
        let run = ctx.run_id;
        let done = ctx.store.write(|tx| {
            let Some((session, bot)) = caller(tx, ctx)? else {
                return Err(StoreError::Invalid("only a Bot has routines".into()));
            };
            let (r, new) = match tx.routine_by_name(bot, &args.name)? {
                Some(cur) => {
                    let req = RoutinePatchRequest {
                        name: None,
                        instruction: args.instruction.clone(),
                        schedule: args.schedule.clone(),
                        status: args
                            .paused
                            .map(|p| if p { "paused" } else { "active" }.to_string()),
                    };
                    (patch_in(tx, cur.id, &req)?, false)
                }
                None => {
                    let (Some(instruction), Some(schedule)) =
                        (args.instruction.clone(), args.schedule.clone())
                    else {
                        return Err(StoreError::Invalid(format!(
                            "you have no routine \"{}\"; a new one needs instruction and schedule",
                            args.name.trim()
                        )));
                    };
                    let req = NewRoutineRequest {
                        bot_id: bot.0,
                        session_id: session.0,
                        name: args.name.clone(),
                        instruction,
                        schedule,
                    };
                    let cause = RevisionCause::Turn(run);
                    (create_in(tx, &workspaces, &req, "bot", cause)?, true)
                }
            };
            let job = tx.plan(r.plan_id)?.name;
            Ok((r, new, job))
        });
        match done {
            Ok((r, new, job)) => ToolReply::ok(format!(
                "{} routine:\n{}\nEach run is a ticket of its job \"{job}\" ({}).",
                if new { "Made the" } else { "Changed the" },
                line(&r),
                r.plan_id
            )),
            Err(e) => refusal("set_routine", e),
        }
    }
}

/// `delete_routine`: end one of the Bot's own routines; its job closes with its tickets kept.
pub(crate) struct DeleteRoutine;

#[async_trait]
impl ToolHandler for DeleteRoutine {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: DeleteArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => return ToolReply::error(bad_arguments("delete_routine", &e, &delete_spec())),
        };
        let run = ctx.run_id;
        let done = ctx.store.write(|tx| {
            let Some((_, bot)) = caller(tx, ctx)? else {
                return Err(StoreError::Invalid("only a Bot has routines".into()));
            };
            if let Some(r) = tx.routine_by_name(bot, &args.name)? {
                return delete_in(tx, r.id, RevisionCause::Turn(run));
            }
            let names: Vec<String> = tx
                .routines(Some(bot), None)?
                .into_iter()
                .map(|r| r.name)
                .collect();
            let yours = if names.is_empty() {
                "you have none".to_string()
            } else {
                format!("yours: {}", names.join(", "))
            };
            Err(StoreError::Invalid(format!(
                "you have no routine \"{}\"; {yours}",
                args.name.trim()
            )))
        });
        match done {
            Ok(r) => ToolReply::ok(format!(
                "Deleted the routine \"{}\": no more runs. Its job keeps its {} tickets.",
                r.name, r.runs
            )),
            Err(e) => refusal("delete_routine", e),
        }
    }
}
