use troupe_core::ThreadId;
use troupe_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("thread {0} has no running turn")]
    NotRunning(ThreadId),
    #[error("invalid: {0}")]
    Invalid(String),
    #[error("the engine is shutting down")]
    Draining,
}
