use troupe_collab::CollabError;
use troupe_engine::EngineError;
use troupe_store::StoreError;

/// Errors of the workflow layer, each mapping to one HTTP status.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    /// 404.
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    /// 422: well-formed but invalid values.
    #[error("{0}")]
    Invalid(String),
    /// 409 with a code (`session_running`, `workflow_active`, `plan_required`, `revision_conflict`, …).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    #[error(transparent)]
    Collab(CollabError),
    #[error(transparent)]
    Store(StoreError),
    #[error(transparent)]
    Engine(EngineError),
}

impl WorkflowError {
    pub fn invalid(msg: impl Into<String>) -> Self {
        WorkflowError::Invalid(msg.into())
    }
    pub fn conflict(code: &'static str, msg: impl Into<String>) -> Self {
        WorkflowError::Conflict {
            code,
            message: msg.into(),
        }
    }
}

impl From<StoreError> for WorkflowError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { what, id } => WorkflowError::NotFound { what, id },
            StoreError::Invalid(m) => WorkflowError::Invalid(m),
            StoreError::Conflict(message) => WorkflowError::Conflict {
                code: "conflict",
                message,
            },
            other => WorkflowError::Store(other),
        }
    }
}

impl From<CollabError> for WorkflowError {
    fn from(e: CollabError) -> Self {
        match e {
            CollabError::NotFound { what, id } => WorkflowError::NotFound { what, id },
            CollabError::Invalid(m) => WorkflowError::Invalid(m),
            CollabError::Conflict { code, message } => WorkflowError::Conflict { code, message },
            CollabError::Store(s) => s.into(),
            other => WorkflowError::Collab(other),
        }
    }
}

impl From<EngineError> for WorkflowError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Store(s) => s.into(),
            other => WorkflowError::Engine(other),
        }
    }
}
