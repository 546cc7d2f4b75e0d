//! Issue 19's scenarios through the kernel: a Bot's turn calls the in-repo test server's tools
//! over stdio, with the ledger, guards, stops, timeouts, crashes and re-listing as the rules say.

mod support;

use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{World, calls, text, wait_for_line, world};
use troupe_core::effect::EffectOutcome;
use troupe_engine::StopMode;
use troupe_engine::extension::{EffectGuard, GuardContext, Refusal};
use troupe_mcp::State;

fn effects(w: &World, t: troupe_core::ThreadId) -> Vec<troupe_store::EffectRecord> {
    w.engine
        .store()
        .read(|tx| tx.effects_for_thread(t))
        .unwrap()
}

#[tokio::test]
async fn mcp_stdio_tool_call_reaches_model() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({}))).await;
    let t = w.thread("ada");
    w.model
        .push(calls(&[("t__echo", json!({"text": "hello from mcp"}))]));
    w.model.push(text("it said hello"));
    let run = w.turn(t, "ask the server").await;

    let first = &w.model.requests()[0];
    let echo = first.tools.iter().find(|s| s.name == "t__echo").unwrap();
    assert_eq!(echo.parameters["required"], json!(["text"]));
    let second = w.model.last();
    assert!(World::last_message(&second).contains("hello from mcp"));

    let records = w.engine.store().read(|tx| tx.mcp_calls(run)).unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!((r.server.as_str(), r.tool.as_str()), ("t", "echo"));
    assert!(r.ok && r.read_only && r.error.is_none());
    assert!(r.result.contains("hello from mcp"));
    // A read-only tool is no effect: nothing in the ledger, and no command record either.
    assert!(effects(&w, t).is_empty());
    assert!(
        w.engine
            .store()
            .read(|tx| tx.commands(run))
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn an_effectful_mcp_call_is_an_effect_in_the_ledger() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({}))).await;
    let t = w.thread("ada");
    w.model
        .push(calls(&[("t__write_note", json!({"text": "first"}))]));
    w.turn(t, "note it").await;
    let e = effects(&w, t);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].tool, "t__write_note");
    assert_eq!(e[0].outcome, EffectOutcome::Succeeded);
    assert_eq!(std::fs::read_to_string(&w.notes).unwrap(), "first\n");
}

/// Refuses every effect, as a hold's guard or an unchosen desk segment's does.
struct NoEffects;
impl EffectGuard for NoEffects {
    fn name(&self) -> &str {
        "hold"
    }
    fn check(&self, _ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        Err("the person's hold is in force".into())
    }
}

#[tokio::test]
async fn read_only_tool_allowed_where_effects_refused() {
    let w = world(|b| b.guard(Arc::new(NoEffects)));
    w.add_ready(w.server("t", json!({}))).await;
    let t = w.thread("ada");
    w.model.push(calls(&[("t__add", json!({"a": 2, "b": 3}))]));
    w.turn(t, "add").await;
    assert!(World::last_message(&w.model.last()).contains('5'));
}

#[tokio::test]
async fn effectful_tool_refused_where_effects_refused() {
    let w = world(|b| b.guard(Arc::new(NoEffects)));
    w.add_ready(w.server("t", json!({}))).await;
    let t = w.thread("ada");
    w.model
        .push(calls(&[("t__write_note", json!({"text": "blocked"}))]));
    let run = w.turn(t, "note it").await;
    let seen = World::last_message(&w.model.last());
    assert!(seen.contains("refused by hold"), "{seen}");
    assert!(!w.notes.exists(), "the call never reached the server");
    assert!(
        w.engine
            .store()
            .read(|tx| tx.mcp_calls(run))
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn stop_cancels_inflight_mcp_call() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({}))).await;
    let t = w.thread("ada");
    w.model.push(calls(&[("t__slow", json!({"secs": 120}))]));
    w.engine
        .deliver(t, troupe_core::inbox::Delivery::user_task("wait"))
        .await
        .unwrap();
    wait_for_line(&w.events, "started slow").await;
    let stopped_at = Instant::now();
    w.engine.stop(t, StopMode::User).await.unwrap();
    w.engine.wait_idle(t).await;
    let waited = stopped_at.elapsed();
    wait_for_line(&w.events, "cancelled").await;
    assert!(
        waited < Duration::from_secs(10),
        "the run ended within the stop's bound ({waited:?})"
    );
    let e = effects(&w, t);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].outcome, EffectOutcome::Unknown);
    // The server answered the cancel and stays up for the next call.
    assert_eq!(w.mcp.get("t").unwrap().status.state, State::Ready);
}

