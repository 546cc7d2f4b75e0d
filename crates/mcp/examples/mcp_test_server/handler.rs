//! The test server's MCP side: the tool list and what each tool does when called.

use std::{
    collections::HashMap,
    io::Write,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
        ContentBlock, Implementation, JsonObject, ListToolsResult, PaginatedRequestParams,
        RequestId, ServerCapabilities, ServerConfig,
    },
    service::{NotificationContext, RequestContext},
};
use serde::de::DeserializeOwned;
use tokio::{sync::oneshot, time::Instant};

use crate::catalog;

/// A 1×1 PNG, base64: the smallest real image a client can decode.
const TINY_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP438AAAAQBAYDFKhhdAAAAAElFTkSuQmCC";

/// Larger `big` requests are refused rather than risking the test machine's memory.
const BIG_LIMIT: u64 = 64 * 1024 * 1024;

/// What every connection to this process shares: an `unlock` over one HTTP session shows in
/// every session's list.
pub struct Shared {
    pub many: usize,
    pub unlocked: AtomicBool,
}

/// One connection's handler (stdio has one; streamable HTTP makes one per session).
#[derive(Clone)]
pub struct TestServer {
    shared: Arc<Shared>,
    /// Running `slow` calls waiting to learn whether their token fired because the client
    /// sent `notifications/cancelled` (request ids are per connection, so this is too).
    cancel_notices: Arc<Mutex<HashMap<RequestId, oneshot::Sender<()>>>>,
}

