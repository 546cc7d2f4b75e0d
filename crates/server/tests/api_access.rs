//! Cross-cutting API behaviour: bearer-token access, the body limit, unknown routes, and the
//! generated OpenAPI document.

mod support;

use serde_json::json;
use std::collections::BTreeSet;
use support::TestApp;

#[tokio::test]
async fn a_token_is_required_when_the_state_has_one() {
    let mut app = TestApp::start_with_token(Some("s3cret-token")).await;

    app.bearer = None;
    let r = app.get("/v1/bots").await;
    r.expect_error(401, "unauthorized");
    app.post("/v1/bots", json!({"name": "Sneaky"}))
        .await
        .expect_error(401, "unauthorized");
    app.get("/v1/openapi.json")
        .await
        .expect_error(401, "unauthorized");

    app.bearer = Some("s3cret-toke".into());
    app.get("/v1/bots").await.expect_error(401, "unauthorized");
    app.bearer = Some("S3CRET-TOKEN".into());
    app.get("/v1/bots").await.expect_error(401, "unauthorized");
    // Not a bearer header at all.
    app.bearer = None;
    let resp = app
        .client
        .get(app.url("/v1/bots"))
        .basic_auth("x", Some("s3cret-token"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);

    app.bearer = Some("s3cret-token".into());
    let bots = app.get("/v1/bots").await.expect(200);
    assert!(
        !bots
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["name"] == "Sneaky"),
        "a refused request wrote a Bot"
    );
    app.post("/v1/bots", json!({"name": "Welcome"}))
        .await
        .expect(201);
}

/// A channel's inbound webhook is public: a chat service's bridge has no bearer token, and the
/// route checks the body's signature instead. Nothing else is opened by it.
#[tokio::test]
async fn a_channel_inbound_route_is_public_and_checked_by_its_signature() {
    let mut app = TestApp::start_with_token(Some("s3cret-token")).await;
    app.bearer = None;
    let def = troupe_channels::ChannelDef {
        name: "acme".into(),
        kind: troupe_channels::ChannelKind::Webhook,
        bot: "Nobody".into(),
        secret_env: "ACME_SECRET".into(),
        outbound_url: "http://127.0.0.1:9/out".into(),
        filter: troupe_channels::FilterRules::default(),
        enabled: true,
    };
    app.state
        .channels
        .configure(&[def], &|_| Some("channel-secret".into()))
        .unwrap();
    let body = json!({"chat_id": "c", "chat_type": "group", "sender_id": "u",
                      "message_id": "m", "text": "hi", "mentioned": false});
    // No token and no signature: refused by the signature, not the token.
    app.post("/v1/channels/acme/inbound", body.clone())
        .await
        .expect_error(401, "bad_signature");
    // An unknown account is not found, token or not.
    app.post("/v1/channels/beta/inbound", body.clone())
        .await
        .expect_error(404, "not_found");
    // Signed: read (and filtered here: a group message without the required mention).
    let bytes = serde_json::to_vec(&body).unwrap();
    let r = app
        .client
        .post(app.url("/v1/channels/acme/inbound"))
        .header(
            troupe_channels::SIGNATURE_HEADER,
            troupe_channels::sign(b"channel-secret", &bytes),
        )
        .body(bytes)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 202);
    let v: serde_json::Value = r.json().await.unwrap();
    assert_eq!(v, json!({"accepted": false, "reason": "not_mentioned"}));
    // Every other route still wants the token.
    app.get("/v1/sessions")
        .await
        .expect_error(401, "unauthorized");
    let r = app
        .client
        .get(app.url("/v1/channels/acme/inbound"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401, "only POST is public");
}

#[tokio::test]
async fn without_a_token_no_header_is_needed() {
    let app = TestApp::start().await;
    assert!(app.bearer.is_none());
    app.get("/v1/bots").await.expect(200);
}

#[tokio::test]
async fn a_body_over_one_mib_is_413() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Big", json!({"steps": [{"text": "x"}]}))
        .await;
    let s = app.direct(bot).await;
    let big = "x".repeat(troupe_server::BODY_LIMIT + 1);
    let r = app
        .post(&format!("/v1/sessions/{s}/messages"), json!({"body": big}))
        .await;
    r.expect_error(413, "too_large");
    let r = app
        .post("/v1/bots", json!({"name": "Big2", "persona": big}))
        .await;
    r.expect_error(413, "too_large");
    assert_eq!(app.lines(s).await, Vec::<serde_json::Value>::new());
    // Just under the limit is not refused for its size (the line itself is then too long).
    let r = app
        .post(
            &format!("/v1/sessions/{s}/messages"),
            json!({"body": "y".repeat(300_000)}),
        )
        .await;
    r.expect_error(422, "invalid");
}

