//! The engine: owns the store handle, the registries and the live runs, and exposes the
//! kernel's operations (deliver, drive, continue, stop, recover).

use crate::drive::DriveLocks;
use crate::error::EngineError;
use crate::extension::{
    AdmissionCheck, ContextContributor, ContinuationPolicy, EffectGuard, EndingHook, Extensions,
    ToolRegistration, WaitProvider,
};
use crate::live::{LiveSet, StreamNotice};
use crate::models::ModelResolver;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_util::task::TaskTracker;
use troupe_core::continuation_guard::GuardLimits;
use troupe_core::inbox::Delivery;
use troupe_core::message::Origin;
use troupe_core::run::RunLimits;
use troupe_core::thread::Thread;
use troupe_core::{Clock, ThreadId};
use troupe_store::{Delivered, NewThread, Store};

#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub limits: RunLimits,
    /// Time between SIGTERM and SIGKILL when a run's process groups are ended.
    pub kill_grace: Duration,
    /// Identifies this process's runs in the store.
    pub boot_id: String,
    /// What a loop that continues a thread by itself starts with (budget, streak, spacing).
    pub loops: GuardLimits,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            limits: RunLimits::default(),
            kill_grace: Duration::from_secs(3),
            boot_id: format!(
                "{}-{}",
                std::process::id(),
                troupe_core::SystemClock.now_ms()
            ),
            loops: GuardLimits::default(),
        }
    }
}

#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub store: Store,
    pub models: Arc<dyn ModelResolver>,
    pub ext: Extensions,
    pub config: EngineConfig,
    pub live: LiveSet,
    /// Runs admitted whose start is still being committed.
    pub starting: std::sync::atomic::AtomicUsize,
    pub drive_locks: DriveLocks,
    /// Threads a forced drive (a person's Continue, a lift) found still winding down a stopped
    /// loop: that loop's release drive is forced in its place, so the person's go-ahead is not
    /// lost to the race with the loop's exit.
    pub forced_after_release: Mutex<HashSet<ThreadId>>,
    /// Continuation dedupe keys already persisted; receipts make this safe to lose.
    pub dedupe: Mutex<HashSet<(ThreadId, String)>>,
    pub stream: broadcast::Sender<StreamNotice>,
    pub draining: AtomicBool,
    pub tasks: TaskTracker,
    pub tool_lists: crate::context::ToolLists,
}

pub struct EngineBuilder {
    store: Store,
    models: Arc<dyn ModelResolver>,
    ext: Extensions,
    config: EngineConfig,
}

impl EngineBuilder {
    pub fn config(mut self, config: EngineConfig) -> Self {
        self.config = config;
        self
    }
    pub fn admission(mut self, check: Arc<dyn AdmissionCheck>) -> Self {
        self.ext.admission.push(check);
        self
    }
    pub fn guard(mut self, guard: Arc<dyn EffectGuard>) -> Self {
        self.ext.guards.push(guard);
        self
    }
    pub fn context(mut self, c: Arc<dyn ContextContributor>) -> Self {
        self.ext.contexts.push(c);
        self
    }
    pub fn tool(mut self, t: ToolRegistration) -> Result<Self, EngineError> {
        self.ext.add_tool(t).map_err(EngineError::Invalid)?;
        Ok(self)
    }
    pub fn ending_hook(mut self, h: Arc<dyn EndingHook>) -> Self {
        self.ext.endings.push(h);
        self
    }
    pub fn policy(mut self, p: Arc<dyn ContinuationPolicy>) -> Self {
        self.ext.add_policy(p);
        self
    }
    pub fn message_observer(mut self, o: Arc<dyn crate::extension::MessageObserver>) -> Self {
        self.ext.observers.push(o);
        self
    }
    pub fn run_observer(mut self, o: Arc<dyn crate::extension::RunObserver>) -> Self {
        self.ext.runs.push(o);
        self
    }
    pub fn wait_provider(mut self, w: Arc<dyn WaitProvider>) -> Self {
        self.ext.waits.push(w);
        self
    }
    pub fn tool_source(mut self, s: Arc<dyn crate::extension::ToolSource>) -> Self {
        self.ext.sources.push(s);
        self
    }
    pub fn tool_scope(mut self, s: Arc<dyn crate::extension::ToolScope>) -> Self {
        self.ext.scopes.push(s);
        self
    }
    pub fn interceptor(mut self, i: Arc<dyn crate::extension::ToolInterceptor>) -> Self {
        self.ext.interceptors.push(i);
        self
    }
    pub fn build(self) -> Engine {
        let engine = Engine {
            inner: Arc::new(Inner {
                store: self.store,
                models: self.models,
                ext: self.ext,
                config: self.config,
                live: LiveSet::default(),
                starting: Default::default(),
                drive_locks: DriveLocks::default(),
                forced_after_release: Mutex::new(HashSet::new()),
                dedupe: Mutex::new(HashSet::new()),
                stream: broadcast::channel(4096).0,
                draining: AtomicBool::new(false),
                tasks: TaskTracker::new(),
                tool_lists: Default::default(),
            }),
        };
        engine.listen_for_wakes();
        engine
    }
}

