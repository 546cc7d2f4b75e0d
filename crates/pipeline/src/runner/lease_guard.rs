//! Leases at run time: an [`EffectGuard`] that lets an operator's agent write only inside the
//! roots its lease holds — its own branch's `response/` (or `<exchange>/response/`), and, for
//! a source-writing operator, its write roots inside the session checkout. The runner keeps
//! the table of which thread works for which branch; a refusal is the tool result the model
//! reads.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use troupe_core::ThreadId;
use troupe_engine::extension::{EffectGuard, GuardContext};
use troupe_tools::lexical;

/// What one running agent may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentLease {
    /// The lease's agent key: `step-N/parallel-M` or `step-N/parallel-M/<exchange>`.
    pub agent: String,
    pub operator: String,
    /// The agent's workspace (the session folder); tool paths are relative to it.
    pub workspace: PathBuf,
    /// Absolute folders it may write under.
    pub roots: Vec<PathBuf>,
    /// The tools its operator declares (writing its response needs none).
    pub tools: Vec<String>,
}

impl AgentLease {
    fn allows(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| path.starts_with(r))
    }

    /// The path the agent likely meant when it wrote one starting above its workspace (it
    /// copied the session folder's own path in front of `step-1/…`): the shortest tail of
    /// `rel` that lands inside the lease.
    fn meant(&self, rel: &str) -> Option<String> {
        let parts: Vec<_> = Path::new(rel)
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
        (1..parts.len()).find_map(|i| {
            let tail: PathBuf = parts[i..].iter().collect();
            self.allows(&lexical(&self.workspace.join(&tail)))
                .then(|| tail.display().to_string())
        })
    }

    fn roots_shown(&self) -> String {
        self.roots
            .iter()
            .map(|r| {
                let rel = r.strip_prefix(&self.workspace).unwrap_or(r);
                format!("{}/", rel.display())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Thread → the lease its agent holds, shared by the runner and the guard.
#[derive(Debug, Clone, Default)]
pub struct LeaseTable {
    inner: Arc<Mutex<HashMap<ThreadId, AgentLease>>>,
}

impl LeaseTable {
    pub fn insert(&self, thread: ThreadId, lease: AgentLease) {
        self.lock().insert(thread, lease);
    }

    pub fn remove(&self, thread: ThreadId) -> Option<AgentLease> {
        self.lock().remove(&thread)
    }

    pub fn get(&self, thread: ThreadId) -> Option<AgentLease> {
        self.lock().get(&thread).cloned()
    }

    /// The leases held right now, by agent key.
    pub fn held(&self) -> Vec<AgentLease> {
        let mut out: Vec<AgentLease> = self.lock().values().cloned().collect();
        out.sort_by(|a, b| a.agent.cmp(&b.agent));
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ThreadId, AgentLease>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The guard the runner registers on its engine.
#[derive(Debug, Clone)]
pub struct LeaseGuard {
    table: LeaseTable,
}

impl LeaseGuard {
    pub fn new(table: LeaseTable) -> Self {
        Self { table }
    }
}

/// A session folder's marker in a workspace path: agents working in one hold a lease.
const SESSION_MARK: &str = "/.worktrees/sessions/";

impl EffectGuard for LeaseGuard {
    fn name(&self) -> &str {
        "lease"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), troupe_engine::extension::Refusal> {
        let Some(lease) = self.table.get(ctx.thread.id) else {
            return if ctx.thread.workspace.contains(SESSION_MARK) {
                Err("this agent holds no lease: its session branch is not running here".into())
            } else {
                Ok(())
            };
        };
        let args: serde_json::Value = serde_json::from_str(ctx.arguments).unwrap_or_default();
        let arg = |name: &str| args.get(name).and_then(|v| v.as_str()).map(str::to_string);
        match ctx.tool {
            "write_file" | "edit_file" | "delete_file" => {
                let rel = arg("path").unwrap_or_default();
                let target = lexical(&lease.workspace.join(&rel));
                if lease.allows(&target) {
                    Ok(())
                } else {
                    let hint = lease.meant(&rel).map_or_else(String::new, |m| {
                        format!(
                            ". Paths start at the session folder itself: write `{m}` for \
                             this file"
                        )
                    });
                    Err(format!(
                        "{} (`{}`) holds a lease on {} only; `{rel}` lies outside it, so the \
                         write was not made{hint}",
                        lease.agent,
                        lease.operator,
                        lease.roots_shown()
                    )
                    .into())
                }
            }
            "shell" => {
                if !lease.tools.iter().any(|t| t == "shell") {
                    return Err(format!(
                        "`{}` does not declare the shell tool; its lease allows file writes \
                         under {} only",
                        lease.operator,
                        lease.roots_shown()
                    )
                    .into());
                }
                let dir = lexical(&lease.workspace.join(arg("workdir").unwrap_or_default()));
                if dir.starts_with(&lease.workspace) {
                    Ok(())
                } else {
                    Err("a command must run inside the session folder".into())
                }
            }
            other if lease.tools.iter().any(|t| t == other) => Ok(()),
            other => {
                Err(format!("`{}` does not declare the tool `{other}`", lease.operator).into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_copied_with_the_session_folder_in_front_is_told_the_path_it_meant() {
        let lease = AgentLease {
            agent: "step-1/parallel-1".into(),
            operator: "plan".into(),
            workspace: PathBuf::from("/w/.worktrees/sessions/s1"),
            roots: vec![PathBuf::from(
                "/w/.worktrees/sessions/s1/step-1/parallel-1/response",
            )],
            tools: vec![],
        };
        assert_eq!(
            lease
                .meant(".worktrees/sessions/s1/step-1/parallel-1/response/response.json")
                .as_deref(),
            Some("step-1/parallel-1/response/response.json")
        );
        assert_eq!(lease.meant("src/lib.rs"), None);
        assert_eq!(lease.meant("step-2/parallel-1/response/r.json"), None);
    }
}
