//! Running one operator as a Troupe agent thread: its binding (the operator's prompt and the
//! response contract as the system prompt, its profile as the model role), the instruction
//! delivered as its task, and the job that waits for the thread to go idle.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{Semaphore, mpsc};
use troupe_core::ThreadId;
use troupe_core::inbox::Delivery;
use troupe_core::thread::{AgentBinding, EndpointSpec, Interaction};
use troupe_engine::Engine;
use troupe_store::NewThread;

use super::lease_guard::{AgentLease, LeaseTable};
use crate::defs::Operator;
use crate::session::{BranchKey, Request};

/// The folder, inside the session, that holds the session checkout (a git worktree on
/// `session/<sessionId>`).
pub const CHECKOUT_DIR: &str = "checkout";

/// What every operator is told about the contract, after its own prompt.
const CONTRACT: &str = "\n\n## The pipeline contract\n\n\
You run one branch of a pipeline session. Your workspace is the session folder; every path \
you are given is relative to it. Read your request first. Write only under your branch's \
response folder (and, if you write source, under your write roots in `checkout/`); any other \
write is refused. Write `response.md` for people, then `response.json` last: it is the only \
thing that routes. `response.json` holds `schemaVersion` (1), `operatorId`, `step`, \
`parallel`, (`exchange` when you answer one), `status` (`done`, `blocked` or `waiting`), \
`stop` (a stop code) when blocked, `awaiting` (`{\"exchange\", \"kind\"}`) when waiting, \
`fallbacks` (`[{\"code\", \"note\"}]`), `fields` (kind → path relative to the branch folder, \
e.g. `response/data/plan.json`), `writes` (checkout paths you changed, source writers only), \
`next` and `reason`. Do not commit: the runner commits your declared writes once.";

/// One agent run the runner waits for.
#[derive(Debug, Clone)]
pub(crate) struct AgentJob {
    pub key: BranchKey,
    pub exchange: Option<String>,
    pub operator: String,
    /// Continue this thread (a resume, or a re-run after a gate refusal); none for a fresh
    /// agent.
    pub thread: Option<ThreadId>,
    pub task: String,
    /// How many times the gate has refused this answer so far.
    pub refusals: u32,
}

impl AgentJob {
    pub fn agent_key(&self) -> String {
        match &self.exchange {
            Some(x) => self.key.exchange_key(x),
            None => self.key.to_string(),
        }
    }
}

/// A finished agent run.
#[derive(Debug)]
pub(crate) struct Finished {
    pub job: AgentJob,
    pub thread: ThreadId,
    pub error: Option<String>,
}

/// Everything a job needs besides its own fields.
#[derive(Clone)]
pub(crate) struct AgentContext {
    pub engine: Engine,
    pub leases: LeaseTable,
    pub slots: Arc<Semaphore>,
    pub done: mpsc::UnboundedSender<Finished>,
    /// Set when the session stopped: jobs still waiting for a slot do not start.
    pub cancelled: Arc<AtomicBool>,
}

/// The binding of `op`'s agent: name, prompt, role (its profile) and, when the run names one
/// for it, its own endpoint.
pub(crate) fn binding(op: &Operator, endpoint: Option<&EndpointSpec>) -> AgentBinding {
    let mut b = AgentBinding::new(op.id(), format!("{}{CONTRACT}", op.prompt.trim_end()));
    b.role = op.def.profile.clone();
    b.endpoint = endpoint.cloned();
    b
}

/// The lease of `op`'s agent on `key` (or its exchange) in the session at `root`.
pub(crate) fn lease(
    root: &Path,
    op: &Operator,
    key: BranchKey,
    exchange: Option<&str>,
) -> AgentLease {
    let branch = root.join(key.to_string());
    let mut roots = vec![match exchange {
        Some(x) => branch.join(x).join("response"),
        None => branch.join("response"),
    }];
    if op.def.writes_source && exchange.is_none() {
        let checkout = root.join(CHECKOUT_DIR);
        roots.extend(
            op.def
                .write_roots
                .iter()
                .map(|r| checkout.join(r.trim_matches('/'))),
        );
    }
    AgentLease {
        agent: match exchange {
            Some(x) => key.exchange_key(x),
            None => key.to_string(),
        },
        operator: op.id().to_string(),
        workspace: root.to_path_buf(),
        roots,
        tools: op.def.tools.clone(),
    }
}

