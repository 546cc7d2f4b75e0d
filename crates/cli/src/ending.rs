//! How a thread's latest run ended, read back from the store, and what `troupe exec` makes
//! of it: the text to print, the one-line reason, the exit code.

use serde_json::{Value, json};
use troupe_core::ThreadId;
use troupe_core::message::{Finish, Role};
use troupe_core::run::{EndReason, RunStatus};
use troupe_store::Store;

/// Messages looked at when searching for the final answer.
const TAIL: u32 = 200;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ending {
    /// The latest run's status (`completed`, `failed`, ...), or what happened instead.
    pub status: String,
    /// The text of the thread's last finished assistant reply.
    pub text: Option<String>,
    /// The one-line reason for a non-zero exit.
    pub error: Option<String>,
    pub code: u8,
}

impl Ending {
    pub fn stopped(thread: ThreadId) -> Self {
        Ending {
            status: RunStatus::Stopped.as_str().into(),
            text: None,
            error: Some(format!(
                "stopped; resume with: troupe exec --resume {thread}"
            )),
            code: crate::exec::EXIT_INTERRUPTED,
        }
    }

    /// The `{"type":"result",...}` line of `--json`, without its type.
    pub fn json(&self, thread: ThreadId) -> Value {
        json!({
            "thread_id": thread.to_string(),
            "status": self.status,
            "text": self.text,
            "error": self.error,
        })
    }
}

/// Read how the thread's latest run ended.
pub fn read_ending(store: &Store, thread: ThreadId) -> anyhow::Result<Ending> {
    let (runs, messages) = store.read(|tx| {
        Ok((
            tx.runs_for_thread(thread, 10)?,
            tx.messages_tail(thread, TAIL)?,
        ))
    })?;
    let text = messages
        .iter()
        .rev()
        .find(|m| {
            m.role == Role::Assistant
                && m.error.is_none()
                && matches!(m.finish, Some(Finish::Stop | Finish::Length))
        })
        .map(|m| m.text());
    let hint = format!("resume with: troupe exec --resume {thread}");
    // Newest first.
    let Some(run) = runs.first() else {
        return Ok(Ending {
            status: "no_run".into(),
            text,
            error: Some(format!("thread {thread} has never run")),
            code: 1,
        });
    };
    let (error, code) = match run.status {
        RunStatus::Completed => (None, 0),
        RunStatus::Failed => {
            let why = match &run.end_reason {
                Some(EndReason::ModelError(d)) => format!("model call failed: {d}"),
                Some(EndReason::HopLimit(n)) => format!("hop limit reached after {n} steps"),
                Some(EndReason::Internal(d)) => format!("internal error: {d}"),
                Some(other) => format!("the run failed ({other})"),
                None => "the run failed".into(),
            };
            (Some(format!("{why}; {hint}")), 1)
        }
        RunStatus::Stopped => (Some(format!("the run was stopped; {hint}")), 1),
        RunStatus::Interrupted => (
            Some(format!(
                "the run was interrupted before it finished; {hint}"
            )),
            1,
        ),
        RunStatus::Running => (
            Some(format!(
                "run {} is still recorded as running in another process",
                run.id
            )),
            1,
        ),
    };
    Ok(Ending {
        status: run.status.as_str().into(),
        text,
        error,
        code,
    })
}
