//! Schema migrations, kept in the repo per backend (`migrations/sqlite/`, `migrations/postgres/`)
//! under the same version numbers, and applied in order at open. The applied count is the
//! schema version (SQLite's `user_version`; on PostgreSQL the row of `troupe_schema`), so a
//! database from a newer Troupe is recognised and refused.

use crate::db::{Conn, Dialect};
use crate::{Result, StoreError};
use std::path::Path;

macro_rules! migrations {
    ($dir:literal: $($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../migrations/", $dir, "/", $name, ".sql")))),*]
    };
}

type Migration = (&'static str, &'static str);

const SQLITE: &[Migration] = migrations!("sqlite":
    "0001_kernel", "0002_conversations", "0003_workflows", "0004_agenda", "0005_tasks",
    "0006_blueprint_loops", "0007_unknown_effect_notes", "0008_loop_guards", "0009_cached_tokens",
    "0010_nodes", "0011_groups", "0012_deferring_steers", "0013_plans", "0014_work_items",
    "0015_check_backs", "0016_delegations", "0017_filing_readings",
    "0018_work_questions", "0019_holds", "0020_control_lines", "0021_deliverables",
    "0022_clearing", "0023_mcp", "0024_lattice", "0025_channels", "0026_thread_parents",
    "0027_supervisor", "0028_user_quotes", "0029_requirements", "0030_quality",
    "0031_external_jobs", "0032_ceiling", "0033_closing_check", "0034_runtime_boss",
    "0035_channel_permissions", "0036_memories", "0037_notifications", "0038_ticket_board_entries",
    "0039_model_call_finish", "0040_reply_in", "0041_work_trigger_line",
    "0042_line_readings_by_line", "0043_awaiting_word", "0044_replacement_cards",
    "0045_picture_judgements", "0046_part_filings", "0047_bot_work_segments",
    "0048_line_delivery_lookups", "0049_events_kind_partial", "0050_thread_workspace_root",
    "0051_ask_closed_why", "0052_seams_checks", "0053_line_dispositions",
    "0054_ticket_release", "0055_bot_memories", "0056_reflections", "0057_skills",
    "0058_routines", "0059_engine_choice", "0060_work_items_by_plan",
);

const POSTGRES: &[Migration] = migrations!("postgres":
    "0001_kernel", "0002_conversations", "0003_workflows", "0004_agenda", "0005_tasks",
    "0006_blueprint_loops", "0007_unknown_effect_notes", "0008_loop_guards", "0009_cached_tokens",
    "0010_nodes", "0011_groups", "0012_deferring_steers", "0013_plans", "0014_work_items",
    "0015_check_backs", "0016_delegations", "0017_filing_readings",
    "0018_work_questions", "0019_holds", "0020_control_lines", "0021_deliverables",
    "0022_clearing", "0023_mcp", "0024_lattice", "0025_channels", "0026_thread_parents",
    "0027_supervisor", "0028_user_quotes", "0029_requirements", "0030_quality",
    "0031_external_jobs", "0032_ceiling", "0033_closing_check", "0034_runtime_boss",
    "0035_channel_permissions", "0036_memories", "0037_notifications", "0038_ticket_board_entries",
    "0039_model_call_finish", "0040_reply_in", "0041_work_trigger_line",
    "0042_line_readings_by_line", "0043_awaiting_word", "0044_replacement_cards",
    "0045_picture_judgements", "0046_part_filings", "0047_bot_work_segments",
    "0048_line_delivery_lookups", "0049_events_kind_partial", "0050_thread_workspace_root",
    "0051_ask_closed_why", "0052_seams_checks", "0053_line_dispositions",
    "0054_ticket_release", "0055_bot_memories", "0056_reflections", "0057_skills",
    "0058_routines", "0059_engine_choice", "0060_work_items_by_plan",
);

const _: () = assert!(
    SQLITE.len() == POSTGRES.len(),
    "both backends have every migration"
);

pub const KNOWN_VERSION: i64 = SQLITE.len() as i64;

/// Any number works as long as every Troupe uses the same: it names "the schema" to
/// `pg_advisory_lock`, so nodes starting together migrate one at a time.
const PG_MIGRATION_LOCK: i64 = 0x7472_6f75_7065;

fn list(dialect: Dialect) -> &'static [Migration] {
    match dialect {
        Dialect::Sqlite => SQLITE,
        Dialect::Postgres => POSTGRES,
    }
}

/// The schema version a database is at (0 for an empty one).
pub fn version(conn: &Conn) -> Result<i64> {
    match conn.dialect() {
        Dialect::Sqlite => {
            let rows = conn.query("PRAGMA user_version", &[])?;
            rows.first().map_or(Ok(0), |r| r.get(0))
        }
        Dialect::Postgres => {
            let exists = conn.query("SELECT to_regclass('troupe_schema') IS NOT NULL", &[])?;
            if !exists
                .first()
                .map(|r| r.get::<bool>(0))
                .transpose()?
                .unwrap_or(false)
            {
                return Ok(0);
            }
            let rows = conn.query("SELECT version FROM troupe_schema", &[])?;
            rows.first().map_or(Ok(0), |r| r.get(0))
        }
    }
}

