use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use troupe_collab::Collab;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub collab: Collab,
    pub data_dir: PathBuf,
    /// Required as `Authorization: Bearer <token>` (or a web session) when set; unset only
    /// with `troupe serve --no-token` or in-process tests.
    pub token: Option<Arc<str>>,
    /// One-time login links and the web sessions they opened (`access`).
    pub login: crate::access::LoginDesk,
    /// Cancelled when the daemon shuts down: long-lived responses (event streams) end, so the
    /// HTTP server's graceful shutdown does not wait on them forever.
    pub shutdown: CancellationToken,
    /// The MCP servers: their definitions, processes and status.
    pub mcp: troupe_mcp::Mcp,
    /// The chat channel accounts and their outbound bridge.
    pub channels: troupe_channels::Channels,
    /// Set by `troupe serve --manual-clock` (loopback only): the store's clock, moved by
    /// `POST /v1/debug/clock`; without it the debug routes are 404.
    pub manual_clock: Option<troupe_core::ManualClock>,
}
