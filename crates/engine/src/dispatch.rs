//! Running one tool call, in three parts so the loop can choose its commits: [`check`] finds the
//! tool, parses its arguments and passes the guards (writing nothing); [`EffectStart::begin`]
//! records an effect's start in the ledger inside whichever commit precedes the call; [`run`]
//! runs it. The caller settles the outcome with the result. Every failure becomes a tool result
//! the model reads; the run goes on.

use crate::Engine;
use crate::extension::{
    BeforeCall, GuardContext, InterceptedCall, ToolCallContext, ToolInterceptor, ToolRegistration,
    ToolReply,
};
use crate::live::{LiveRun, StreamNotice};
use crate::run_loop::LoopExit;
use std::sync::Arc;
use troupe_core::effect::{EffectOutcome, effect_key, repeated_effect_notice};
use troupe_core::run::EndReason;
use troupe_core::thread::Thread;
use troupe_core::{EffectId, MessageId, RunId, ThreadId};
use troupe_llm::ToolCall;
use troupe_store::{EffectBegin, StoreError, Tx};
use troupe_tools::{BuiltinCall, ShellEnv, ShellRecord, ToolContext, Workspace};

pub(crate) struct Dispatched {
    pub content: String,
    pub is_error: bool,
    /// ok, error, refused or repeated — as the tool call record says.
    pub status: &'static str,
    pub ends_turn: bool,
    /// The call ended the run this way (a tool's or a guard's verdict): later calls of the hop
    /// are not run.
    pub ends_run: Option<EndReason>,
    pub shell: Option<ShellRecord>,
    /// The effect this call started, settled by the caller in the same transaction that
    /// records the result the model reads.
    pub effect: Option<EffectId>,
    /// The tool could not tell whether its effect happened (sent, then no answer).
    pub outcome_unknown: bool,
}

impl Dispatched {
    /// The ledger outcome for this call's effect, if it started one.
    pub fn settlement(&self) -> Option<(EffectId, EffectOutcome, String)> {
        let outcome = if self.outcome_unknown {
            EffectOutcome::Unknown
        } else if self.is_error {
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
            ends_run: None,
            shell: None,
            effect: None,
            outcome_unknown: false,
        }
    }
    /// Not run: the person changed what they asked for before this call ran. Recorded as a
    /// refusal (nothing ran, no effect was started).
    fn deferred(tool: &str) -> Self {
        Dispatched {
            content: format!(
                "deferred: {tool} was not run because the person sent a new message before it \
                 could; read it (it follows) and decide again whether this call is still wanted"
            ),
            is_error: true,
            status: "refused",
            ends_turn: false,
            ends_run: None,
            shell: None,
            effect: None,
            outcome_unknown: false,
        }
    }
    /// Not run: an earlier call of the same hop ended the run.
    pub(crate) fn skipped(reason: &EndReason) -> Self {
        Dispatched {
            content: format!("not run: an earlier call in this step ended the turn ({reason})"),
            is_error: true,
            status: "refused",
            ends_turn: false,
            ends_run: None,
            shell: None,
            effect: None,
            outcome_unknown: false,
        }
    }
    fn done(content: String, is_error: bool) -> Self {
        Dispatched {
            content,
            is_error,
            status: if is_error { "error" } else { "ok" },
            ends_turn: false,
            ends_run: None,
            shell: None,
            effect: None,
            outcome_unknown: false,
        }
    }
}
/// A call checked and ready to run: nothing it does has happened yet.
pub(crate) struct Prepared {
    target: Target,
    /// For a call with a side effect: what its ledger start records (it passed the guards).
    effect: Option<EffectStart>,
}

enum Target {
    Builtin(Box<BuiltinCall>, Workspace),
    /// With the interceptors that claim its calls.
    Registered(ToolRegistration, Vec<Arc<dyn ToolInterceptor>>),
}

/// The ledger start an effectful call needs before it acts; written in whichever commit comes
/// right before the call (its reply's, or the previous call's result).
#[derive(Clone)]
pub(crate) struct EffectStart {
    tool: String,
    call_id: String,
    summary: String,
}

