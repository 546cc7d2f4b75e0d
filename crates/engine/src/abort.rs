//! Stopping a run: one transaction records the stop (run stopped, effects in flight unknown,
//! the partial reply kept as the breakpoint, steer and context dropped, the latch written);
//! then the model stream is cancelled and the run's process groups are ended.

use crate::Engine;
use crate::error::EngineError;
use crate::recovery::settle_dangling_calls;
use troupe_core::ThreadId;
use troupe_core::inbox::dropped_on_abort;
use troupe_core::message::{Finish, Origin, Part, Role};
use troupe_core::pause::PauseReason;
use troupe_core::run::EndReason;
use troupe_store::{NewMessage, RunRecord};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StopMode {
    /// A person pressed Stop: steer and context are dropped, tasks stay, the thread latches `aborted`.
    User,
    /// A domain cancelled its own work: no latch, the inbox is left to the domain.
    Internal,
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
        let partial = live.take_partial();
        let record = self.inner.store.write(|tx| {
            let (rec, ended) = tx.force_end_run(live.run_id, &EndReason::Stopped)?;
            if !ended {
                // The first stop wins; a second one changes nothing.
                return Ok(rec);
            }
            self.inner.ext.run_ended(tx, &rec)?;
            let root = match rec.root_id {
                Some(r) => Some(r),
                None => tx.root_state(thread)?.root(),
            };
            tx.mark_run_effects_unknown(live.run_id, "stopped before it finished")?;
            settle_dangling_calls(
                tx,
                thread,
                "stopped before it finished; whether it took effect is unknown",
            )?;
            if !partial.is_empty() && root.is_some() {
                let m = tx.insert_message(&NewMessage {
                    thread_id: thread,
                    role: Role::Assistant,
                    origin: Origin::Agent,
                    is_root: false,
                    root_id: root,
                    run_id: Some(live.run_id),
                    parts: vec![Part::text(partial.clone())],
                    finish: Some(Finish::Interrupted),
                    error: None,
                    delivery_key: None,
                    metadata: None,
                })?;
                self.inner.ext.observe(tx, &m)?;
            }
            if mode == StopMode::User {
                let items = tx.inbox(thread)?;
                tx.drop_inbox_items(thread, &dropped_on_abort(&items))?;
                tx.pause(thread, PauseReason::Aborted, None)?;
            }
            Ok(rec)
        })?;
        live.cancel.cancel();
        let grace = self.inner.config.kill_grace;
        // Each group gets its own grace period, concurrently.
        let ends: Vec<_> = live
            .pgids()
            .into_iter()
            .map(|pgid| tokio::spawn(troupe_tools::terminate_group(pgid, grace)))
            .collect();
        for end in ends {
            let _ = end.await;
        }
        live.wait_done().await;
        Ok(record)
    }
}
