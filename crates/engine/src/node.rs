//! This process as a node among others sharing one database: its record and heartbeat, who
//! owns a live run, taking over the runs of a node that died, and stops that another node
//! asks for.
//!
//! A run's owner is the node named by its `owner_boot`. A node that writes no record (a
//! `troupe exec`, a run from before nodes were recorded) is judged as before, by its pid on this
//! machine. A node with a record is alive while its heartbeat is fresh; on this machine its
//! process being gone settles it at once, elsewhere only the expiry does — never while it may
//! still be writing (and a write it makes after the takeover fails its lease check anyway).

use crate::Engine;
use crate::abort::StopMode;
use crate::error::EngineError;
use crate::recovery::RecoveryReport;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use troupe_core::{RunId, ThreadId};
use troupe_store::{HEARTBEAT_EVERY_MS, NewNode, NodeRecord, RunRecord};

/// Who holds a live run, as far as recovery is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    Me,
    Alive,
    /// Gone, and claimed by this node (or judged by pid): its runs are ours to end. `local`
    /// when it ran on this machine, so its process groups are this machine's to end.
    Gone {
        local: bool,
    },
}

/// Owners already judged during one recovery pass.
#[derive(Default)]
pub(crate) struct Owners(HashMap<String, Owner>);

/// What one node tick did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NodeTick {
    /// This node was taken over by another (its heartbeat came too late): it must stop.
    pub taken_over: bool,
    /// Dead nodes this tick claimed, and what recovering their runs did.
    pub reaped: Vec<String>,
    pub recovery: RecoveryReport,
}

/// A request from one node to another, sent as a control message.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Control {
    Stop {
        node: String,
        thread: ThreadId,
        run: RunId,
        internal: bool,
    },
}

/// This machine's name, as nodes record it.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

impl Engine {
    /// This engine's node id: the boot id its runs carry.
    pub fn node_id(&self) -> &str {
        &self.inner.config.boot_id
    }

    /// Record this process as a node, before [`Engine::recover`].
    pub fn register_node(&self, addr: Option<String>) -> Result<NodeRecord, EngineError> {
        let node = NewNode {
            id: self.node_id().to_string(),
            host: host_name(),
            pid: std::process::id(),
            addr,
        };
        Ok(self.inner.store.write(|tx| tx.register_node(&node))?)
    }

    /// Record a clean stop (after the runs were drained).
    pub fn leave_cluster(&self) -> Result<(), EngineError> {
        let me = self.node_id().to_string();
        Ok(self.inner.store.write(|tx| tx.stop_node(&me))?)
    }

    /// Judge a live run's owner; a gone owner with a record is claimed here first, so exactly
    /// one node recovers its runs.
    pub(crate) fn owner_of(
        &self,
        run: &RunRecord,
        seen: &mut Owners,
    ) -> Result<Owner, EngineError> {
        if run.owner_boot == self.node_id() {
            return Ok(Owner::Me);
        }
        if let Some(o) = seen.0.get(&run.owner_boot) {
            return Ok(*o);
        }
        let me = self.node_id().to_string();
        let host = host_name();
        let store = &self.inner.store;
        let node = store.read(|tx| tx.node(&run.owner_boot))?;
        let owner = match node {
            // No record: a process that does not register (troupe exec); its pid decides.
            None => {
                let pid = run.owner_pid;
                if pid != std::process::id() && troupe_tools::process_running(pid as i32) {
                    Owner::Alive
                } else {
                    Owner::Gone { local: true }
                }
            }
            // Taken over by another node (which may have died recovering it), or stopped with
            // runs left over: anyone may end them, since ending a run is conditional on it
            // still running and only one ending stands.
            Some(n) if n.reaped_at.is_some() || n.stopped_at.is_some() => Owner::Gone {
                local: n.host == host,
            },
            Some(n) => {
                let local = n.host == host;
                // On this machine a process that is gone settles it (one process runs one
                // boot at a time, so an older boot of this very process is gone too).
                let process_gone = local
                    && (n.pid == std::process::id()
                        || !troupe_tools::process_running(n.pid as i32));
                if process_gone || !n.alive_at(store.now()) {
                    if store.write(|tx| tx.claim_node(&n.id, &me, !process_gone))? {
                        Owner::Gone { local }
                    } else {
                        Owner::Alive
                    }
                } else {
                    Owner::Alive
                }
            }
        };
        seen.0.insert(run.owner_boot.clone(), owner);
        Ok(owner)
    }

