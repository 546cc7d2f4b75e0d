//! The kernel's extension points. Consumers (collaboration, workflows, pipelines) register
//! these at build time instead of editing the loop.

use async_trait::async_trait;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use troupe_core::inbox::Delivery;
use troupe_core::run::EndReason;
use troupe_core::thread::Thread;
use troupe_core::{MessageId, RunId};
use troupe_llm::ToolSpec;
use troupe_store::Store;

/// An admission check's answer before a run starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    Admit,
    /// Do not start; the cause is recorded and the work stays queued in the inbox.
    Refuse(String),
    /// Do not start now; recorded, and retried when another run ends.
    Queue(String),
}

pub struct AdmissionContext<'a> {
    pub thread: &'a Thread,
    pub store: &'a Store,
    /// Runs live in this engine right now.
    pub live_runs: usize,
    pub reason: &'a str,
}

pub trait AdmissionCheck: Send + Sync {
    fn name(&self) -> &str;
    fn check(&self, ctx: &AdmissionContext<'_>) -> Admission;
}

pub struct GuardContext<'a> {
    pub thread: &'a Thread,
    pub run_id: RunId,
    pub tool: &'a str,
    /// One line saying what the call would do.
    pub summary: &'a str,
    pub arguments: &'a str,
    pub store: &'a Store,
}

/// A guard's refusal: the tool result the model reads and, when the refusal is final for the
/// run (a budget spent), how the run ends; the hop's later calls are then not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub text: String,
    pub ends_run: Option<EndReason>,
}

impl From<String> for Refusal {
    fn from(text: String) -> Self {
        Refusal {
            text,
            ends_run: None,
        }
    }
}

impl From<&str> for Refusal {
    fn from(text: &str) -> Self {
        Refusal::from(text.to_string())
    }
}

impl Refusal {
    pub fn ending(text: impl Into<String>, reason: EndReason) -> Self {
        Refusal {
            text: text.into(),
            ends_run: Some(reason),
        }
    }
}

/// Runs before the effect ledger records a side effect's start. A refusal is the tool result
/// the model reads.
pub trait EffectGuard: Send + Sync {
    fn name(&self) -> &str;
    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), Refusal>;
}

/// Sections a contributor adds to one model call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextParts {
    /// Appended to the agent's system prompt.
    pub system: Vec<String>,
    /// The situation block (a job's plan, quoted words, tickets), after the system prompt.
    pub situation: Vec<String>,
}

/// Shapes what the model sees, per call, without rewriting stored messages.
pub trait ContextContributor: Send + Sync {
    fn name(&self) -> &str;
    /// Add system sections or situation blocks for this call.
    fn contribute(&self, _thread: &Thread, _store: &Store, _out: &mut ContextParts) {}
    /// A stamp to fix on a new root user message when it is written (e.g. the active workflow).
    /// Called inside the write, possibly on the store's writer thread: a pure function of `thread`.
    fn stamp_root(&self, _thread: &Thread) -> Option<Value> {
        None
    }
    /// Wrap the first text of a stamped root user message at assembly time.
    fn wrap_root(&self, _stamp: &Value, _text: &str) -> Option<String> {
        None
    }
    /// Leave a stored message out of the projected history.
    fn hides(&self, _message: &troupe_core::message::Message) -> bool {
        false
    }
}

/// What a registered tool returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolReply {
    pub content: String,
    pub is_error: bool,
    /// The tool ends the turn (as a final answer would); ending hooks still run.
    pub ends_turn: bool,
    /// The tool ends the run at once, this way: the hop's later calls are not run and no
    /// ending hook is asked (the tool was the ending).
    pub ends_run: Option<EndReason>,
    /// Whether the effect happened is not known (the call was sent, then timed out or its
    /// peer went away): an effectful call's ledger outcome is `unknown`, not `failed`.
    pub outcome_unknown: bool,
}