#[tokio::test]
async fn timeout_gives_unknown_and_tool_error() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({"tool_timeout_sec": 1})))
        .await;
    let t = w.thread("ada");
    w.model.push(calls(&[("t__slow", json!({"secs": 60}))]));
    let run = w.turn(t, "wait").await;
    let seen = World::last_message(&w.model.last());
    assert!(seen.contains("timed out after 1 s"), "{seen}");
    assert!(seen.contains("is_error: true"), "{seen}");
    assert_eq!(effects(&w, t)[0].outcome, EffectOutcome::Unknown);
    wait_for_line(&w.events, "cancelled").await;
    let r = &w.engine.store().read(|tx| tx.mcp_calls(run)).unwrap()[0];
    assert!(!r.ok && r.error.as_deref().unwrap().contains("timed out"));
}

#[tokio::test]
async fn server_crash_restarts_with_backoff_and_tools_return() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({}))).await;
    let t = w.thread("ada");
    w.model.push(calls(&[("t__exit_now", json!({}))]));
    w.turn(t, "crash it").await;
    let seen = World::last_message(&w.model.last());
    assert!(seen.contains("whether it acted is not known"), "{seen}");
    assert_eq!(effects(&w, t)[0].outcome, EffectOutcome::Unknown);

    let failed = w
        .mcp
        .wait_for("t", Duration::from_secs(10), |s| {
            s.state == State::Failed || s.restarts > 0
        })
        .await
        .unwrap();
    let since = Instant::now();
    let back = w
        .mcp
        .wait_for("t", Duration::from_secs(20), |s| {
            s.state == State::Ready && s.restarts >= 1
        })
        .await
        .unwrap();
    assert_eq!(back.restarts, 1);
    if failed.state == State::Failed {
        assert!(failed.last_error.is_some());
        // The first start again waits the first backoff step.
        assert!(
            since.elapsed() >= Duration::from_millis(800),
            "{:?}",
            since.elapsed()
        );
    }
    w.model.push(calls(&[("t__echo", json!({"text": "back"}))]));
    w.turn(t, "again").await;
    let seen = World::last_message(&w.model.last());
    assert!(seen.contains("back"), "{seen}");
}

#[tokio::test]
async fn list_changed_relists_tools() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({}))).await;
    let t = w.thread("ada");
    w.model.push(calls(&[("t__unlock", json!({}))]));
    w.turn(t, "unlock").await;
    assert!(
        !w.model.requests()[0]
            .tools
            .iter()
            .any(|s| s.name == "t__late_tool")
    );
    w.mcp
        .wait_for("t", Duration::from_secs(10), |s| {
            s.tools.iter().any(|x| x.name == "t__late_tool")
        })
        .await
        .unwrap();
    w.model.push(calls(&[("t__late_tool", json!({}))]));
    w.turn(t, "use the new one").await;
    let reqs = w.model.requests();
    assert!(
        reqs[reqs.len() - 2]
            .tools
            .iter()
            .any(|s| s.name == "t__late_tool")
    );
    assert!(World::last_message(&w.model.last()).contains("late"));
}

#[tokio::test]
async fn secrets_not_in_server_env() {
    // SAFETY: set once, before the server starts; no other test reads these names.
    unsafe {
        std::env::set_var("OPENAI_API_KEY", "sk-not-for-servers");
        std::env::set_var("TROUPE_TOKEN", "daemon-only");
        std::env::set_var("MCP_GIVEN_VAR", "passed on purpose");
    }
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({"env_vars": ["MCP_GIVEN_VAR"]})))
        .await;
    let t = w.thread("ada");
    w.model.push(calls(&[("t__env_names", json!({}))]));
    w.turn(t, "what do you see").await;
    let seen = World::last_message(&w.model.last());
    assert!(seen.contains("MCP_GIVEN_VAR"), "{seen}");
    assert!(seen.contains("MCP_TEST_NOTES"), "{seen}");
    assert!(!seen.contains("OPENAI_API_KEY"), "{seen}");
    assert!(!seen.contains("TROUPE_TOKEN"), "{seen}");
}

#[tokio::test]
async fn a_server_that_fails_to_start_is_named_in_the_turn_and_its_tools_are_absent() {
    let w = world(|b| b);
    w.add_ready(w.server("good", json!({}))).await;
    w.mcp
        .add(w.server("bad", json!({"env": {"MCP_TEST_FAIL_START": "1"}})))
        .unwrap();
    let failed = w
        .mcp
        .wait_for("bad", Duration::from_secs(10), |s| s.state == State::Failed)
        .await
        .unwrap();
    assert!(
        w.mcp
            .get("bad")
            .unwrap()
            .status
            .stderr_tail
            .contains("told to fail")
    );
    assert!(failed.last_error.is_some());
    let t = w.thread("ada");
    w.turn(t, "hello").await;
    let req = w.model.last();
    assert!(
        req.system.contains("The MCP server bad is unavailable"),
        "{}",
        req.system
    );
    assert!(!req.tools.iter().any(|s| s.name.starts_with("bad__")));
    assert!(req.tools.iter().any(|s| s.name == "good__echo"));
}

