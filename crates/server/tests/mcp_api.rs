//! The MCP server routes over HTTP: `GET/POST /v1/mcp-servers`, `GET/PATCH/DELETE
//! /v1/mcp-servers/{name}`, `POST /v1/mcp-servers/{name}/restart` and a turn's MCP calls at
//! `GET /v1/turns/{id}/mcp-calls`, against real server processes.

mod support;

use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;
use support::TestApp;
use troupe_mcp::State;

/// The in-repo MCP test server, built beside this test's executable.
fn test_server() -> String {
    let exe = std::env::current_exe().unwrap();
    // target/debug/deps/mcp_api-… → target/debug/examples/mcp_test_server
    let path: PathBuf = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|debug| debug.join("examples").join("mcp_test_server"))
        .unwrap();
    assert!(
        path.is_file(),
        "the MCP test server is not built at {}: run `cargo build -p troupe-mcp --examples` first",
        path.display()
    );
    path.display().to_string()
}

/// The servers the database holds, by name.
fn stored(app: &TestApp) -> Vec<(String, Value)> {
    app.state
        .collab
        .store()
        .read(|tx| tx.mcp_servers())
        .unwrap()
        .into_iter()
        .map(|r| (r.name, r.definition))
        .collect()
}

async fn names(app: &TestApp) -> Vec<String> {
    app.get("/v1/mcp-servers")
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["definition"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn bad_definition_refused_422() {
    let app = TestApp::start().await;
    let cases = [
        ("name", json!({"name": "Bad Name", "command": "true"})),
        ("name", json!({"name": "x".repeat(33), "command": "true"})),
        (
            "url",
            json!({"name": "web", "url": "ftp://example.com/mcp"}),
        ),
        ("url", json!({"name": "web", "url": "localhost:8080/mcp"})),
        ("command", json!({"name": "none"})),
        (
            "command",
            json!({"name": "both", "command": "true", "url": "http://127.0.0.1:9/mcp"}),
        ),
        (
            "tool_timeout_sec",
            json!({"name": "t", "command": "true", "tool_timeout_sec": 0}),
        ),
        (
            "tool_timeout_sec",
            json!({"name": "t", "command": "true", "tool_timeout_sec": 1801}),
        ),
        (
            "env",
            json!({"name": "t", "command": "true", "env_vars": ["TROUPE_TOKEN"]}),
        ),
    ];
    for (field, body) in cases {
        let r = app.post("/v1/mcp-servers", body.clone()).await;
        r.expect_error(422, "invalid");
        assert!(
            r.message().starts_with(&format!("{field}: ")),
            "{body} should be refused naming {field}: {}",
            r.text
        );
    }
    let r = app
        .post(
            "/v1/mcp-servers",
            json!({"name": "t", "command": "true", "colour": "red"}),
        )
        .await;
    r.expect_error(422, "invalid");
    assert!(r.message().contains("colour"), "{}", r.text);
    // A body that is not an object, and one that is not JSON.
    app.post("/v1/mcp-servers", json!(["t"]))
        .await
        .expect_error(422, "invalid");
    app.post_raw("/v1/mcp-servers", "{\"name\":")
        .await
        .expect_error(400, "bad_request");

    assert!(names(&app).await.is_empty());
    assert!(stored(&app).is_empty(), "a refused definition was stored");
}

#[tokio::test]
async fn servers_are_added_listed_read_changed_and_removed() {
    let app = TestApp::start().await;
    let def = json!({"name": "quiet", "command": "sh", "args": ["-c", "exit 0"], "enabled": false});
    let added = app.post("/v1/mcp-servers", def.clone()).await.expect(201);
    assert_eq!(added["definition"]["name"], "quiet");
    assert_eq!(added["definition"]["tool_timeout_sec"], 120, "{added}");
    assert_eq!(added["definition"]["enabled"], false);
    assert_eq!(added["status"]["state"], "disabled", "{added}");
    assert_eq!(added["status"]["tool_count"], 0);

    app.post("/v1/mcp-servers", def)
        .await
        .expect_error(409, "exists");
    assert_eq!(names(&app).await, ["quiet"]);
    let got = app.get("/v1/mcp-servers/quiet").await.expect(200);
    assert_eq!(got["definition"], added["definition"]);

    // A disabled server is not started again: that is a conflict, not bad input.
    app.post("/v1/mcp-servers/quiet/restart", json!({}))
        .await
        .expect_error(409, "disabled");

    let changed = app
        .patch(
            "/v1/mcp-servers/quiet",
            json!({"tool_timeout_sec": 30, "bots": ["Ada"]}),
        )
        .await
        .expect(200);
    assert_eq!(changed["definition"]["tool_timeout_sec"], 30);
    assert_eq!(changed["definition"]["bots"], json!(["Ada"]));
    assert_eq!(changed["status"]["state"], "disabled");

    // A bad change names its field and changes nothing.
    let r = app
        .patch("/v1/mcp-servers/quiet", json!({"tool_timeout_sec": 0}))
        .await;
    r.expect_error(422, "invalid");
    assert!(r.message().starts_with("tool_timeout_sec: "), "{}", r.text);
    let r = app
        .patch("/v1/mcp-servers/quiet", json!({"name": "loud"}))
        .await;
    r.expect_error(422, "invalid");
    assert!(r.message().starts_with("name: "), "{}", r.text);
    let r = app
        .patch(
            "/v1/mcp-servers/quiet",
            json!({"url": "http://127.0.0.1:9/mcp"}),
        )
        .await;
    r.expect_error(422, "invalid");
    assert!(r.message().starts_with("command: "), "{}", r.text);
    assert_eq!(
        app.get("/v1/mcp-servers/quiet").await.expect(200)["definition"],
        changed["definition"]
    );

    // `null` clears a field back to its default.
    let cleared = app
        .patch("/v1/mcp-servers/quiet", json!({"bots": null}))
        .await
        .expect(200);
    assert!(cleared["definition"].get("bots").is_none(), "{cleared}");
    let rows = stored(&app);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, "quiet");
    assert_eq!(rows[0].1["tool_timeout_sec"], 30, "{:?}", rows[0].1);
    assert!(rows[0].1.get("bots").is_none(), "{:?}", rows[0].1);

    for missing in [
        app.get("/v1/mcp-servers/nope").await,
        app.patch("/v1/mcp-servers/nope", json!({"enabled": true}))
            .await,
        app.delete("/v1/mcp-servers/nope").await,
        app.post("/v1/mcp-servers/nope/restart", json!({})).await,
    ] {
        missing.expect_error(404, "not_found");
        assert!(missing.message().contains("nope"), "{}", missing.text);
    }

    let r = app.delete("/v1/mcp-servers/quiet").await;
    assert_eq!(r.status.as_u16(), 204, "{}", r.text);
    app.get("/v1/mcp-servers/quiet")
        .await
        .expect_error(404, "not_found");
    assert!(names(&app).await.is_empty());
    assert!(stored(&app).is_empty());
    app.delete("/v1/mcp-servers/quiet")
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn a_server_that_cannot_start_shows_failed_with_its_stderr() {
    let app = TestApp::start().await;
    app.post(
        "/v1/mcp-servers",
        json!({"name": "broken", "command": "sh", "args": ["-c", "echo cannot start >&2; exit 2"]}),
    )
    .await
    .expect(201);
    app.state
        .mcp
        .wait_for("broken", Duration::from_secs(10), |s| {
            s.state == State::Failed
        })
        .await
        .unwrap();
    let got = app.get("/v1/mcp-servers/broken").await.expect(200);
    let status = &got["status"];
    assert_eq!(status["state"], "failed", "{got}");
    assert!(
        status["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("cannot start"),
        "{got}"
    );
    assert!(
        !status["last_error"].as_str().unwrap_or("").is_empty(),
        "{got}"
    );
    assert_eq!(status["tool_count"], 0);
    assert!(status["tools"].as_array().unwrap().is_empty());
    app.state.mcp.shutdown().await;
}

#[tokio::test]
async fn a_ready_server_shows_its_tools_and_a_turn_calls_one() {
    let app = TestApp::start().await;
    let added = app
        .post(
            "/v1/mcp-servers",
            json!({"name": "probe", "command": test_server()}),
        )
        .await
        .expect(201);
    assert_ne!(added["status"]["state"], "disabled", "{added}");
    app.state
        .mcp
        .wait_ready("probe", Duration::from_secs(20))
        .await
        .unwrap();

    let got = app.get("/v1/mcp-servers/probe").await.expect(200);
    let status = &got["status"];
    assert_eq!(status["state"], "ready", "{got}");
    let tools = status["tools"].as_array().unwrap();
    assert_eq!(status["tool_count"], tools.len(), "{got}");
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} not offered: {got}"))
            .clone()
    };
    let echo = tool("probe__echo");
    assert_eq!(echo["tool"], "echo");
    assert_eq!(echo["read_only"], true);
    assert!(echo["input_schema"].is_object(), "{echo}");
    assert_eq!(tool("probe__write_note")["read_only"], false);
    assert_eq!(tool("probe__exit_now")["read_only"], false);
    assert_eq!(tool("probe__add")["read_only"], true);
    // The list shows the same server.
    let listed = app.get("/v1/mcp-servers").await.expect(200);
    assert_eq!(listed[0]["status"]["state"], "ready", "{listed}");

    // A Bot's turn is offered the server's tools and its call is in the turn's MCP calls.
    let bot = app
        .scripted_bot(
            "Prober",
            json!({"steps": [
                {"text": "Asking it.", "tool_calls": [{"name": "probe__echo", "arguments": {"text": "hello mcp"}}]},
                {"text": "It echoed."}
            ]}),
        )
        .await;
    let s = app.direct(bot).await;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "echo please"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "It echoed.")
        .await;
    app.settle(s).await;
    let turns = app
        .get(&format!("/v1/turns?session_id={s}"))
        .await
        .expect(200);
    let id = turns[0]["id"].as_i64().unwrap();
    let calls = app
        .get(&format!("/v1/turns/{id}/mcp-calls"))
        .await
        .expect(200);
    let calls = calls.as_array().unwrap();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["run_id"], id);
    assert_eq!(calls[0]["server"], "probe");
    assert_eq!(calls[0]["tool"], "echo");
    assert_eq!(calls[0]["read_only"], true);
    assert_eq!(calls[0]["ok"], true, "{:?}", calls[0]);
    assert!(
        calls[0]["result"].as_str().unwrap().contains("hello mcp"),
        "{:?}",
        calls[0]
    );
    // Not a command record.
    assert_eq!(
        app.get(&format!("/v1/turns/{id}/commands"))
            .await
            .expect(200),
        json!([])
    );

    // Restart: accepted, and the server comes back with its tools.
    let r = app.post("/v1/mcp-servers/probe/restart", json!({})).await;
    assert_eq!(r.status.as_u16(), 202, "{}", r.text);
    assert_eq!(r.body["definition"]["name"], "probe");
    app.state
        .mcp
        .wait_ready("probe", Duration::from_secs(20))
        .await
        .unwrap();

    // Disabling it ends its process and offers no tools.
    let off = app
        .patch("/v1/mcp-servers/probe", json!({"enabled": false}))
        .await
        .expect(200);
    assert_eq!(off["definition"]["enabled"], false);
    assert_eq!(off["status"]["state"], "disabled", "{off}");
    assert_eq!(off["status"]["tool_count"], 0, "{off}");
    app.state.mcp.shutdown().await;
}

