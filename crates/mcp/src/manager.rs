//! The daemon's MCP servers: their definitions in the database (the config file's are written
//! there at boot), one live slot each, and the edits the API makes while the daemon runs.

use crate::def::{DefError, ServerDef};
use crate::server::Slot;
use crate::status::{ServerStatus, State, ToolInfo};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use troupe_store::{Store, StoreError};

/// A server as the API shows it: what it is, and how it is.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerView {
    pub definition: ServerDef,
    pub status: ServerStatus,
}

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("{0}")]
    Invalid(#[from] DefError),
    #[error("no MCP server is named '{0}'")]
    NotFound(String),
    #[error("an MCP server named '{0}' exists already")]
    Exists(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Clone)]
pub struct Mcp {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub store: Store,
    /// Where a stdio server without a `cwd` starts.
    pub default_cwd: PathBuf,
    pub slots: Mutex<BTreeMap<String, Arc<Slot>>>,
    /// Variables no definition may hand a server (the daemon's own secrets), asked at each
    /// check so keys added while the daemon runs are covered.
    protected: Protected,
}

/// The names of the daemon's secret variables, as they are now.
pub type Protected = Arc<dyn Fn() -> Vec<String> + Send + Sync>;

impl Mcp {
    pub fn new(store: Store, default_cwd: PathBuf) -> Self {
        Mcp {
            inner: Arc::new(Inner {
                store,
                default_cwd,
                slots: Mutex::new(BTreeMap::new()),
                protected: Arc::new(Vec::new),
            }),
        }
    }

    /// Name variables a definition may not hand a server (e.g. the model endpoints' keys).
    pub fn with_protected_env(self, names: Vec<String>) -> Self {
        self.with_protected_env_from(Arc::new(move || names.clone()))
    }

