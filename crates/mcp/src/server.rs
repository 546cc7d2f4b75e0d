//! The life of one server: connect, list its tools, serve calls, re-list when it says its tools
//! changed, and start it again with backoff (1 s, 2 s, 4 s … 60 s) when it ends. One process
//! per server, shared by every Bot allowed to use it.

use crate::conn::{self, Conn, Notice, StderrTail};
use crate::def::ServerDef;
use crate::naming;
use crate::schema;
use crate::status::{ServerStatus, State, ToolInfo};
use rmcp::RoleClient;
use rmcp::service::Peer;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use troupe_store::Store;

/// How long a server must have run for its next end to start the backoff over.
pub const STABLE_AFTER: Duration = Duration::from_secs(60);

/// The wait before the `attempt`-th start again (0-based): 1 s doubling to at most 60 s.
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_secs(1u64.checked_shl(attempt).unwrap_or(u64::MAX).min(60))
}

/// What a ready server has: the peer calls go through, and its tools.
#[derive(Clone)]
pub(crate) struct Live {
    pub peer: Peer<RoleClient>,
    pub tools: Arc<[ToolInfo]>,
    /// Bumps on every (re)connect and re-list, so cached registrations know they are old.
    pub generation: u64,
}

pub(crate) enum Cmd {
    Restart,
}

pub(crate) struct Slot {
    pub def: ServerDef,
    status: watch::Sender<ServerStatus>,
    live: RwLock<Option<Live>>,
    cmds: mpsc::UnboundedSender<Cmd>,
    stop: CancellationToken,
    stderr: StderrTail,
    store: Store,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Slot {
    /// Start the server's life (or only record it disabled).
    pub fn start(def: ServerDef, store: Store, default_cwd: PathBuf) -> Arc<Slot> {
        let state = if def.enabled {
            State::Starting
        } else {
            State::Disabled
        };
        let (status, _) = watch::channel(ServerStatus::new(&def.name, state, store.now()));
        let (cmds, rx) = mpsc::unbounded_channel();
        let slot = Arc::new(Slot {
            def,
            status,
            live: RwLock::new(None),
            cmds,
            stop: CancellationToken::new(),
            stderr: StderrTail::default(),
            store,
            task: std::sync::Mutex::new(None),
        });
        slot.publish();
        if slot.def.enabled {
            let task = tokio::spawn(life(slot.clone(), rx, default_cwd));
            *slot.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
        }
        slot
    }

    /// Stop, and wait at most `limit` for the connection to close and the process to end.
    pub async fn stop_and_wait(&self, limit: Duration) {
        self.stop();
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(limit, task).await;
        }
    }

    pub fn status(&self) -> ServerStatus {
        let mut s = self.status.borrow().clone();
        s.stderr_tail = self.stderr.text();
        s
    }

    pub fn watch(&self) -> watch::Receiver<ServerStatus> {
        self.status.subscribe()
    }

    pub fn live(&self) -> Option<Live> {
        self.live.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn restart(&self) {
        let _ = self.cmds.send(Cmd::Restart);
    }

    /// End its life: the connection closes and its process group ends.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    fn set_live(&self, live: Option<Live>) {
        *self.live.write().unwrap_or_else(|p| p.into_inner()) = live;
    }

    fn update(&self, f: impl FnOnce(&mut ServerStatus)) {
        let now = self.store.now();
        self.status.send_modify(|s| {
            f(s);
            s.updated_at = now;
        });
        self.publish();
    }

    fn publish(&self) {
        let payload = self.status().event_payload();
        if let Err(e) = self
            .store
            .write(|tx| tx.event("mcp_server_status", None, None, payload))
        {
            tracing::warn!(server = %self.def.name, error = %e, "could not record an MCP server's status");
        }
    }
}

/// Connect, serve, and start again after an end, until stopped.
async fn life(slot: Arc<Slot>, mut cmds: mpsc::UnboundedReceiver<Cmd>, default_cwd: PathBuf) {
    let mut attempt = 0u32;
    let mut generation = 0u64;
    loop {
        let (notices_tx, mut notices) = mpsc::unbounded_channel();
        let connected = tokio::select! {
            c = conn::connect(&slot.def, &default_cwd, &slot.stderr, notices_tx) => c,
            () = slot.stop.cancelled() => return,
        };
        let began = tokio::time::Instant::now();
        let ended = match connected {
            Ok(conn) => match serve(&slot, conn, &mut cmds, &mut notices, &mut generation).await {
                Ended::Stopped => return,
                Ended::Restart => {
                    attempt = 0;
                    slot.set_live(None);
                    slot.update(|s| {
                        s.state = State::Starting;
                        s.restarts += 1;
                        s.tools.clear();
                        s.tool_count = 0;
                    });
                    continue;
                }
                Ended::Exited(why) => why,
            },
            Err(e) => e,
        };
        slot.set_live(None);
        // A server that ran a good while before it ended starts the backoff over; one that
        // keeps ending at once waits longer each time.
        if began.elapsed() >= STABLE_AFTER {
            attempt = 0;
        }
        let wait = backoff(attempt);
        attempt = attempt.saturating_add(1);
        slot.update(|s| {
            s.state = State::Failed;
            s.last_error = Some(ended.clone());
            s.tools.clear();
            s.tool_count = 0;
        });
        tracing::warn!(server = %slot.def.name, error = %ended, retry_in = ?wait, "MCP server ended");
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            Some(Cmd::Restart) = cmds.recv() => attempt = 0,
            () = slot.stop.cancelled() => return,
        }
        slot.update(|s| {
            s.state = State::Starting;
            s.restarts += 1;
        });
    }
}

