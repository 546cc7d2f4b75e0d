//! The Light Loop's handle on the running engine. The kernel's extension points (policies,
//! tool handlers, guards) see a thread and the store but not the engine, and the loop has to
//! drive threads other than the one in hand: the reviewer's task once the executor's lease is
//! released, and the executor once a rejection is recorded. The host is created with the
//! extensions and attached to the engine right after it is built ([`crate::build_engine`]).
//!
//! The engine holds the extensions and the host holds the engine, so the two live as long as
//! each other; the daemon builds one engine per process.

use std::sync::{Arc, OnceLock};
use troupe_core::ThreadId;
use troupe_core::continuation_guard::GuardLimits;
use troupe_engine::Engine;
use troupe_store::Store;

#[derive(Default)]
pub struct LoopHost {
    engine: OnceLock<Engine>,
}

impl LoopHost {
    pub fn new() -> Arc<Self> {
        Arc::new(LoopHost::default())
    }

    /// Attach the engine the extensions were built into. A second attach is ignored.
    pub fn attach(&self, engine: &Engine) {
        let _ = self.engine.set(engine.clone());
    }

    pub fn engine(&self) -> Option<&Engine> {
        self.engine.get()
    }

    pub fn store(&self) -> Option<&Store> {
        self.engine().map(Engine::store)
    }

    /// The limits a loop's continuation guard starts with when it has none yet.
    pub fn guard_defaults(&self) -> GuardLimits {
        self.engine().map(|e| e.config().loops).unwrap_or_default()
    }

    /// Ask the drive to act on `thread` (gated as usual), without waiting for it.
    pub fn drive_later(&self, thread: ThreadId, reason: &'static str) {
        let Some(engine) = self.engine().cloned() else {
            tracing::warn!(thread = %thread, "light loop host not attached; drive skipped");
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        rt.spawn(async move {
            if let Err(e) = engine.request_drive(thread, reason, false).await {
                tracing::warn!(thread = %thread, error = %e, "light loop drive failed");
            }
        });
    }

    /// Start the child tasks admission allows — a reviewer task just prepared and bound —
    /// each watched by the cortex runtime until it ends.
    pub fn start_tasks(&self) {
        match self.engine() {
            Some(engine) => crate::cortex::start_admitted(engine),
            None => tracing::warn!("light loop host not attached; tasks not started"),
        }
    }
}
