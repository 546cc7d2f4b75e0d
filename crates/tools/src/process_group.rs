//! Signalling and observing whole process groups, so a shell command and
//! everything it started can be ended together.
//!
//! "Gone" means no *live* member: `kill(-pgid, 0)` fails with ESRCH, or
//! (on Linux) every remaining member is a zombie. Zombies have exited and
//! hold nothing (no pipes, no CPU); they only wait for their parent to reap
//! them, and in containers whose PID 1 never reaps, orphaned zombies would
//! otherwise make a group look alive forever.

use std::fs;
use std::io;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// How often group liveness is polled while waiting for it to end.
const POLL: Duration = Duration::from_millis(20);
/// How long to wait for the group to disappear after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// How a [`terminate_group`] call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupEnd {
    /// No live member when called; nothing was signalled.
    AlreadyGone,
    /// Every member left within the grace period after SIGTERM.
    Terminated,
    /// SIGKILL was needed; the group is now gone.
    Killed,
    /// Live members remained even after SIGKILL (e.g. stuck in
    /// uninterruptible I/O).
    Survived,
    /// Not a group this process may signal (pgid <= 1 or our own group);
    /// nothing was signalled.
    Refused,
}

/// Whether process group `pgid` has a live member.
pub fn group_alive(pgid: i32) -> bool {
    if pgid <= 0 {
        return false;
    }
    // SAFETY: signal 0 delivers nothing; it only asks whether the group
    // exists. pgid > 0, so -pgid names exactly that group.
    let rc = unsafe { libc::kill(-pgid, 0) };
    if rc != 0 && errno() == libc::ESRCH {
        return false;
    }
    // It exists (EPERM also means it exists). Discount zombies where /proc
    // lets us see them.
    proc_scan(|_, pgrp| pgrp == pgid).unwrap_or(true)
}

/// Whether process `pid` exists and is not a zombie.
pub fn process_running(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 delivers nothing; pid > 0 names one process.
    let rc = unsafe { libc::kill(pid, 0) };
    if rc != 0 && errno() == libc::ESRCH {
        return false;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => parse_stat(&stat).is_none_or(|(state, _)| is_live(pid, state)),
        // Exited between the two checks, or no /proc: trust kill().
        Err(e) if e.kind() == io::ErrorKind::NotFound => fs::metadata("/proc/self").is_err(),
        Err(_) => true,
    }
}

/// End every process in group `pgid`: SIGTERM (plus SIGCONT so stopped
/// members can act on it), wait up to `grace` for the group to be gone,
/// then SIGKILL and wait briefly again.
///
/// This does not reap: whoever owns the direct child must wait on it
/// (the `shell` tool does so concurrently).
pub async fn terminate_group(pgid: i32, grace: Duration) -> GroupEnd {
    if !may_signal(pgid) {
        tracing::warn!(pgid, "refusing to signal process group");
        return GroupEnd::Refused;
    }
    if !group_alive(pgid) {
        return GroupEnd::AlreadyGone;
    }
    signal_group(pgid, libc::SIGTERM);
    signal_group(pgid, libc::SIGCONT);
    if wait_gone(pgid, grace).await {
        return GroupEnd::Terminated;
    }
    tracing::debug!(pgid, "process group outlived SIGTERM; sending SIGKILL");
    signal_group(pgid, libc::SIGKILL);
    if wait_gone(pgid, KILL_WAIT).await {
        GroupEnd::Killed
    } else {
        tracing::warn!(pgid, "process group survived SIGKILL");
        GroupEnd::Survived
    }
}

/// SIGKILL the group without waiting; for drop paths that cannot await.
pub(crate) fn kill_group_now(pgid: i32) {
    if may_signal(pgid) {
        signal_group(pgid, libc::SIGKILL);
    }
}

/// Never signal "every process" (-1), our own group (0 or getpgrp), or
/// init's group: a bad pgid must not take the runtime down.
fn may_signal(pgid: i32) -> bool {
    // SAFETY: getpgrp has no preconditions and cannot fail.
    pgid > 1 && pgid != unsafe { libc::getpgrp() }
}

fn signal_group(pgid: i32, sig: libc::c_int) {
    // SAFETY: callers checked may_signal, so -pgid names one foreign group;
    // a failure (ESRCH when already gone) is harmless and ignored.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

async fn wait_gone(pgid: i32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if !group_alive(pgid) {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        tokio::time::sleep(POLL.min(deadline - now)).await;
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Whether any live process matches `want(pid, pgrp)`; None without /proc.
fn proc_scan(want: impl Fn(i32, i32) -> bool) -> Option<bool> {
    let dir = fs::read_dir("/proc").ok()?;
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        // A process may exit mid-scan; its entry just disappears.
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some((state, pgrp)) = parse_stat(&stat)
            && want(pid, pgrp)
            && is_live(pid, state)
        {
            return Some(true);
        }
    }
    Some(false)
}

/// A zombie leader with other threads still running is a live process.
fn is_live(pid: i32, state: char) -> bool {
    match state {
        'Z' | 'X' | 'x' => fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|d| d.count() > 1),
        _ => true,
    }
}

/// (state, pgrp) from /proc/<pid>/stat. The command name is in parentheses
/// and may itself contain spaces or ')', so fields are taken after the last
/// ')'.
fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_names() {
        let stat = "1234 (we ird) (x)) S 1 777 777 0 -1 4194560 ...";
        assert_eq!(parse_stat(stat), Some(('S', 777)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn refuses_dangerous_targets() {
        assert!(!may_signal(0));
        assert!(!may_signal(1));
        assert!(!may_signal(-5));
        // SAFETY: getpgrp has no preconditions.
        assert!(!may_signal(unsafe { libc::getpgrp() }));
        assert!(!group_alive(0));
        assert!(!process_running(0));
    }

    #[test]
    fn own_process_is_running() {
        assert!(process_running(std::process::id() as i32));
    }

    #[tokio::test]
    async fn own_group_is_never_signalled() {
        // SAFETY: getpgrp has no preconditions.
        let own = unsafe { libc::getpgrp() };
        assert_eq!(
            terminate_group(own, Duration::from_millis(10)).await,
            GroupEnd::Refused
        );
    }
}