impl TestServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            cancel_notices: Arc::default(),
        }
    }

    fn current_tools(&self) -> Vec<rmcp::model::Tool> {
        catalog::tools(
            self.shared.many,
            self.shared.unlocked.load(Ordering::SeqCst),
        )
    }

    async fn slow(
        &self,
        args: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let secs: f64 = arg(args, "slow", "secs")?;
        let wait = Duration::try_from_secs_f64(secs).map_err(|_| {
            ErrorData::invalid_params(
                format!("tool `slow`: `secs` must be a non-negative number of seconds, got {secs}"),
                None,
            )
        })?;
        let deadline = Instant::now() + wait;
        let (notice_tx, notice_rx) = oneshot::channel();
        self.notices().insert(context.id.clone(), notice_tx);
        if let Err(message) = append_event("started slow") {
            self.notices().remove(&context.id);
            return Ok(error_result(message));
        }
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => {
                self.notices().remove(&context.id);
                return Ok(text_result(format!("slept {secs} s")));
            }
            _ = context.ct.cancelled() => {}
        }
        // The token also fires when the connection ends; only the client's own
        // notifications/cancelled is recorded, which on_cancelled confirms right after the
        // token fires. Without that confirmation the call ends at its deadline at the latest.
        tokio::select! {
            confirmed = notice_rx => {
                if confirmed.is_ok() {
                    let _ = append_event(&format!("cancelled {}", context.id));
                }
            }
            _ = tokio::time::sleep_until(deadline) => {
                self.notices().remove(&context.id);
            }
        }
        Err(ErrorData::internal_error(
            "slow: cancelled before it finished",
            None,
        ))
    }

    async fn unlock(&self, context: &RequestContext<RoleServer>) -> CallToolResult {
        if self.shared.unlocked.swap(true, Ordering::SeqCst) {
            return text_result("already unlocked");
        }
        match context.peer.notify_tool_list_changed().await {
            Ok(()) => text_result("unlocked late_tool"),
            Err(error) => error_result(format!(
                "late_tool was added but notifications/tools/list_changed could not be sent: {error}"
            )),
        }
    }

    fn notices(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, oneshot::Sender<()>>> {
        self.cancel_notices
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            "troupe-mcp-test-server",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions("Troupe's MCP test server: tools with known behaviour for tests.")
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        catalog::page(self.current_tools(), cursor)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let name = request.name.as_ref();
        let result = match name {
            "echo" => text_result(arg::<String>(&args, name, "text")?),
            "add" => {
                let a: i64 = arg(&args, name, "a")?;
                let b: i64 = arg(&args, name, "b")?;
                match a.checked_add(b) {
                    Some(sum) => text_result(sum.to_string()),
                    None => error_result(format!("{a} + {b} does not fit in 64 bits")),
                }
            }
            "write_note" => {
                let text: String = arg(&args, name, "text")?;
                write_note(&text)
            }
            "slow" => self.slow(&args, &context).await?,
            "fail" => error_result("it failed on purpose"),
            "exit_now" => std::process::exit(3),
            "freeze" => {
                append_event("freezing").map_err(|e| ErrorData::internal_error(e, None))?;
                // SAFETY: signals this very process; it stays stopped until killed.
                unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
                // The group stop reaches this worker thread a moment after kill() returns; were
                // it to answer in that gap the server would not look hung. It never answers.
                std::future::pending::<()>().await;
                error_result("thawed")
            }
            "picture" => CallToolResult::success(vec![
                ContentBlock::image(TINY_PNG, "image/png"),
                ContentBlock::text("a 1x1 picture"),
            ]),
            "env_names" => {
                let mut names: Vec<String> = std::env::vars_os()
                    .map(|(key, _)| key.to_string_lossy().into_owned())
                    .collect();
                names.sort();
                text_result(names.join("\n"))
            }
            "big" => {
                let chars: u64 = arg(&args, name, "chars")?;
                if chars > BIG_LIMIT {
                    return Err(ErrorData::invalid_params(
                        format!("tool `big`: `chars` is {chars}, more than the limit {BIG_LIMIT}"),
                        None,
                    ));
                }
                // Digits cycling 0-9, so a reader can tell where a clipped text was cut.
                text_result(
                    (0..chars)
                        .map(|i| char::from(b'0' + (i % 10) as u8))
                        .collect::<String>(),
                )
            }
            "unlock" => self.unlock(&context).await,
            catalog::LATE_TOOL if self.shared.unlocked.load(Ordering::SeqCst) => {
                text_result("late")
            }
            numbered if catalog::is_numbered(numbered, self.shared.many) => {
                text_result(arg::<String>(&args, name, "text")?)
            }
            unknown => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{unknown}`"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        let Some(id) = notification.request_id else {
            return;
        };
        if let Some(notice) = self.notices().remove(&id) {
            let _ = notice.send(());
        }
    }
}

/// The argument `field` of tool `tool`, or an invalid-params error naming what is wrong.
fn arg<T: DeserializeOwned>(args: &JsonObject, tool: &str, field: &str) -> Result<T, ErrorData> {
    let value = args.get(field).ok_or_else(|| {
        ErrorData::invalid_params(
            format!("tool `{tool}`: argument `{field}` is missing"),
            None,
        )
    })?;
    serde_json::from_value(value.clone()).map_err(|error| {
        ErrorData::invalid_params(
            format!("tool `{tool}`: argument `{field}` is not valid: {error}"),
            None,
        )
    })
}

fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn error_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

fn write_note(text: &str) -> CallToolResult {
    if text.contains('\n') {
        return error_result("a note is one line: the text must not contain a newline");
    }
    let Some(path) = std::env::var_os("MCP_TEST_NOTES") else {
        return error_result("MCP_TEST_NOTES is not set: there is no notes file to write to");
    };
    match append_line(&path, text) {
        Ok(()) => text_result("noted"),
        Err(error) => error_result(format!(
            "cannot append to the notes file {}: {error}",
            std::path::Path::new(&path).display()
        )),
    }
}

/// Appends `line` to the events file when env `MCP_TEST_EVENTS` names one.
fn append_event(line: &str) -> Result<(), String> {
    let Some(path) = std::env::var_os("MCP_TEST_EVENTS") else {
        return Ok(());
    };
    append_line(&path, line).map_err(|error| {
        format!(
            "cannot append to the events file {}: {error}",
            std::path::Path::new(&path).display()
        )
    })
}

/// One write per line, so lines from concurrent calls never interleave.
fn append_line(path: &std::ffi::OsStr, line: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(format!("{line}\n").as_bytes())
}
