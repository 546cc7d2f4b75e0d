//! Whether the processes a test's shell commands started are still alive, as `kill -0` sees
//! them — except that a zombie (exited, waiting to be reaped by whoever inherited it) is dead.

use std::path::Path;

/// The state letter and process group of `pid`, from /proc.
fn stat(pid: i32) -> Option<(char, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) S ppid pgrp …": comm may hold spaces and parentheses, so split after the last ')'.
    let (_, rest) = s.rsplit_once(") ")?;
    let mut f = rest.split(' ');
    let state = f.next()?.chars().next()?;
    let _ppid = f.next()?;
    let pgrp = f.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// `kill -0 pid` succeeds and the process is no zombie.
pub fn process_alive(pid: i32) -> bool {
    assert!(pid > 1, "not a pid to ask about: {pid}");
    // SAFETY: signal 0 delivers nothing; it only asks whether the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && stat(pid).is_none_or(|(state, _)| state != 'Z')
}

/// `kill -0 -pgid` succeeds and some member of the group is no zombie.
pub fn group_alive(pgid: i32) -> bool {
    assert!(pgid > 1, "not a process group to ask about: {pgid}");
    // SAFETY: signal 0 delivers nothing; -pgid names exactly that group.
    let exists = unsafe { libc::kill(-pgid, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    if !exists {
        return false;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter_map(stat)
        .any(|(state, pgrp)| pgrp == pgid && state != 'Z')
}

/// The pids recorded in `dir` by commands that wrote `<tag>-<pid>.pid` (see the tests' long
/// commands), with their tags.
pub fn recorded_pids(dir: &Path) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".pid") else {
            continue;
        };
        let Some((tag, pid)) = stem.rsplit_once('-') else {
            continue;
        };
        if let Ok(pid) = pid.parse() {
            out.push((tag.to_string(), pid));
        }
    }
    out.sort();
    out
}

/// On drop, SIGKILLs every process group a command recorded in `dir` (see `recorded_pids`)
/// that is still alive: a test that fails midway leaves no command of its own running.
pub struct KillRecordedOnDrop(pub std::path::PathBuf);

impl Drop for KillRecordedOnDrop {
    fn drop(&mut self) {
        for (_, pgid) in recorded_pids(&self.0) {
            if pgid > 1 && group_alive(pgid) {
                // SAFETY: -pgid names exactly the group the test's own command led.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
            }
        }
    }
}