impl Engine {
    /// Drive the threads a transaction asked to wake once it committed
    /// ([`troupe_store::Tx::wake_after_commit`]). Holds the engine weakly, so it ends with it.
    fn listen_for_wakes(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut wakes = self.inner.store.subscribe_wakes();
        let weak = Arc::downgrade(&self.inner);
        runtime.spawn(async move {
            loop {
                let thread = match wakes.recv().await {
                    Ok(t) => t,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "wake-ups were missed; the next drive or boot picks their work up");
                        continue;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                let Some(inner) = weak.upgrade() else { break };
                let engine = Engine { inner };
                tokio::spawn(async move {
                    if let Err(e) = engine.request_drive(thread, "delivery", false).await {
                        tracing::warn!(thread = %thread, error = %e, "drive after a delivery failed");
                    }
                });
            }
        });
    }

    pub fn builder(store: Store, models: Arc<dyn ModelResolver>) -> EngineBuilder {
        EngineBuilder {
            store,
            models,
            ext: Extensions::default(),
            config: EngineConfig::default(),
        }
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// Text deltas and other live notices (not stored).
    pub fn subscribe_stream(&self) -> broadcast::Receiver<StreamNotice> {
        self.inner.stream.subscribe()
    }

    pub fn create_thread(&self, t: &NewThread) -> Result<Thread, EngineError> {
        Ok(self.inner.store.write(|tx| tx.create_thread(t))?)
    }

    /// Put a delivery in the thread's inbox and ask the drive to act on it. A person's line
    /// also lifts the pause latch: sending is one way a paused thread resumes.
    pub async fn deliver(&self, thread: ThreadId, d: Delivery) -> Result<Delivered, EngineError> {
        let lifts_latch = d.origin == Origin::User;
        let wakes = d.mode.wakes();
        let delivered = self.inner.store.write(|tx| {
            let out = tx.deliver(thread, &d)?;
            if lifts_latch && out.created {
                tx.clear_pause(thread)?;
            }
            Ok(out)
        })?;
        if wakes && delivered.created {
            self.request_drive(thread, "inbox", false).await?;
        }
        Ok(delivered)
    }

    /// Continue: lift the latch and force a drive (which still never drives a running thread).
    pub async fn continue_thread(
        &self,
        thread: ThreadId,
    ) -> Result<crate::DriveOutcome, EngineError> {
        self.inner.store.write(|tx| {
            tx.thread(thread)?;
            tx.clear_pause(thread)
        })?;
        self.request_drive(thread, crate::run_loop::CONTINUE, true)
            .await
    }

    pub fn is_running(&self, thread: ThreadId) -> bool {
        self.inner.live.get(thread).is_some()
    }

    /// Cut the step a thread's run is in, so what waits in its inbox is read now: the model
    /// call in flight is cancelled and made again (the run goes on), or the tool calls of the
    /// hop not run yet are postponed (a running command finishes). False when the thread runs
    /// nothing here or its run is between steps.
    pub fn cut_step(&self, thread: ThreadId) -> bool {
        self.inner.live.get(thread).is_some_and(|live| live.cut())
    }

    /// Runs running, and runs admitted whose start is being committed.
    pub fn live_runs(&self) -> usize {
        self.inner.live.len()
            + self
                .inner
                .starting
                .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Wait until the thread has no live loop (a run that starts another on release is followed).
    pub async fn wait_idle(&self, thread: ThreadId) {
        while let Some(live) = self.inner.live.get_any(thread) {
            live.wait_done().await;
        }
    }

    /// Stop taking new runs; the caller decides how long live ones may go on.
    pub fn begin_drain(&self) {
        self.inner.draining.store(true, Ordering::SeqCst);
    }

    pub fn is_draining(&self) -> bool {
        self.inner.draining.load(Ordering::SeqCst)
    }

    /// Wait for every loop task this engine spawned.
    pub async fn wait_all(&self) {
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
        self.inner.tasks.reopen();
    }
}
