use std::path::PathBuf;
use std::sync::Arc;
use troupe_collab::Collab;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub collab: Collab,
    pub data_dir: PathBuf,
    /// Required as `Authorization: Bearer <token>` when set (non-loopback binds).
    pub token: Option<Arc<str>>,
}