impl ToolReply {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolReply {
            content: content.into(),
            is_error: false,
            ends_turn: false,
            ends_run: None,
            outcome_unknown: false,
        }
    }
    pub fn error(content: impl Into<String>) -> Self {
        ToolReply {
            content: content.into(),
            is_error: true,
            ends_turn: false,
            ends_run: None,
            outcome_unknown: false,
        }
    }
    /// An error after the call was sent, where whether it acted is not known.
    pub fn unknown(content: impl Into<String>) -> Self {
        ToolReply {
            outcome_unknown: true,
            ..ToolReply::error(content)
        }
    }
    /// A result that ends the run with a layer's own code.
    pub fn ending(content: impl Into<String>, is_error: bool, reason: EndReason) -> Self {
        ToolReply {
            content: content.into(),
            is_error,
            ends_turn: true,
            ends_run: Some(reason),
            outcome_unknown: false,
        }
    }
}

/// What a tool that needs its reply's id answers when it has none (a kernel bug: only
/// `read_only` tools run before their reply is committed).
pub fn no_reply_id(tool: &str) -> ToolReply {
    ToolReply::error(format!(
        "internal: {tool} ran before the reply asking for it was recorded; nothing was changed"
    ))
}

pub struct ToolCallContext {
    pub thread: Thread,
    pub run_id: RunId,
    /// The reply that asked for the call. `None` only for a `read_only` tool, which may run
    /// before its reply is committed (the step then commits once).
    pub message_id: Option<MessageId>,
    pub call_id: String,
    pub store: Store,
    pub cancel: CancellationToken,
}

#[async_trait]
pub trait ToolHandler: Send + Sync {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply;
}

/// One call an interceptor sees: the call's context, the tool's name as the model called it,
/// and who registered the tool (a source's registrations carry theirs, e.g. `mcp:<server>`).
pub struct InterceptedCall<'a> {
    pub ctx: &'a ToolCallContext,
    pub tool: &'a str,
    pub owner: &'a str,
}

/// What an interceptor decides before a claimed call runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BeforeCall {
    /// Run the tool with the arguments as they are.
    Proceed,
    /// Run it with these arguments instead (e.g. without a field meant for the layer).
    Rewrite(String),
    /// Do not run it: this is its result.
    Answer(ToolReply),
}

/// Stands around calls of registered and sourced tools it claims (by name), e.g. to answer a
/// call from a record instead of reaching a server, or to record what a call returned. The
/// effect ledger and the guards still apply as for any call. A claimed call never runs before
/// its reply is committed, so an interceptor may write the store.
#[async_trait]
pub trait ToolInterceptor: Send + Sync {
    fn name(&self) -> &str;
    fn claims(&self, tool: &str) -> bool;
    /// Asked in registration order; the first `Answer` wins and the tool is not called.
    async fn before(&self, call: &InterceptedCall<'_>, arguments: &str) -> BeforeCall;
    /// Sees the result (the tool's, or an earlier interceptor's answer) and may change it.
    /// `arguments` are the ones the model sent.
    async fn after(
        &self,
        call: &InterceptedCall<'_>,
        arguments: &str,
        reply: ToolReply,
    ) -> ToolReply;
}

/// Tools whose set changes while the engine runs (servers added or gone, tools re-listed):
/// asked for each model call and each call it dispatches, so keep it cheap. Names that clash
/// with a built-in or a fixed registration are left out (the source should refuse them first).
pub trait ToolSource: Send + Sync {
    fn name(&self) -> &str;
    /// The tools this thread may see and call now.
    fn tools(&self, thread: &Thread) -> Vec<ToolRegistration>;
}

/// Which threads may see and call a tool.
pub type Availability = Arc<dyn Fn(&Thread) -> bool + Send + Sync>;

/// A tool registered by its owner (a layer above the kernel).
#[derive(Clone)]
pub struct ToolRegistration {
    pub owner: String,
    pub spec: ToolSpec,
    /// Effectful tools pass the guards and the effect ledger like the built-in ones.
    pub effectful: bool,
    /// The handler has no side effect and writes nothing (it may read): the kernel may run it
    /// before the reply asking for it is committed, so the step shares one commit.
    pub read_only: bool,
    pub available: Availability,
    pub handler: Arc<dyn ToolHandler>,
}

pub struct EndingContext<'a> {
    pub thread: &'a Thread,
    pub run_id: RunId,
    pub final_text: &'a str,
    pub store: &'a Store,
    /// The hooks that sent this run's ending back so far, in order (one entry per bounce).
    pub bounced: &'a [String],
}

