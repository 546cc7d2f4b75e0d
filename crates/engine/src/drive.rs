//! The drive: the single entry point that decides what a thread does next. Requests for one
//! thread are serialized; inbox work goes first; only then are continuation policies asked.

use crate::Engine;
use crate::error::EngineError;
use crate::extension::{Admission, AdmissionContext, Gate, Proposal};
use crate::live::LiveRun;
use crate::run_loop;
use serde::Serialize;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use troupe_core::drive::{
    DriveRefusal, DriveSnapshot, DriveStep, GateInput, RootState, arbitrate, continuation_key,
    shared_gate,
};
use troupe_core::effect::UnknownCall;
use troupe_core::inbox::{has_person_line_after, has_runnable};
use troupe_core::thread::Thread;
use troupe_core::{RunId, ThreadId};
use troupe_store::{NewRun, StoreError};

/// What a drive request did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum DriveOutcome {
    Started {
        run_id: RunId,
    },
    NotHandled {
        refusal: DriveRefusal,
    },
    /// A continuation policy acted itself.
    PolicyHandled {
        policy: String,
    },
    /// An admission check refused the wake; the work stays queued.
    Refused {
        check: String,
        cause: String,
    },
    /// An admission check queued the wake; it is retried when a run ends.
    Queued {
        check: String,
        cause: String,
    },
    /// The engine is shutting down.
    Draining,
}

impl DriveOutcome {
    pub fn started(&self) -> Option<RunId> {
        match self {
            DriveOutcome::Started { run_id } => Some(*run_id),
            _ => None,
        }
    }
}

/// One async lock per thread: requests for a thread wait for the one in flight, so none is lost
/// and two can never both start a loop.
#[derive(Default)]
pub(crate) struct DriveLocks {
    locks: Mutex<HashMap<ThreadId, Arc<tokio::sync::Mutex<()>>>>,
}

impl DriveLocks {
    fn lock_for(&self, t: ThreadId) -> Arc<tokio::sync::Mutex<()>> {
        self.locks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(t)
            .or_default()
            .clone()
    }

    /// Forget a thread's lock once nobody else holds or waits on it, so idle threads cost nothing.
    fn release(&self, t: ThreadId, lock: Arc<tokio::sync::Mutex<()>>) {
        let mut map = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        // Held by the map and by `lock` only: no request is waiting on it.
        if Arc::strong_count(&lock) == 2 {
            map.remove(&t);
        }
    }
}

/// A run admitted whose start has not committed yet; counted among the live runs until then.
struct Starting<'a>(&'a AtomicUsize);

impl<'a> Starting<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Starting(count)
    }
}

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

struct Snapshot {
    thread: Thread,
    drive: DriveSnapshot,
    has_work: bool,
    /// The call whose unknown outcome keeps the thread from resuming by itself.
    unknown: Option<UnknownCall>,
}

/// The drive reason of a loop handing its thread over as it ends.
pub(crate) const RELEASE: &str = "release";

impl Engine {
    /// Ask the drive to act on a thread. `force` skips policy discovery only: it never drives
    /// a running or paused thread.
    pub async fn request_drive(
        &self,
        thread: ThreadId,
        reason: &str,
        force: bool,
    ) -> Result<DriveOutcome, EngineError> {
        if self.is_draining() {
            return Ok(DriveOutcome::Draining);
        }
        let lock = self.inner.drive_locks.lock_for(thread);
        let outcome = {
            let _serialized = lock.lock().await;
            // Under the thread's drive lock, so a forced drive that found the loop winding down
            // and this loop's release drive are ordered: one of them starts the next run.
            let force = force
                || (reason == RELEASE
                    && self
                        .inner
                        .forced_after_release
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .remove(&thread));
            self.arbitrate_locked(thread, reason, force).await
        };
        self.inner.drive_locks.release(thread, lock);
        outcome
    }