impl EffectStart {
    /// Record the start; answers whether the call may run (`Repeated` never runs it again).
    pub fn begin(
        &self,
        tx: &mut Tx<'_>,
        thread: ThreadId,
        run: RunId,
        message_id: MessageId,
    ) -> Result<EffectBegin, StoreError> {
        let key = effect_key(message_id, &self.call_id);
        tx.begin_effect(thread, run, &key, &self.tool, &self.summary)
    }
}

/// What looking at a call before it runs found.
pub(crate) enum Checked {
    /// Refused or malformed: this is its result, and nothing ran.
    Done(Dispatched),
    Ready(Prepared),
}

impl Checked {
    /// The ledger start this call needs, if it is ready and has a side effect.
    pub fn effect(&self) -> Option<&EffectStart> {
        match self {
            Checked::Ready(p) => p.effect.as_ref(),
            Checked::Done(_) => None,
        }
    }

    /// A call that may run before the reply asking for it is committed, and share its commit:
    /// one that is refused anyway, or whose tool neither acts outside the store nor writes it.
    pub fn runs_before_reply(&self) -> bool {
        match self {
            Checked::Done(_) => true,
            Checked::Ready(p) => {
                p.effect.is_none()
                    && match &p.target {
                        Target::Builtin(..) => true,
                        Target::Registered(reg, claimed) => reg.read_only && claimed.is_empty(),
                    }
            }
        }
    }
}

/// Look a call up, parse its arguments and, for a call with a side effect, pass the guards.
/// Writes nothing.
/// A call whose arguments the reply's output cap cut off (the reply ended `length` with them
/// still open): the model is told that, not only that they are not JSON, so that it makes the
/// call smaller rather than sending the same call again to be cut at the same place. `cap`:
/// the cap the request went out with, when known.
pub(crate) fn cut_at_cap(call: &ToolCall, cap: Option<u32>) -> Option<Checked> {
    let raw = call.arguments.trim();
    if raw.is_empty() || serde_json::from_str::<serde_json::Value>(raw).is_ok() {
        return None;
    }
    let limit = match cap {
        Some(n) => format!("the most one reply may run to ({n} tokens)"),
        None => "the most its server lets one reply run to".to_string(),
    };
    Some(Checked::Done(Dispatched::error(format!(
        "{}: your reply reached {limit} before this call's arguments ended ({} characters \
         came); nothing was run. Make the call smaller: write a long file in parts (write_file \
         with the first part, then edit_file adding each next part after its last lines), and \
         put less text before the call.",
        call.name,
        raw.chars().count()
    ))))
}

/// A call whose arguments the model server could not read and stopped the reply inside (the
/// reply ended `unreadable`): the model is shown where its arguments stopped being readable,
/// most often at a quote it left unescaped inside a string, so that it mends the call rather
/// than sending the same words again.
pub(crate) fn cut_unreadable(call: &ToolCall) -> Option<Checked> {
    let raw = call.arguments.trim();
    if serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(raw).is_ok() {
        return None;
    }
    let chars: Vec<char> = raw.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(60)..].iter().collect();
    let lead = if chars.len() > 60 { "…" } else { "" };
    Some(Checked::Done(Dispatched::error(format!(
        "{}: the model server could not read this call and stopped your reply inside its \
         arguments, after `{lead}{tail}` ({} characters came); nothing was run. Send the call \
         again as one whole JSON object: inside a string, write a quote as \\\" and a line \
         break as \\n.",
        call.name,
        chars.len()
    ))))
}