/// What an ending hook decides about a turn the model ended with a final answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndingVerdict {
    Pass,
    /// Send the ending back with this text the model reads; the run goes on.
    Bounce(String),
    /// End the run this way instead of as completed.
    End(EndReason),
}

/// Decides about each final answer: a hook may bounce it as often as it likes (it sees its
/// earlier bounces in the context); the kernel stops asking after [`MAX_ENDING_BOUNCES`].
pub trait EndingHook: Send + Sync {
    fn name(&self) -> &str;
    fn check(&self, ctx: &EndingContext<'_>) -> EndingVerdict;
}

/// Bounces one run may take; past it the ending stands, so no hook can keep a run alive.
pub const MAX_ENDING_BOUNCES: usize = 8;

/// Sees runs start and end inside the transactions that record it (a run's segment row, a work
/// item's settlement), on any of the paths a run ends by: its loop, a stop, recovery, shutdown.
/// Like [`MessageObserver`], it may be called on the store's writer thread.
pub trait RunObserver: Send + Sync {
    fn on_run_started(
        &self,
        _tx: &mut troupe_store::Tx<'_>,
        _run: &troupe_store::RunRecord,
    ) -> Result<(), troupe_store::StoreError> {
        Ok(())
    }
    fn on_run_ended(
        &self,
        _tx: &mut troupe_store::Tx<'_>,
        _run: &troupe_store::RunRecord,
    ) -> Result<(), troupe_store::StoreError> {
        Ok(())
    }
}

/// The thread state a continuation policy is asked about (the shared gate has passed).
pub struct Gate<'a> {
    pub thread: &'a Thread,
    pub terminal_message_id: MessageId,
    pub store: &'a Store,
}

pub enum Proposal {
    None,
    /// The policy acted itself; nothing to deliver.
    Handled,
    /// Deliver this (its key defaults to `continuation:<policy>:<revision>`).
    Inbox(Delivery),
}

pub trait ContinuationPolicy: Send + Sync {
    fn id(&self) -> &str;
    /// Higher goes first.
    fn priority(&self) -> i32;
    /// What makes a proposal new; defaults to the terminal reply's id.
    fn revision_key(&self, _gate: &Gate<'_>) -> Result<Option<String>, String> {
        Ok(None)
    }
    fn propose(&self, gate: &Gate<'_>) -> Result<Proposal, String>;
}

/// Sees every message the engine writes, inside the transaction that writes it, so a layer
/// above (e.g. a conversation shown to people) can project it atomically. It may be called on
/// the store's writer thread (outside any tokio runtime) and must only work through `tx`.
pub trait MessageObserver: Send + Sync {
    fn on_message(
        &self,
        tx: &mut troupe_store::Tx<'_>,
        message: &troupe_core::message::Message,
    ) -> Result<(), troupe_store::StoreError>;
}

/// Reports blocking waits (a child task running, a one-shot watch) that close the gate.
pub trait WaitProvider: Send + Sync {
    fn name(&self) -> &str;
    fn waits(&self, thread: &Thread, store: &Store) -> Result<Vec<String>, String>;
}

/// What a [`ToolScope`] leaves a thread for its next model call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Narrowed {
    /// The only tools offered and callable (built-in or registered names).
    pub only: Vec<String>,
    /// Why, as the model is told when it calls anything else.
    pub reason: String,
    /// Tools from a tool source that have no effect (e.g. an MCP server's read-only tools)
    /// stay offered and callable too.
    pub keep_sourced_read_only: bool,
}

/// Narrows the tools a thread sees and may call for a turn (e.g. a turn that may only give a
/// verdict). The first scope that narrows wins; none leaves the tools as they are. A scope
/// that fails leaves them too (guards still check effectful calls).
pub trait ToolScope: Send + Sync {
    fn name(&self) -> &str;
    fn narrow(&self, thread: &Thread, store: &Store) -> Result<Option<Narrowed>, String>;
}