    /// One heartbeat, then a look for nodes that died: each one claimed has its runs ended as
    /// boot recovery ends them, and their threads asked to drive (the gate decides).
    pub async fn node_tick(&self) -> Result<NodeTick, EngineError> {
        let me = self.node_id().to_string();
        let store = &self.inner.store;
        let mut tick = NodeTick::default();
        if !store.write(|tx| tx.heartbeat(&me))? {
            tick.taken_over = true;
            return Ok(tick);
        }
        let expired = store.read(|tx| tx.expired_nodes())?;
        if expired.is_empty() {
            return Ok(tick);
        }
        let host = host_name();
        let mut threads = Vec::new();
        for node in expired.into_iter().filter(|n| *n != me) {
            if !store.write(|tx| tx.claim_node(&node, &me, true))? {
                continue;
            }
            let record = store.read(|tx| tx.node(&node))?;
            let local = record
                .as_ref()
                .is_some_and(|n| n.host == host && !troupe_tools::process_running(n.pid as i32));
            let runs = store.read(|tx| tx.live_runs())?;
            let mut groups = Vec::new();
            for run in runs.iter().filter(|r| r.owner_boot == node) {
                self.interrupt_run(run, local, &mut tick.recovery, &mut groups)
                    .await?;
                threads.push(run.thread_id);
            }
            self.end_groups(groups, &mut tick.recovery).await;
            tracing::warn!(node = %node, runs = threads.len(), "took over a node that stopped beating");
            tick.reaped.push(node);
        }
        for t in threads {
            let outcome = self.request_drive(t, "takeover", false).await?;
            tick.recovery.woken.push((t, outcome));
        }
        Ok(tick)
    }

    /// Run the node's background work until `shutdown`: a tick every heartbeat period, and the
    /// listener for other nodes' requests. When this node finds it was taken over, it cancels
    /// `shutdown` (its runs can no longer write: their leases moved).
    pub fn spawn_node_tasks(&self, shutdown: CancellationToken) {
        let engine = self.clone();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(HEARTBEAT_EVERY_MS as u64));
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    _ = every.tick() => match engine.node_tick().await {
                        Ok(t) if t.taken_over => {
                            tracing::error!("another node took this one over (its heartbeat was late); stopping");
                            stop.cancel();
                            break;
                        }
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "node heartbeat failed"),
                    },
                }
            }
        });
        let engine = self.clone();
        let mut heard = self.inner.store.subscribe_control();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    () = shutdown.cancelled() => break,
                    m = heard.recv() => m,
                };
                let text = match message {
                    Ok(t) => t,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                match serde_json::from_str::<Control>(&text) {
                    Ok(Control::Stop {
                        node,
                        thread,
                        internal,
                        ..
                    }) if node == engine.node_id() => {
                        let engine = engine.clone();
                        let mode = if internal {
                            StopMode::Internal
                        } else {
                            StopMode::User
                        };
                        tokio::spawn(async move {
                            if let Err(e) = engine.stop(thread, mode).await {
                                tracing::info!(thread = %thread, error = %e, "a stop another node asked for found nothing to stop");
                            }
                        });
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, message = %text, "an unreadable control message")
                    }
                }
            }
        });
    }

    /// Stop a run that another live node holds: ask that node, and wait for the run's end to
    /// be committed. `None` when no other live node holds the thread.
    pub(crate) async fn stop_elsewhere(
        &self,
        thread: ThreadId,
        mode: StopMode,
    ) -> Result<Option<RunRecord>, EngineError> {
        let store = &self.inner.store;
        let Some(run) = store.read(|tx| {
            let t = tx.thread(thread)?;
            t.lease.holder.map(|r| tx.run(r)).transpose()
        })?
        else {
            return Ok(None);
        };
        if run.owner_boot == self.node_id() {
            return Ok(None);
        }
        let Some(node) = store.read(|tx| tx.node(&run.owner_boot))? else {
            return Ok(None);
        };
        if !node.alive_at(store.now()) {
            return Ok(None);
        }
        let mut ended = store.subscribe();
        let ask = serde_json::to_string(&Control::Stop {
            node: node.id.clone(),
            thread,
            run: run.id,
            internal: mode != StopMode::User,
        })
        .map_err(|e| EngineError::Invalid(e.to_string()))?;
        store.write(|tx| tx.notify_control(&ask))?;
        let wait = async {
            loop {
                match ended.recv().await {
                    Ok(e) if e.kind == "run_ended" && e.run_id == Some(run.id) => return Ok(()),
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        // Lagged: the end may have gone by; the store says.
                        let now = store.read(|tx| tx.run(run.id))?;
                        if now.status != troupe_core::run::RunStatus::Running {
                            return Ok(());
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                        return Err(EngineError::Invalid("the store closed".into()));
                    }
                }
            }
        };
        // The owner ends it within milliseconds; a node that dies meanwhile is taken over
        // after its expiry, which this bound covers.
        let bound = Duration::from_millis(2 * troupe_store::NODE_EXPIRY_MS as u64);
        match tokio::time::timeout(bound, wait).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(EngineError::Invalid(format!(
                    "node {} did not stop run {} of thread {thread} in time",
                    node.id, run.id
                )));
            }
        }
        Ok(Some(store.read(|tx| tx.run(run.id))?))
    }
}