#[tokio::test]
async fn a_turns_mcp_calls_need_the_turn() {
    let app = TestApp::start().await;
    app.get("/v1/turns/987654/mcp-calls")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/turns/abc/mcp-calls")
        .await
        .expect_error(400, "bad_request");

    // A turn that called no MCP tool has none.
    let bot = app
        .scripted_bot("Plain", json!({"steps": [{"text": "ok"}]}))
        .await;
    let s = app.direct(bot).await;
    app.post(&format!("/v1/sessions/{s}/messages"), json!({"body": "hi"}))
        .await
        .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "ok").await;
    app.settle(s).await;
    let turns = app
        .get(&format!("/v1/turns?session_id={s}"))
        .await
        .expect(200);
    let id = turns[0]["id"].as_i64().unwrap();
    assert_eq!(
        app.get(&format!("/v1/turns/{id}/mcp-calls"))
            .await
            .expect(200),
        json!([])
    );
    assert_eq!(
        app.get(&format!("/v1/turns/run_{id}/mcp-calls"))
            .await
            .expect(200),
        json!([])
    );
}

/// The daemon's state on `data`, with the `default` role's key in `CONFIG_MODEL_API_KEY`.
async fn boot(data: &std::path::Path) -> troupe_server::AppState {
    let secrets: troupe_engine::models::SecretSource = std::sync::Arc::new(|_| None);
    let mut roles = troupe_engine::RoleTable::new(secrets.clone());
    roles
        .set_role("default", endpoint("CONFIG_MODEL_API_KEY"))
        .unwrap();
    troupe_server::bootstrap::build_state(
        data,
        troupe_server::bootstrap::BootOptions {
            database: Some(troupe_store::testing::database_url_in(data)),
            ..troupe_server::bootstrap::BootOptions::new(roles, secrets)
        },
    )
    .await
    .unwrap()
    .state
}

