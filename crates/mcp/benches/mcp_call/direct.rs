//! The floor under the engine's figure: `echo` called straight through rmcp's client over the
//! same stdio transport to a fresh test server process, with no engine, store or model. What
//! the engine adds per MCP call beyond this is its own work (the tool source, the call record's
//! commit, the result rendering).

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;

/// `warmup` untimed calls, then `calls` timed ones; each call's round trip in nanoseconds.
pub async fn echo_round_trips(
    server: &Path,
    warmup: usize,
    calls: usize,
) -> Result<Vec<u64>, String> {
    let mut child = tokio::process::Command::new(server)
        .env_clear()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err("the test server's stdin or stdout could not be opened".into());
    };
    let service = ()
        .serve((stdout, stdin))
        .await
        .map_err(|e| format!("the test server did not initialize: {e}"))?;
    let peer = service.peer().clone();
    let mut times = Vec::with_capacity(calls);
    for i in 0..warmup + calls {
        let text = format!("step {i}");
        let Value::Object(args) = json!({ "text": text }) else {
            unreachable!("a JSON object literal")
        };
        let began = Instant::now();
        let result = peer
            .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
            .await
            .map_err(|e| format!("echo call {i}: {e}"))?;
        let took = began.elapsed().as_nanos() as u64;
        let said = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.as_str());
        if result.is_error == Some(true) || said != Some(text.as_str()) {
            return Err(format!("echo call {i} answered {result:?}"));
        }
        if i >= warmup {
            times.push(took);
        }
    }
    let _ = service.cancel().await;
    let _ = child.kill().await;
    Ok(times)
}
