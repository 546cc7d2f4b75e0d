//! What committed writes cost, counted as they commit: the transactions, the write closures they
//! carried and the WAL syncs SQLite made for them. Relaxed atomics: a reader wants totals, not
//! an order among them, and each commit adds to them once.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counts since the store was opened (the schema migrations run at open are not counted); see
/// [`crate::Store::stats`]. Subtract two readings with [`StoreStats::since`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreStats {
    /// Write transactions committed: each `Store::write`, each group-commit batch of
    /// `Store::write_async`, and each `write_async` committed alone on its caller's thread.
    pub commits: u64,
    /// Write closures whose changes were committed, by either path; `writes - commits` is how
    /// many shared a commit with another. A closure that failed (its changes undone) is not
    /// counted, though its batch still commits.
    pub writes: u64,
    /// WAL syncs made at commit: one per commit that changed a row when every commit syncs
    /// (`Durability::Full` on a file, `synchronous = FULL` in WAL mode), none with
    /// `Durability::Normal` (commits are not synced) or in memory. A commit that changed no row
    /// appends nothing to the WAL, so it has nothing to sync. Not counted, in either durability:
    /// the syncs of SQLite's automatic checkpoints (the WAL, then the database file) and the
    /// sync of the WAL header when the WAL restarts after one.
    pub syncs: u64,
}

impl StoreStats {
    /// What was counted between `earlier` and `self`.
    /// Two stores' counts together (several nodes of one database).
    pub fn plus(self, other: StoreStats) -> StoreStats {
        StoreStats {
            commits: self.commits + other.commits,
            writes: self.writes + other.writes,
            syncs: self.syncs + other.syncs,
        }
    }

    pub fn since(self, earlier: StoreStats) -> StoreStats {
        StoreStats {
            commits: self.commits.saturating_sub(earlier.commits),
            writes: self.writes.saturating_sub(earlier.writes),
            syncs: self.syncs.saturating_sub(earlier.syncs),
        }
    }
}

/// The live counts, shared by `Store::write` and the writer thread.
pub(crate) struct Counters {
    /// Whether a commit that wrote something syncs the WAL, as the writer connection reports
    /// its journal mode and `synchronous` level.
    syncs_at_commit: bool,
    commits: AtomicU64,
    writes: AtomicU64,
    syncs: AtomicU64,
}

impl Counters {
    pub(crate) fn new(syncs_at_commit: bool) -> Counters {
        Counters {
            syncs_at_commit,
            commits: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
        }
    }

    /// One transaction committed, carrying `writes` closures that stood; `changed` if it
    /// changed any row (`sqlite3_total_changes` moved between its BEGIN and its COMMIT).
    pub(crate) fn committed(&self, writes: usize, changed: bool) {
        self.commits.fetch_add(1, Relaxed);
        self.writes.fetch_add(writes as u64, Relaxed);
        if changed && self.syncs_at_commit {
            self.syncs.fetch_add(1, Relaxed);
        }
    }

