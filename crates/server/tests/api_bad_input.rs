//! Every route against bad input (issue 20, item 3). The walker reads docs/openapi.json and
//! sends each operation malformed JSON, the wrong JSON type for the body and for each top-level
//! property, each required field missing, a body over the limit, unknown and non-numeric ids in
//! every path parameter, and huge numbers (2^63, -2^63-1, 1e400) in numeric fields and query
//! parameters. Every answer must be a 4xx in the `{"error":{"code","message"}}` shape, within
//! a client timeout, and the database must hold exactly what it held before each route's
//! battery (every table's row count and checksum), reads included.

mod support;

use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::TestApp;
use troupe_collab::OpenPlan;
use troupe_core::plan::RevisionCause;
use troupe_core::{SessionId, SessionMessageId};

/// No request may take longer: a hang is a failure, not a stuck test.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);
/// 2^63, -2^63-1 and a number no float holds, as JSON text.
const HUGE: [&str; 3] = ["9223372036854775808", "-9223372036854775809", "1e400"];
const MCP_SERVER: &str = "walker";
const CHANNEL: &str = "walker";
const CHANNEL_SECRET: &str = "walker-secret";

/// A little real data, so a path can name records that exist.
struct World {
    bot: i64,
    session: i64,
    line: i64,
    plan: i64,
    ticket: i64,
    check: i64,
    note: i64,
    agenda: i64,
    turn: i64,
}

async fn seed(app: &TestApp) -> World {
    let bot = app
        .scripted_bot("Walker", json!({"steps": [{"text": "noted"}]}))
        .await;
    let session = app.direct(bot).await;
    let line = app
        .post(
            &format!("/v1/sessions/{session}/messages"),
            json!({"body": "@Walker draw a map"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    app.wait_for_bot_line(session, |l| l["body"] == "noted")
        .await;
    app.settle(session).await;
    let turns = app
        .get(&format!("/v1/turns?session_id={session}"))
        .await
        .expect(200);
    let turn = turns[0]["id"].as_i64().expect("the Bot's turn is listed");
    let plan = app
        .state
        .collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(session),
            opening_line_id: Some(SessionMessageId(line)),
            title: None,
            cause: RevisionCause::Message(SessionMessageId(line)),
        })
        .unwrap()
        .id
        .0;
    let created = |v: Value| v["id"].as_i64().unwrap();
    let ticket = created(
        app.post(
            &format!("/v1/tasks/{plan}/tickets"),
            json!({"title": "Legend"}),
        )
        .await
        .expect(201),
    );
    let check = created(
        app.post(
            &format!("/v1/tasks/{plan}/checks"),
            json!({"kind": "file_exists", "path": "map.png"}),
        )
        .await
        .expect(201),
    );
    let note = created(
        app.post("/v1/notes", json!({"title": "n", "body": "b"}))
            .await
            .expect(201),
    );
    let agenda = created(
        app.post(
            "/v1/agenda",
            json!({"session_id": session, "title": "later", "payload": "p",
                "trigger": {"kind": "at", "at": 4_000_000_000_000i64}}),
        )
        .await
        .expect(201),
    );
    app.post(
        "/v1/mcp-servers",
        json!({"name": MCP_SERVER, "command": "true", "enabled": false}),
    )
    .await
    .expect(201);
    app.state
        .channels
        .configure(
            &[troupe_channels::ChannelDef {
                name: CHANNEL.into(),
                kind: troupe_channels::ChannelKind::Webhook,
                bot: "Walker".into(),
                secret_env: "WALKER_CHANNEL_SECRET".into(),
                outbound_url: "http://127.0.0.1:9/out".into(),
                filter: troupe_channels::FilterRules::default(),
                enabled: true,
            }],
            &|_| Some(CHANNEL_SECRET.into()),
        )
        .unwrap();
    World {
        bot,
        session,
        line,
        plan,
        ticket,
        check,
        note,
        agenda,
        turn,
    }
}

/// One operation of the document.
struct Op {
    method: Method,
    path: String,
    params: Vec<Param>,
    /// The request body's schema, resolved.
    body: Option<Value>,
}

struct Param {
    name: String,
    place: String,
    required: bool,
    types: Vec<String>,
}

fn document() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Follow `$ref`s to the schema they name.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => {
            let name = r.trim_start_matches("#/components/schemas/");
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// The JSON types a schema accepts (empty: any).
fn types(doc: &Value, schema: &Value) -> Vec<String> {
    let schema = resolve(doc, schema);
    let mut out = Vec::new();
    match &schema["type"] {
        Value::String(t) => out.push(t.clone()),
        Value::Array(ts) => out.extend(ts.iter().filter_map(|t| t.as_str().map(String::from))),
        _ => {}
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for s in schema[key].as_array().into_iter().flatten() {
            let more = types(doc, s);
            if more.is_empty() {
                return Vec::new();
            }
            out.extend(more);
        }
    }
    if out.iter().any(|t| t == "number") {
        out.push("integer".into());
    }
    out
}

fn operations(doc: &Value) -> Vec<Op> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let params = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| Param {
                    name: p["name"].as_str().unwrap().to_string(),
                    place: p["in"].as_str().unwrap().to_string(),
                    required: p["required"].as_bool().unwrap_or(false),
                    types: types(doc, &p["schema"]),
                })
                .collect();
            let body = op["requestBody"]["content"]["application/json"]["schema"].clone();
            ops.push(Op {
                method: Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                path: path.clone(),
                params,
                body: (!body.is_null()).then(|| resolve(doc, &body).clone()),
            });
        }
    }
    ops
}

