//! Running one tool call: find the tool, parse its arguments, pass the guards, record the
//! effect's start in the ledger, run it, and settle the outcome. Every failure becomes a tool
//! result the model reads; the run goes on.

use crate::Engine;
use crate::extension::{GuardContext, ToolCallContext};
use crate::live::{LiveRun, StreamNotice};
use crate::run_loop::{LoopExit, owned_write};
use std::sync::Arc;
use troupe_core::effect::{EffectOutcome, effect_key, repeated_effect_notice};
use troupe_core::thread::Thread;
use troupe_core::{EffectId, MessageId};
use troupe_llm::ToolCall;
use troupe_store::EffectBegin;
use troupe_tools::{ShellEnv, ShellRecord, ToolContext, Workspace};

pub(crate) struct Dispatched {
    pub content: String,
    pub is_error: bool,
    /// ok, error, refused or repeated — as the tool call record says.
    pub status: &'static str,
    pub ends_turn: bool,
    pub shell: Option<ShellRecord>,
    /// The effect this call started, settled by the caller in the same transaction that
    /// records the result the model reads.
    pub effect: Option<EffectId>,
}

impl Dispatched {
    /// The ledger outcome for this call's effect, if it started one.
    pub fn settlement(&self) -> Option<(EffectId, EffectOutcome, String)> {
        let outcome = if self.is_error {
            EffectOutcome::Failed
        } else {
            EffectOutcome::Succeeded
        };
        self.effect
            .map(|id| (id, outcome, clip(&self.content, 500)))
    }
}

impl Dispatched {
    fn error(content: impl Into<String>) -> Self {
        Dispatched {
            content: content.into(),
            is_error: true,
            status: "error",
            ends_turn: false,
            shell: None,
            effect: None,
        }
    }
    fn done(content: String, is_error: bool) -> Self {
        Dispatched {
            content,
            is_error,
            status: if is_error { "error" } else { "ok" },
            ends_turn: false,
            shell: None,
            effect: None,
        }
    }
}

enum Gatekeeping {
    Go(Option<EffectId>),
    Stop(Dispatched),
}

pub(crate) async fn dispatch(
    engine: &Engine,
    live: &Arc<LiveRun>,
    thread: &Thread,
    message_id: MessageId,
    call: &ToolCall,
) -> Result<Dispatched, LoopExit> {
    if let Some(n) = engine.narrowed(thread)
        && !n.only.contains(&call.name)
    {
        return Ok(Dispatched::error(format!(
            "{} is refused: {} (only {} may be called now)",
            call.name,
            n.reason,
            n.only.join(", ")
        )));
    }
    if troupe_tools::is_builtin(&call.name) {
        return dispatch_builtin(engine, live, thread, message_id, call).await;
    }
    let Some(reg) = engine.inner.ext.tool(&call.name) else {
        let names: Vec<String> = engine
            .tool_specs(thread)
            .iter()
            .map(|s| s.name.clone())
            .collect();
        return Ok(Dispatched::error(format!(
            "unknown tool '{}'; available tools: {}",
            call.name,
            names.join(", ")
        )));
    };
    if !(reg.available)(thread) {
        return Ok(Dispatched::error(format!(
            "tool '{}' is not available to this thread",
            call.name
        )));
    }
    if let Err(e) = serde_json::from_str::<serde_json::Value>(non_empty(&call.arguments)) {
        return Ok(Dispatched::error(format!(
            "{}: arguments are not valid JSON: {e}",
            call.name
        )));
    }
    let effect = if reg.effectful {
        let summary = format!("{} {}", call.name, clip(&call.arguments, 200));
        match gatekeep(engine, live, thread, message_id, call, &summary)? {
            Gatekeeping::Go(e) => e,
            Gatekeeping::Stop(d) => return Ok(d),
        }
    } else {
        None
    };
    let ctx = ToolCallContext {
        thread: thread.clone(),
        run_id: live.run_id,
        message_id,
        call_id: call.id.clone(),
        store: engine.inner.store.clone(),
        cancel: live.cancel.child_token(),
    };
    let reply = reg.handler.call(&ctx, non_empty(&call.arguments)).await;
    if live.cancel.is_cancelled() {
        return Err(LoopExit::Stale);
    }
    let mut d = Dispatched::done(reply.content, reply.is_error);
    d.ends_turn = reply.ends_turn;
    d.effect = effect;
    Ok(d)
}