    /// As [`Mcp::with_protected_env`], with the names read anew at each check.
    pub fn with_protected_env_from(self, protected: Protected) -> Self {
        let inner = Arc::try_unwrap(self.inner).unwrap_or_else(|_| {
            panic!(
                "the protected variables are set while the MCP servers are built, before sharing"
            )
        });
        Mcp {
            inner: Arc::new(Inner { protected, ..inner }),
        }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Slot>>> {
        self.inner.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn check(&self, def: &ServerDef) -> Result<(), McpError> {
        def.validate()?;
        let protected = (self.inner.protected)();
        let secret = |n: &String| protected.contains(n);
        if let Some(name) = def.env_vars.iter().find(|n| secret(n)) {
            return Err(DefError {
                field: "env_vars".into(),
                message: format!(
                    "'{name}' holds one of the daemon's secrets and never reaches a server"
                ),
            }
            .into());
        }
        if let Some(name) = def.bearer_token_env_var.as_ref().filter(|n| secret(n)) {
            return Err(DefError {
                field: "bearer_token_env_var".into(),
                message: format!(
                    "'{name}' holds one of the daemon's secrets and is never sent to a server"
                ),
            }
            .into());
        }
        Ok(())
    }

    /// Write the config file's servers into the database (the file wins over what the API set
    /// for the same name), then start every stored server that is enabled. Needs a runtime.
    pub fn boot(&self, from_config: &[ServerDef]) -> Result<(), McpError> {
        for def in from_config {
            self.check(def)?;
        }
        let stored = self.inner.store.write(|tx| {
            for def in from_config {
                tx.put_mcp_server(&def.name, &definition_json(def))?;
            }
            tx.mcp_servers()
        })?;
        let mut slots = self.slots();
        for row in stored {
            match serde_json::from_value::<ServerDef>(row.definition.clone())
                .map_err(|e| e.to_string())
                .and_then(|d| d.validate().map(|()| d).map_err(|e| e.to_string()))
            {
                Ok(def) => {
                    let slot = Slot::start(
                        def,
                        self.inner.store.clone(),
                        self.inner.default_cwd.clone(),
                    );
                    if let Some(old) = slots.insert(row.name.clone(), slot) {
                        old.stop();
                    }
                }
                Err(e) => {
                    tracing::warn!(server = %row.name, error = %e, "a stored MCP server's definition no longer reads; left out")
                }
            }
        }
        Ok(())
    }

    /// Start servers for this process only (a one-off `troupe exec --mcp`): checked like any
    /// definition, never written to the database, and no stored server is started.
    pub fn start_unstored(&self, defs: &[ServerDef]) -> Result<(), McpError> {
        for def in defs {
            self.check(def)?;
        }
        let mut slots = self.slots();
        for def in defs {
            if slots.contains_key(&def.name) {
                return Err(McpError::Exists(def.name.clone()));
            }
            let slot = Slot::start(
                def.clone(),
                self.inner.store.clone(),
                self.inner.default_cwd.clone(),
            );
            slots.insert(def.name.clone(), slot);
        }
        Ok(())
    }

    pub fn list(&self) -> Vec<ServerView> {
        self.slots().values().map(view).collect()
    }

    pub fn get(&self, name: &str) -> Result<ServerView, McpError> {
        self.slots()
            .get(name)
            .map(view)
            .ok_or_else(|| McpError::NotFound(name.into()))
    }

    /// Store a new server and start it (when enabled).
    pub fn add(&self, def: ServerDef) -> Result<ServerView, McpError> {
        self.check(&def)?;
        let mut slots = self.slots();
        if slots.contains_key(&def.name) {
            return Err(McpError::Exists(def.name));
        }
        self.inner
            .store
            .write(|tx| tx.put_mcp_server(&def.name, &definition_json(&def)))?;
        let slot = Slot::start(
            def.clone(),
            self.inner.store.clone(),
            self.inner.default_cwd.clone(),
        );
        slots.insert(def.name.clone(), slot.clone());
        Ok(view(&slot))
    }

    /// Change a server's definition: stored, and its process started again on the new one.
    pub fn update(&self, name: &str, patch: &Value) -> Result<ServerView, McpError> {
        let mut slots = self.slots();
        let old = slots
            .get(name)
            .cloned()
            .ok_or_else(|| McpError::NotFound(name.into()))?;
        let def = old.def.patched(patch)?;
        self.check(&def)?;
        self.inner
            .store
            .write(|tx| tx.put_mcp_server(name, &definition_json(&def)))?;
        old.stop();
        let slot = Slot::start(
            def,
            self.inner.store.clone(),
            self.inner.default_cwd.clone(),
        );
        slots.insert(name.to_string(), slot.clone());
        Ok(view(&slot))
    }

    /// Remove a server: deleted, its process ended, its tools gone from the next turn.
    pub fn remove(&self, name: &str) -> Result<(), McpError> {
        let mut slots = self.slots();
        let slot = slots
            .remove(name)
            .ok_or_else(|| McpError::NotFound(name.into()))?;
        slot.stop();
        self.inner.store.write(|tx| tx.delete_mcp_server(name))?;
        self.inner.store.write(|tx| {
            tx.event(
                "mcp_server_removed",
                None,
                None,
                serde_json::json!({"name": name}),
            )
        })?;
        Ok(())
    }

    /// Start a server's process again now (a failed one skips its backoff).
    pub fn restart(&self, name: &str) -> Result<ServerView, McpError> {
        let slots = self.slots();
        let slot = slots
            .get(name)
            .ok_or_else(|| McpError::NotFound(name.into()))?;
        if !slot.def.enabled {
            return Err(DefError {
                field: "enabled".into(),
                message: format!("'{name}' is disabled; enable it to start it"),
            }
            .into());
        }
        slot.restart();
        Ok(view(slot))
    }

    /// A receiver of this server's status changes.
    pub fn watch(&self, name: &str) -> Result<watch::Receiver<ServerStatus>, McpError> {
        self.slots()
            .get(name)
            .map(|s| s.watch())
            .ok_or_else(|| McpError::NotFound(name.into()))
    }

    /// Wait until the server's status satisfies `pred`, at most `limit`.
    pub async fn wait_for(
        &self,
        name: &str,
        limit: Duration,
        pred: impl Fn(&ServerStatus) -> bool,
    ) -> Result<ServerStatus, String> {
        let mut rx = self.watch(name).map_err(|e| e.to_string())?;
        let waited = tokio::time::timeout(limit, rx.wait_for(|s| pred(s)))
            .await
            .map(|r| r.map(|s| s.clone()));
        match waited {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(_)) => Err(format!("the MCP server {name} was removed")),
            Err(_) => Err(format!(
                "the MCP server {name} did not get there in {limit:?}; it is {:?}",
                rx.borrow().state
            )),
        }
    }

    /// Wait until the server is ready, at most `limit`.
    pub async fn wait_ready(&self, name: &str, limit: Duration) -> Result<ServerStatus, String> {
        self.wait_for(name, limit, |s| s.state == State::Ready)
            .await
    }

    /// End every server process (the daemon is shutting down).
    pub async fn shutdown(&self) {
        let slots: Vec<Arc<Slot>> = std::mem::take(&mut *self.slots()).into_values().collect();
        for s in &slots {
            s.stop();
        }
        for s in &slots {
            s.stop_and_wait(Duration::from_secs(5)).await;
        }
    }
}

fn view(slot: &Arc<Slot>) -> ServerView {
    ServerView {
        definition: slot.def.clone(),
        status: slot.status(),
    }
}

fn definition_json(def: &ServerDef) -> Value {
    serde_json::to_value(def).unwrap_or(Value::Null)
}

/// Connect to a server once, list its tools and close: `troupe mcp test`.
pub async fn probe(
    def: &ServerDef,
    cwd: &std::path::Path,
) -> Result<(Vec<ToolInfo>, Vec<String>), String> {
    def.validate().map_err(|e| e.to_string())?;
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let stderr = crate::conn::StderrTail::default();
    let conn = match crate::conn::connect(def, cwd, &stderr, tx).await {
        Ok(c) => c,
        Err(e) => {
            let tail = stderr.text();
            return Err(if tail.trim().is_empty() {
                e
            } else {
                format!("{e}\nits stderr:\n{}", tail.trim_end())
            });
        }
    };
    let listed = crate::server::list_offerable(conn.service.peer(), &def.name).await;
    let crate::conn::Conn {
        mut service,
        child,
        pgid,
    } = conn;
    let _ = service.close_with_timeout(Duration::from_secs(2)).await;
    crate::conn::end_group(pgid).await;
    drop(child);
    listed
}
