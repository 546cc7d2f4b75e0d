//! Signalling and observing whole process groups, so a shell command and
//! everything it started can be ended together.
//!
//! "Gone" means no *live* member: `kill(-pgid, 0)` fails with ESRCH, or
//! (on Linux) every remaining member is a zombie. Zombies have exited and
//! hold nothing (no pipes, no CPU); they only wait for their parent to reap
//! them, and in containers whose PID 1 never reaps, orphaned zombies would
//! otherwise make a group look alive forever.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::group_reaper;

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
    if !group_exists(pgid) {
        return false;
    }
    // It exists (EPERM also means it exists). Discount zombies where /proc
    // lets us see them.
    proc_scan(|pgrp| pgrp == pgid, |_| true).unwrap_or(true)
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
/// then SIGKILL and wait briefly again. The signalling and the waiting are
/// done by one reaper thread for every group being ended, never on the
/// caller's runtime; a group some other caller is already ending is not
/// signalled again, and both get the same outcome. Dropping the future does
/// not stop the ending.
///
/// This does not reap: whoever owns the direct child must wait on it
/// (the `shell` tool does so concurrently).
pub async fn terminate_group(pgid: i32, grace: Duration) -> GroupEnd {
    end_groups(&[pgid], grace)
        .await
        .pop()
        .unwrap_or(GroupEnd::Refused)
}

/// End several groups at once, as [`terminate_group`] does each; the outcomes
/// come in the order of `pgids`. The groups are handed to the reaper when this
/// is called, not when the future is first polled, so a busy runtime does not
/// delay their SIGTERM.
pub fn end_groups(pgids: &[i32], grace: Duration) -> impl Future<Output = Vec<GroupEnd>> + use<> {
    let mut ends: Vec<Result<GroupEnd, usize>> = Vec::with_capacity(pgids.len());
    let mut asked = Vec::new();
    for &pgid in pgids {
        if !may_signal(pgid) {
            tracing::warn!(pgid, "refusing to signal process group");
            ends.push(Ok(GroupEnd::Refused));
        } else if !group_exists(pgid) {
            // The common case for a command that exited cleanly: one syscall, no thread hop.
            ends.push(Ok(GroupEnd::AlreadyGone));
        } else {
            ends.push(Err(asked.len()));
            asked.push(pgid);
        }
    }
    let waits = if asked.is_empty() {
        Vec::new()
    } else {
        group_reaper::end_all(&asked, grace)
    };
    async move {
        let mut got = Vec::with_capacity(waits.len());
        for w in waits {
            // The reaper never drops a waiter unanswered; if it did, nobody saw the group go.
            got.push(w.await.unwrap_or(GroupEnd::Survived));
        }
        ends.into_iter()
            .map(|e| e.unwrap_or_else(|i| got[i]))
            .collect()
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

pub(crate) fn signal_group(pgid: i32, sig: libc::c_int) {
    // SAFETY: callers checked may_signal, so -pgid names one foreign group;
    // a failure (ESRCH when already gone) is harmless and ignored.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

/// Whether group `pgid` has any member, zombies included: one syscall.
fn group_exists(pgid: i32) -> bool {
    // SAFETY: signal 0 delivers nothing; pgid > 0, so -pgid names exactly that group.
    pgid > 0 && !(unsafe { libc::kill(-pgid, 0) } != 0 && errno() == libc::ESRCH)
}

/// Of `pgids`, those with a live member: one `kill(-pgid, 0)` each, then one
/// pass over `/proc` for all that still exist (to discount zombies). Without
/// `/proc`, existing counts as alive.
pub(crate) fn live_groups_among(pgids: &[i32]) -> HashSet<i32> {
    let existing: HashSet<i32> = pgids.iter().copied().filter(|&p| group_exists(p)).collect();
    if existing.is_empty() {
        return existing;
    }
    let mut live = HashSet::new();
    let scanned = proc_scan(
        |pgrp| existing.contains(&pgrp),
        |pgrp| {
            live.insert(pgrp);
            // Done once every group has been seen alive.
            live.len() == existing.len()
        },
    );
    match scanned {
        Some(_) => live,
        None => existing,
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Calls `found(pgrp)` for each live process whose group `wants(pgrp)`, until
/// it returns true; whether it did. None without /proc.
fn proc_scan(wants: impl Fn(i32) -> bool, mut found: impl FnMut(i32) -> bool) -> Option<bool> {
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
            && wants(pgrp)
            && is_live(pid, state)
            && found(pgrp)
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
    use std::os::unix::process::CommandExt;

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

    /// A shell in its own group that notes every SIGTERM it gets and ignores it.
    fn stubborn_group(dir: &std::path::Path) -> std::process::Child {
        let child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg("trap 'echo term >> terms' TERM; touch ready; while :; do sleep 0.02; done")
            .current_dir(dir)
            .process_group(0)
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !dir.join("ready").exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the shell never started"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        child
    }

    /// A stop's release and the cancelled call both ending one group: one SIGTERM, one
    /// SIGKILL at the grace, the same outcome for both.
    #[tokio::test]
    async fn a_group_ended_twice_at_once_is_signalled_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = stubborn_group(dir.path());
        let pgid = child.id() as i32;
        let reaped = std::thread::spawn(move || child.wait());
        let grace = Duration::from_millis(300);
        let started = std::time::Instant::now();
        let (a, b) = tokio::join!(terminate_group(pgid, grace), terminate_group(pgid, grace));
        assert_eq!((a, b), (GroupEnd::Killed, GroupEnd::Killed));
        assert!(started.elapsed() >= grace, "killed before the grace");
        assert!(!group_alive(pgid));
        reaped.join().unwrap().unwrap();
        let terms = std::fs::read_to_string(dir.path().join("terms")).unwrap_or_default();
        assert_eq!(terms.lines().count(), 1, "SIGTERMs noted: {terms:?}");
    }

    #[tokio::test]
    async fn ending_many_groups_answers_each_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg("exec sleep 60")
            .current_dir(dir.path())
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id() as i32;
        let reaped = std::thread::spawn(move || child.wait());
        // SAFETY: getpgrp has no preconditions.
        let own = unsafe { libc::getpgrp() };
        let gone = i32::MAX - 7;
        let ends = end_groups(&[gone, pgid, own], Duration::from_secs(3)).await;
        assert_eq!(
            ends,
            vec![
                GroupEnd::AlreadyGone,
                GroupEnd::Terminated,
                GroupEnd::Refused
            ]
        );
        reaped.join().unwrap().unwrap();
        assert!(!group_alive(pgid));
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
