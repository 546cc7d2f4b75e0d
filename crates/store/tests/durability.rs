//! The durability chosen at open is what SQLite does at each commit: `PRAGMA synchronous` read
//! back on the writer connection (the one every commit, queued or not, goes through).

use serde_json::json;
use std::sync::Arc;
use troupe_core::ManualClock;
use troupe_store::{Durability, OpenOptions, Store};

fn open(path: &std::path::Path, durability: Durability) -> Store {
    Store::open_with(
        path,
        Arc::new(ManualClock::new(1)),
        OpenOptions { durability },
    )
    .unwrap()
}

#[test]
fn a_store_syncs_every_commit_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("t.db"), Arc::new(ManualClock::new(1))).unwrap();
    assert_eq!(s.durability(), Durability::Full);
    assert_eq!(s.synchronous().unwrap(), 2, "synchronous = FULL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chosen_durability_reaches_the_writer_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    for (durability, level) in [(Durability::Normal, 1), (Durability::Full, 2)] {
        // The setting belongs to the open, not to the file: reopening changes it.
        let s = open(&path, durability);
        assert_eq!(s.durability(), durability);
        assert_eq!(durability.synchronous_level(), level);
        assert_eq!(s.synchronous().unwrap(), level, "{durability}");
        // Writes, synchronous and group-committed, keep the connection's setting.
        s.write(|tx| tx.event("sync", None, None, json!({})))
            .unwrap();
        s.write_async(|tx| tx.event("queued", None, None, json!({})))
            .await
            .unwrap();
        assert_eq!(s.synchronous().unwrap(), level, "{durability} after writes");
    }
}