/// A path or required-query value naming a seeded record, or an id that names nothing where
/// none is seeded.
fn good_value(w: &World, path: &str, name: &str) -> String {
    let id = match name {
        "bot_id" => w.bot,
        "session_id" => w.session,
        "role" => return "default".into(),
        "name" => return MCP_SERVER.into(),
        "account" => return CHANNEL.into(),
        _ => {
            let resource = path.trim_start_matches("/v1/").split('/').next().unwrap();
            match resource {
                "bots" => w.bot,
                "sessions" | "boss" => w.session,
                "messages" => w.line,
                "tasks" => w.plan,
                "tickets" => w.ticket,
                "checks" => w.check,
                "notes" => w.note,
                "agenda" => w.agenda,
                "turns" => w.turn,
                // Nothing seeded of this kind: an id in the right form that names nothing.
                _ => 999_999,
            }
        }
    };
    id.to_string()
}

fn fill(op: &Op, w: &World, overrides: &BTreeMap<&str, String>, skip: Option<&str>) -> String {
    let mut path = op.path.clone();
    let mut query = Vec::new();
    for p in &op.params {
        let value = overrides
            .get(p.name.as_str())
            .cloned()
            .unwrap_or_else(|| good_value(w, &op.path, &p.name));
        match p.place.as_str() {
            "path" => path = path.replace(&format!("{{{}}}", p.name), &value),
            "query"
                if Some(p.name.as_str()) != skip
                    && (p.required || overrides.contains_key(p.name.as_str())) =>
            {
                query.push(format!("{}={value}", p.name));
            }
            _ => {}
        }
    }
    assert!(!path.contains('{'), "{}: a path parameter is left", op.path);
    if query.is_empty() {
        path
    } else {
        format!("{path}?{}", query.join("&"))
    }
}

/// A value of a type the schema refuses, if the schema names its types.
fn wrong_value(accepted: &[String]) -> Option<Value> {
    if accepted.is_empty() {
        return None;
    }
    [
        ("object", json!({"wrong": 1})),
        ("array", json!([1])),
        ("boolean", json!(true)),
        ("integer", json!(12345)),
        ("string", json!("wrong")),
    ]
    .into_iter()
    .find(|(t, _)| !accepted.iter().any(|a| a == t))
    .map(|(_, v)| v)
}

