//! Stopping a run: one transaction records the stop (run stopped, effects in flight unknown,
//! the partial reply kept as the breakpoint, the latch written for a person's Stop); then the
//! model stream is cancelled and the run's process groups are ended. `record_stops` is the
//! first half, inside a caller's own write (a hold ends every run it covers in the write that
//! makes it, each table changed once for all of them; `record_stop` is its one-run form);
//! `release_stops` the second, after that write commits.

use crate::Engine;
use crate::error::EngineError;
use crate::live::LiveRun;
use crate::node::Control;
use std::sync::Arc;
use troupe_core::inbox::dropped_on_abort;
use troupe_core::message::{Finish, Origin, Part, Role};
use troupe_core::pause::PauseReason;
use troupe_core::run::EndReason;
use troupe_core::{RunId, ThreadId};
use troupe_store::{NewMessage, RunRecord, StoreError, Tx};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StopMode {
    /// A person pressed Stop: steer and context are dropped, tasks stay, the thread latches `aborted`.
    User,
    /// A domain cancelled its own work: no latch, the inbox is left to the domain.
    Internal,
    /// A hold ended the run: no latch (the hold is the latch) and every unread line stays
    /// queued, held until the hold lifts.
    Hold,
}

/// A stop recorded in a write; what is left to do once that write has committed.
pub struct RecordedStop {
    pub run: RunRecord,
    /// Whether this write ended the run (false: it had ended already; the release still runs).
    pub ended: bool,
    live: Option<Arc<LiveRun>>,
}

/// A run about to be stopped, as found before the write changes anything.
struct Stopping {
    run: RunId,
    thread: ThreadId,
    /// The reply streamed so far, kept as the breakpoint.
    partial: String,
    live: Option<Arc<LiveRun>>,
}

impl Stopping {
    fn live(live: Arc<LiveRun>) -> Self {
        Stopping {
            run: live.run_id,
            thread: live.thread_id,
            partial: live.partial(),
            live: Some(live),
        }
    }
}

impl Engine {
    /// Stop the thread's running turn. Returns the run as recorded; `NotRunning` if there is none.
    /// Returns after the loop has exited and the run's process groups are gone.
    /// A run that another live node holds is stopped by that node, asked through the store;
    /// this returns once its end is committed.
    pub async fn stop(&self, thread: ThreadId, mode: StopMode) -> Result<RunRecord, EngineError> {
        let Some(live) = self.inner.live.get(thread) else {
            return match self.stop_elsewhere(thread, mode).await? {
                Some(record) => Ok(record),
                None => Err(EngineError::NotRunning(thread)),
            };
        };
        let stop = self
            .inner
            .store
            .write(|tx| self.record_live_stop(tx, &live, mode))?;
        let run = stop.run.clone();
        let _ = self.release_stops(vec![stop]).await;
        live.wait_done().await;
        Ok(run)
    }

    /// Record, inside `tx`, the stop of the thread's live run — here or on another node.
    /// `None` when the thread runs nothing. Call `release_stops` after the write commits.
    pub fn record_stop(
        &self,
        tx: &mut Tx<'_>,
        thread: ThreadId,
        mode: StopMode,
    ) -> Result<Option<RecordedStop>, StoreError> {
        Ok(self.record_stops(tx, &[thread], mode)?.pop())
    }

    /// Record, inside `tx`, the stops of these threads' live runs, each as `record_stop`
    /// records it, with each table's change made once for all of them (a hold ending a
    /// hundred turns makes a few statements, not a few thousand). Threads running nothing are
    /// left out; the rest come back in the order given. Call `release_stops` after the write
    /// commits.
    pub fn record_stops(
        &self,
        tx: &mut Tx<'_>,
        threads: &[ThreadId],
        mode: StopMode,
    ) -> Result<Vec<RecordedStop>, StoreError> {
        let mut stopping = Vec::new();
        for &thread in threads {
            if stopping.iter().any(|s: &Stopping| s.thread == thread) {
                continue;
            }
            if let Some(live) = self.inner.live.get(thread) {
                stopping.push(Stopping::live(live));
            } else if let Some(run) = tx.thread(thread)?.lease.holder {
                // Held by another node (or left by a dead one): the record is the same; its
                // owner is told to cancel after commit.
                stopping.push(Stopping {
                    run,
                    thread,
                    partial: String::new(),
                    live: None,
                });
            }
        }
        self.record_resolved(tx, stopping, mode)
    }

    fn record_live_stop(
        &self,
        tx: &mut Tx<'_>,
        live: &Arc<LiveRun>,
        mode: StopMode,
    ) -> Result<RecordedStop, StoreError> {
        self.record_resolved(tx, vec![Stopping::live(live.clone())], mode)?
            .pop()
            .ok_or_else(|| {
                StoreError::Corrupt(format!("the stop of run {} went missing", live.run_id))
            })
    }

