//! Running a parsed call: the context it runs in and what it returns.

use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::args::BuiltinCall;
use crate::env::ShellEnv;
use crate::error::ToolError;
use crate::fs_tools;
use crate::shell::{KillPolicy, ShellRecord, run_shell};
use crate::workspace::Workspace;

/// Everything a call needs from its caller.
#[derive(Clone)]
pub struct ToolContext {
    pub workspace: Workspace,
    /// Cancelling ends a running shell command (its whole process group).
    pub cancel: CancellationToken,
    /// The complete environment for shell commands.
    pub env: ShellEnv,
    /// Called with the process group id right after a shell command starts,
    /// so the engine can record it for abort and crash recovery.
    pub on_spawn: Option<Arc<dyn Fn(i32) + Send + Sync>>,
}

impl ToolContext {
    /// A context with a fresh cancellation token, the whitelisted process
    /// environment, and no spawn hook.
    pub fn new(workspace: Workspace) -> ToolContext {
        ToolContext {
            workspace,
            cancel: CancellationToken::new(),
            env: ShellEnv::from_process_env(),
            on_spawn: None,
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("workspace", &self.workspace)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("env", &self.env)
            .field("on_spawn", &self.on_spawn.is_some())
            .finish()
    }
}

/// The result of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// What the model reads.
    pub content: String,
    pub is_error: bool,
    /// Present when a shell command was started.
    pub shell: Option<ShellRecord>,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            is_error: false,
            shell: None,
        }
    }

    pub fn error(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            is_error: true,
            shell: None,
        }
    }
}

impl From<Result<String, ToolError>> for ToolOutput {
    fn from(result: Result<String, ToolError>) -> ToolOutput {
        match result {
            Ok(content) => ToolOutput::ok(content),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

impl BuiltinCall {
    /// Run the call. Failures come back as `is_error` output addressed to
    /// the model, never as a panic or Rust error.
    pub async fn execute(&self, ctx: &ToolContext) -> ToolOutput {
        self.execute_for(ctx, false).await
    }

    /// Run the call for a model that takes pictures (`takes_pictures`) or not: `read_file` of
    /// a picture then returns a result naming the picture in a marker line (see
    /// [`crate::picture_marker`]) rather than only describing it.
    pub async fn execute_for(&self, ctx: &ToolContext, takes_pictures: bool) -> ToolOutput {
        let call = match self {
            BuiltinCall::Shell(args) => return run_shell(args, ctx, &KillPolicy::default()).await,
            other => other.clone(),
        };
        let ws = ctx.workspace.clone();
        // File system calls block; keep them off the async workers.
        let joined = tokio::task::spawn_blocking(move || {
            match &call {
                BuiltinCall::ReadFile(a) => fs_tools::read_file(&ws, a, takes_pictures),
                BuiltinCall::WriteFile(a) => fs_tools::write_file(&ws, a),
                BuiltinCall::EditFile(a) => crate::edit::edit_file(&ws, a),
                BuiltinCall::ListDir(a) => fs_tools::list_dir(&ws, a),
                BuiltinCall::DeleteFile(a) => fs_tools::delete_file(&ws, a),
                BuiltinCall::Shell(_) => Err(ToolError::Refused(
                    "internal error: shell is not a file tool".to_string(),
                )),
            }
            .map_err(|e| ws.hint_missing(e))
        })
        .await;
        match joined {
            Ok(result) => result.into(),
            Err(e) => ToolOutput::error(format!("internal error while running the tool: {e}")),
        }
    }
}
