//! Request bodies, on every route that takes one (walked from the OpenAPI document, so a new
//! route is covered without being listed): a body must be a JSON object, and malformed JSON is
//! a 400 whatever type the route reads.

mod support;

use reqwest::Method;
use serde_json::{Value, json};
use support::{Answer, Body, TestApp};

const FAR: i64 = 4_000_000_000_000;

/// One of everything a path can name, so each route reaches real records.
struct Fixture {
    bot: i64,
    session: i64,
    note: i64,
    agenda: i64,
}

async fn fixture(app: &TestApp) -> Fixture {
    let bot = app
        .scripted_bot("Shape", json!({"steps": [{"text": "noted"}]}))
        .await;
    let session = app.direct(bot).await;
    let note = app
        .post("/v1/notes", json!({"title": "n", "body": "b"}))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let agenda = app
        .post(
            "/v1/agenda",
            json!({"session_id": session, "title": "later",
                "trigger": {"kind": "at", "at": FAR}, "payload": "p"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    // A disabled MCP server, so `/v1/mcp-servers/{name}` names a real one.
    app.post(
        "/v1/mcp-servers",
        json!({"name": MCP_SERVER, "command": "true", "enabled": false}),
    )
    .await
    .expect(201);
    // A channel account, so `/v1/channels/{account}/inbound` reads signed bodies.
    app.state
        .channels
        .configure(&[channel_account()], &|_| Some(CHANNEL_SECRET.into()))
        .unwrap();
    Fixture {
        bot,
        session,
        note,
        agenda,
    }
}

const MCP_SERVER: &str = "fixture";
const CHANNEL: &str = "fixture";
const CHANNEL_SECRET: &str = "fixture-secret";

fn channel_account() -> troupe_channels::ChannelDef {
    troupe_channels::ChannelDef {
        name: CHANNEL.into(),
        kind: troupe_channels::ChannelKind::Webhook,
        bot: "Shape".into(),
        secret_env: "FIXTURE_CHANNEL_SECRET".into(),
        outbound_url: "http://127.0.0.1:9/out".into(),
        filter: troupe_channels::FilterRules::default(),
        enabled: true,
    }
}

/// A body sent as the routes take it: a channel's inbound route reads only bodies signed with
/// the account's secret (it answers 401 before it reads anything else).
async fn send(app: &TestApp, method: Method, path: &str, body: Body) -> Answer {
    if !path.starts_with("/v1/channels/") {
        return app.send(method, path, Some(body)).await;
    }
    let bytes = match body {
        Body::Json(v) => serde_json::to_vec(&v).unwrap(),
        Body::Raw(text) => text.into_bytes(),
    };
    let resp = app
        .client
        .request(method, app.url(path))
        .header("content-type", "application/json")
        .header(
            troupe_channels::SIGNATURE_HEADER,
            troupe_channels::sign(CHANNEL_SECRET.as_bytes(), &bytes),
        )
        .body(bytes)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer { status, body, text }
}

/// Every operation of the served document that has a request body, with its path filled in.
async fn operations_with_bodies(app: &TestApp, f: &Fixture) -> Vec<(Method, String)> {
    let doc = app.get("/v1/openapi.json").await.expect(200);
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if op.get("requestBody").is_none() {
                continue;
            }
            // 404 without --manual-clock whatever the body; api_debug reads its bodies.
            if path.starts_with("/v1/debug/") {
                continue;
            }
            let id = if path.starts_with("/v1/bots/") {
                f.bot
            } else if path.starts_with("/v1/sessions/") || path.starts_with("/v1/boss/session/") {
                f.session
            } else if path.starts_with("/v1/notes/") {
                f.note
            } else if path.starts_with("/v1/agenda/") {
                f.agenda
            } else {
                0
            };
            let filled = path
                .replace("{id}", &id.to_string())
                .replace("{role}", "default")
                .replace("{name}", MCP_SERVER)
                .replace("{account}", CHANNEL);
            assert!(
                !filled.contains('{'),
                "{path}: this test does not know what to put in its path"
            );
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            ops.push((method, filled));
        }
    }
    assert!(
        ops.len() >= 12,
        "the document lists too few bodies: {ops:?}"
    );
    ops
}

/// What the routes could change, read through the API.
async fn everything(app: &TestApp, f: &Fixture) -> Value {
    let s = f.session;
    let mut all = serde_json::Map::new();
    for path in [
        "/v1/bots".to_string(),
        format!("/v1/bots/{}", f.bot),
        "/v1/roles".into(),
        "/v1/sessions".into(),
        format!("/v1/sessions/{s}"),
        format!("/v1/sessions/{s}/messages"),
        format!("/v1/sessions/{s}/workflow"),
        format!("/v1/turns?session_id={s}"),
        "/v1/notes".into(),
        format!("/v1/notes/{}", f.note),
        "/v1/agenda".into(),
        format!("/v1/agenda/{}", f.agenda),
        "/v1/blueprint-loops".into(),
        "/v1/mcp-servers".into(),
        "/v1/lattice/runs".into(),
    ] {
        let v = app.get(&path).await.expect(200);
        all.insert(path, v);
    }
    Value::Object(all)
}

#[tokio::test]
async fn array_bodies_refused_on_every_route() {
    let app = TestApp::start().await;
    let f = fixture(&app).await;
    let before = everything(&app, &f).await;
    for (method, path) in operations_with_bodies(&app, &f).await {
        for body in [json!([]), json!(["x"]), json!(["x", null, null])] {
            let r = send(&app, method.clone(), &path, Body::Json(body.clone())).await;
            assert_eq!(r.status.as_u16(), 422, "{method} {path} {body}: {}", r.text);
            assert_eq!(r.code(), "invalid", "{method} {path}: {}", r.text);
            assert!(
                r.message().contains("must be a JSON object, got an array"),
                "{method} {path}: {}",
                r.text
            );
        }
        // Other non-objects are named for what they are.
        let r = send(&app, method.clone(), &path, Body::Raw("\"x\"".into())).await;
        r.expect_error(422, "invalid");
        assert!(r.message().contains("got a string"), "{}", r.text);
    }
    assert_eq!(
        everything(&app, &f).await,
        before,
        "a refused body changed something"
    );
}

#[tokio::test]
async fn malformed_json_is_400_everywhere() {
    let app = TestApp::start().await;
    let f = fixture(&app).await;
    let before = everything(&app, &f).await;
    for (method, path) in operations_with_bodies(&app, &f).await {
        // `{"a":` names a field first: types that refuse unknown fields must still see the
        // syntax error, not the field.
        for raw in ["{\"a\":", "{\"name\": \"x\"", "{]", "{} trailing", ""] {
            let r = send(&app, method.clone(), &path, Body::Raw(raw.into())).await;
            assert_eq!(
                (r.status.as_u16(), r.code()),
                (400, "bad_request"),
                "{method} {path} {raw:?}: {}",
                r.text
            );
        }
    }
    assert_eq!(everything(&app, &f).await, before);
}