/// The task that opens a branch (or an exchange): where the request is, where to answer, what
/// to record.
pub(crate) fn open_task(op: &Operator, request: &Request, extra: Option<&str>) -> String {
    let key = request.branch();
    let (folder, what) = match &request.exchange {
        Some(x) => (
            format!("{key}/{x}"),
            format!("Answer exchange `{x}` of branch {key}"),
        ),
        None => (key.to_string(), format!("Run branch {key}")),
    };
    let mut out = format!(
        "{what} of session {} as operator `{}`.\n\
         Your request: {folder}/request/request.json\n\
         Your response: {folder}/response/response.json (and response.md beside it)\n",
        request.session_id,
        op.id()
    );
    if let Some(r) = &request.resume {
        out.push_str(&format!(
            "This branch resumes step-{}/parallel-{}.\n",
            r.step, r.parallel
        ));
    }
    if let Some(c) = &request.cause {
        out.push_str(&format!(
            "You run because {} blocked with {}.\n",
            c.branch, c.stop
        ));
    }
    for (kind, path) in &request.inputs {
        out.push_str(&format!("Input {kind}: {path}\n"));
    }
    for (kind, decl) in &op.def.outputs {
        let at = decl
            .path
            .clone()
            .unwrap_or_else(|| "a path under response/".into());
        let need = if decl.required {
            "required"
        } else {
            "optional"
        };
        out.push_str(&format!("Output {kind} ({need}): {at}\n"));
    }
    if op.def.writes_source && request.exchange.is_none() {
        let roots: Vec<String> = op
            .def
            .write_roots
            .iter()
            .map(|r| format!("{CHECKOUT_DIR}/{}", r.trim_matches('/')))
            .collect();
        out.push_str(&format!(
            "Source: write under {} and list each path (relative to {CHECKOUT_DIR}/) in `writes`.\n",
            roots.join(", ")
        ));
    }
    if let Some(extra) = extra {
        out.push_str(extra);
        out.push('\n');
    }
    out
}

/// The task that resumes a waiting agent once its exchange answered.
pub(crate) fn resume_task(key: BranchKey, exchange: &str) -> String {
    format!(
        "The exchange `{exchange}` answered for branch {key}: read \
         {key}/{exchange}/response/response.json and what it records, then continue and write \
         {key}/response/response.json again.\n"
    )
}

/// The task that sends a refused response back.
pub(crate) fn refused_task(folder: &str, refusals: &str) -> String {
    format!(
        "Your response failed the gate: {refusals}. Nothing was routed. Fix it and write \
         {folder}/response/response.json again.\n"
    )
}

/// Creates the thread of a fresh agent.
pub(crate) fn create_thread(
    engine: &Engine,
    job: &AgentJob,
    binding: AgentBinding,
    workspace: &Path,
) -> Result<ThreadId, String> {
    let t = engine
        .create_thread(&NewThread {
            workspace_root: None,
            parent_id: None,
            title: format!("{} {}", job.operator, job.agent_key()),
            agent: binding,
            workspace: workspace.to_string_lossy().into_owned(),
            interaction: Interaction::Interactive,
        })
        .map_err(|e| e.to_string())?;
    Ok(t.id)
}

/// Spawns `job` on `thread`: waits for a free agent slot, takes the lease, delivers the task,
/// waits for the thread to go idle, releases the lease and reports.
pub(crate) fn spawn(cx: &AgentContext, job: AgentJob, thread: ThreadId, lease: AgentLease) {
    let cx = cx.clone();
    tokio::spawn(async move {
        let permit = cx.slots.clone().acquire_owned().await;
        let error = if cx.cancelled.load(Ordering::SeqCst) {
            Some("the session stopped before this agent started".to_string())
        } else {
            cx.leases.insert(thread, lease);
            let delivered = cx
                .engine
                .deliver(thread, Delivery::user_task(job.task.clone()))
                .await;
            if delivered.is_ok() {
                cx.engine.wait_idle(thread).await;
            }
            cx.leases.remove(thread);
            delivered.err().map(|e| e.to_string())
        };
        drop(permit);
        let _ = cx.done.send(Finished { job, thread, error });
    });
}
