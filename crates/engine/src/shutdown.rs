//! Draining: no new runs start, live runs get a grace period to reach a step boundary, and
//! whatever is still running then is recorded interrupted and its process groups ended.

use crate::Engine;
use crate::recovery::settle_dangling_calls;
use std::time::Duration;
use troupe_core::RunId;
use troupe_core::pause::PauseReason;
use troupe_core::run::EndReason;

impl Engine {
    /// Returns the runs that had to be interrupted.
    pub async fn shutdown(&self, grace: Duration) -> Vec<RunId> {
        self.begin_drain();
        let all_done = async {
            while let Some(live) = self.inner.live.any() {
                live.wait_done().await;
            }
        };
        let _ = tokio::time::timeout(grace, all_done).await;
        let mut interrupted = Vec::new();
        let mut groups = Vec::new();
        for live in self.inner.live.all() {
            let res = self.inner.store.write(|tx| {
                let (rec, ended) = tx.force_end_run(live.run_id, &EndReason::Interrupted)?;
                if ended {
                    self.inner.ext.run_ended(tx, &rec)?;
                    tx.mark_run_effects_unknown(
                        live.run_id,
                        "the daemon shut down before it finished",
                    )?;
                    settle_dangling_calls(
                        tx,
                        live.thread_id,
                        "interrupted by shutdown; whether it took effect is unknown",
                    )?;
                    tx.pause(
                        live.thread_id,
                        PauseReason::Interrupted,
                        Some("interrupted by shutdown".into()),
                    )?;
                }
                Ok(ended)
            });
            if matches!(res, Ok(true)) {
                interrupted.push(live.run_id);
            }
            live.cancel.cancel();
            groups.extend(live.pgids());
        }
        // Every run's groups end together (each may take the whole grace), on the reaper thread.
        troupe_tools::end_groups(&groups, self.inner.config.kill_grace).await;
        self.wait_all().await;
        interrupted
    }
}