async fn dispatch_builtin(
    engine: &Engine,
    live: &Arc<LiveRun>,
    thread: &Thread,
    message_id: MessageId,
    call: &ToolCall,
) -> Result<Dispatched, LoopExit> {
    let parsed = match troupe_tools::parse_call(&call.name, &call.arguments) {
        Ok(p) => p,
        Err(e) => return Ok(Dispatched::error(e.to_string())),
    };
    let workspace = match Workspace::open(&thread.workspace) {
        Ok(w) => w,
        Err(e) => {
            return Ok(Dispatched::error(format!(
                "the thread's workspace cannot be used: {e}"
            )));
        }
    };
    let effect = if parsed.effectful() {
        match gatekeep(engine, live, thread, message_id, call, &parsed.summary())? {
            Gatekeeping::Go(e) => e,
            Gatekeeping::Stop(d) => return Ok(d),
        }
    } else {
        None
    };
    let on_spawn = {
        let live = live.clone();
        let store = engine.inner.store.clone();
        let stream = engine.inner.stream.clone();
        let command = parsed.summary();
        Arc::new(move |pgid: i32| {
            live.add_pgid(pgid);
            if let Some(id) = effect {
                // Recovery uses this to end a group a dead process left behind.
                if let Err(e) = store.write(|tx| tx.set_effect_pgid(id, pgid)) {
                    tracing::warn!(error = %e, "could not record a command's process group");
                }
            }
            let _ = stream.send(StreamNotice::CommandStarted {
                thread_id: live.thread_id,
                run_id: live.run_id,
                command: command.clone(),
            });
        }) as Arc<dyn Fn(i32) + Send + Sync>
    };
    let ctx = ToolContext {
        workspace,
        cancel: live.cancel.child_token(),
        env: ShellEnv::from_process_env(),
        on_spawn: Some(on_spawn),
    };
    let out = parsed.execute(&ctx).await;
    if let Some(shell) = &out.shell {
        live.remove_pgid(shell.pgid);
    }
    if live.cancel.is_cancelled() {
        // The stop already recorded this effect as unknown and ended the run.
        return Err(LoopExit::Stale);
    }
    let mut d = Dispatched::done(out.content, out.is_error);
    d.shell = out.shell;
    d.effect = effect;
    Ok(d)
}

/// Guards first, then the ledger's start record. A refusal or a repeat never runs the call.
fn gatekeep(
    engine: &Engine,
    live: &LiveRun,
    thread: &Thread,
    message_id: MessageId,
    call: &ToolCall,
    summary: &str,
) -> Result<Gatekeeping, LoopExit> {
    let store = &engine.inner.store;
    let ctx = GuardContext {
        thread,
        run_id: live.run_id,
        tool: &call.name,
        summary,
        arguments: &call.arguments,
        store,
    };
    for guard in &engine.inner.ext.guards {
        if let Err(reason) = guard.check(&ctx) {
            return Ok(Gatekeeping::Stop(Dispatched {
                content: format!("refused by {}: {reason}", guard.name()),
                is_error: true,
                status: "refused",
                ends_turn: false,
                shell: None,
                effect: None,
            }));
        }
    }
    let key = effect_key(message_id, &call.id);
    let begin = owned_write(engine, live, |tx| {
        tx.begin_effect(thread.id, live.run_id, &key, &call.name, summary)
    })?;
    Ok(match begin {
        EffectBegin::Started(id) => Gatekeeping::Go(Some(id)),
        EffectBegin::Repeated(previous) => Gatekeeping::Stop(Dispatched {
            content: repeated_effect_notice(previous),
            is_error: true,
            status: "repeated",
            ends_turn: false,
            shell: None,
            effect: None,
        }),
    })
}

fn non_empty(args: &str) -> &str {
    if args.trim().is_empty() { "{}" } else { args }
}

pub(crate) fn clip(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max_chars).collect();
    out.push('…');
    out
}