#[tokio::test]
async fn a_servers_tools_reach_only_the_bots_it_allows() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({"bots": ["ada"]}))).await;
    let ada = w.thread("ada");
    let bob = w.thread("bob");
    w.turn(ada, "hi").await;
    assert!(w.model.last().tools.iter().any(|s| s.name == "t__echo"));
    w.turn(bob, "hi").await;
    assert!(
        !w.model
            .last()
            .tools
            .iter()
            .any(|s| s.name.starts_with("t__"))
    );
}

#[tokio::test]
async fn images_are_summarised_and_big_results_clipped() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({}))).await;
    let t = w.thread("ada");
    w.model.push(calls(&[("t__picture", json!({}))]));
    w.turn(t, "picture").await;
    let seen = World::last_message(&w.model.last());
    assert!(seen.contains("[image: image/png,"), "{seen}");
    w.model.push(calls(&[("t__big", json!({"chars": 50000}))]));
    w.turn(t, "big").await;
    let seen = World::last_message(&w.model.last());
    assert!(
        seen.contains("[result clipped: showing the first 4000 of 50000 characters]"),
        "{seen}"
    );
}

#[tokio::test]
async fn removing_a_server_ends_its_process_and_its_tools() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({}))).await;
    w.mcp.remove("t").unwrap();
    let t = w.thread("ada");
    w.turn(t, "hi").await;
    assert!(
        !w.model
            .last()
            .tools
            .iter()
            .any(|s| s.name.starts_with("t__"))
    );
    assert!(w.mcp.get("t").is_err());
    w.mcp.shutdown().await;
}

#[tokio::test]
async fn an_http_server_serves_a_turn_and_a_missing_token_variable_is_named() {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(support::test_server())
        .args(["--http", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().unwrap();
    let url = first.strip_prefix("listening on ").unwrap().to_string();
    // SAFETY: a name only this test uses, set before the server connects.
    unsafe { std::env::set_var("MCP_TEST_HTTP_TOKEN", "t0ken") };
    let w = world(|b| b);
    let def = troupe_mcp::ServerDef::from_json(&json!({
        "name": "web", "url": url, "bearer_token_env_var": "MCP_TEST_HTTP_TOKEN"
    }))
    .unwrap();
    w.add_ready(def).await;
    let t = w.thread("ada");
    w.model
        .push(calls(&[("web__add", json!({"a": 40, "b": 2}))]));
    w.turn(t, "add over http").await;
    let seen = World::last_message(&w.model.last());
    assert!(seen.contains("42"), "{seen}");

    let unset = troupe_mcp::ServerDef::from_json(&json!({
        "name": "web2", "url": url, "bearer_token_env_var": "MCP_TEST_NEVER_SET"
    }))
    .unwrap();
    w.mcp.add(unset).unwrap();
    let failed = w
        .mcp
        .wait_for("web2", Duration::from_secs(10), |s| {
            s.state == State::Failed
        })
        .await
        .unwrap();
    let why = failed.last_error.unwrap();
    assert!(why.contains("MCP_TEST_NEVER_SET is not set"), "{why}");
}

#[tokio::test]
async fn a_stdio_server_the_stop_leaves_hung_is_restarted() {
    let w = world(|b| b);
    w.add_ready(w.server("t", json!({}))).await;
    let t = w.thread("ada");
    w.model.push(calls(&[("t__freeze", json!({}))]));
    w.engine
        .deliver(t, troupe_core::inbox::Delivery::user_task("freeze"))
        .await
        .unwrap();
    wait_for_line(&w.events, "freezing").await;
    w.engine.stop(t, StopMode::User).await.unwrap();
    w.engine.wait_idle(t).await;
    // It answers no ping after the cancel, so it is started again (no backoff: asked for).
    let back = w
        .mcp
        .wait_for("t", Duration::from_secs(30), |s| {
            s.state == State::Ready && s.restarts >= 1
        })
        .await
        .unwrap();
    assert_eq!(back.restarts, 1);
    // The person's next line comes after the stop (it is what lets work go on past the
    // stopped call, whose outcome is unknown).
    w.clock.advance(1_000);
    w.model
        .push(calls(&[("t__echo", json!({"text": "thawed out"}))]));
    w.turn(t, "again").await;
    let seen: Vec<String> = w.model.requests().iter().map(World::last_message).collect();
    assert!(seen.last().unwrap().contains("thawed out"), "{seen:#?}");
}
