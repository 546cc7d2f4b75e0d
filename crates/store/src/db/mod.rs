//! One connection, to SQLite or to PostgreSQL. Statements are written once in the SQL the two
//! dialects share, with SQLite's `?N` placeholders; the PostgreSQL side renumbers them. Where
//! the dialects differ, the caller asks [`Conn::dialect`] and writes each side.
//!
//! PostgreSQL infers each parameter's type from where it is used, and cannot from `?1 IS
//! NULL` alone: such a parameter is written `CAST(?1 AS BIGINT)` (or `TEXT`), which SQLite
//! reads the same way. Sums are cast to BIGINT too, since PostgreSQL's SUM of a BIGINT is a
//! NUMERIC.

mod pg;
mod row;
mod sqlite;
mod value;

pub(crate) use sqlite::register_functions;

pub(crate) use pg::{PgConn, PgTarget};
pub use row::Row;
pub use value::{FromValue, ToValue, Value};

use crate::Result;

/// Which SQL a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// `(…)`: the ids in JSON array parameter `?n` (see [`id_list`]), unpacked by the
    /// dialect's own JSON function, for `… IN` clauses.
    pub(crate) fn in_list(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("(SELECT value FROM json_each(?{n}))"),
            Dialect::Postgres => format!(
                "(SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(?{n} AS json)))"
            ),
        }
    }
}

/// The ids as one JSON array parameter, so a statement's text (and its cached plan) is the
/// same for any count.
pub(crate) fn id_list(ids: impl Iterator<Item = i64>) -> Result<String> {
    serde_json::to_string(&ids.collect::<Vec<_>>())
        .map_err(|e| crate::StoreError::Invalid(e.to_string()))
}

/// What kind of failure a database reported, as far as callers act on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlErrorKind {
    /// A unique, check, not-null or foreign-key rule refused the write.
    Constraint,
    /// Another writer held what this one needed; a later attempt may succeed.
    Busy,
    /// The connection to the server was lost (a restart, a failover): what was not committed
    /// is gone, and a new connection is needed.
    Lost,
    Other,
}

/// A database's refusal, the same shape from either backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    pub kind: SqlErrorKind,
    pub message: String,
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<rusqlite::Error> for SqlError {
    fn from(e: rusqlite::Error) -> SqlError {
        let kind = match &e {
            rusqlite::Error::SqliteFailure(f, _) => match f.code {
                rusqlite::ErrorCode::ConstraintViolation => SqlErrorKind::Constraint,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked => {
                    SqlErrorKind::Busy
                }
                _ => SqlErrorKind::Other,
            },
            _ => SqlErrorKind::Other,
        };
        SqlError {
            kind,
            message: e.to_string(),
        }
    }
}

impl From<rusqlite::Error> for crate::StoreError {
    fn from(e: rusqlite::Error) -> Self {
        SqlError::from(e).into()
    }
}

pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    Pg(PgConn),
}

impl Conn {
    pub fn dialect(&self) -> Dialect {
        match self {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Pg(_) => Dialect::Postgres,
        }
    }

    /// Run one statement; answers how many rows it changed.
    pub fn execute(&self, sql: &str, args: &[Value]) -> Result<usize> {
        match self {
            Conn::Sqlite(c) => sqlite::execute(c, sql, args),
            Conn::Pg(c) => c.execute(sql, args),
        }
    }

    /// Run one statement without waiting for its answer where that saves a round trip
    /// (PostgreSQL): for a write whose row count nobody reads and whose failure fails the whole
    /// write. Its failure is reported by the next statement or by [`Conn::settle`].
    pub fn execute_unawaited(&self, sql: &str, args: &[Value]) -> Result<()> {
        match self {
            Conn::Sqlite(c) => sqlite::execute(c, sql, args).map(drop),
            Conn::Pg(c) => c.execute_unawaited(sql, args),
        }
    }

    /// Wait for the statements sent unanswered; the first failure among them is the answer.
    pub fn settle(&self) -> Result<()> {
        match self {
            Conn::Sqlite(_) => Ok(()),
            Conn::Pg(c) => c.settle(),
        }
    }

    /// Run one statement and collect every row it returns.
    pub fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>> {
        match self {
            Conn::Sqlite(c) => sqlite::query(c, sql, args),
            Conn::Pg(c) => c.query(sql, args),
        }
    }

    /// Several statements without parameters.
    pub fn batch(&self, sql: &str) -> Result<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Pg(c) => c.batch(sql),
        }
    }

    /// Rows changed through this connection so far: equal before and after a transaction
    /// means it wrote nothing.
    pub fn changes(&self) -> u64 {
        match self {
            Conn::Sqlite(c) => c.total_changes(),
            Conn::Pg(c) => c.changes(),
        }
    }

    /// Whether the connection can no longer be used (PostgreSQL: the server closed it).
    pub fn is_broken(&self) -> bool {
        match self {
            Conn::Sqlite(_) => false,
            Conn::Pg(c) => c.is_closed(),
        }
    }

    /// Replace a connection the server closed with a new one. A failure to connect is left for
    /// the next statement to report.
    pub fn renew_if_broken(&mut self) {
        let fresh = match self {
            Conn::Pg(c) if c.is_closed() => c.reconnect(),
            _ => return,
        };
        match fresh {
            Ok(c) => *self = Conn::Pg(c),
            Err(e) => tracing::warn!(error = %e, "cannot reconnect to the database yet"),
        }
    }

    /// Whether a transaction is open (so a failed one needs its ROLLBACK).
    pub fn in_transaction(&self) -> bool {
        match self {
            Conn::Sqlite(c) => !c.is_autocommit(),
            // Not tracked by the driver; ROLLBACK outside a transaction is only a warning.
            Conn::Pg(_) => true,
        }
    }

    pub fn begin_write(&self) -> Result<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.prepare_cached("BEGIN IMMEDIATE")?.execute([]).map(drop)?),
            Conn::Pg(c) => {
                c.defer("BEGIN");
                Ok(())
            }
        }
    }

    pub fn begin_read(&self) -> Result<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.prepare_cached("BEGIN")?.execute([]).map(drop)?),
            // One snapshot for the whole read, as SQLite's read transaction gives.
            Conn::Pg(c) => {
                c.defer("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
                Ok(())
            }
        }
    }

    /// A statement without parameters that is run often (COMMIT, ROLLBACK, savepoints). On
    /// PostgreSQL savepoints go with the next statement and ROLLBACK is not waited for (see
    /// `PgConn::defer`); COMMIT is always waited for.
    pub fn step(&self, sql: &str) -> Result<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.prepare_cached(sql)?.execute([]).map(drop)?),
            Conn::Pg(c) if sql == "ROLLBACK" => {
                c.rollback_nowait();
                Ok(())
            }
            Conn::Pg(c)
                if sql.starts_with("SAVEPOINT")
                    || sql.starts_with("RELEASE")
                    || sql.starts_with("ROLLBACK TO") =>
            {
                c.defer(sql);
                Ok(())
            }
            Conn::Pg(c) => c.batch(sql),
        }
    }
}
