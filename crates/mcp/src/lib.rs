//! MCP servers as a tool source: server definitions, the client on the official SDK, each
//! server's process life and status, and the tools it offers a Bot's turn. The engine sees only
//! registered tools that are effectful or not and honour their call's cancellation.

mod call;
mod conn;
pub mod def;
mod manager;
pub mod naming;
pub mod result;
pub mod schema;
mod server;
mod source;
pub mod status;

pub use call::HUNG_AFTER;
pub use conn::STDERR_KEPT;
pub use def::{DefError, ServerDef};
pub use manager::{Mcp, McpError, Protected, ServerView, probe};
pub use server::{STABLE_AFTER, backoff};
pub use status::{ServerStatus, State, ToolInfo};