    /// [`Engine::request_drive`] behind a boxed future, for the run loop's own drives: a run
    /// starts runs, so the loop's future and the drive's would otherwise be defined by each other.
    pub(crate) fn request_drive_boxed<'a>(
        &'a self,
        thread: ThreadId,
        reason: &'a str,
        force: bool,
    ) -> Pin<Box<dyn Future<Output = Result<DriveOutcome, EngineError>> + Send + 'a>> {
        Box::pin(self.request_drive(thread, reason, force))
    }

    fn snapshot(&self, thread: ThreadId) -> Result<Snapshot, StoreError> {
        let running_here = self.inner.live.get(thread).is_some();
        self.inner.store.read(|tx| {
            let t = tx.thread(thread)?;
            let items = tx.inbox(thread)?;
            let root = tx.root_state(thread)?;
            let runnable = has_runnable(&items, root.root().is_some());
            let unknown = tx.blocking_unknown_effect(thread)?;
            let drive = DriveSnapshot {
                archived: t.archived_at.is_some(),
                running: running_here || t.lease.holder.is_some(),
                blocks_drive: t.blocks_drive(),
                has_runnable_inbox: runnable,
                has_person_line: unknown.as_ref().is_some_and(|u| {
                    has_person_line_after(&items, root.root().is_some(), u.cut_at)
                }),
                unknown_effect: unknown.is_some(),
            };
            let has_work = runnable || matches!(root, RootState::Open(_));
            Ok(Snapshot {
                thread: t,
                drive,
                has_work,
                unknown,
            })
        })
    }

    async fn arbitrate_locked(
        &self,
        thread: ThreadId,
        reason: &str,
        force: bool,
    ) -> Result<DriveOutcome, EngineError> {
        let snap = self.snapshot(thread)?;
        match arbitrate(&snap.drive, force) {
            DriveStep::NotHandled(DriveRefusal::Running)
                if force
                    && self
                        .inner
                        .live
                        .get_any(thread)
                        .is_some_and(|l| l.is_ended() || l.cancel.is_cancelled()) =>
            {
                // The loop is stopping; its release drive carries this one's force.
                self.inner
                    .forced_after_release
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(thread);
                Ok(DriveOutcome::NotHandled {
                    refusal: DriveRefusal::Running,
                })
            }
            DriveStep::NotHandled(refusal) => {
                if matches!(refusal, DriveRefusal::Paused | DriveRefusal::UnknownEffect) {
                    let (cause, call) = match (&snap.thread.paused, refusal) {
                        (Some(p), DriveRefusal::Paused) => (
                            format!(
                                "thread is paused ({}); drive reason: {reason}",
                                p.reason.as_str()
                            ),
                            None,
                        ),
                        _ => (
                            format!(
                                "the outcome of the thread's last tool call ({}) is unknown; it \
                                 resumes when a person writes or continues; drive reason: {reason}",
                                snap.unknown
                                    .as_ref()
                                    .map_or("unrecorded", |c| c.summary.as_str())
                            ),
                            snap.unknown.clone(),
                        ),
                    };
                    self.inner.store.write(|tx| {
                        tx.record_drive_refusal(thread, refusal.as_str(), &cause, call.as_ref())
                    })?;
                }
                Ok(DriveOutcome::NotHandled { refusal })
            }
            DriveStep::Wake if !snap.has_work => Ok(DriveOutcome::NotHandled {
                refusal: DriveRefusal::NoWork,
            }),
            DriveStep::Wake => self.admit_and_start(&snap.thread, reason).await,
            DriveStep::AskPolicies => self.ask_policies(&snap.thread, reason).await,
        }
    }

    async fn ask_policies(
        &self,
        thread: &Thread,
        reason: &str,
    ) -> Result<DriveOutcome, EngineError> {
        let no_work = Ok(DriveOutcome::NotHandled {
            refusal: DriveRefusal::NoWork,
        });
        if self.inner.ext.policies.is_empty() {
            return no_work;
        }
        let store = &self.inner.store;
        let mut waits = Vec::new();
        for w in &self.inner.ext.waits {
            match w.waits(thread, store) {
                Ok(found) => waits.extend(found),
                // Fail closed: a provider that cannot answer counts as a wait.
                Err(e) => waits.push(format!("wait provider {} failed: {e}", w.name())),
            }
        }
        let input = store.read(|tx| {
            let root = tx.root_state(thread.id)?.root();
            let latest_reply = match root {
                Some(r) => tx.latest_reply(r)?,
                None => None,
            };
            Ok(GateInput {
                archived: thread.archived_at.is_some(),
                waits,
                latest_root: root,
                latest_reply,
            })
        })?;
        let Ok(terminal) = shared_gate(&input) else {
            return no_work;
        };
        let gate = Gate {
            thread,
            terminal_message_id: terminal,
            store,
        };
        for policy in &self.inner.ext.policies {
            let revision = match policy.revision_key(&gate) {
                Ok(Some(r)) => r,
                Ok(None) => terminal.0.to_string(),
                Err(e) => {
                    tracing::warn!(policy = policy.id(), error = %e, "revision key failed; policy skipped");
                    continue;
                }
            };
            let dedupe = (thread.id, continuation_key(policy.id(), &revision));
            if self
                .inner
                .dedupe
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&dedupe)
            {
                continue;
            }
            match policy.propose(&gate) {
                Err(e) => {
                    tracing::warn!(policy = policy.id(), error = %e, "policy failed; next policy asked");
                }
                Ok(Proposal::None) => {}
                Ok(Proposal::Handled) => {
                    self.remember(dedupe);
                    return Ok(DriveOutcome::PolicyHandled {
                        policy: policy.id().to_string(),
                    });
                }
                Ok(Proposal::Inbox(mut delivery)) => {
                    if delivery.delivery_key.is_none() {
                        delivery.delivery_key = Some(dedupe.1.clone());
                    }
                    // Persisted before anything is scheduled; a repeat of the key is a no-op.
                    store.write(|tx| tx.deliver(thread.id, &delivery))?;
                    self.remember(dedupe);
                    let snap = self.snapshot(thread.id)?;
                    return if snap.drive.has_runnable_inbox {
                        self.admit_and_start(&snap.thread, reason).await
                    } else {
                        no_work
                    };
                }
            }
        }
        no_work
    }

    fn remember(&self, key: (ThreadId, String)) {
        self.inner
            .dedupe
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key);
    }

    async fn admit_and_start(
        &self,
        thread: &Thread,
        reason: &str,
    ) -> Result<DriveOutcome, EngineError> {
        // Counted as live from the admission on, so checks that cap the running runs see the
        // starts still waiting for their commit.
        let starting = Starting::new(&self.inner.starting);
        if let Some(refused) = self.admit(thread, reason)? {
            return Ok(refused);
        }
        let new_run = NewRun {
            thread_id: thread.id,
            trigger: reason.to_string(),
            owner_pid: std::process::id(),
            owner_boot: self.inner.config.boot_id.clone(),
        };
        // Queued to the writer, so the starts of many threads woken at once share a commit.
        let engine = self.clone();
        let started = self
            .inner
            .store
            .write_async(move |tx| {
                let run = tx.start_run(&new_run)?;
                engine.inner.ext.run_started(tx, &run)?;
                Ok(run)
            })
            .await;
        let run = match started {
            Ok(run) => run,
            Err(StoreError::Busy(..)) => {
                return Ok(DriveOutcome::NotHandled {
                    refusal: DriveRefusal::Running,
                });
            }
            Err(e) => return Err(e.into()),
        };
        let live = Arc::new(LiveRun::new(run.id, thread.id, run.generation, reason));
        self.inner.live.insert(live.clone());
        drop(starting);
        let engine = self.clone();
        self.inner.tasks.spawn(run_loop::run(engine, live));
        Ok(DriveOutcome::Started { run_id: run.id })
    }

    /// The admission checks, in order; the first that does not admit answers.
    fn admit(&self, thread: &Thread, reason: &str) -> Result<Option<DriveOutcome>, EngineError> {
        let store = &self.inner.store;
        let ctx = AdmissionContext {
            thread,
            store,
            // Not counting this start itself.
            live_runs: self.live_runs().saturating_sub(1),
            reason,
        };
        for check in &self.inner.ext.admission {
            match check.check(&ctx) {
                Admission::Admit => {}
                Admission::Refuse(cause) => {
                    store.write(|tx| tx.record_refusal(thread.id, check.name(), &cause, false))?;
                    return Ok(Some(DriveOutcome::Refused {
                        check: check.name().to_string(),
                        cause,
                    }));
                }
                Admission::Queue(cause) => {
                    store.write(|tx| tx.record_refusal(thread.id, check.name(), &cause, true))?;
                    return Ok(Some(DriveOutcome::Queued {
                        check: check.name().to_string(),
                        cause,
                    }));
                }
            }
        }
        Ok(None)
    }

    /// Retry the wakes admission checks queued (called when a run ends and capacity frees up).
    pub(crate) async fn retry_queued_wakes(&self) {
        // Almost always empty: a read answers that without a write.
        let store = &self.inner.store;
        if !store.read(|tx| tx.has_queued_wakes()).unwrap_or(true) {
            return;
        }
        let Ok(queued) = store.write(|tx| tx.take_queued_wakes()) else {
            return;
        };
        for t in queued {
            if let Err(e) = self.request_drive_boxed(t, "queued", false).await {
                tracing::warn!(thread = %t, error = %e, "queued wake failed");
            }
        }
    }
}
