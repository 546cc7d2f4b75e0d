//! The `shell` tool: `/bin/sh -c` in its own process group, with a cleared
//! environment, merged bounded output, and whole-group termination on
//! timeout, cancellation, or leftover background processes.

use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::process::Command;

use crate::args::ShellArgs;
use crate::call::{ToolContext, ToolOutput};
use crate::capture::{OutputRing, RING_BYTES, SharedRing, pump};
use crate::process_group::{GroupEnd, kill_group_now, terminate_group};
use crate::text::{fold_command, tail_chars};

/// Chars of output kept in the record and shown to the model.
pub const OUTPUT_TAIL_CHARS: usize = 4000;
/// After the group is gone, how long to let the readers drain. Only a
/// process that left the group (e.g. via setsid) can hold the pipes open
/// longer, and we must not wait on it.
const DRAIN: Duration = Duration::from_secs(1);
/// Extra time to reap the direct child after the group was terminated.
const REAP_MARGIN: Duration = Duration::from_secs(3);

/// How a process group is ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KillPolicy {
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
}

impl Default for KillPolicy {
    fn default() -> KillPolicy {
        KillPolicy {
            grace: Duration::from_secs(3),
        }
    }
}

/// What happened when a shell command ran, for the engine's records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellRecord {
    /// The command folded to one line (see [`fold_command`]).
    pub command: String,
    pub exit_code: Option<i32>,
    /// Signal that ended the shell process, if any.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    /// Last [`OUTPUT_TAIL_CHARS`] chars of what it printed: stdout, then stderr.
    pub output_tail: String,
    pub pgid: i32,
}

enum Ending {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
    Cancelled,
}

/// SIGKILLs the group if the future running the command is dropped before
/// it finished (the engine aborted the task), so nothing is orphaned.
struct GroupGuard {
    pgid: i32,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_group_now(self.pgid);
        }
    }
}

/// Run `args` under `ctx` with an explicit kill policy. `execute` uses
/// [`KillPolicy::default`].
pub async fn run_shell(args: &ShellArgs, ctx: &ToolContext, policy: &KillPolicy) -> ToolOutput {
    let cwd = match &args.workdir {
        Some(dir) => match ctx.workspace.resolve(dir) {
            Ok(path) if path.is_dir() => path,
            Ok(_) => {
                return ToolOutput::error(format!(
                    "workdir '{dir}' is not an existing directory in the workspace"
                ));
            }
            Err(e) => return ToolOutput::error(format!("workdir: {e}")),
        },
        None => ctx.workspace.base(),
    };
    if ctx.cancel.is_cancelled() {
        return ToolOutput::error("cancelled before the command started".to_string());
    }

    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(&args.command)
        .current_dir(&cwd)
        .env_clear()
        .envs(ctx.env.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Own group, so the command and all its descendants can be
        // signalled together without touching the runtime.
        .process_group(0)
        .kill_on_drop(true);

    let started = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return ToolOutput::error(format!("could not start /bin/sh: {e}")),
    };
    // id() is Some until the child has been waited on, which it has not.
    let pgid = child.id().map_or(0, |id| id as i32);
    let mut guard = GroupGuard { pgid, armed: true };
    if let Some(on_spawn) = &ctx.on_spawn {
        on_spawn(pgid);
    }

    // Kept apart so the record reads stdout, then stderr, as the command record rule says.
    let out_ring: SharedRing = Arc::new(Mutex::new(OutputRing::new(RING_BYTES)));
    let err_ring: SharedRing = Arc::new(Mutex::new(OutputRing::new(RING_BYTES)));
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(tokio::spawn(pump(out, out_ring.clone())));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(tokio::spawn(pump(err, err_ring.clone())));
    }

    let timeout = Duration::from_secs(args.timeout_secs);
    let ending = tokio::select! {
        status = child.wait() => Ending::Exited(status),
        () = tokio::time::sleep(timeout) => Ending::TimedOut,
        () = ctx.cancel.cancelled() => Ending::Cancelled,
    };

    let timed_out = matches!(ending, Ending::TimedOut);
    let cancelled = matches!(ending, Ending::Cancelled);
    let (status, leftovers) = match ending {
        Ending::Exited(status) => {
            // Background children still in the group would be orphaned. A group with
            // nobody left costs one syscall here; anything more goes to the reaper thread.
            let leftovers = !matches!(
                terminate_group(pgid, policy.grace).await,
                GroupEnd::AlreadyGone | GroupEnd::Refused
            );
            (status.ok(), leftovers)
        }
        Ending::TimedOut | Ending::Cancelled => {
            // Reap the direct child while the group is being ended, so it
            // does not linger as a zombie. When a stop's release is ending this
            // group already, this joins that ending instead of signalling again.
            let reap = tokio::time::timeout(policy.grace + REAP_MARGIN, child.wait());
            let (end, status) = tokio::join!(terminate_group(pgid, policy.grace), reap);
            if end == GroupEnd::Survived {
                tracing::warn!(pgid, "shell process group survived SIGKILL");
            }
            (status.ok().and_then(Result::ok), false)
        }
    };
    guard.armed = false;

    // The group is gone, so the pipes are closed unless something escaped
    // the group; never wait on such a process.
    for reader in readers {
        let abort = reader.abort_handle();
        if tokio::time::timeout(DRAIN, reader).await.is_err() {
            abort.abort();
        }
    }

    let (text, total_bytes) = {
        let out = out_ring.lock().unwrap_or_else(PoisonError::into_inner);
        let err = err_ring.lock().unwrap_or_else(PoisonError::into_inner);
        (
            out.text() + &err.text(),
            out.total_bytes() + err.total_bytes(),
        )
    };
    let output_tail = tail_chars(&text, OUTPUT_TAIL_CHARS);
    let truncated = total_bytes as usize > output_tail.len();
    let record = ShellRecord {
        command: fold_command(&args.command),
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        timed_out,
        cancelled,
        duration_ms: started.elapsed().as_millis() as u64,
        output_tail,
        pgid,
    };
    let content = render(&record, args.timeout_secs, leftovers, truncated);
    ToolOutput {
        content,
        is_error: record.exit_code != Some(0),
        shell: Some(record),
    }
}

/// What the model reads: how the command ended, then the output tail.
fn render(record: &ShellRecord, timeout_secs: u64, leftovers: bool, truncated: bool) -> String {
    let mut out = if record.timed_out {
        format!("timed out after {timeout_secs} s; the command and its processes were terminated")
    } else if record.cancelled {
        "cancelled; the command and its processes were terminated".to_string()
    } else if let Some(code) = record.exit_code {
        format!("exit code: {code}")
    } else if let Some(sig) = record.signal {
        format!("killed by signal {sig}")
    } else {
        "ended with unknown status".to_string()
    };
    out.push('\n');
    if leftovers {
        out.push_str(
            "note: background processes still running after the command exited were terminated\n",
        );
    }
    if record.output_tail.is_empty() {
        out.push_str("(no output)");
    } else {
        if truncated {
            out.push_str(&format!(
                "[output truncated; showing the last {OUTPUT_TAIL_CHARS} characters]\n"
            ));
        }
        out.push_str(&record.output_tail);
    }
    out
}
