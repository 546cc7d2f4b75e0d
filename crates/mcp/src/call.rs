//! One call of a server's tool from a Bot's turn. An effectful tool's start is already in the
//! ledger when this runs (the kernel records it); this sends the call, and settles what the
//! model reads: the result, a tool error, or "not known" when the call was sent and then timed
//! out, lost its server, or was cut off by a stop — the stop also tells the server the call is
//! cancelled. Every call, read-only or not, is recorded in the run's MCP call records.

use crate::result::{RESULT_CHARS, render};
use crate::server::Slot;
use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, PingRequest,
    ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::Value;
use std::sync::Weak;
use std::time::{Duration, Instant};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolReply};
use troupe_store::McpCallRecord;

/// How long a server has, after a cancelled call, to answer a ping before it is taken for hung
/// and started again.
pub const HUNG_AFTER: Duration = Duration::from_secs(5);

pub(crate) struct McpTool {
    pub slot: Weak<Slot>,
    pub server: String,
    pub tool: String,
    pub read_only: bool,
    pub timeout: Duration,
}

/// How a call ended, for its record.
struct Outcome {
    reply: ToolReply,
    ok: bool,
    error: Option<String>,
}

impl Outcome {
    fn done(reply: ToolReply) -> Self {
        let ok = !reply.is_error;
        let error = reply.is_error.then(|| reply.content.clone());
        Outcome { reply, ok, error }
    }
}

#[async_trait]
impl ToolHandler for McpTool {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let began = Instant::now();
        let out = self.send(ctx, arguments).await;
        let record = McpCallRecord {
            run_id: ctx.run_id,
            call_id: ctx.call_id.clone(),
            server: self.server.clone(),
            tool: self.tool.clone(),
            read_only: self.read_only,
            duration_ms: began.elapsed().as_millis() as u64,
            ok: out.ok,
            error: out.error,
            result: out.reply.content.clone(),
        };
        // Queued, so it can share a commit with other writes (a sync less at full durability).
        let thread = ctx.thread.id;
        if let Err(e) = ctx
            .store
            .write_async(move |tx| tx.record_mcp_call(thread, &record))
            .await
        {
            tracing::warn!(server = %self.server, tool = %self.tool, error = %e, "could not record an MCP call");
        }
        out.reply
    }
}

impl McpTool {
    async fn send(&self, ctx: &ToolCallContext, arguments: &str) -> Outcome {
        let args = match serde_json::from_str::<Value>(arguments) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Outcome::done(ToolReply::error(format!(
                    "{}: arguments must be a JSON object",
                    self.tool
                )));
            }
            Err(e) => {
                return Outcome::done(ToolReply::error(format!(
                    "{}: {}",
                    self.tool,
                    troupe_tools::not_json(arguments, &e)
                )));
            }
        };
        let Some(slot) = self.slot.upgrade() else {
            return Outcome::done(ToolReply::error(format!(
                "the MCP server {} was removed; its tools are gone",
                self.server
            )));
        };
        let Some(live) = slot.live() else {
            let status = slot.status();
            let why = status.last_error.unwrap_or_else(|| "it is starting".into());
            return Outcome::done(ToolReply::error(format!(
                "the MCP server {} is not ready ({why}); nothing was sent",
                self.server
            )));
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(self.tool.clone()).with_arguments(args),
        ));
        let handle = match live
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(h) => h,
            Err(e) => {
                return Outcome::done(ToolReply::error(format!(
                    "the call could not be sent to the MCP server {}: {e}",
                    self.server
                )));
            }
        };
        let id = handle.id.clone();
        let peer = handle.peer.clone();
        let cancel = |reason: &'static str| {
            let peer = peer.clone();
            let id = id.clone();
            async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some(reason.into()),
                    ))
                    .await;
            }
        };
        tokio::select! {
            answer = handle.await_response() => self.answered(answer),
            () = tokio::time::sleep(self.timeout) => {
                cancel("timed out").await;
                let text = format!(
                    "{} timed out after {} s and was cancelled; whether it acted is not known",
                    self.tool,
                    self.timeout.as_secs()
                );
                Outcome { reply: ToolReply::unknown(text.clone()), ok: false, error: Some(text) }
            }
            () = ctx.cancel.cancelled() => {
                cancel("the run was stopped").await;
                // A server that does not answer after the cancel is hung: start it again.
                let slot = slot.clone();
                let peer = peer.clone();
                tokio::spawn(async move {
                    let ping = ClientRequest::PingRequest(PingRequest {
                        method: Default::default(),
                        extensions: Default::default(),
                    });
                    let alive = match peer
                        .send_request_with_option(ping, PeerRequestOptions::with_timeout(HUNG_AFTER))
                        .await
                    {
                        Ok(h) => h.await_response().await.is_ok(),
                        Err(_) => false,
                    };
                    if !alive {
                        tracing::warn!(server = %slot.def.name, "MCP server did not answer after a cancelled call; starting it again");
                        slot.restart();
                    }
                });
                let text = format!("{} was cut off by a stop; whether it acted is not known", self.tool);
                Outcome { reply: ToolReply::unknown(text.clone()), ok: false, error: Some(text) }
            }
        }
    }

    fn answered(&self, answer: Result<ServerResult, ServiceError>) -> Outcome {
        match answer {
            Ok(ServerResult::CallToolResult(result)) => {
                let json = serde_json::to_value(&result).unwrap_or(Value::Null);
                let r = render(&json, RESULT_CHARS);
                let reply = if r.is_error {
                    ToolReply::error(r.text)
                } else {
                    ToolReply::ok(r.text)
                };
                Outcome::done(reply)
            }
            Ok(_) => {
                let text = format!(
                    "{}: the server answered with something other than a tool result",
                    self.tool
                );
                Outcome {
                    reply: ToolReply::unknown(text.clone()),
                    ok: false,
                    error: Some(text),
                }
            }
            // The server refused the request itself (unknown tool, bad arguments): it did not act.
            Err(ServiceError::McpError(e)) => Outcome::done(ToolReply::error(format!(
                "the MCP server {} refused the call: {}",
                self.server, e.message
            ))),
            Err(e) => {
                let text = format!(
                    "{} was sent but no answer came ({e}); whether it acted is not known",
                    self.tool
                );
                Outcome {
                    reply: ToolReply::unknown(text.clone()),
                    ok: false,
                    error: Some(text),
                }
            }
        }
    }
}
