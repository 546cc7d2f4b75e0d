//! One drive of a session: carry out effects, wait for agents, gate what they answer, route
//! it, until the session leaves `running` and no agent is in flight.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{Semaphore, mpsc};
use troupe_core::ThreadId;
use troupe_engine::StopMode;

use super::agent::{self, AgentContext, AgentJob, Finished};
use super::{GIT_FAILED, Outcome, Runner, RunnerError, blocked_markdown, source};
use crate::gate::{check_request, check_response};
use crate::route::{Effect, Router};
use crate::session::{
    BranchKey, BranchStatus, Request, Response, ResponseStatus, Session, SessionStatus,
};

pub(crate) struct Drive<'r> {
    pub(crate) r: &'r Runner,
    source: PathBuf,
    pub(crate) session: Session,
    cx: AgentContext,
    rx: mpsc::UnboundedReceiver<Finished>,
    /// Agent key → the thread running it.
    inflight: BTreeMap<String, ThreadId>,
    /// The thread of each branch's agent, to resume it after an exchange.
    threads: BTreeMap<BranchKey, ThreadId>,
    /// Waiting branches to resume once their exchange answered.
    pub(crate) resume_after: BTreeSet<(BranchKey, String)>,
    notes: Vec<String>,
}

impl<'r> Drive<'r> {
    pub(crate) fn new(r: &'r Runner, source: &Path, session: Session) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let cx = AgentContext {
            engine: r.engine.clone(),
            leases: r.leases.clone(),
            slots: Arc::new(Semaphore::new(r.options.max_agents.max(1))),
            done: tx,
            cancelled: Arc::new(AtomicBool::new(false)),
        };
        Self {
            r,
            source: source.to_path_buf(),
            session,
            cx,
            rx,
            inflight: BTreeMap::new(),
            threads: BTreeMap::new(),
            resume_after: BTreeSet::new(),
            notes: Vec::new(),
        }
    }

    fn running(&self) -> bool {
        self.session.state().status == SessionStatus::Running
    }

    pub(crate) fn emit(&self, agent: impl ToString, text: impl Into<String>) {
        self.r.emit(Some(agent.to_string()), text);
    }

    pub(crate) async fn run(mut self, effects: Vec<Effect>) -> Result<Outcome, RunnerError> {
        let mut queue: VecDeque<Effect> = effects.into();
        loop {
            while let Some(e) = queue.pop_front() {
                let more = self.apply(e).await?;
                queue.extend(more);
            }
            if self.inflight.is_empty() {
                break;
            }
            let Some(f) = self.rx.recv().await else { break };
            self.inflight.remove(&f.job.agent_key());
            if !self.running() {
                continue; // draining after a stop
            }
            if self.stopped_on_disk() {
                self.cancel_all().await;
                continue;
            }
            let more = self.finished(f)?;
            queue.extend(more);
        }
        let state = self.session.state();
        Ok(Outcome {
            session_id: state.id.clone(),
            root: self.session.root().to_path_buf(),
            status: state.status,
            stopped: state.stopped_at.clone(),
            notes: self.notes,
        })
    }

    /// A person stopped the session (`troupe pipeline stop`) while agents ran.
    fn stopped_on_disk(&mut self) -> bool {
        match Session::open_dir(self.session.root()) {
            Ok(s) if s.state().status == SessionStatus::Stopped => {
                self.r.emit(None, "stopped by a person");
                self.session = s;
                true
            }
            _ => false,
        }
    }

    async fn cancel_all(&mut self) {
        self.cx.cancelled.store(true, Ordering::SeqCst);
        for (agent, thread) in &self.inflight {
            if self
                .r
                .engine
                .stop(*thread, StopMode::Internal)
                .await
                .is_ok()
            {
                self.emit(agent, "agent stopped");
            }
        }
    }

    async fn apply(&mut self, effect: Effect) -> Result<Vec<Effect>, RunnerError> {
        match effect {
            Effect::OpenBranch { request } => self.open_branch(request),
            Effect::RunExchange {
                branch,
                exchange,
                request,
            } => self.run_exchange(branch, exchange, request),
            Effect::ResumeAgent { branch, exchange } => {
                self.resume_after.insert((branch, exchange));
                Ok(Vec::new())
            }
            Effect::ReleaseLease { agent } => {
                self.emit(agent, "lease released");
                Ok(Vec::new())
            }
            Effect::Block { stopped } => {
                let at = stopped
                    .branch
                    .map(|b| format!(" at {b}"))
                    .unwrap_or_default();
                let code = stopped.stop.as_deref().unwrap_or("-");
                self.r.emit(
                    None,
                    format!(
                        "blocked{at} with {code} (route {}): {}",
                        stopped.route, stopped.why
                    ),
                );
                self.cancel_all().await;
                Ok(Vec::new())
            }
            Effect::Retry { branch } => super::restart::pending_branch(self, branch),
            Effect::Finish => {
                self.r.emit(None, "done: the workflow finished");
                let notes = source::clean_up(
                    &self.source,
                    &self.session,
                    self.r.options.keep_audit.as_deref(),
                )?;
                for n in &notes {
                    self.r.emit(None, n.clone());
                }
                self.notes.extend(notes);
                Ok(Vec::new())
            }
        }
    }

    pub(crate) fn open_branch(&mut self, request: Request) -> Result<Vec<Effect>, RunnerError> {
        let key = request.branch();
        let op = self.operator(&request.operator_id)?;
        self.emit(key, format!("open, operator `{}`", op.id()));
        if let Err(refusals) = check_request(&self.r.defs, &self.session, key, None) {
            let why = format!("the request gate refused it: {refusals}");
            return self.block(key, "INVALID_INPUT", &why);
        }
        let mut extra = None;
        if op.def.publishes {
            let clock = self.r.clock.clone();
            let published = source::publish_session(
                &self.source,
                &self.r.defs,
                &mut self.session,
                clock.as_ref(),
            );
            match published {
                Err(RunnerError::Git(why)) => return self.fail(key, &why),
                Err(e) => return Err(e),
                Ok(Ok(p)) => {
                    self.emit(
                        key,
                        format!("published `{}` ({}) at {}", p.target, p.mode, p.commit),
                    );
                    extra = Some(format!(
                        "The runner published: target `{}`, commit `{}`, mode `{}`.",
                        p.target, p.commit, p.mode
                    ));
                }
                Ok(Err(stop)) => return self.block(key, stop.code, &stop.detail),
            }
        }
        let task = agent::open_task(&op, &request, extra.as_deref());
        self.launch(AgentJob {
            key,
            exchange: None,
            operator: op.id().to_string(),
            thread: None,
            task,
            refusals: 0,
        })?;
        Ok(Vec::new())
    }

    pub(crate) fn run_exchange(
        &mut self,
        key: BranchKey,
        exchange: String,
        request: Request,
    ) -> Result<Vec<Effect>, RunnerError> {
        let agent = key.exchange_key(&exchange);
        self.emit(
            &agent,
            format!("exchange opens, operator `{}`", request.operator_id),
        );
        if let Err(refusals) = check_request(&self.r.defs, &self.session, key, Some(&exchange)) {
            let why = format!("the request gate refused exchange `{exchange}`: {refusals}");
            return self.block(key, "INVALID_INPUT", &why);
        }
        remove_file(&self.session.response_path(key, Some(&exchange)))?;
        let op = self.operator(&request.operator_id)?;
        self.launch(AgentJob {
            key,
            exchange: Some(exchange),
            operator: op.id().to_string(),
            thread: None,
            task: agent::open_task(&op, &request, None),
            refusals: 0,
        })?;
        Ok(Vec::new())
    }

    fn operator(&self, id: &str) -> Result<crate::defs::Operator, RunnerError> {
        self.r
            .defs
            .operator(id)
            .cloned()
            .ok_or_else(|| RunnerError::Other(format!("unknown operator `{id}`")))
    }

    /// Starts an agent: a fresh thread unless the job continues one.
    fn launch(&mut self, mut job: AgentJob) -> Result<(), RunnerError> {
        let op = self.operator(&job.operator)?;
        let root = self.session.root().to_path_buf();
        let thread = match job.thread {
            Some(t) => t,
            None => {
                let binding = agent::binding(&op, self.r.options.endpoints.get(op.id()));
                let t = agent::create_thread(&self.r.engine, &job, binding, &root)
                    .map_err(RunnerError::Other)?;
                job.thread = Some(t);
                t
            }
        };
        if job.exchange.is_none() {
            self.threads.insert(job.key, thread);
        }
        let lease = agent::lease(&root, &op, job.key, job.exchange.as_deref());
        let agent_key = job.agent_key();
        self.emit(&agent_key, format!("agent {thread} runs `{}`", op.id()));
        self.inflight.insert(agent_key, thread);
        agent::spawn(&self.cx, job, thread, lease);
        Ok(())
    }

    fn finished(&mut self, f: Finished) -> Result<Vec<Effect>, RunnerError> {
        let Finished { job, thread, error } = f;
        if let Some(e) = error {
            self.emit(job.agent_key(), format!("agent ended with an error: {e}"));
        }
        match job.exchange.clone() {
            None => self.branch_answered(job, Some(thread)),
            Some(x) => self.exchange_answered(job, x, Some(thread)),
        }
    }

    /// The task for a job that may need a fresh thread: a fresh agent first reads its request.
    fn task_for(
        &self,
        key: BranchKey,
        exchange: Option<&str>,
        thread: Option<ThreadId>,
        text: String,
    ) -> Result<String, RunnerError> {
        if thread.is_some() {
            return Ok(text);
        }
        let request = self
            .session
            .read_request(key, exchange)
            .map_err(|r| RunnerError::Other(format!("{key}: {r}")))?;
        let op = self.operator(&request.operator_id)?;
        Ok(agent::open_task(&op, &request, Some(&text)))
    }

    /// A branch's agent finished: gate its response, glue its source, route it.
    pub(crate) fn branch_answered(
        &mut self,
        job: AgentJob,
        thread: Option<ThreadId>,
    ) -> Result<Vec<Effect>, RunnerError> {
        let key = job.key;
        match check_response(&self.r.defs, &self.session, key, None) {
            Err(refusals) if job.refusals == 0 => {
                self.emit(
                    key,
                    format!(
                        "the gate refused the response ({refusals}); the agent answers once more"
                    ),
                );
                let text = agent::refused_task(&key.to_string(), &refusals.to_string());
                let task = self.task_for(key, None, thread, text)?;
                self.launch(AgentJob {
                    thread,
                    task,
                    refusals: 1,
                    ..job
                })?;
                Ok(Vec::new())
            }
            Err(refusals) => {
                let why = format!("the response failed the gate twice: {refusals}");
                self.block(key, "INVALID_INPUT", &why)
            }
            Ok(response) => {
                let op = self.operator(&response.operator_id)?;
                let clock = self.r.clock.clone();
                let glued = source::glue(&mut self.session, &op, key, response, clock.as_ref());
                let response = match glued {
                    Ok(r) => r,
                    Err(RunnerError::Git(why)) => return self.fail(key, &why),
                    Err(e) => return Err(e),
                };
                if let Some(c) = response.commits.first() {
                    self.emit(key, format!("committed the write set as {c}"));
                }
                self.route(key, response)
            }
        }
    }

    /// An exchange's agent finished: gate its answer, then resume the waiting branch.
    pub(crate) fn exchange_answered(
        &mut self,
        job: AgentJob,
        exchange: String,
        thread: Option<ThreadId>,
    ) -> Result<Vec<Effect>, RunnerError> {
        let key = job.key;
        let agent = key.exchange_key(&exchange);
        match check_response(&self.r.defs, &self.session, key, Some(&exchange)) {
            Err(refusals) if job.refusals == 0 => {
                self.emit(
                    &agent,
                    format!(
                        "the gate refused the answer ({refusals}); the agent answers once more"
                    ),
                );
                let text = agent::refused_task(&agent, &refusals.to_string());
                let task = self.task_for(key, Some(&exchange), thread, text)?;
                self.launch(AgentJob {
                    thread,
                    task,
                    refusals: 1,
                    ..job
                })?;
                Ok(Vec::new())
            }
            Err(refusals) => {
                let why = format!("exchange `{exchange}` failed the gate twice: {refusals}");
                self.block(key, "INVALID_INPUT", &why)
            }
            Ok(_) => {
                self.emit(&agent, "answered");
                self.resume_waiting(key, &exchange)
            }
        }
    }

    /// Resumes the agent of a waiting branch whose exchange answered.
    pub(crate) fn resume_waiting(
        &mut self,
        key: BranchKey,
        exchange: &str,
    ) -> Result<Vec<Effect>, RunnerError> {
        if !self.resume_after.remove(&(key, exchange.to_string())) {
            return Ok(Vec::new());
        }
        // The waiting response has routed; the agent writes a new one.
        remove_file(&self.session.response_path(key, None))?;
        let operator = self.session.state().steps[&key].clone();
        let thread = self.threads.get(&key).copied();
        let task = self.task_for(key, None, thread, agent::resume_task(key, exchange))?;
        self.emit(key, format!("resumed after exchange `{exchange}`"));
        self.launch(AgentJob {
            key,
            exchange: None,
            operator,
            thread,
            task,
            refusals: 0,
        })?;
        Ok(Vec::new())
    }

    /// The runner answers for the branch: `blocked` with `code`, then routes it.
    pub(crate) fn block(
        &mut self,
        key: BranchKey,
        code: &str,
        why: &str,
    ) -> Result<Vec<Effect>, RunnerError> {
        let operator = self.session.state().steps[&key].clone();
        let r = Response::blocked(&operator, key, code, why);
        self.session.write_response(&r, &blocked_markdown(&r))?;
        self.route(key, r)
    }

    /// A git command the runner ran for `key` failed: the branch blocks with `GIT_FAILED`
    /// and the session stops for a person at once, the command and git's words as its reason
    /// (instead of the run ending with the session still `running`). The agent's answer stays
    /// on disk: once the cause is dealt with, `resume` retries the step from it.
    pub(crate) fn fail(&mut self, key: BranchKey, why: &str) -> Result<Vec<Effect>, RunnerError> {
        let t = self
            .router()?
            .fail(self.session.state(), Some(key), GIT_FAILED, why)?;
        let clock = self.r.clock.clone();
        let effects = self.session.commit(t, clock.as_ref())?;
        self.emit(key, format!("blocked with {GIT_FAILED}"));
        Ok(effects)
    }

    fn router(&self) -> Result<Router<'r>, RunnerError> {
        let wf_name = &self.session.state().workflow;
        let wf = self
            .r
            .defs
            .workflow(wf_name)
            .ok_or_else(|| RunnerError::UnknownWorkflow(wf_name.clone()))?;
        Ok(Router::new(&self.r.defs, wf))
    }

    fn route(&mut self, key: BranchKey, response: Response) -> Result<Vec<Effect>, RunnerError> {
        let t = self.router()?.route(self.session.state(), key, &response)?;
        let clock = self.r.clock.clone();
        let effects = self.session.commit(t, clock.as_ref())?;
        let rec = &self.session.state().branches[&key];
        let text = match (rec.status, response.status) {
            (BranchStatus::Waiting, _) => format!(
                "waiting on exchange `{}`",
                response
                    .awaiting
                    .as_ref()
                    .map(|a| a.exchange.as_str())
                    .unwrap_or("")
            ),
            (BranchStatus::Done, ResponseStatus::Blocked) => format!(
                "done with fallback {}",
                response.stop.as_deref().unwrap_or("")
            ),
            (BranchStatus::Done, _) => "done".to_string(),
            (BranchStatus::Blocked, _) => format!(
                "blocked with {}: {}",
                rec.stop.as_deref().unwrap_or(""),
                response.reason.as_deref().unwrap_or("")
            ),
            (BranchStatus::Open, _) => "open".to_string(),
        };
        self.emit(key, text);
        Ok(effects)
    }
}

fn remove_file(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}