/// Where a database stands: its version and the names of the migrations it lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaStatus {
    pub version: i64,
    pub known: i64,
    pub pending: Vec<&'static str>,
}

pub fn status(conn: &Conn) -> Result<SchemaStatus> {
    let version = version(conn)?;
    let pending = list(conn.dialect())
        .iter()
        .skip(version.max(0) as usize)
        .map(|(name, _)| *name)
        .collect();
    Ok(SchemaStatus {
        version,
        known: KNOWN_VERSION,
        pending,
    })
}

pub fn apply(conn: &Conn, path: &Path) -> Result<()> {
    let open_err = |e: StoreError| StoreError::Open {
        path: path.to_path_buf(),
        detail: format!("not a usable Troupe database ({e})"),
    };
    let found = version(conn).map_err(open_err)?;
    if found > KNOWN_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            known: KNOWN_VERSION,
        });
    }
    if found == KNOWN_VERSION {
        return Ok(());
    }
    let pg = conn.dialect() == Dialect::Postgres;
    if pg {
        conn.batch(&format!("SELECT pg_advisory_lock({PG_MIGRATION_LOCK})"))
            .map_err(open_err)?;
    }
    let applied = apply_pending(conn, path);
    if pg {
        let _ = conn.batch(&format!("SELECT pg_advisory_unlock({PG_MIGRATION_LOCK})"));
    }
    applied
}

/// Bring a fresh SQLite file only as far as the first `n` migrations: tests of an upgrade
/// start from a database an older Troupe wrote.
pub(crate) fn sqlite_at_version(path: &Path, n: usize) -> Result<()> {
    let conn = rusqlite::Connection::open(path).map_err(|e| StoreError::Open {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    let conn = Conn::Sqlite(conn);
    for (i, (name, sql)) in SQLITE.iter().take(n).enumerate() {
        conn.batch("PRAGMA foreign_keys = OFF")?;
        migrate_one(&conn, i, name, sql, path)?;
    }
    Ok(())
}

fn apply_pending(conn: &Conn, path: &Path) -> Result<()> {
    let open_err = |e: StoreError| StoreError::Open {
        path: path.to_path_buf(),
        detail: format!("not a usable Troupe database ({e})"),
    };
    // Another process may open the same database at the same time: each step holds the write
    // lock (SQLite's IMMEDIATE, PostgreSQL's advisory lock) and reads the version again under
    // it, so a migration runs once.
    let sqlite = conn.dialect() == Dialect::Sqlite;
    for (i, (name, sql)) in list(conn.dialect()).iter().enumerate() {
        // SQLite rebuilds a table to change its CHECK, which needs foreign keys off (a no-op
        // inside a transaction); they are checked below before the step commits.
        if sqlite {
            conn.batch("PRAGMA foreign_keys = OFF").map_err(open_err)?;
        }
        let stepped = migrate_one(conn, i, name, sql, path);
        if sqlite {
            conn.batch("PRAGMA foreign_keys = ON").map_err(open_err)?;
        }
        stepped?;
    }
    Ok(())
}

/// Apply migration `i` unless another process has already.
fn migrate_one(conn: &Conn, i: usize, name: &str, sql: &str, path: &Path) -> Result<()> {
    let open_err = |e: StoreError| StoreError::Open {
        path: path.to_path_buf(),
        detail: format!("not a usable Troupe database ({e})"),
    };
    conn.begin_write().map_err(open_err)?;
    let now = version(conn).map_err(open_err)?;
    if now > KNOWN_VERSION {
        let _ = conn.step("ROLLBACK");
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: now,
            known: KNOWN_VERSION,
        });
    }
    if now > i as i64 {
        conn.step("ROLLBACK").map_err(open_err)?;
        return Ok(());
    }
    let step = conn
        .batch(sql)
        .and_then(|_| foreign_keys_hold(conn))
        .and_then(|_| set_version(conn, (i + 1) as i64));
    if let Err(e) = step {
        let _ = conn.step("ROLLBACK");
        return Err(StoreError::Open {
            path: path.to_path_buf(),
            detail: format!("migration {name} failed: {e}"),
        });
    }
    conn.step("COMMIT").map_err(open_err)?;
    Ok(())
}

/// SQLite: every reference still names a row after a step that ran with foreign keys off.
fn foreign_keys_hold(conn: &Conn) -> Result<()> {
    if conn.dialect() != Dialect::Sqlite {
        return Ok(());
    }
    let broken = conn.query("PRAGMA foreign_key_check", &[])?;
    match broken.first() {
        None => Ok(()),
        Some(row) => Err(StoreError::Invalid(format!(
            "a reference names a missing row (table {})",
            row.get::<String>(0).unwrap_or_default()
        ))),
    }
}

fn set_version(conn: &Conn, v: i64) -> Result<()> {
    match conn.dialect() {
        Dialect::Sqlite => conn.batch(&format!("PRAGMA user_version = {v}")),
        Dialect::Postgres => conn.batch(&format!(
            "CREATE TABLE IF NOT EXISTS troupe_schema (version BIGINT NOT NULL); \
             DELETE FROM troupe_schema; INSERT INTO troupe_schema (version) VALUES ({v});"
        )),
    }
}