pub(crate) fn check(engine: &Engine, live: &LiveRun, thread: &Thread, call: &ToolCall) -> Checked {
    // A change the person sent while this hop ran: its calls not yet run wait for the model to
    // read it (TURN-4). The steer joins the context at the next call.
    if live.postponed() {
        return Checked::Done(Dispatched::deferred(&call.name));
    }
    match engine
        .inner
        .store
        .read(|tx| tx.has_deferring_steer(thread.id))
    {
        Ok(true) => return Checked::Done(Dispatched::deferred(&call.name)),
        Ok(false) => {}
        Err(e) => {
            tracing::warn!(thread = %thread.id, error = %e, "could not look for a deferring line; the call runs")
        }
    }
    if let Some(n) = engine.narrowed(thread)
        && !n.only.contains(&call.name)
        && !engine.kept_sourced(thread, &n).contains(&call.name)
    {
        return Checked::Done(Dispatched::error(format!(
            "{} is refused: {} (only {} may be called now)",
            call.name,
            n.reason,
            n.only.join(", ")
        )));
    }
    let (target, summary) = if troupe_tools::is_builtin(&call.name) {
        let parsed = match troupe_tools::parse_call(&call.name, &call.arguments) {
            Ok(p) => p,
            Err(e) => return Checked::Done(Dispatched::error(e.to_string())),
        };
        let workspace = match thread_workspace(thread) {
            Ok(w) => w,
            Err(e) => {
                return Checked::Done(Dispatched::error(format!(
                    "the thread's workspace cannot be used: {e}"
                )));
            }
        };
        let summary = parsed.effectful().then(|| parsed.summary());
        (Target::Builtin(Box::new(parsed), workspace), summary)
    } else {
        let sourced;
        let found = match engine.inner.ext.tool(&call.name) {
            Some(reg) => Some(reg),
            None => {
                sourced = engine.inner.ext.sourced_tools(thread);
                sourced.iter().find(|t| t.spec.name == call.name)
            }
        };
        let Some(reg) = found else {
            let names: Vec<String> = engine
                .tool_specs(thread)
                .iter()
                .map(|s| s.name.clone())
                .collect();
            return Checked::Done(Dispatched::error(format!(
                "unknown tool '{}'; available tools: {}",
                call.name,
                names.join(", ")
            )));
        };
        if !(reg.available)(thread) {
            return Checked::Done(Dispatched::error(format!(
                "tool '{}' is not available to this thread",
                call.name
            )));
        }
        if let Err(e) = serde_json::from_str::<serde_json::Value>(non_empty(&call.arguments)) {
            return Checked::Done(Dispatched::error(format!(
                "{}: {}",
                call.name,
                troupe_tools::not_json(&call.arguments, &e)
            )));
        }
        let summary = reg
            .effectful
            .then(|| format!("{} {}", call.name, clip(&call.arguments, 200)));
        let claimed = engine.inner.ext.interceptors_of(&call.name);
        (Target::Registered(reg.clone(), claimed), summary)
    };
    let effect = match summary {
        None => None,
        Some(summary) => {
            if let Some(refusal) = guard(engine, live, thread, call, &summary) {
                return Checked::Done(refusal);
            }
            Some(EffectStart {
                tool: call.name.clone(),
                call_id: call.id.clone(),
                summary,
            })
        }
    };
    Checked::Ready(Prepared { target, effect })
}

/// Run a checked call. `begun` is how its ledger start went (for a call with a side effect);
/// `message_id` is its reply's once that is committed (a call run before its reply has none).
pub(crate) async fn run(
    engine: &Engine,
    live: &Arc<LiveRun>,
    thread: &Thread,
    message_id: Option<MessageId>,
    call: &ToolCall,
    checked: Checked,
    begun: Option<EffectBegin>,
) -> Result<Dispatched, LoopExit> {
    let prepared = match checked {
        Checked::Done(d) => return Ok(d),
        Checked::Ready(p) => p,
    };
    let effect = match begun {
        Some(EffectBegin::Repeated(previous)) => {
            return Ok(Dispatched {
                content: repeated_effect_notice(previous),
                is_error: true,
                status: "repeated",
                ends_turn: false,
                ends_run: None,
                shell: None,
                effect: None,
                outcome_unknown: false,
            });
        }
        Some(EffectBegin::Started(id)) => Some(id),
        None => None,
    };
    if prepared.effect.is_some() && effect.is_none() {
        return Ok(Dispatched::error(
            "internal: the call's effect start was not recorded, so it was not run",
        ));
    }
    let mut d = match prepared.target {
        Target::Registered(reg, claimed) => {
            let ctx = ToolCallContext {
                thread: thread.clone(),
                run_id: live.run_id,
                message_id,
                call_id: call.id.clone(),
                store: engine.inner.store.clone(),
                cancel: live.cancel.child_token(),
            };
            let reply = intercepted(&reg, &claimed, &ctx, &call.name, &call.arguments).await;
            let mut d = Dispatched::done(reply.content, reply.is_error);
            d.outcome_unknown = reply.outcome_unknown;
            d.ends_turn = reply.ends_turn || reply.ends_run.is_some();
            d.ends_run = reply.ends_run;
            d
        }
        Target::Builtin(parsed, workspace) => {
            run_builtin(engine, live, *parsed, workspace, effect).await
        }
    };
    if live.cancel.is_cancelled() {
        // The stop already recorded any effect as unknown and ended the run.
        return Err(LoopExit::Stale);
    }
    d.effect = effect;
    Ok(d)
}

