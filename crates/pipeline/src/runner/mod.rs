//! The runner: drives a session from its manifest. Each effect the router emits becomes work —
//! a branch or an exchange runs its operator as a Troupe agent thread, a waiting agent is
//! resumed once its exchange answered — and each finished agent's response passes the
//! response gate (a refused one goes back to the agent once, then blocks with
//! `INVALID_INPUT`) before it routes through [`Session::commit`]. At most
//! [`RunOptions::max_agents`] agents run at once; a [`LeaseGuard`] registered on the engine keeps
//! every agent's writes inside its lease.
//!
//! Restart-safe: [`Runner::resume`] re-opens the manifest, routes responses already on disk
//! for branches still current, and runs again the agents of branches that have a request but
//! no valid response. Nothing is ever half-routed: a transition is on disk whole or not at all.

mod agent;
mod drive;
mod lease_guard;
mod restart;
mod source;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use troupe_core::Clock;
use troupe_core::thread::EndpointSpec;
use troupe_engine::{Engine, EngineBuilder};

pub use agent::CHECKOUT_DIR;
pub use lease_guard::{AgentLease, LeaseGuard, LeaseTable};
pub use source::Published;

use crate::defs::Definitions;
use crate::git::{SourceError, SourceStop, freeze_source};
pub use crate::route::GIT_FAILED;
use crate::route::{RouteError, Router, stop_transition};
use crate::session::{
    BranchKey, Budget, NewSession, Response, Session, SessionError, SessionStatus, StoppedAt,
};

/// Why a run could not go on (a stop the session records is not an error: see [`Outcome`]).
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("no workflow named `{0}` in the definitions")]
    UnknownWorkflow(String),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("{}: {}", .0.code, .0.detail)]
    Source(SourceStop),
    #[error("git: {0}")]
    Git(String),
    #[error("routing refused: {0}")]
    Route(#[from] RouteError),
    #[error("the session is {0:?} already; there is nothing to do")]
    NotResumable(SessionStatus),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Other(String),
}

impl From<crate::git::GitError> for RunnerError {
    fn from(e: crate::git::GitError) -> Self {
        Self::Git(e.to_string())
    }
}

impl From<SourceError> for RunnerError {
    fn from(e: SourceError) -> Self {
        match e {
            SourceError::Stop(s) => Self::Source(s),
            other => Self::Git(other.to_string()),
        }
    }
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// At most this many agents at once (3 unless set).
    pub max_agents: usize,
    pub budget: Budget,
    /// The project name in the session id (default: the source folder's name).
    pub project: Option<String>,
    /// Operator id → the endpoint its agents call, overriding the role of its profile.
    pub endpoints: BTreeMap<String, EndpointSpec>,
    /// Copy the session folder here (as `<dir>/<sessionId>/`) before it is removed.
    pub keep_audit: Option<PathBuf>,
    /// Written to the new session's `run-options.json` by [`Runner::start`]: how the front end
    /// ran it, for its own `resume` (the runner never reads it).
    pub record: Option<serde_json::Value>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            max_agents: 3,
            budget: Budget::default(),
            project: None,
            endpoints: BTreeMap::new(),
            keep_audit: None,
            record: None,
        }
    }
}

/// One line of progress: a branch or session transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunEvent {
    /// The branch (or `branch/exchange`) it concerns; none for the session.
    pub agent: Option<String>,
    pub text: String,
}

impl fmt::Display for RunEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.agent {
            Some(a) => write!(f, "{a}: {}", self.text),
            None => write!(f, "session: {}", self.text),
        }
    }
}

/// Receives progress as it happens.
pub type Observer = Arc<dyn Fn(&RunEvent) + Send + Sync>;

/// Where a run left the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub session_id: String,
    pub root: PathBuf,
    pub status: SessionStatus,
    pub stopped: Option<StoppedAt>,
    /// What clean-up kept, and why.
    pub notes: Vec<String>,
}

