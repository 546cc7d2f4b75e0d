//! One thread ends every process group this process is asked to end.
//!
//! Ending a group means SIGTERM, waiting up to a grace for it to be gone, then SIGKILL. The
//! waiting is polling, and polling a group that still has a member may need a pass over
//! `/proc` (zombies do not count as alive). Done per group on the async runtime, a hundred
//! groups ended at once kept its workers busy scanning `/proc` while replies waited. Here one
//! plain thread keeps every group being ended: each poll is one `kill(-pgid, 0)` per group and
//! at most one `/proc` pass for all of them. A group asked to end twice (a stop's release and
//! the cancelled shell call itself) is signalled once; every caller gets the same outcome.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::process_group::{GroupEnd, kill_group_now, live_groups_among, signal_group};

/// How often groups being ended are looked at.
const POLL: Duration = Duration::from_millis(20);
/// How long to wait for a group to disappear after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(2);

enum Stage {
    /// Asked to end; the thread has not looked at it yet.
    Asked,
    /// SIGTERM sent at this instant.
    Termed(Instant),
    /// SIGKILL sent at this instant.
    Killed(Instant),
}

struct Ending {
    /// SIGTERM to SIGKILL; the shortest any caller asked for.
    grace: Duration,
    stage: Stage,
    waiters: Vec<oneshot::Sender<GroupEnd>>,
}

struct Reaper {
    groups: Mutex<BTreeMap<i32, Ending>>,
    wake: Condvar,
}

static REAPER: Reaper = Reaper {
    groups: Mutex::new(BTreeMap::new()),
    wake: Condvar::new(),
};

/// Whether the reaper thread runs (started on first use).
static RUNNING: OnceLock<bool> = OnceLock::new();

fn lock() -> MutexGuard<'static, BTreeMap<i32, Ending>> {
    REAPER.groups.lock().unwrap_or_else(PoisonError::into_inner)
}

fn running() -> bool {
    *RUNNING.get_or_init(|| {
        match std::thread::Builder::new()
            .name("troupe-group-reaper".into())
            .spawn(run)
        {
            Ok(_) => true,
            Err(e) => {
                tracing::error!(error = %e, "could not start the process-group reaper thread");
                false
            }
        }
    })
}

/// Ask for each group (already checked signallable) to be ended; one receiver per group, in
/// order. A group already being ended gains a waiter (and the shorter grace), not a second
/// SIGTERM.
pub(crate) fn end_all(pgids: &[i32], grace: Duration) -> Vec<oneshot::Receiver<GroupEnd>> {
    let mut out = Vec::with_capacity(pgids.len());
    if !running() {
        // Nothing could watch the groups: kill them outright rather than leave them.
        for &pgid in pgids {
            let (tx, rx) = oneshot::channel();
            kill_group_now(pgid);
            let _ = tx.send(GroupEnd::Survived);
            out.push(rx);
        }
        return out;
    }
    let mut fresh = false;
    let mut groups = lock();
    for &pgid in pgids {
        let (tx, rx) = oneshot::channel();
        let ending = groups.entry(pgid).or_insert_with(|| {
            fresh = true;
            Ending {
                grace,
                stage: Stage::Asked,
                waiters: Vec::new(),
            }
        });
        ending.grace = ending.grace.min(grace);
        ending.waiters.push(tx);
        out.push(rx);
    }
    drop(groups);
    if fresh {
        REAPER.wake.notify_one();
    }
    out
}

/// The reaper thread: look at every group being ended, act on what changed, sleep until the
/// next poll or the next new group.
fn run() {
    let mut groups = lock();
    loop {
        if groups.is_empty() {
            groups = REAPER
                .wake
                .wait(groups)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        let looked: Vec<i32> = groups.keys().copied().collect();
        drop(groups);
        // Off the lock: callers register while this reads /proc.
        let live = live_groups_among(&looked);
        let now = Instant::now();
        groups = lock();
        let mut ended = Vec::new();
        for (&pgid, e) in groups.iter_mut() {
            if looked.binary_search(&pgid).is_err() {
                // Asked for during the pass: the next one looks at it.
                continue;
            }
            let alive = live.contains(&pgid);
            match e.stage {
                Stage::Asked if !alive => ended.push((pgid, GroupEnd::AlreadyGone)),
                Stage::Asked => {
                    signal_group(pgid, libc::SIGTERM);
                    // So stopped members can act on the SIGTERM.
                    signal_group(pgid, libc::SIGCONT);
                    e.stage = Stage::Termed(now);
                }
                Stage::Termed(_) if !alive => ended.push((pgid, GroupEnd::Terminated)),
                Stage::Termed(at) if now >= at + e.grace => {
                    tracing::debug!(pgid, "process group outlived SIGTERM; sending SIGKILL");
                    signal_group(pgid, libc::SIGKILL);
                    e.stage = Stage::Killed(now);
                }
                Stage::Killed(_) if !alive => ended.push((pgid, GroupEnd::Killed)),
                Stage::Killed(at) if now >= at + KILL_WAIT => {
                    tracing::warn!(pgid, "process group survived SIGKILL");
                    ended.push((pgid, GroupEnd::Survived));
                }
                Stage::Termed(_) | Stage::Killed(_) => {}
            }
        }
        for (pgid, end) in ended {
            if let Some(e) = groups.remove(&pgid) {
                for w in e.waiters {
                    // A caller that stopped waiting does not stop the ending.
                    let _ = w.send(end);
                }
            }
        }
        if groups.values().any(|e| matches!(e.stage, Stage::Asked)) {
            continue;
        }
        let next = groups
            .values()
            .filter_map(|e| match e.stage {
                Stage::Termed(at) => Some(at + e.grace),
                Stage::Killed(at) => Some(at + KILL_WAIT),
                Stage::Asked => None,
            })
            .fold(now + POLL, Instant::min);
        let wait = next.saturating_duration_since(Instant::now());
        groups = REAPER
            .wake
            .wait_timeout(groups, wait)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}