/// A registered tool's call through the interceptors that claim it: each `before` in order
/// (the first answer stands in for the tool), the tool, then each `after`.
async fn intercepted(
    reg: &ToolRegistration,
    claimed: &[Arc<dyn ToolInterceptor>],
    ctx: &ToolCallContext,
    tool: &str,
    arguments: &str,
) -> ToolReply {
    let arguments = non_empty(arguments);
    let call = InterceptedCall {
        ctx,
        tool,
        owner: &reg.owner,
    };
    let mut sent = arguments.to_string();
    let mut answer = None;
    for i in claimed {
        match i.before(&call, &sent).await {
            BeforeCall::Proceed => {}
            BeforeCall::Rewrite(a) => sent = a,
            BeforeCall::Answer(reply) => {
                answer = Some(reply);
                break;
            }
        }
    }
    let mut reply = match answer {
        Some(reply) => reply,
        None => reg.handler.call(ctx, &sent).await,
    };
    for i in claimed {
        reply = i.after(&call, arguments, reply).await;
    }
    reply
}

impl Engine {
    /// The registered or sourced tool `name` as `thread` may call it now, for a layer that
    /// calls it outside a turn (e.g. a poller asking a server about work it accepted).
    pub fn callable_tool(&self, thread: &Thread, name: &str) -> Option<ToolRegistration> {
        let reg = match self.inner.ext.tool(name) {
            Some(reg) => reg.clone(),
            None => self
                .inner
                .ext
                .sourced_tools(thread)
                .into_iter()
                .find(|t| t.spec.name == name)?,
        };
        (reg.available)(thread).then_some(reg)
    }
}

async fn run_builtin(
    engine: &Engine,
    live: &Arc<LiveRun>,
    parsed: BuiltinCall,
    workspace: Workspace,
    effect: Option<EffectId>,
) -> Dispatched {
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
    let out = parsed.execute_for(&ctx, live.takes_pictures()).await;
    if let Some(shell) = &out.shell {
        live.remove_pgid(shell.pgid);
    }
    let mut d = Dispatched::done(out.content, out.is_error);
    d.shell = out.shell;
    d
}

/// The guards, in order; the first refusal is the call's result and it never runs.
fn guard(
    engine: &Engine,
    live: &LiveRun,
    thread: &Thread,
    call: &ToolCall,
    summary: &str,
) -> Option<Dispatched> {
    let ctx = GuardContext {
        thread,
        run_id: live.run_id,
        tool: &call.name,
        summary,
        arguments: &call.arguments,
        store: &engine.inner.store,
    };
    engine.inner.ext.guards.iter().find_map(|guard| {
        guard.check(&ctx).err().map(|refusal| Dispatched {
            content: format!("refused by {}: {}", guard.name(), refusal.text),
            is_error: true,
            status: "refused",
            ends_turn: refusal.ends_run.is_some(),
            ends_run: refusal.ends_run,
            shell: None,
            effect: None,
            outcome_unknown: false,
        })
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

/// The folder a thread's tools reach: its own, or the root it works inside (a job's thread in
/// its job's folder reaches the conversation's folder above it).
pub(crate) fn thread_workspace(thread: &Thread) -> Result<Workspace, troupe_tools::ToolError> {
    match &thread.workspace_root {
        Some(root) => Workspace::open_in(root, &thread.workspace),
        None => Workspace::open(&thread.workspace),
    }
}