/// Everything registered, fixed once the engine is built.
#[derive(Default, Clone)]
pub struct Extensions {
    pub(crate) admission: Vec<Arc<dyn AdmissionCheck>>,
    pub(crate) guards: Vec<Arc<dyn EffectGuard>>,
    pub(crate) contexts: Vec<Arc<dyn ContextContributor>>,
    pub(crate) tools: Vec<ToolRegistration>,
    pub(crate) endings: Vec<Arc<dyn EndingHook>>,
    pub(crate) policies: Vec<Arc<dyn ContinuationPolicy>>,
    pub(crate) waits: Vec<Arc<dyn WaitProvider>>,
    pub(crate) observers: Vec<Arc<dyn MessageObserver>>,
    pub(crate) scopes: Vec<Arc<dyn ToolScope>>,
    pub(crate) runs: Vec<Arc<dyn RunObserver>>,
    pub(crate) sources: Vec<Arc<dyn ToolSource>>,
    pub(crate) interceptors: Vec<Arc<dyn ToolInterceptor>>,
}

impl Extensions {
    /// Registration is idempotent by id; policies stay in descending priority.
    pub(crate) fn add_policy(&mut self, p: Arc<dyn ContinuationPolicy>) {
        self.policies.retain(|q| q.id() != p.id());
        self.policies.push(p);
        self.policies.sort_by(|a, b| {
            b.priority()
                .cmp(&a.priority())
                .then_with(|| a.id().cmp(b.id()))
        });
    }

    pub(crate) fn add_tool(&mut self, t: ToolRegistration) -> Result<(), String> {
        if troupe_tools::is_builtin(&t.spec.name)
            || self.tools.iter().any(|x| x.spec.name == t.spec.name)
        {
            return Err(format!(
                "a tool named '{}' is already registered",
                t.spec.name
            ));
        }
        self.tools.push(t);
        Ok(())
    }

    /// Tell every observer about a message just written in `tx`.
    pub(crate) fn observe(
        &self,
        tx: &mut troupe_store::Tx<'_>,
        message: &troupe_core::message::Message,
    ) -> Result<(), troupe_store::StoreError> {
        for o in &self.observers {
            o.on_message(tx, message)?;
        }
        Ok(())
    }

    pub(crate) fn run_started(
        &self,
        tx: &mut troupe_store::Tx<'_>,
        run: &troupe_store::RunRecord,
    ) -> Result<(), troupe_store::StoreError> {
        for o in &self.runs {
            o.on_run_started(tx, run)?;
        }
        Ok(())
    }

    pub(crate) fn run_ended(
        &self,
        tx: &mut troupe_store::Tx<'_>,
        run: &troupe_store::RunRecord,
    ) -> Result<(), troupe_store::StoreError> {
        for o in &self.runs {
            o.on_run_ended(tx, run)?;
        }
        Ok(())
    }

    /// The interceptors that claim calls of `tool`, in registration order.
    pub(crate) fn interceptors_of(&self, tool: &str) -> Vec<Arc<dyn ToolInterceptor>> {
        self.interceptors
            .iter()
            .filter(|i| i.claims(tool))
            .cloned()
            .collect()
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&ToolRegistration> {
        self.tools.iter().find(|t| t.spec.name == name)
    }

    /// The tools the sources offer this thread now, without names already taken.
    pub(crate) fn sourced_tools(&self, thread: &Thread) -> Vec<ToolRegistration> {
        let mut out: Vec<ToolRegistration> = Vec::new();
        for source in &self.sources {
            for t in source.tools(thread) {
                let name = &t.spec.name;
                if troupe_tools::is_builtin(name)
                    || self.tool(name).is_some()
                    || out.iter().any(|x| &x.spec.name == name)
                {
                    tracing::warn!(source = source.name(), tool = %name, "a sourced tool's name is taken; left out");
                    continue;
                }
                out.push(t);
            }
        }
        out
    }
}