    pub(crate) fn read(&self) -> StoreStats {
        StoreStats {
            commits: self.commits.load(Relaxed),
            writes: self.writes.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Durability, OpenOptions, Result, Store, StoreError, StoreStats};
    use serde_json::json;
    use std::path::Path;
    use std::sync::Arc;
    use troupe_core::{EventId, ManualClock};

    fn open(path: &Path, durability: Durability) -> Store {
        let clock = Arc::new(ManualClock::new(1));
        Store::open_with(path, clock, OpenOptions { durability }).unwrap()
    }

    fn stats(commits: u64, writes: u64, syncs: u64) -> StoreStats {
        StoreStats {
            commits,
            writes,
            syncs,
        }
    }

    /// 2 writes, a third that holds the writer lock while `n` `write_async`s queue behind it,
    /// then its release: returns what the store counted.
    async fn three_writes_and_n_queued(s: &Store, n: usize) -> StoreStats {
        for i in 0..2 {
            s.write(move |tx| tx.event(&format!("w{i}"), None, None, json!({})))
                .unwrap();
        }
        let (started, has_started) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let holder = s.clone();
        let held = std::thread::spawn(move || {
            holder.write(|tx| {
                started.send(()).unwrap();
                released.recv().unwrap();
                tx.event("held", None, None, json!({}))
            })
        });
        has_started.recv().unwrap();
        let tasks: Vec<_> = (0..n)
            .map(|i| {
                let s = s.clone();
                tokio::spawn(async move {
                    s.write_async(move |tx| tx.event(&format!("q{i}"), None, None, json!({})))
                        .await
                })
            })
            .collect();
        // The lock is held, so each one queues (none commits inline) and stays counted as
        // queued until a batch gets the lock.
        while s.inner.writer.get().is_none_or(|w| w.queued() < n) {
            tokio::task::yield_now().await;
        }
        release.send(()).unwrap();
        held.join().unwrap().unwrap();
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        s.stats()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_writes_share_commits_and_full_syncs_each_commit_once() {
        let dir = tempfile::tempdir().unwrap();
        let s = open(&dir.path().join("t.db"), Durability::Full);
        assert_eq!(s.stats(), StoreStats::default());
        let n = 40;
        let counted = three_writes_and_n_queued(&s, n).await;
        assert_eq!(counted.writes, n as u64 + 3);
        // 3 commits of their own, then one batch, or two if the writer thread took the first
        // queued write before the others arrived.
        assert!((4..=5).contains(&counted.commits), "{counted:?}");
        assert!(counted.commits <= counted.writes);
        assert_eq!(counted.syncs, counted.commits, "{counted:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn normal_durability_counts_the_same_commits_and_no_commit_syncs() {
        let dir = tempfile::tempdir().unwrap();
        let s = open(&dir.path().join("t.db"), Durability::Normal);
        let n = 40;
        let counted = three_writes_and_n_queued(&s, n).await;
        assert_eq!(counted.writes, n as u64 + 3);
        assert!((4..=5).contains(&counted.commits), "{counted:?}");
        assert_eq!(counted.syncs, 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_commit_that_changes_no_row_appends_nothing_to_the_wal_and_is_no_sync() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let s = open(&path, Durability::Full);
        s.write(|tx| tx.event("first", None, None, json!({})))
            .unwrap();
        let wal = || {
            std::fs::metadata(dir.path().join("t.db-wal"))
                .unwrap()
                .len()
        };
        let (before, wal_before) = (s.stats(), wal());
        let look = |tx: &mut crate::Tx<'_>| tx.events_after(EventId(0), None, 1).map(|_| ());
        s.write(look).unwrap();
        // Nothing queued and the lock free: this one commits on this thread.
        s.write_async(move |tx| look(tx)).await.unwrap();
        assert_eq!(s.stats().since(before), stats(2, 2, 0));
        assert_eq!(
            wal(),
            wal_before,
            "nothing was appended, so nothing was synced"
        );
    }

    #[test]
    fn a_write_that_fails_commits_nothing_and_is_not_counted() {
        let dir = tempfile::tempdir().unwrap();
        let s = open(&dir.path().join("t.db"), Durability::Full);
        let failed = s.write(|tx| -> Result<()> {
            tx.event("undone", None, None, json!({}))?;
            Err(StoreError::Invalid("no".into()))
        });
        assert!(failed.is_err());
        assert_eq!(s.stats(), StoreStats::default());
    }

    #[test]
    fn a_store_in_memory_counts_commits_but_never_a_sync() {
        let s = Store::open_in_memory(Arc::new(ManualClock::new(1))).unwrap();
        assert_eq!(s.durability(), Durability::Full);
        s.write(|tx| tx.event("e", None, None, json!({}))).unwrap();
        assert_eq!(s.stats(), stats(1, 1, 0));
    }
}
