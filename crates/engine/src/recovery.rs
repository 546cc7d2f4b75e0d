//! Recovery at boot. A stored "running" is not liveness: runs whose process (or node, see
//! node.rs) is gone are ended as interrupted, their cut-off effects stay unknown, the process groups they left are ended,
//! and interactive threads with unfinished work are latched. No model is called here; the only
//! drive requests are the boot wakes, which the gate lets through for unattended threads only.

use crate::Engine;
use crate::drive::DriveOutcome;
use crate::error::EngineError;
use serde::Serialize;
use std::collections::BTreeSet;
use troupe_core::drive::RootState;
use troupe_core::inbox::has_runnable;
use troupe_core::message::{Part, PartBody, Role};
use troupe_core::pause::PauseReason;
use troupe_core::run::{EndReason, RunStatus};
use troupe_core::{RunId, ThreadId};
use troupe_store::{StoreError, Tx};

#[derive(Clone, Debug, Default, Serialize)]
pub struct RecoveryReport {
    pub interrupted_runs: Vec<RunId>,
    pub unknown_effects: usize,
    pub ended_groups: Vec<i32>,
    pub latched: Vec<ThreadId>,
    pub woken: Vec<(ThreadId, DriveOutcome)>,
}

/// Answer every tool call of the thread's latest assistant message that has no result, so the
/// history stays well-formed; nothing is run again.
pub(crate) fn settle_dangling_calls(
    tx: &mut Tx<'_>,
    thread: ThreadId,
    note: &str,
) -> Result<usize, StoreError> {
    let recent = tx.messages_tail(thread, 1)?;
    let Some(last) = recent.into_iter().find(|m| m.role == Role::Assistant) else {
        return Ok(0);
    };
    let answered: BTreeSet<&str> = last
        .parts
        .iter()
        .filter_map(|p| match &p.body {
            PartBody::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let dangling: Vec<(String, String)> = last
        .tool_calls()
        .filter(|(id, _, _)| !answered.contains(id))
        .map(|(id, name, _)| (id.to_string(), name.to_string()))
        .collect();
    for (call_id, name) in &dangling {
        tx.append_part(
            last.id,
            &Part {
                body: PartBody::ToolResult {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    content: note.to_string(),
                    is_error: true,
                },
                visible: true,
                in_context: true,
            },
        )?;
    }
    Ok(dangling.len())
}

impl Engine {
    pub async fn recover(&self) -> Result<RecoveryReport, EngineError> {
        let mut report = RecoveryReport::default();
        let store = &self.inner.store;
        let mut owners = crate::node::Owners::default();
        let mut groups = Vec::new();
        // Threads whose run another live process or node still drives: their open work is
        // that run's, not unfinished; that owner's own end (or its recovery) settles it.
        let mut driven = BTreeSet::new();
        for run in store.read(|tx| tx.live_runs())? {
            match self.owner_of(&run, &mut owners)? {
                crate::node::Owner::Me | crate::node::Owner::Alive => {
                    driven.insert(run.thread_id);
                    continue;
                }
                crate::node::Owner::Gone { local } => {
                    self.interrupt_run(&run, local, &mut report, &mut groups)
                        .await?;
                }
            }
        }
        self.end_groups(groups, &mut report).await;
        // Latch interactive threads with direct evidence of unfinished work; first pause wins.
        // One read snapshot for every candidate, then one write for all latches.
        let unfinished: Vec<ThreadId> = store.read(|tx| {
            let mut found = Vec::new();
            for t in tx.threads(u32::MAX)? {
                if !t.latchable() || t.paused.is_some() || driven.contains(&t.id) {
                    continue;
                }
                let root = tx.root_state(t.id)?;
                let items = tx.inbox(t.id)?;
                // A task its last run was stopped on is open by that stop's choice, not cut off
                // by the process: the stop latched it already, or a hold or its domain keeps it.
                let cut_off = matches!(root, RootState::Open(_))
                    && !tx
                        .runs_for_thread(t.id, 1)?
                        .first()
                        .is_some_and(|r| r.status == RunStatus::Stopped);
                if cut_off || has_runnable(&items, root.root().is_some()) {
                    found.push(t.id);
                }
            }
            Ok(found)
        })?;
        if !unfinished.is_empty() {
            store.write(|tx| {
                for t in &unfinished {
                    tx.pause(
                        *t,
                        PauseReason::Interrupted,
                        Some("found unfinished at startup".into()),
                    )?;
                }
                Ok(())
            })?;
        }
        report.latched.extend(unfinished);
        // Boot wakes: the gate decides (latched interactive threads stay put).
        let mut wake: BTreeSet<ThreadId> = store
            .read(|tx| tx.threads_with_runnable_tasks())?
            .into_iter()
            .collect();
        wake.extend(store.write(|tx| tx.take_queued_wakes())?);
        for t in wake {
            let outcome = self.request_drive(t, "boot", false).await?;
            report.woken.push((t, outcome));
        }
        Ok(report)
    }

    /// End a run whose owner is gone as boot recovery does: interrupted, its started effects
    /// unknown, its dangling calls answered, its thread latched. The process groups it left are
    /// ended only when they are this machine's (`local`): a pgid means nothing elsewhere.
    pub(crate) async fn interrupt_run(
        &self,
        run: &troupe_store::RunRecord,
        local: bool,
        report: &mut RecoveryReport,
        groups: &mut Vec<i32>,
    ) -> Result<(), EngineError> {
        let cut = self.inner.store.write(|tx| {
            let (rec, ended) = tx.force_end_run(run.id, &EndReason::Interrupted)?;
            if !ended {
                return Ok(Vec::new());
            }
            self.inner.ext.run_ended(tx, &rec)?;
            let cut = tx.mark_run_effects_unknown(run.id, "the process running it stopped before it finished")?;
            settle_dangling_calls(
                tx,
                run.thread_id,
                "interrupted: the process running this call stopped; whether it took effect is unknown, and it was not run again",
            )?;
            tx.pause(run.thread_id, PauseReason::Interrupted, Some(format!("run {} was interrupted", run.id)))?;
            Ok(cut)
        })?;
        report.interrupted_runs.push(run.id);
        report.unknown_effects += cut.len();
        if !local {
            return Ok(());
        }
        // Ended by `end_groups` once every run is recorded: all at once, since each may take
        // the whole grace.
        groups.extend(cut.iter().filter_map(|e| e.pgid));
        Ok(())
    }

    /// End the process groups interrupted runs left, concurrently; those alive go in the report.
    pub(crate) async fn end_groups(&self, groups: Vec<i32>, report: &mut RecoveryReport) {
        let grace = self.inner.config.kill_grace;
        let alive: Vec<i32> = groups
            .into_iter()
            .filter(|p| troupe_tools::group_alive(*p))
            .collect();
        let ends: Vec<_> = alive
            .iter()
            .map(|p| tokio::spawn(troupe_tools::terminate_group(*p, grace)))
            .collect();
        for end in ends {
            let _ = end.await;
        }
        report.ended_groups.extend(alive);
    }
}
