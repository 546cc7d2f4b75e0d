//! The timeout lessons' guard on `shell` (digest 003-B §10.1): a call of a kind a lesson
//! names is, under `warn`, not run the first time in a turn — the Bot is told what happened
//! and how to narrow it, and the same call again runs — and under `block` never run. The
//! lessons are learned where the timeout is recorded (`Tx::command_timed_out`).

use troupe_core::lesson::{CallAnswer, answer_call, refusal_text, search_kind};
use troupe_engine::extension::{EffectGuard, GuardContext, Refusal};
use troupe_store::shell_folder;

pub struct LessonGuard;

impl EffectGuard for LessonGuard {
    fn name(&self) -> &str {
        "lessons"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        if ctx.tool != "shell" {
            return Ok(());
        }
        let args: serde_json::Value = serde_json::from_str(ctx.arguments).unwrap_or_default();
        let Some(command) = args["command"].as_str() else {
            return Ok(());
        };
        let cwd = shell_folder(&ctx.thread.workspace, args["workdir"].as_str());
        let Some(kind) = search_kind(command, &cwd) else {
            return Ok(());
        };
        let found = ctx.store.read(|tx| {
            let Some(lesson) = tx.lesson_of(&kind)? else {
                return Ok(None);
            };
            let warned = tx.lesson_warned_in(ctx.run_id, lesson.id)?;
            Ok(Some((lesson, warned)))
        });
        let (lesson, warned) = match found {
            Ok(Some(f)) => f,
            Ok(None) => return Ok(()),
            // A lesson that cannot be read lets the call run: the timeout still bounds it.
            Err(e) => {
                tracing::warn!(error = %e, "the lessons could not be read");
                return Ok(());
            }
        };
        match answer_call(lesson.state, warned) {
            CallAnswer::Run => Ok(()),
            answer => Err(Refusal::from(refusal_text(
                lesson.id,
                answer,
                &kind,
                lesson.timeouts,
                &lesson.command,
            ))),
        }
    }
}
