//! The `boss-synergy` toolset (issue 18 item 17, digest §8): what a runtime boss session may
//! see and call. It coordinates and remembers; it does not build. So its turns are narrowed to
//! the Agenda and note tools, the memory tools, `channel_push`, and `shell` held to read-only
//! commands by [`BossSynergy`]'s effect guard ([`super::readonly_shell`]). No `task`, no file
//! writes.

use super::readonly_shell::{self, READ_ONLY_SHELL};
use serde::Deserialize;
use troupe_core::thread::Thread;
use troupe_engine::extension::{EffectGuard, GuardContext, Narrowed, Refusal, ToolScope};
use troupe_store::Store;

pub const TOOLSET: &str = "boss-synergy";

/// The built-in tool the guard holds to read-only commands.
pub const SHELL: &str = "shell";

/// Every tool a runtime boss session is offered, in a stable order.
pub fn tool_names() -> Vec<&'static str> {
    use super::memory_tools::{MEMORY_EDIT, MEMORY_READ, MEMORY_SEARCH, MEMORY_WRITE};
    use crate::agenda::tools::{CANCEL, CREATE, LIST, UPDATE};
    vec![
        super::project::BOSS_PROJECT,
        super::session_tools::SESSION_LIST,
        super::session_tools::SESSION_READ,
        super::session_tools::SCOPE_LIST,
        super::session_send::SESSION_SEND,
        CREATE,
        LIST,
        UPDATE,
        CANCEL,
        "note_create",
        "note_update",
        "note_read",
        "note_search",
        MEMORY_WRITE,
        MEMORY_EDIT,
        MEMORY_SEARCH,
        MEMORY_READ,
        super::push::CHANNEL_PUSH,
        SHELL,
    ]
}

fn runtime_boss(thread: &Thread, store: &Store) -> Result<bool, String> {
    store
        .read(|tx| match tx.thread_session(thread.id)? {
            Some((session, _)) => tx.is_runtime_boss_session(session),
            None => Ok(false),
        })
        .map_err(|e| e.to_string())
}

#[derive(Deserialize)]
struct ShellArgs {
    command: String,
}

/// The toolset's scope (which tools a runtime boss turn sees) and its guard (the shell only
/// reads). Registered as both.
pub struct BossSynergy;

impl ToolScope for BossSynergy {
    fn name(&self) -> &str {
        TOOLSET
    }

    fn narrow(&self, thread: &Thread, store: &Store) -> Result<Option<Narrowed>, String> {
        if !runtime_boss(thread, store)? {
            return Ok(None);
        }
        Ok(Some(Narrowed {
            only: tool_names().into_iter().map(String::from).collect(),
            reason: "a runtime boss coordinates and remembers; it does not build (no task, no \
                     file writes; the shell only reads)"
                .into(),
            keep_sourced_read_only: false,
        }))
    }
}

impl EffectGuard for BossSynergy {
    fn name(&self) -> &str {
        TOOLSET
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        if ctx.tool != SHELL || !runtime_boss(ctx.thread, ctx.store)? {
            return Ok(());
        }
        let command = serde_json::from_str::<ShellArgs>(ctx.arguments)
            .map_err(|e| format!("{READ_ONLY_SHELL}: the shell call has no command: {e}"))?
            .command;
        readonly_shell::check(&command)
            .map(|_| ())
            .map_err(|r| Refusal::from(r.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_toolset_has_no_task_and_no_file_writes() {
        let names = tool_names();
        for absent in [
            "task",
            "write_file",
            "edit_file",
            "delete_file",
            "read_file",
            "list_dir",
        ] {
            assert!(!names.contains(&absent), "{absent} must not be offered");
        }
        assert!(names.contains(&SHELL) && names.contains(&"memory_search"));
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "no name twice");
    }
}
