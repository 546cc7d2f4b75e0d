use std::path::PathBuf;
use troupe_core::{RunId, ThreadId};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open database {path}: {detail}")]
    Open { path: PathBuf, detail: String },
    #[error(
        "database {path} has schema version {found}, newer than this Troupe knows ({known}); \
         use a newer troupe or another data dir"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    #[error("thread {0} is busy: run {1} holds its lease")]
    Busy(ThreadId, RunId),
    #[error("stale lease on thread {thread}: generation {presented} no longer holds it")]
    StaleLease { thread: ThreadId, presented: i64 },
    #[error("{0}")]
    Conflict(String),
    /// A hold in force covers the turn a write would start, change or move into its cover
    /// (HOLD-D1: the database's `held` refusal). The write's transaction is over on
    /// PostgreSQL, so which holds cover it is asked in another one: `Tx::covering_holds`.
    #[error("held: a hold in force covers this turn")]
    Held,
    #[error("invalid: {0}")]
    Invalid(String),
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Sql(crate::SqlError),
}

impl From<crate::SqlError> for StoreError {
    /// A database's refusal; the `held` trigger's is [`StoreError::Held`].
    fn from(e: crate::SqlError) -> Self {
        if e.kind == crate::SqlErrorKind::Constraint && names_held(&e.message) {
            StoreError::Held
        } else {
            StoreError::Sql(e)
        }
    }
}

/// Whether a refusal's message is the hold trigger's: `held` alone (SQLite), or followed by
/// the code PostgreSQL's messages carry (`held [SQLSTATE 23514]`).
fn names_held(message: &str) -> bool {
    message == "held" || message.starts_with("held [")
}

impl StoreError {
    pub fn not_found(what: &'static str, id: impl ToString) -> Self {
        StoreError::NotFound {
            what,
            id: id.to_string(),
        }
    }
}