/// A plausible value for a field: what the walker fills the fields it is not testing with.
fn sample(doc: &Value, w: &World, name: &str, schema: &Value) -> Value {
    let ts = types(doc, schema);
    let has = |t: &str| ts.iter().any(|x| x == t);
    if has("integer") {
        json!(good_value(w, "", name).parse::<i64>().unwrap_or(1))
    } else if has("string") {
        json!("x")
    } else if has("boolean") {
        json!(false)
    } else if has("array") {
        json!([])
    } else {
        json!({})
    }
}

/// The object schema a property holds, through a `$ref` or a nullable `oneOf`.
fn object_schema<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    let schema = resolve(doc, schema);
    schema["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| resolve(doc, s))
        .find(|s| s["properties"].is_object())
        .unwrap_or(schema)
}

/// The body with every required field filled.
fn skeleton(doc: &Value, w: &World, schema: &Value) -> serde_json::Map<String, Value> {
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str())
        .map(|r| {
            let s = props.get(r).cloned().unwrap_or(Value::Null);
            (r.to_string(), sample(doc, w, r, &s))
        })
        .collect()
}

/// A request the walker sends.
struct Probe {
    what: String,
    url: String,
    body: Option<String>,
    header: Option<(String, String)>,
}

fn probes(doc: &Value, w: &World, op: &Op) -> Vec<Probe> {
    let none = BTreeMap::new();
    let good_url = fill(op, w, &none, None);
    let skeleton_body = op
        .body
        .as_ref()
        .map(|s| Value::Object(skeleton(doc, w, s)).to_string());
    let mut out = Vec::new();
    let mut headers = Vec::new();
    let mut push = |what: String, url: String, body: Option<String>| {
        out.push(Probe {
            what,
            url,
            body,
            header: None,
        })
    };

    for p in &op.params {
        let numeric = p.types.iter().any(|t| t == "integer" || t == "number")
            || p.name.ends_with("_id")
            || ["after", "limit", "days", "depth"].contains(&p.name.as_str());
        match p.place.as_str() {
            "path" => {
                let mut bad: Vec<String> = vec!["no-such-thing".into()];
                if numeric {
                    bad.push("999999999".into());
                    bad.extend(HUGE.iter().map(|h| h.to_string()));
                }
                for b in bad {
                    let url = fill(op, w, &BTreeMap::from([(p.name.as_str(), b.clone())]), None);
                    push(format!("path {}={b}", p.name), url, skeleton_body.clone());
                }
            }
            "query" => {
                if p.required {
                    push(
                        format!("query {} missing", p.name),
                        fill(op, w, &none, Some(&p.name)),
                        skeleton_body.clone(),
                    );
                }
                let mut bad: Vec<String> = Vec::new();
                if numeric {
                    bad.extend(["abc"].iter().chain(HUGE.iter()).map(|h| h.to_string()));
                }
                if p.types.iter().any(|t| t == "boolean") {
                    bad.push("maybe".into());
                }
                for b in bad {
                    let url = fill(op, w, &BTreeMap::from([(p.name.as_str(), b.clone())]), None);
                    push(format!("query {}={b}", p.name), url, skeleton_body.clone());
                }
            }
            // A numeric header (`Last-Event-ID`); a required one (the channel's signature) is
            // sent as the route needs it.
            "header" if !p.required => {
                for b in ["abc"].iter().chain(HUGE.iter()) {
                    headers.push(Probe {
                        what: format!("header {}={b}", p.name),
                        url: good_url.clone(),
                        body: skeleton_body.clone(),
                        header: Some((p.name.clone(), b.to_string())),
                    });
                }
            }
            _ => {}
        }
    }

    // Over the limit, on every route: a route that reads no body must not act on one either.
    let oversized = format!(
        "{{\"x\":\"{}\"}}",
        "a".repeat(troupe_server::BODY_LIMIT + 1024)
    );
    push("oversized body".into(), good_url.clone(), Some(oversized));

    let Some(schema) = &op.body else {
        out.extend(headers);
        return out;
    };
    for raw in ["{\"a\":", "{]", "", "{} trailing", "nul", "{\"x\": 1e400}"] {
        push(
            format!("malformed {raw:?}"),
            good_url.clone(),
            Some(raw.into()),
        );
    }
    for raw in ["[]", "[\"x\"]", "\"x\"", "1", "null", "true"] {
        push(format!("body {raw}"), good_url.clone(), Some(raw.into()));
    }
    let base = skeleton(doc, w, schema);
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (name, s) in &props {
        let accepted = types(doc, s);
        if let Some(v) = wrong_value(&accepted) {
            let mut body = base.clone();
            body.insert(name.clone(), v.clone());
            push(
                format!("field {name}={v}"),
                good_url.clone(),
                Some(Value::Object(body).to_string()),
            );
        }
        // The numbers in it: the field itself, or one level down in an object the document
        // describes, or in a trigger (which the document describes in prose only).
        let mut places: Vec<(String, Value)> = Vec::new();
        if accepted.iter().any(|t| t == "integer") {
            places.push((name.clone(), json!("@huge@")));
        }
        let inner = object_schema(doc, s);
        for (sub, sub_schema) in inner["properties"].as_object().into_iter().flatten() {
            if types(doc, sub_schema).iter().any(|t| t == "integer") {
                let mut obj = skeleton(doc, w, inner);
                obj.insert(sub.clone(), json!("@huge@"));
                places.push((format!("{name}.{sub}"), Value::Object(obj)));
            }
        }
        if name == "trigger" && op.path.starts_with("/v1/agenda") {
            for t in [
                json!({"kind": "at", "at": "@huge@"}),
                json!({"kind": "delay", "seconds": "@huge@"}),
                json!({"kind": "every", "seconds": "@huge@"}),
                json!({"kind": "every", "seconds": 60, "start_at": "@huge@"}),
            ] {
                places.push((format!("trigger {t}"), t));
            }
        }
        for (place, value) in places {
            for h in HUGE {
                let mut body = base.clone();
                body.insert(name.clone(), value.clone());
                let text = Value::Object(body).to_string().replace("\"@huge@\"", h);
                push(format!("{place}={h}"), good_url.clone(), Some(text));
            }
        }
    }
    for r in schema["required"].as_array().into_iter().flatten() {
        let r = r.as_str().unwrap();
        let mut body = base.clone();
        body.remove(r);
        push(
            format!("required {r} missing"),
            good_url.clone(),
            Some(Value::Object(body).to_string()),
        );
    }
    out.extend(headers);
    out
}

