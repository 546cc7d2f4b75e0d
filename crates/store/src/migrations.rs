//! Schema migrations, kept in the repo and applied in order at open. `user_version` is the
//! applied count, so a database from a newer Troupe is recognised and refused.

use crate::{Result, StoreError};
use rusqlite::Connection;
use std::path::Path;

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_kernel.sql"),
    include_str!("../migrations/0002_conversations.sql"),
    include_str!("../migrations/0003_workflows.sql"),
    include_str!("../migrations/0004_agenda.sql"),
    include_str!("../migrations/0005_tasks.sql"),
    include_str!("../migrations/0006_blueprint_loops.sql"),
    include_str!("../migrations/0007_unknown_effect_notes.sql"),
    include_str!("../migrations/0008_loop_guards.sql"),
    include_str!("../migrations/0009_cached_tokens.sql"),
];

pub const KNOWN_VERSION: i64 = MIGRATIONS.len() as i64;

pub fn apply(conn: &mut Connection, path: &Path) -> Result<()> {
    let open_err = |e: rusqlite::Error| StoreError::Open {
        path: path.to_path_buf(),
        detail: format!("not a usable Troupe database ({e})"),
    };
    let found: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(open_err)?;
    if found > KNOWN_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            known: KNOWN_VERSION,
        });
    }
    // Another process may open the same file at the same time: each step takes the write lock
    // first (IMMEDIATE) and reads the version again under it, so a migration runs once.
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let txn = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(open_err)?;
        let now: i64 = txn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(open_err)?;
        if now > i as i64 {
            continue;
        }
        txn.execute_batch(sql).map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            detail: format!("migration {} failed: {e}", i + 1),
        })?;
        txn.pragma_update(None, "user_version", (i + 1) as i64)
            .map_err(open_err)?;
        txn.commit().map_err(open_err)?;
    }
    Ok(())
}