    fn record_resolved(
        &self,
        tx: &mut Tx<'_>,
        stopping: Vec<Stopping>,
        mode: StopMode,
    ) -> Result<Vec<RecordedStop>, StoreError> {
        let runs: Vec<RunId> = stopping.iter().map(|s| s.run).collect();
        let ended = tx.force_end_runs(&runs, &EndReason::Stopped)?;
        // The first stop wins; a run another stop ended changes nothing more here.
        for (rec, by_this) in &ended {
            if *by_this {
                self.inner.ext.run_ended(tx, rec)?;
            }
        }
        let fresh: Vec<(RunId, ThreadId)> = ended
            .iter()
            .filter(|(_, by_this)| *by_this)
            .map(|(rec, _)| (rec.id, rec.thread_id))
            .collect();
        let fresh_runs: Vec<RunId> = fresh.iter().map(|(run, _)| *run).collect();
        let fresh_threads: Vec<ThreadId> = fresh.iter().map(|(_, thread)| *thread).collect();
        tx.mark_runs_effects_unknown(&fresh_runs, "stopped before it finished")?;
        tx.settle_dangling_calls_of(
            &fresh_threads,
            "stopped before it finished; whether it took effect is unknown",
        )?;
        let mut out = Vec::with_capacity(stopping.len());
        for (stop, (rec, by_this)) in stopping.into_iter().zip(ended) {
            let thread = stop.thread;
            if by_this {
                self.keep_partial(tx, &rec, thread, &stop.partial)?;
                if mode == StopMode::User {
                    let items = tx.inbox(thread)?;
                    tx.drop_inbox_items(thread, &dropped_on_abort(&items))?;
                    tx.pause(thread, PauseReason::Aborted, None)?;
                }
            }
            out.push(RecordedStop {
                run: rec,
                ended: by_this,
                live: stop.live,
            });
        }
        Ok(out)
    }

    /// Keep a stopped run's partial reply as an interrupted assistant message under the
    /// thread's task (its breakpoint). The root is read only when there is a partial reply to
    /// keep: a hold ending a hundred turns mid tool call reads none.
    fn keep_partial(
        &self,
        tx: &mut Tx<'_>,
        rec: &RunRecord,
        thread: ThreadId,
        partial: &str,
    ) -> Result<(), StoreError> {
        if partial.is_empty() {
            return Ok(());
        }
        let root = match rec.root_id {
            Some(r) => Some(r),
            None => tx.root_state(thread)?.root(),
        };
        if let Some(root) = root {
            let m = tx.insert_message(&NewMessage {
                thread_id: thread,
                role: Role::Assistant,
                origin: Origin::Agent,
                is_root: false,
                root_id: Some(root),
                run_id: Some(rec.id),
                parts: vec![Part::text(partial.to_string())],
                finish: Some(Finish::Interrupted),
                error: None,
                delivery_key: None,
                metadata: None,
            })?;
            self.inner.ext.observe(tx, &m)?;
        }
        Ok(())
    }

    /// After the write that recorded them: cancel each run's model stream and tool calls and
    /// end its process groups (SIGTERM, SIGKILL after the grace). The groups go to the tools'
    /// reaper thread here, all at once, so ending them takes no runtime worker; a cancelled
    /// shell call ending its own group joins that ending rather than signalling again. Runs
    /// another node holds are handed to that node. Resolves to the runs whose groups outlived
    /// the kill (empty unless something is wrong); nobody needs to wait for it.
    pub fn release_stops(&self, stops: Vec<RecordedStop>) -> tokio::task::JoinHandle<Vec<RunId>> {
        let mut owners = Vec::new();
        let mut pgids = Vec::new();
        for stop in &stops {
            match &stop.live {
                Some(live) => {
                    for pgid in live.pgids() {
                        owners.push(stop.run.id);
                        pgids.push(pgid);
                    }
                }
                None => self.hand_stop_to_owner(&stop.run),
            }
        }
        let ends = troupe_tools::end_groups(&pgids, self.inner.config.kill_grace);
        for stop in &stops {
            if let Some(live) = &stop.live {
                live.take_partial();
                live.cancel.cancel();
            }
        }
        tokio::spawn(async move {
            let mut left = Vec::new();
            for (run, end) in owners.into_iter().zip(ends.await) {
                if end == troupe_tools::GroupEnd::Survived && !left.contains(&run) {
                    left.push(run);
                }
            }
            left
        })
    }

    /// End process groups a stopped run left on this machine (a boot after the daemon died
    /// inside a kill's grace), all at once. Returns those that were still alive.
    pub async fn end_left_groups(&self, pgids: &[i32]) -> Vec<i32> {
        let ends = troupe_tools::end_groups(pgids, self.inner.config.kill_grace).await;
        pgids
            .iter()
            .zip(ends)
            .filter(|(_, end)| {
                !matches!(
                    end,
                    troupe_tools::GroupEnd::AlreadyGone | troupe_tools::GroupEnd::Refused
                )
            })
            .map(|(p, _)| *p)
            .collect()
    }

    fn hand_stop_to_owner(&self, run: &RunRecord) {
        if run.owner_boot == self.node_id() {
            return;
        }
        let ask = Control::Stop {
            node: run.owner_boot.clone(),
            thread: run.thread_id,
            run: run.id,
            internal: true,
        };
        let sent = serde_json::to_string(&ask)
            .map_err(|e| StoreError::Corrupt(e.to_string()))
            .and_then(|ask| self.inner.store.write(|tx| tx.notify_control(&ask)));
        if let Err(e) = sent {
            tracing::warn!(run = %run.id, error = %e, "could not ask the owning node to cancel a stopped run");
        }
    }
}