enum Ended {
    Stopped,
    Restart,
    Exited(String),
}

/// Serve one connection until it ends, a restart is asked for, or the slot stops.
async fn serve(
    slot: &Arc<Slot>,
    conn: Conn,
    cmds: &mut mpsc::UnboundedReceiver<Cmd>,
    notices: &mut mpsc::UnboundedReceiver<Notice>,
    generation: &mut u64,
) -> Ended {
    let Conn {
        service,
        mut child,
        pgid,
    } = conn;
    let peer = service.peer().clone();
    let closing = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    let mut closed = false;
    let ended = match relist(slot, &peer, generation).await {
        Err(e) => Ended::Exited(e),
        Ok(()) => loop {
            tokio::select! {
                Some(Notice::ToolsChanged) = notices.recv() => {
                    if let Err(e) = relist(slot, &peer, generation).await {
                        break Ended::Exited(e);
                    }
                }
                cmd = cmds.recv() => match cmd {
                    Some(Cmd::Restart) => break Ended::Restart,
                    None => break Ended::Stopped,
                },
                () = slot.stop.cancelled() => break Ended::Stopped,
                status = wait_child(&mut child) => {
                    break Ended::Exited(match status {
                        Some(s) => format!("the server's process exited ({s})"),
                        None => "the server's process ended".into(),
                    });
                }
                _ = &mut waiting => {
                    closed = true;
                    break Ended::Exited("the connection to the server closed".into());
                }
            }
        },
    };
    slot.set_live(None);
    closing.cancel();
    if !closed {
        let _ = tokio::time::timeout(Duration::from_secs(2), &mut waiting).await;
    }
    conn::end_group(pgid).await;
    if let Some(mut child) = child.take() {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
    ended
}

/// Resolves when the child exits; never for an HTTP server.
async fn wait_child(child: &mut Option<tokio::process::Child>) -> Option<std::process::ExitStatus> {
    match child {
        Some(c) => c.wait().await.ok(),
        None => std::future::pending().await,
    }
}

/// List the server's tools (every page) and make it ready with them.
async fn relist(
    slot: &Arc<Slot>,
    peer: &Peer<RoleClient>,
    generation: &mut u64,
) -> Result<(), String> {
    let (listed, left_out) = list_offerable(peer, &slot.def.name).await?;
    let caps = peer
        .peer_info()
        .map(|i| serde_json::to_value(&i.capabilities).unwrap_or(Value::Null));
    let has = |k: &str| {
        caps.as_ref()
            .is_some_and(|c| c.get(k).is_some_and(|v| !v.is_null()))
    };
    for reason in &left_out {
        tracing::warn!(server = %slot.def.name, "{reason}");
    }
    *generation += 1;
    let infos = listed.clone();
    slot.set_live(Some(Live {
        peer: peer.clone(),
        tools: listed.into(),
        generation: *generation,
    }));
    let (resources, prompts) = (has("resources"), has("prompts"));
    slot.update(|s| {
        s.state = State::Ready;
        s.tool_count = infos.len();
        s.tools = infos;
        s.left_out = left_out;
        s.last_error = None;
        s.offers_resources = resources;
        s.offers_prompts = prompts;
    });
    Ok(())
}

/// Every page of the server's tools, those that can be offered and why the others are not.
pub(crate) async fn list_offerable(
    peer: &Peer<RoleClient>,
    server: &str,
) -> Result<(Vec<ToolInfo>, Vec<String>), String> {
    let tools = peer
        .list_all_tools()
        .await
        .map_err(|e| format!("listing its tools failed: {e}"))?;
    let raw: Vec<Value> = tools
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect();
    Ok(offerable(server, &raw))
}

/// The tools of a `tools/list` answer (JSON form) that can be offered, and why the others are not.
pub(crate) fn offerable(server: &str, tools: &[Value]) -> (Vec<ToolInfo>, Vec<String>) {
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let (assigned, mut left_out) = naming::assign(server, names.iter().copied());
    let mut listed = Vec::new();
    for (exposed, tool) in &assigned {
        let Some(t) = tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(tool))
        else {
            continue;
        };
        let empty = serde_json::Map::new();
        let input = t
            .get("inputSchema")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let input_schema = match schema::for_provider(input) {
            Ok(s) => s,
            Err(why) => {
                left_out.push(format!("tool '{tool}' is left out: {why}"));
                continue;
            }
        };
        let read_only = t
            .pointer("/annotations/readOnlyHint")
            .and_then(Value::as_bool)
            == Some(true);
        listed.push(ToolInfo {
            name: exposed.clone(),
            tool: tool.clone(),
            description: t
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            read_only,
            input_schema,
        });
    }
    (listed, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn backoff_doubles_from_one_second_to_a_minute() {
        let secs: Vec<u64> = (0..9).map(|a| backoff(a).as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff(200).as_secs(), 60);
    }

    #[test]
    fn offerable_tools_carry_read_only_and_leave_out_bad_schemas() {
        let (listed, left_out) = offerable(
            "s",
            &[
                json!({"name": "look", "description": "d", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
                json!({"name": "act", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false}}),
                json!({"name": "odd", "inputSchema": {"type": "string"}}),
            ],
        );
        let names: Vec<(&str, bool)> = listed
            .iter()
            .map(|l| (l.name.as_str(), l.read_only))
            .collect();
        assert_eq!(names, [("s__act", false), ("s__look", true)]);
        assert_eq!(left_out.len(), 1);
        assert!(left_out[0].contains("'odd'"), "{}", left_out[0]);
    }
}