fn endpoint(key: &str) -> troupe_core::thread::EndpointSpec {
    troupe_core::thread::EndpointSpec {
        kind: "openai".into(),
        base_url: Some("http://127.0.0.1:9/v1".into()),
        model: "m".into(),
        api_key_env: Some(key.into()),
        script: None,
        takes_pictures: false,
        thinking_levels: Vec::new(),
        max_output_tokens: None,
    }
}

#[tokio::test]
async fn no_definition_passes_a_model_endpoints_key_variable() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // A role and a Bot whose keys are set through the API, then a restart: the keys the
    // endpoints read at boot are the config file's role's and these.
    let first = boot(&data).await;
    first
        .collab
        .set_role("reading", endpoint("STORED_ROLE_API_KEY"))
        .unwrap();
    first
        .collab
        .create_bot(troupe_collab::NewBotRequest {
            name: "Keyed".into(),
            persona: None,
            endpoint: Some(endpoint("BOT_MODEL_API_KEY")),
        })
        .unwrap();
    first.shutdown.cancel();
    first.mcp.shutdown().await;
    drop(first);

    let state = boot(&data).await;
    assert!(data.join("mcp").is_dir(), "the servers' directory is made");
    for key in [
        "CONFIG_MODEL_API_KEY",
        "STORED_ROLE_API_KEY",
        "BOT_MODEL_API_KEY",
    ] {
        let def = troupe_mcp::ServerDef::from_json(
            &json!({"name": "leaky", "command": "true", "env_vars": [key], "enabled": false}),
        )
        .unwrap();
        match state.mcp.add(def) {
            Err(troupe_mcp::McpError::Invalid(e)) => {
                assert_eq!(e.field, "env_vars", "{e}");
                assert!(e.message.contains(key), "{e}");
            }
            other => panic!("{key} was let through: {other:?}"),
        }
    }
    let def = troupe_mcp::ServerDef::from_json(
        &json!({"name": "fine", "command": "true", "env_vars": ["GITHUB_TOKEN"], "enabled": false}),
    )
    .unwrap();
    state.mcp.add(def).unwrap();
    assert_eq!(state.mcp.list().len(), 1);

    // A key set while the daemon runs is protected at once, and no key is sent as a bearer token.
    state
        .collab
        .set_role("judgement", endpoint("LATE_ROLE_API_KEY"))
        .unwrap();
    let late = troupe_mcp::ServerDef::from_json(
        &json!({"name": "late", "command": "true", "env_vars": ["LATE_ROLE_API_KEY"], "enabled": false}),
    )
    .unwrap();
    assert!(
        matches!(state.mcp.add(late), Err(troupe_mcp::McpError::Invalid(e)) if e.field == "env_vars")
    );
    let bearer = troupe_mcp::ServerDef::from_json(&json!({
        "name": "sender", "url": "http://127.0.0.1:9/mcp",
        "bearer_token_env_var": "STORED_ROLE_API_KEY", "enabled": false
    }))
    .unwrap();
    match state.mcp.add(bearer) {
        Err(troupe_mcp::McpError::Invalid(e)) => assert_eq!(e.field, "bearer_token_env_var", "{e}"),
        other => panic!("a model key was let through as a bearer token: {other:?}"),
    }
    assert_eq!(state.mcp.list().len(), 1);
    state.shutdown.cancel();
}