/// Send one probe; what was wrong with the answer, if anything.
async fn verdict(
    app: &TestApp,
    client: &reqwest::Client,
    op: &Op,
    probe: &Probe,
) -> Option<String> {
    let mut req = client
        .request(op.method.clone(), app.url(&probe.url))
        .timeout(ANSWER_WITHIN);
    if let Some((name, value)) = &probe.header {
        req = req.header(name, value);
    }
    if let Some(body) = &probe.body {
        req = req
            .header("content-type", "application/json")
            .body(body.clone());
        if op.path.starts_with("/v1/channels/") {
            // The inbound route reads only bodies signed with the account's secret.
            req = req.header(
                troupe_channels::SIGNATURE_HEADER,
                troupe_channels::sign(CHANNEL_SECRET.as_bytes(), body.as_bytes()),
            );
        }
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return Some(format!("no answer: {e}")),
    };
    let status = resp.status();
    let text = match tokio::time::timeout(ANSWER_WITHIN, resp.text()).await {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => return Some(format!("{status}, body unreadable: {e}")),
        Err(_) => {
            return Some(format!(
                "{status}, body not finished within {ANSWER_WITHIN:?}"
            ));
        }
    };
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let shaped = body["error"]["code"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
        && body["error"]["message"].as_str().is_some();
    if !status.is_client_error() || !shaped {
        let mut text = text;
        text.truncate(300);
        return Some(format!("{status}: {text}"));
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_route_refuses_bad_input_and_changes_nothing() {
    let started = Instant::now();
    let app = TestApp::start_still().await;
    let w = seed(&app).await;
    let doc = document();
    let ops = operations(&doc);
    assert!(
        ops.len() >= 100,
        "the document lists {} operations",
        ops.len()
    );
    let store = app.state.collab.store().clone();
    // A fresh connection for each request: a server that refuses a body without reading it
    // closes the connection, and a pooled one would fail the next probe on the client's side.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut failures = Vec::new();
    let mut sent = 0;
    for op in &ops {
        let before = store.table_summaries().unwrap();
        for probe in probes(&doc, &w, op) {
            sent += 1;
            if let Some(wrong) = verdict(&app, &client, op, &probe).await {
                failures.push(format!(
                    "{} {} [{}] {}: {wrong}",
                    op.method, op.path, probe.what, probe.url
                ));
            }
        }
        let after = store.table_summaries().unwrap();
        let changed: Vec<&String> = after
            .iter()
            .filter(|(t, s)| match before.get(*t) {
                // The daemon's own heartbeat rewrites its node row on a timer.
                Some(b) if t.as_str() == "nodes" => b.rows != s.rows,
                b => b != Some(s),
            })
            .map(|(t, _)| t)
            .collect();
        if !changed.is_empty() {
            failures.push(format!(
                "{} {}: bad input changed tables {changed:?}",
                op.method, op.path
            ));
        }
    }
    eprintln!(
        "walked {} operations, {sent} requests, in {:?}",
        ops.len(),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} bad answers:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Send one raw HTTP/1.1 request with a chunked body of `size` bytes; the status and the body
/// of the answer. The server may answer and close before the body is all sent.
async fn chunked(app: &TestApp, method: &str, path: &str, size: usize) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = app.base.trim_start_matches("http://");
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let body = format!("{{\"x\":\"{}\"}}", "a".repeat(size.saturating_sub(8)));
    for piece in body.as_bytes().chunks(64 * 1024) {
        let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
        chunk.extend_from_slice(piece);
        chunk.extend_from_slice(b"\r\n");
        if tcp.write_all(&chunk).await.is_err() {
            break;
        }
    }
    let _ = tcp.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    tokio::time::timeout(ANSWER_WITHIN, tcp.read_to_end(&mut answer))
        .await
        .expect("an answer within the timeout")
        .ok();
    let text = String::from_utf8_lossy(&answer);
    let status = text[9..12].parse().unwrap();
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// A body with no declared length is read up to the limit before any route sees it: over the
/// limit it is a 413 in the API's shape and the route (here, Clear) does nothing; under it the
/// route answers as usual.
#[tokio::test]
async fn chunked_body_over_the_limit_is_refused_before_the_route() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Walker", json!({"steps": [{"text": "noted"}]}))
        .await;
    let s = app.direct(bot).await;
    app.post(&format!("/v1/sessions/{s}/messages"), json!({"body": "hi"}))
        .await
        .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "noted").await;
    app.settle(s).await;
    let store = app.state.collab.store().clone();
    let before = store.table_summaries().unwrap();

    let (status, body) = chunked(
        &app,
        "POST",
        &format!("/v1/sessions/{s}/clear"),
        troupe_server::BODY_LIMIT + 1024,
    )
    .await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "too_large", "{body}");
    let after = store.table_summaries().unwrap();
    assert!(
        before
            .iter()
            .all(|(t, s)| t == "nodes" || after.get(t) == Some(s)),
        "the refused Clear changed the database"
    );

    let (status, body) = chunked(&app, "GET", &format!("/v1/sessions/{s}"), 100).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], s);
}
