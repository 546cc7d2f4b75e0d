//! Lattice at startup and while the daemon runs. Startup (after BlueprintLoop recovery, with the
//! follower already subscribed): Runs needing the controller — terminal ones with their
//! completion mail pending, and every non-terminal current Run — are reconciled once (a half-done
//! create or start finished once, a running loop's missing first prompt given once), then their
//! sessions driven. No model call is made here. The follower turns loop and note events into
//! reconciliations; events only wake it, the records decide (LAT-16).

use super::controller::Reason;
use crate::{WorkflowError, Workflows};
use serde::Serialize;
use troupe_core::LatticeRunId;
use troupe_core::ThreadId;
use troupe_core::lattice::RunStatus;
use troupe_core::lattice::WorkState;

/// What startup reconciliation did.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct LatticeRecovery {
    /// Runs reconciled.
    #[serde(serialize_with = "ids")]
    pub reconciled: Vec<LatticeRunId>,
    /// Sessions driven because something was queued for them.
    pub driven: Vec<ThreadId>,
}

fn ids<S: serde::Serializer>(v: &[LatticeRunId], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|i| i.0))
}

impl Workflows {
    pub async fn recover_lattice_runs(&self) -> Result<LatticeRecovery, WorkflowError> {
        let mut report = LatticeRecovery::default();
        let runs = self
            .store()
            .read(|tx| tx.lattice_runs_needing_reconcile())?;
        let mut threads: Vec<ThreadId> = runs.iter().map(|r| r.thread_id).collect();
        threads.dedup();
        for thread in threads {
            match self.reconcile_lattice(thread, Reason::Startup).await {
                Ok(Some((run, drove))) => {
                    report.reconciled.push(run);
                    if drove {
                        report.driven.push(thread);
                    }
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(thread = %thread, error = %e, "Lattice recovery failed"),
            }
        }
        Ok(report)
    }

    /// Reconcile the thread's current Run now; returns it and whether the session was driven.
    pub(crate) async fn reconcile_lattice(
        &self,
        thread: ThreadId,
        reason: Reason,
    ) -> Result<Option<(LatticeRunId, bool)>, WorkflowError> {
        let limits = self.engine().config().loops;
        let pass = self
            .store()
            .write(|tx| super::controller::reconcile(tx, thread, reason, limits))?;
        for t in &pass.abort {
            self.stop_quietly(*t).await;
        }
        let drive = pass.drive();
        if drive {
            self.engine()
                .request_drive(thread, "lattice", false)
                .await?;
        }
        Ok(pass.run.map(|r| (r.id, drive)))
    }

    /// Reconcile the Runs a loop or note event concerns. Called from the follower.
    async fn on_lattice_event(&self, e: &troupe_store::Event) -> Result<(), WorkflowError> {
        match e.kind.as_str() {
            "blueprint_loop_created" | "blueprint_loop_updated" => {
                let Some(thread) = e.thread_id else {
                    return Ok(());
                };
                let has_run = self
                    .store()
                    .read(|tx| tx.peek_current_lattice_run(thread))?
                    .is_some_and(|r| !r.status.is_terminal() || r.effect.is_some());
                if has_run {
                    self.reconcile_lattice(thread, Reason::LoopChanged).await?;
                }
            }
            "note_updated" => {
                let Some(note) = e.payload.get("note_id").and_then(|v| v.as_i64()) else {
                    return Ok(());
                };
                let runs = self
                    .store()
                    .read(|tx| tx.lattice_runs_needing_reconcile())?;
                for r in runs.into_iter().filter(|r| {
                    r.status == RunStatus::Active
                        && r.state == WorkState::AwaitingExecution
                        && r.current_step()
                            .and_then(|s| s.blueprint.as_ref())
                            .is_some_and(|b| b.note_id == note)
                }) {
                    self.reconcile_lattice(r.thread_id, Reason::NoteChange)
                        .await?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Follow loop and note events until `shutdown`. Subscribe before startup reconciliation.
    pub fn spawn_lattice_follower(&self, shutdown: tokio_util::sync::CancellationToken) {
        let mut events = self.store().subscribe();
        let wf = self.clone();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    () = shutdown.cancelled() => break,
                    e = events.recv() => e,
                };
                match event {
                    Ok(e) => {
                        if let Err(err) = wf.on_lattice_event(&e).await {
                            tracing::warn!(kind = %e.kind, error = %err, "Lattice reconciliation failed");
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        // Events were missed: every Run that may need it is reconciled.
                        if let Err(err) = wf.recover_lattice_runs().await {
                            tracing::warn!(error = %err, "Lattice catch-up failed");
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
    }
}
