use troupe_engine::EngineError;
use troupe_store::StoreError;

/// Errors of the conversation layer, each mapping to one HTTP status.
#[derive(Debug, thiserror::Error)]
pub enum CollabError {
    /// 404.
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    /// 422: well-formed but invalid values.
    #[error("{0}")]
    Invalid(String),
    /// 409 with a code (`not_running`, `duplicate_name`, `archived`, …).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    #[error(transparent)]
    Store(StoreError),
    #[error(transparent)]
    Engine(EngineError),
}

impl CollabError {
    pub fn invalid(msg: impl Into<String>) -> Self {
        CollabError::Invalid(msg.into())
    }
    pub fn conflict(code: &'static str, msg: impl Into<String>) -> Self {
        CollabError::Conflict {
            code,
            message: msg.into(),
        }
    }
}

impl From<StoreError> for CollabError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { what, id } => CollabError::NotFound { what, id },
            StoreError::Conflict(message) => CollabError::Conflict {
                code: "conflict",
                message,
            },
            StoreError::Invalid(m) => CollabError::Invalid(m),
            other => CollabError::Store(other),
        }
    }
}

impl From<EngineError> for CollabError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Store(s) => s.into(),
            EngineError::NotRunning(t) => {
                CollabError::conflict("not_running", format!("nothing is running (thread {t})"))
            }
            other => CollabError::Engine(other),
        }
    }
}