#[tokio::test]
async fn unknown_routes_are_404_in_the_api_shape() {
    let app = TestApp::start().await;
    app.get("/v1/nothing-here")
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn the_openapi_document_lists_every_route() {
    let app = TestApp::start().await;
    let doc = app.get("/v1/openapi.json").await.expect(200);
    let paths = doc["paths"].as_object().expect("paths");
    let mine: BTreeSet<(String, String)> = paths
        .iter()
        .filter(|(p, _)| !p.starts_with("/v1/events") && !p.contains("/events"))
        .flat_map(|(p, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .map(move |m| (p.clone(), m.clone()))
        })
        .collect();
    let expected: BTreeSet<(String, String)> = [
        ("/v1/bots", "get"),
        ("/v1/bots", "post"),
        ("/v1/bots/{id}", "get"),
        ("/v1/bots/{id}", "patch"),
        ("/v1/bots/{id}", "delete"),
        ("/v1/roles", "get"),
        ("/v1/roles/{role}", "put"),
        ("/v1/sessions", "get"),
        ("/v1/sessions", "post"),
        ("/v1/sessions/{id}", "get"),
        ("/v1/sessions/{id}", "delete"),
        ("/v1/sessions/{id}/clear", "post"),
        ("/v1/sessions/{id}/messages", "get"),
        ("/v1/sessions/{id}/messages", "post"),
        ("/v1/sessions/{id}/members", "post"),
        ("/v1/sessions/{id}/members/{bot_id}", "delete"),
        ("/v1/sessions/{id}/lead", "get"),
        ("/v1/sessions/{id}/lead", "put"),
        ("/v1/messages/{id}", "get"),
        ("/v1/messages/{id}", "patch"),
        ("/v1/messages/{id}/versions", "get"),
        ("/v1/messages/{id}/answer", "post"),
        ("/v1/messages/{id}/withdraw", "post"),
        ("/v1/messages/{id}/insert", "post"),
        ("/v1/messages/{id}/control", "post"),
        ("/v1/messages/{id}/readings", "get"),
        ("/v1/turns", "get"),
        ("/v1/turns/{id}", "get"),
        ("/v1/turns/{id}/commands", "get"),
        ("/v1/turns/{id}/files", "get"),
        ("/v1/turns/stop", "post"),
        ("/v1/holds", "get"),
        ("/v1/holds", "post"),
        ("/v1/holds/{id}", "get"),
        ("/v1/holds/{id}/lift", "post"),
        ("/v1/audit", "get"),
        ("/v1/sessions/{id}/workflow", "get"),
        ("/v1/sessions/{id}/workflow", "post"),
        ("/v1/sessions/{id}/continue", "post"),
        ("/v1/sessions/{id}/abandon", "post"),
        ("/v1/blueprint-loops", "get"),
        ("/v1/blueprint-loops", "post"),
        ("/v1/blueprint-loops/{id}", "get"),
        ("/v1/blueprint-loops/{id}/cancel", "post"),
        ("/v1/sessions/{id}/lattice", "get"),
        ("/v1/lattice/runs", "get"),
        ("/v1/lattice/runs/{id}", "get"),
        ("/v1/lattice/runs/{id}/resume", "post"),
        ("/v1/lattice/runs/{id}/approve", "post"),
        ("/v1/lattice/runs/{id}/cancel", "post"),
        ("/v1/boss/session/{id}/tree", "get"),
        ("/v1/boss/session/{id}/worker", "post"),
        ("/v1/boss/session/{id}/assign", "post"),
        ("/v1/boss/session/open", "post"),
        ("/v1/boss/name", "get"),
        ("/v1/boss/name", "put"),
        ("/v1/settings/runtime", "get"),
        ("/v1/settings/runtime", "patch"),
        ("/v1/permissions", "get"),
        ("/v1/permissions/{id}", "post"),
        ("/v1/notifications", "get"),
        ("/v1/notifications/{id}/dismiss", "post"),
        ("/v1/sessions/{id}/unread", "get"),
        ("/v1/boss/session/{id}/cancel", "post"),
        ("/v1/nodes", "get"),
        ("/v1/notes", "get"),
        ("/v1/notes", "post"),
        ("/v1/notes/{id}", "get"),
        ("/v1/notes/{id}", "patch"),
        ("/v1/agenda", "get"),
        ("/v1/agenda", "post"),
        ("/v1/agenda/{id}", "get"),
        ("/v1/agenda/{id}", "patch"),
        ("/v1/agenda/{id}", "delete"),
        ("/v1/check-backs", "get"),
        ("/v1/external-jobs", "get"),
        ("/v1/external-jobs/{id}", "get"),
        ("/v1/tasks", "get"),
        ("/v1/tasks/{id}", "get"),
        ("/v1/tasks/{id}/revisions", "get"),
        ("/v1/tasks/{id}/messages", "get"),
        ("/v1/tasks/{id}/spec", "patch"),
        ("/v1/tasks/{id}/delegations", "get"),
        ("/v1/sessions/{id}/delegations", "get"),
        ("/v1/bots/{id}/work-items", "get"),
        ("/v1/work-items/{id}", "get"),
        ("/v1/turns/{id}/continue", "post"),
        ("/v1/messages/{id}/work-answer", "post"),
        ("/v1/child-tasks", "get"),
        ("/v1/child-tasks/{id}", "get"),
        ("/v1/child-tasks/{id}/cancel", "post"),
        ("/v1/tasks/{id}/tickets", "get"),
        ("/v1/tasks/{id}/tickets", "post"),
        ("/v1/tasks/{id}/large", "post"),
        ("/v1/tickets/{id}", "get"),
        ("/v1/tickets/{id}", "patch"),
        ("/v1/tickets/{id}/parts", "post"),
        ("/v1/tasks/{id}/submissions", "get"),
        ("/v1/submissions/{id}", "get"),
        ("/v1/tasks/{id}/checks", "get"),
        ("/v1/tasks/{id}/checks", "post"),
        ("/v1/tasks/{id}/checks/run", "post"),
        ("/v1/checks/{id}", "get"),
        ("/v1/checks/{id}", "patch"),
        ("/v1/checks/{id}", "delete"),
        ("/v1/checks/{id}/run", "post"),
        ("/v1/checks/{id}/confirm", "post"),
        ("/v1/tasks/{id}/requirements", "get"),
        ("/v1/requirements/{id}/action", "post"),
        ("/v1/settings/engine-steps", "get"),
        ("/v1/settings/engine-steps", "put"),
        ("/v1/sessions/{id}/engine", "get"),
        ("/v1/sessions/{id}/engine", "put"),
        ("/v1/settings/engines", "get"),
        ("/v1/settings/default-engine", "put"),
        ("/v1/tasks/{id}/engine", "get"),
        ("/v1/mcp-servers", "get"),
        ("/v1/mcp-servers", "post"),
        ("/v1/mcp-servers/{name}", "get"),
        ("/v1/mcp-servers/{name}", "patch"),
        ("/v1/mcp-servers/{name}", "delete"),
        ("/v1/mcp-servers/{name}/restart", "post"),
        ("/v1/turns/{id}/mcp-calls", "get"),
        ("/v1/channels/{account}/inbound", "post"),
        ("/v1/login-links", "post"),
        ("/v1/debug/clock", "post"),
        ("/v1/debug/tick", "post"),
        ("/v1/tasks/{id}/work-log", "get"),
        ("/v1/tasks/{id}/turns", "get"),
        ("/v1/messages/{id}/flow", "get"),
        ("/v1/quality/report", "get"),
        ("/v1/quality/prices", "get"),
        ("/v1/quality/prices", "put"),
        ("/v1/turns/{id}/model-problem", "put"),
        ("/v1/lessons", "get"),
        ("/v1/lessons/{id}", "patch"),
        ("/v1/bots/{id}/memories", "get"),
        ("/v1/bots/{id}/memories", "post"),
        ("/v1/bot-memories/{id}", "patch"),
        ("/v1/bot-memories/{id}", "delete"),
        ("/v1/tasks/{id}/retrospectives", "get"),
        ("/v1/retrospective-changes/{id}/undo", "post"),
        ("/v1/tasks/{id}/reflections", "get"),
        ("/v1/reflections/{id}/answer", "post"),
        ("/v1/checklist-items", "get"),
        ("/v1/checklist-items/{id}", "patch"),
        ("/v1/bots/{id}/skills", "get"),
        ("/v1/bots/{id}/skills", "post"),
        ("/v1/skills/{id}", "get"),
        ("/v1/skills/{id}", "patch"),
        ("/v1/skills/{id}", "delete"),
        ("/v1/skills/{id}/share", "post"),
        ("/v1/project-skills", "get"),
        ("/v1/project-skills/{id}", "patch"),
        ("/v1/project-skills/{id}", "delete"),
        ("/v1/project-skills/{id}/update", "post"),
        ("/v1/routines", "get"),
        ("/v1/routines", "post"),
        ("/v1/routines/{id}", "get"),
        ("/v1/routines/{id}", "patch"),
        ("/v1/routines/{id}", "delete"),
        ("/v1/routines/{id}/run", "post"),
    ]
    .into_iter()
    .map(|(p, m)| (p.to_string(), m.to_string()))
    .collect();
    assert_eq!(mine, expected);

    // Ids are integers, and the schemas the routes name are in the document.
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    for name in [
        "BotView",
        "RoleView",
        "SessionView",
        "SessionMessage",
        "TurnView",
        "StopAnswer",
        "HoldView",
        "HoldRequest",
        "AuditEntry",
        "CommandRecord",
        "PlanView",
        "PlanRevisionView",
        "PlanPatchRequest",
        "EndpointSpec",
        "ErrorBody",
        "ServerView",
        "ServerDef",
        "ServerStatus",
        "ToolInfo",
        "McpCallRecord",
        "LatticeView",
        "LatticeRun",
        "PathwayView",
        "Step",
        "TreeNode",
        "SpawnRequest",
        "Spawned",
        "AssignRequest",
        "Assigned",
        "CancelRequest",
        "Cancelled",
    ] {
        assert!(schemas.contains_key(name), "schema {name} missing");
    }
    assert_eq!(schemas["BotId"]["type"], "integer", "{}", schemas["BotId"]);
    let id_param = &paths["/v1/bots/{id}"]["get"]["parameters"][0];
    assert_eq!(id_param["schema"]["type"], "integer", "{id_param}");
}
