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
    #[error("invalid: {0}")]
    Invalid(String),
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Sql(crate::SqlError),
}

impl StoreError {
    pub fn not_found(what: &'static str, id: impl ToString) -> Self {
        StoreError::NotFound {
            what,
            id: id.to_string(),
        }
    }
}
