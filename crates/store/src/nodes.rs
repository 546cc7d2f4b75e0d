//! Nodes: the daemon processes sharing one database, their heartbeats, and the claim by which
//! one live node takes over a dead one's runs.

use crate::args;
use crate::{Result, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::ThreadId;

/// How often a node writes its heartbeat.
pub const HEARTBEAT_EVERY_MS: i64 = 2_000;
/// A node whose last heartbeat is older than this (5 missed beats) is dead.
pub const NODE_EXPIRY_MS: i64 = 5 * HEARTBEAT_EVERY_MS;
/// How long the record of a node that stopped or was taken over is kept (each restart is a
/// new node, so the list would otherwise grow with every restart).
pub const NODE_RECORD_KEPT_MS: i64 = 24 * 60 * 60 * 1000;

#[derive(Clone, Debug)]
pub struct NewNode {
    /// The node's boot id; its runs carry it as `owner_boot`.
    pub id: String,
    pub host: String,
    pub pid: u32,
    /// Where its HTTP API listens, when it serves one.
    pub addr: Option<String>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeRecord {
    pub id: String,
    pub host: String,
    pub pid: u32,
    pub addr: Option<String>,
    pub started_at: i64,
    pub heartbeat_at: i64,
    pub stopped_at: Option<i64>,
    pub reaped_at: Option<i64>,
    pub reaped_by: Option<String>,
    /// The threads whose lease a run of this node holds.
    pub threads: Vec<ThreadId>,
}

impl NodeRecord {
    /// Whether the node counts as running at `now`: not stopped, not taken over, and heard from
    /// within the expiry.
    pub fn alive_at(&self, now: i64) -> bool {
        self.stopped_at.is_none()
            && self.reaped_at.is_none()
            && now - self.heartbeat_at <= NODE_EXPIRY_MS
    }
}

const COLUMNS: &str =
    "id, host, pid, addr, started_at, heartbeat_at, stopped_at, reaped_at, reaped_by";

fn from_row(r: &crate::Row) -> Result<NodeRecord> {
    Ok(NodeRecord {
        id: r.get(0)?,
        host: r.get(1)?,
        pid: r.get(2)?,
        addr: r.get(3)?,
        started_at: r.get(4)?,
        heartbeat_at: r.get(5)?,
        stopped_at: r.get(6)?,
        reaped_at: r.get(7)?,
        reaped_by: r.get(8)?,
        threads: Vec::new(),
    })
}

impl Tx<'_> {
    /// Record a node as started (a restart under the same id starts it afresh).
    pub fn register_node(&mut self, n: &NewNode) -> Result<NodeRecord> {
        // Nodes long gone whose runs have all ended are forgotten.
        self.exec(
            "DELETE FROM nodes
             WHERE COALESCE(stopped_at, reaped_at) < ?1
               AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.owner_boot = nodes.id AND r.status = 'running')",
            args![self.now - NODE_RECORD_KEPT_MS],
        )?;
        self.exec(
            "INSERT INTO nodes (id, host, pid, addr, started_at, heartbeat_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)
             ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid,
                 addr = excluded.addr, started_at = excluded.started_at,
                 heartbeat_at = excluded.heartbeat_at, stopped_at = NULL, reaped_at = NULL,
                 reaped_by = NULL",
            args![n.id, n.host, n.pid, n.addr, self.now],
        )?;
        // The process's run, so work it cuts is later judged by how it stopped (issue 16 §3).
        self.exec(
            "INSERT INTO daemon_runs (node_id, started_at) VALUES (?1, ?2)",
            args![n.id, self.now],
        )?;
        self.event(
            "node_started",
            None,
            None,
            json!({"node": n.id, "host": n.host, "pid": n.pid, "addr": n.addr}),
        )?;
        self.node(&n.id)?
            .ok_or_else(|| crate::StoreError::not_found("node", &n.id))
    }

    /// Write the node's heartbeat. False when the node no longer counts as running (another
    /// node took it over, or it was stopped): it must then stop writing.
    pub fn heartbeat(&mut self, node: &str) -> Result<bool> {
        let n = self.exec(
            "UPDATE nodes SET heartbeat_at = ?2
             WHERE id = ?1 AND stopped_at IS NULL AND reaped_at IS NULL",
            args![node, self.now],
        )?;
        Ok(n == 1)
    }

    /// Record a clean stop.
    pub fn stop_node(&mut self, node: &str) -> Result<()> {
        let n = self.exec(
            "UPDATE nodes SET stopped_at = ?2 WHERE id = ?1 AND stopped_at IS NULL",
            args![node, self.now],
        )?;
        self.exec(
            "UPDATE daemon_runs SET clean_stop_at = ?2
             WHERE node_id = ?1 AND clean_stop_at IS NULL",
            args![node, self.now],
        )?;
        if n > 0 {
            self.event("node_stopped", None, None, json!({"node": node}))?;
        }
        Ok(())
    }

    /// Claim a dead node for `by`: true for exactly one caller, which then recovers its runs.
    /// With `only_if_expired`, only once its heartbeat is older than the expiry; without, at
    /// once (the caller saw its process gone on this machine).
    pub fn claim_node(&mut self, node: &str, by: &str, only_if_expired: bool) -> Result<bool> {
        let cutoff = if only_if_expired {
            self.now - NODE_EXPIRY_MS
        } else {
            i64::MAX
        };
        let n = self.exec(
            "UPDATE nodes SET reaped_at = ?2, reaped_by = ?3
             WHERE id = ?1 AND stopped_at IS NULL AND reaped_at IS NULL AND heartbeat_at < ?4",
            args![node, self.now, by, cutoff],
        )?;
        if n == 1 {
            self.event("node_reaped", None, None, json!({"node": node, "by": by}))?;
        }
        Ok(n == 1)
    }

    pub fn node(&self, id: &str) -> Result<Option<NodeRecord>> {
        let Some(mut node) = self.query_opt(
            &format!("SELECT {COLUMNS} FROM nodes WHERE id = ?1"),
            args![id],
            from_row,
        )?
        else {
            return Ok(None);
        };
        node.threads = self.threads_held_by(id)?;
        Ok(Some(node))
    }

    /// Every node, newest first, each with the threads its runs hold.
    pub fn nodes(&self) -> Result<Vec<NodeRecord>> {
        let mut nodes = self.query_all(
            &format!("SELECT {COLUMNS} FROM nodes ORDER BY started_at DESC, id"),
            args![],
            from_row,
        )?;
        for n in &mut nodes {
            n.threads = self.threads_held_by(&n.id)?;
        }
        Ok(nodes)
    }

    /// Nodes not stopped or taken over whose heartbeat is older than the expiry at `now`.
    pub fn expired_nodes(&self) -> Result<Vec<String>> {
        self.query_all(
            "SELECT id FROM nodes WHERE stopped_at IS NULL AND reaped_at IS NULL
             AND heartbeat_at < ?1 ORDER BY id",
            args![self.now - NODE_EXPIRY_MS],
            |r| r.get(0),
        )
    }

    fn threads_held_by(&self, node: &str) -> Result<Vec<ThreadId>> {
        self.query_all(
            "SELECT t.id FROM threads t JOIN runs r ON r.id = t.lease_run_id
             WHERE r.owner_boot = ?1 AND r.status = 'running' ORDER BY t.id",
            args![node],
            |r| r.get(0).map(ThreadId),
        )
    }
}