/// Drives sessions of one definitions folder on one engine.
pub struct Runner {
    pub(crate) defs: Arc<Definitions>,
    pub(crate) engine: Engine,
    pub(crate) leases: LeaseTable,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) options: RunOptions,
    pub(crate) observer: Observer,
}

/// Registers the lease guard on an engine being built; hand the table to [`Runner::new`].
pub fn install(builder: EngineBuilder) -> (EngineBuilder, LeaseTable) {
    let table = LeaseTable::default();
    let builder = builder.guard(Arc::new(LeaseGuard::new(table.clone())));
    (builder, table)
}

impl Runner {
    /// `engine` must have been built with [`install`]'s guard on `leases`.
    pub fn new(
        defs: Definitions,
        engine: Engine,
        leases: LeaseTable,
        clock: Arc<dyn Clock>,
        options: RunOptions,
    ) -> Self {
        Self {
            defs: Arc::new(defs),
            engine,
            leases,
            clock,
            options,
            observer: Arc::new(|_| {}),
        }
    }

    /// Progress goes to `observer`.
    pub fn with_observer(mut self, observer: Observer) -> Self {
        self.observer = observer;
        self
    }

    pub fn definitions(&self) -> &Definitions {
        &self.defs
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The leases agents of this runner hold right now.
    pub fn leases(&self) -> &LeaseTable {
        &self.leases
    }

    pub(crate) fn emit(&self, agent: Option<String>, text: impl Into<String>) {
        (self.observer)(&RunEvent {
            agent,
            text: text.into(),
        });
    }

    /// Starts a session of `workflow` on the checkout at `source`: the person's head is
    /// frozen and the session checkout made (when an operator writes source or publishes), the
    /// manifest written with the first step's leases, then the chain runs to its end or a stop.
    pub async fn start(
        &self,
        source: &Path,
        workflow: &str,
        requirements: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Outcome, RunnerError> {
        let wf = self
            .defs
            .workflow(workflow)
            .ok_or_else(|| RunnerError::UnknownWorkflow(workflow.to_string()))?;
        let first = wf.first_operator().unwrap_or("session").to_string();
        let frozen = if self.needs_source(wf) {
            Some(freeze_source(source)?)
        } else {
            None
        };
        let project = self.options.project.clone().unwrap_or_else(|| {
            source
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "project".into())
        });
        let mut session = Session::create(
            source,
            &NewSession {
                project,
                workflow: workflow.to_string(),
                first_operator: first,
                budget: self.options.budget,
                requirements,
            },
            self.clock.as_ref(),
        )?;
        if let Some(record) = &self.options.record {
            session.write_run_options(record)?;
        }
        self.emit(
            None,
            format!("{} started in {}", session.id(), session.root().display()),
        );
        let router = Router::new(&self.defs, wf);
        if let Some((target, head)) = frozen {
            let opened =
                source::open_checkout(source, &mut session, target, head, self.clock.as_ref());
            if let Some((code, why)) = failure(opened)? {
                // The session is on disk: it blocks, saying why, rather than staying `running`.
                let t = router.fail(session.state(), None, &code, &why)?;
                let effects = session.commit(t, self.clock.as_ref())?;
                return drive::Drive::new(self, source, session).run(effects).await;
            }
        }
        let effects = session.commit(router.start(session.state())?, self.clock.as_ref())?;
        drive::Drive::new(self, source, session).run(effects).await
    }

    /// Whether an operator of `wf` writes source or publishes (the session needs a checkout).
    fn needs_source(&self, wf: &crate::defs::Workflow) -> bool {
        wf.steps
            .iter()
            .flat_map(|s| &s.branches)
            .filter_map(|b| self.defs.operator(&b.operator))
            .any(|op| op.def.writes_source || op.def.publishes)
    }

    /// Continues session `id`: a running one (after a crash) from its manifest; a blocked one
    /// re-enters its blocked branch in a new step with `resume` naming it.
    pub async fn resume(&self, source: &Path, id: &str) -> Result<Outcome, RunnerError> {
        let mut session = Session::open(source, id)?;
        // One runner per session at a time: a second `resume` of the same session is refused
        // instead of running its agents twice. The OS drops the lock if this process dies.
        let lock = std::fs::File::create(session.root().join(".runner.lock"))?;
        if let Err(e) = lock.try_lock() {
            return Err(RunnerError::Other(format!(
                "session {id} is being run by another process ({e})"
            )));
        }
        let wf_name = session.state().workflow.clone();
        let wf = self
            .defs
            .workflow(&wf_name)
            .ok_or(RunnerError::UnknownWorkflow(wf_name))?;
        let router = Router::new(&self.defs, wf);
        match session.state().status {
            SessionStatus::Blocked => {
                if self.needs_source(wf) && session.state().source.is_none() {
                    // Blocked before its checkout was made: make it now, from today's head
                    // (nothing has run on the old one).
                    let (target, head) = freeze_source(source)?;
                    source::open_checkout(source, &mut session, target, head, self.clock.as_ref())?;
                }
                self.emit(None, format!("{id} re-entered"));
                let t = router.reenter(session.state(), None, serde_json::Map::new())?;
                let effects = session.commit(t, self.clock.as_ref())?;
                drive::Drive::new(self, source, session).run(effects).await
            }
            SessionStatus::Running if session.state().chain.is_empty() => {
                let effects =
                    session.commit(router.start(session.state())?, self.clock.as_ref())?;
                drive::Drive::new(self, source, session).run(effects).await
            }
            SessionStatus::Running => {
                self.emit(None, format!("{id} resumed from its manifest"));
                let mut drive = drive::Drive::new(self, source, session);
                let effects = restart::pending(&mut drive)?;
                drive.run(effects).await
            }
            other => Err(RunnerError::NotResumable(other)),
        }
    }
}

/// Ends session `id` for a person: status `stopped`, every lease released. A runner working on
/// it notices at its next transition and stops its agents. The folder stays on disk.
pub fn stop_session(
    source: &Path,
    id: &str,
    why: &str,
    clock: &dyn Clock,
) -> Result<StoppedAt, RunnerError> {
    let mut session = Session::open(source, id)?;
    let status = session.state().status;
    if matches!(status, SessionStatus::Done | SessionStatus::Stopped) {
        return Err(RunnerError::NotResumable(status));
    }
    session.commit(stop_transition(session.state(), why), clock)?;
    session
        .state()
        .stopped_at
        .clone()
        .ok_or_else(|| RunnerError::Other("the stop was not recorded".into()))
}

/// A failed source step as the session code and reason it blocks with, or the error that is not
/// one (I/O, the manifest).
fn failure(result: Result<(), RunnerError>) -> Result<Option<(String, String)>, RunnerError> {
    match result {
        Ok(()) => Ok(None),
        Err(RunnerError::Git(why)) => Ok(Some((GIT_FAILED.into(), why))),
        Err(RunnerError::Source(stop)) => Ok(Some((stop.code.into(), stop.detail))),
        Err(e) => Err(e),
    }
}

/// `response.md` for a response the runner wrote itself.
pub(crate) fn blocked_markdown(r: &Response) -> String {
    format!(
        "# Blocked by the runner\n\n`{}`: {}\n",
        r.stop.as_deref().unwrap_or(""),
        r.reason.as_deref().unwrap_or("")
    )
}

/// The key and, for an exchange, its name, from a lease's agent key.
pub(crate) fn split_agent(agent: &str) -> Option<(BranchKey, Option<String>)> {
    let mut parts = agent.splitn(3, '/');
    let key: BranchKey = format!("{}/{}", parts.next()?, parts.next()?)
        .parse()
        .ok()?;
    Some((key, parts.next().map(str::to_string)))
}
