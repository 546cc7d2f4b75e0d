mod support;

use serde_json::{Value, json};
use support::*;
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;
use troupe_llm::{
    ChatMessage, FinishReason, LlmError, ModelRequest, ProviderKind, StreamEvent, build_provider,
    complete_with_retry,
};

fn start(input: u64) -> Value {
    json!({"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],
        "model":"claude-x","stop_reason":null,"usage":{"input_tokens":input,"output_tokens":1}}})
}

fn text_stream(parts: &[&str]) -> Vec<Value> {
    let mut evs = vec![
        start(25),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        json!({"type":"ping"}),
    ];
    for p in parts {
        evs.push(
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":p}}),
        );
    }
    evs.push(json!({"type":"content_block_stop","index":0}));
    evs.push(json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}));
    evs.push(json!({"type":"message_stop"}));
    evs
}

fn req() -> ModelRequest {
    ModelRequest {
        system: "Be brief.".into(),
        messages: vec![ChatMessage::user("hi")],
        tools: Default::default(),
        max_tokens: None,
        lightest_thinking: false,
    }
}

#[tokio::test]
async fn streams_text_usage_and_sends_headers() {
    let srv = FakeServer::start(vec![Reply::Sse(
        anthropic_sse(&text_stream(&["Hi", " there"])),
        End::Close,
    )])
    .await;
    let p = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    let (r, events) = once(p.as_ref(), &req()).await;
    let r = r.unwrap();
    assert_eq!(r.text, "Hi there");
    assert_eq!(r.finish, FinishReason::Stop);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (25, 9));
    assert_eq!(
        r.usage.cached_input_tokens, 0,
        "no cache fields: nothing cached"
    );
    assert_eq!(text_of(&events), "Hi there");

    let rq = &srv.requests()[0];
    assert_eq!(rq.path, "/v1/messages");
    assert_eq!(rq.headers["x-api-key"], KEY);
    assert_eq!(rq.headers["anthropic-version"], "2023-06-01");
    assert!(!rq.headers.contains_key("authorization"));
    assert_eq!(rq.body["stream"], true);
    assert_eq!(rq.body["system"], "Be brief.");
    assert_eq!(rq.body["max_tokens"], 4096);
    assert_eq!(rq.body["model"], "claude-x");
    assert_eq!(
        rq.body["messages"],
        json!([{"role":"user","content":[{"type":"text","text":"hi"}]}])
    );
    assert!(rq.body.get("tools").is_none());
}

#[tokio::test]
async fn cache_reads_and_writes_count_as_input_and_reads_as_cached() {
    let mut evs = text_stream(&["ok"]);
    evs[0] = json!({"type":"message_start","message":{"id":"m1","type":"message","role":"assistant",
        "content":[],"model":"claude-x","stop_reason":null,
        "usage":{"input_tokens":5,"cache_creation_input_tokens":20,"cache_read_input_tokens":100,"output_tokens":1}}});
    let srv = FakeServer::start(vec![Reply::Sse(anthropic_sse(&evs), End::Close)]).await;
    let p = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    let r = once(p.as_ref(), &req()).await.0.unwrap();
    assert_eq!(r.usage.input_tokens, 125);
    assert_eq!(r.usage.cached_input_tokens, 100);
    assert_eq!(r.usage.output_tokens, 9);
}

#[tokio::test]
async fn cumulative_usage_in_message_delta_wins() {
    let mut evs = text_stream(&["ok"]);
    let n = evs.len();
    evs[n - 2] = json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},
        "usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":40,"output_tokens":7}});
    let srv = FakeServer::start(vec![Reply::Sse(anthropic_sse(&evs), End::Close)]).await;
    let p = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    let r = once(p.as_ref(), &req()).await.0.unwrap();
    assert_eq!(
        (
            r.usage.input_tokens,
            r.usage.cached_input_tokens,
            r.usage.output_tokens
        ),
        (43, 40, 7)
    );
}

#[tokio::test]
async fn tool_use_with_split_input_json() {
    let evs = vec![
        start(40),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking."}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"shell","input":{}}}),
        json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}),
        json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"comma"}}),
        json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"nd\": \"ls -la\"}"}}),
        json!({"type":"content_block_stop","index":1}),
        json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"now","input":{}}}),
        json!({"type":"content_block_stop","index":2}),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}),
        json!({"type":"message_stop"}),
    ];
    let srv = FakeServer::start(vec![Reply::Sse(anthropic_sse(&evs), End::Close)]).await;
    let p = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    let (r, events) = once(p.as_ref(), &req()).await;
    let r = r.unwrap();
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(r.text, "Checking.");
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(r.tool_calls[0].id, "toolu_1");
    assert_eq!(r.tool_calls[0].name, "shell");
    assert_eq!(r.tool_calls[0].arguments, r#"{"command": "ls -la"}"#);
    assert_eq!(r.tool_calls[1].arguments, "{}");
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (40, 30));
    assert!(events.contains(&StreamEvent::ToolCallStart {
        index: 0,
        id: "toolu_1".into(),
        name: "shell".into()
    }));
    assert!(events.contains(&StreamEvent::ToolCallArgsDelta {
        index: 0,
        delta: "{\"comma".into()
    }));
}

#[tokio::test]
async fn request_merges_tool_results_and_shapes_tools() {
    let srv = FakeServer::start(vec![Reply::Sse(
        anthropic_sse(&text_stream(&["ok"])),
        End::Close,
    )])
    .await;
    let p = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    let mut r = sample_request();
    r.messages.push(ChatMessage::user("and now?"));
    once(p.as_ref(), &r).await.0.unwrap();
    let b = &srv.requests()[0].body;
    assert_eq!(b["max_tokens"], 256);
    assert_eq!(
        b["tools"],
        json!([{"name":"shell","description":"Run a command",
            "input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}])
    );
    let msgs = b["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3, "{msgs:#?}");
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(
        msgs[1]["content"],
        json!([
            {"type":"text","text":"Looking."},
            {"type":"tool_use","id":"call_a","name":"shell","input":{"command":"ls"}},
            // Malformed stored arguments are sent as an empty object.
            {"type":"tool_use","id":"call_b","name":"shell","input":{}},
        ])
    );
    assert_eq!(msgs[2]["role"], "user");
    assert_eq!(
        msgs[2]["content"],
        json!([
            {"type":"tool_result","tool_use_id":"call_a","content":"a.txt","is_error":false},
            {"type":"tool_result","tool_use_id":"call_b","content":"bad args","is_error":true},
            {"type":"text","text":"and now?"},
        ])
    );
}

#[tokio::test]
async fn auth_failure_names_endpoint_and_model() {
    let srv = FakeServer::start(vec![Reply::status(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )])
    .await;
    let cfg = config(ProviderKind::Anthropic, &srv.base, "claude-x");
    let policy = cfg.retry.clone();
    let p = build_provider(cfg).unwrap();
    let (tx, _rx) = unbounded_channel();
    let out =
        complete_with_retry(p.as_ref(), &policy, &req(), &tx, &CancellationToken::new()).await;
    assert_eq!(out.attempts, 1);
    let msg = out.result.unwrap_err().to_string();
    assert_eq!(
        msg,
        format!(
            "auth refused (401) by {} for model claude-x: invalid x-api-key",
            srv.base
        )
    );
    assert!(!msg.contains(KEY));
}

#[tokio::test]
async fn overloaded_error_event_is_retried() {
    let overloaded = anthropic_sse(&[
        start(5),
        json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
    ]);
    let srv = FakeServer::start(vec![
        Reply::Sse(overloaded, End::Close),
        Reply::Sse(anthropic_sse(&text_stream(&["fine"])), End::Close),
    ])
    .await;
    let cfg = config(ProviderKind::Anthropic, &srv.base, "claude-x");
    let policy = cfg.retry.clone();
    let p = build_provider(cfg).unwrap();
    let (tx, _rx) = unbounded_channel();
    let out =
        complete_with_retry(p.as_ref(), &policy, &req(), &tx, &CancellationToken::new()).await;
    assert_eq!(out.result.unwrap().text, "fine");
    assert_eq!(out.attempts, 2);
    assert!(
        out.errors[0].contains("overloaded_error"),
        "{:?}",
        out.errors
    );
    assert!(
        out.errors[0].contains("server error (529)"),
        "{:?}",
        out.errors
    );
}

#[tokio::test]
async fn stream_without_message_stop_is_protocol_error() {
    let mut evs = text_stream(&["cut"]);
    evs.truncate(4);
    let srv = FakeServer::start(vec![Reply::Sse(anthropic_sse(&evs), End::Close)]).await;
    let p = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    let err = once(p.as_ref(), &req()).await.0.unwrap_err();
    assert!(matches!(err, LlmError::Protocol { .. }), "{err:?}");
    assert!(err.to_string().contains("stream dropped mid-answer"));
}

#[tokio::test]
async fn non_streamed_json_response() {
    let body = json!({
        "id":"m","type":"message","role":"assistant","model":"claude-x",
        "content":[{"type":"text","text":"Let me run it."},
                   {"type":"tool_use","id":"toolu_9","name":"shell","input":{"command":"pwd"}}],
        "stop_reason":"tool_use",
        "usage":{"input_tokens":11,"cache_read_input_tokens":30,"output_tokens":6}
    });
    let srv = FakeServer::start(vec![Reply::Json(body)]).await;
    let p = build_provider(config(
        ProviderKind::Anthropic,
        &format!("{}/", srv.base),
        "claude-x",
    ))
    .unwrap();
    let (r, events) = once(p.as_ref(), &req()).await;
    let r = r.unwrap();
    assert_eq!(r.text, "Let me run it.");
    assert_eq!(r.tool_calls[0].id, "toolu_9");
    assert_eq!(r.tool_calls[0].arguments, r#"{"command":"pwd"}"#);
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (41, 6));
    assert_eq!(r.usage.cached_input_tokens, 30);
    assert_eq!(text_of(&events), "Let me run it.");
}

#[tokio::test]
async fn max_tokens_stop_reason_maps_to_length() {
    let mut evs = text_stream(&["trunc"]);
    let n = evs.len();
    evs[n - 2] = json!({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":5}});
    let srv = FakeServer::start(vec![Reply::Sse(anthropic_sse(&evs), End::Close)]).await;
    let p = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    assert_eq!(
        once(p.as_ref(), &req()).await.0.unwrap().finish,
        FinishReason::Length
    );
}

#[tokio::test]
async fn refusal_stop_reason_says_the_model_declined() {
    let mut evs = text_stream(&["I can't help with that."]);
    let n = evs.len();
    evs[n - 2] = json!({"type":"message_delta","delta":{"stop_reason":"refusal"},"usage":{"output_tokens":7}});
    let srv = FakeServer::start(vec![Reply::Sse(anthropic_sse(&evs), End::Close)]).await;
    let p = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    let r = once(p.as_ref(), &req()).await.0.unwrap();
    assert_eq!(r.finish, FinishReason::Refusal);
    assert_eq!(r.text, "I can't help with that.");
}

#[tokio::test]
async fn pictures_go_as_image_blocks_before_the_text_and_inside_tool_results() {
    let srv = FakeServer::start(vec![Reply::Sse(
        anthropic_sse(&text_stream(&["ok"])),
        End::Close,
    )])
    .await;
    let p = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    once(p.as_ref(), &picture_request()).await.0.unwrap();
    let b = &srv.requests()[0].body;
    assert_eq!(
        b["messages"],
        json!([
            {"role":"user","content":[
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}},
                {"type":"text","text":"what is this?"},
            ]},
            {"role":"assistant","content":[
                {"type":"tool_use","id":"call_p","name":"read_file","input":{"path":"a.png"}},
                {"type":"tool_use","id":"call_t","name":"read_file","input":{"path":"a.txt"}},
            ]},
            {"role":"user","content":[
                {"type":"tool_result","tool_use_id":"call_p","is_error":false,"content":[
                    {"type":"text","text":"a.png: image/png, 8 bytes"},
                    {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQ"}},
                ]},
                // Without pictures a tool result's content stays a plain string.
                {"type":"tool_result","tool_use_id":"call_t","content":"plain text","is_error":false},
                {"type":"text","text":"thanks"},
            ]},
        ])
    );
}

#[test]
fn an_anthropic_endpoint_takes_pictures() {
    let cfg = config(ProviderKind::Anthropic, "http://127.0.0.1:9", "claude-x");
    assert!(!cfg.takes_pictures);
    assert!(build_provider(cfg).unwrap().takes_pictures());
}

#[tokio::test]
async fn an_endpoints_output_cap_replaces_the_default_and_a_smaller_asked_cap_wins() {
    let reply = || Reply::Sse(anthropic_sse(&text_stream(&["ok"])), End::Close);
    let srv = FakeServer::start(vec![reply(), reply(), reply()]).await;
    let plain = build_provider(config(ProviderKind::Anthropic, &srv.base, "claude-x")).unwrap();
    assert_eq!(plain.output_cap(), Some(4096), "the API requires a cap");
    let mut cfg = config(ProviderKind::Anthropic, &srv.base, "claude-x");
    cfg.max_output_tokens = Some(32_000);
    let p = build_provider(cfg).unwrap();
    assert_eq!(p.output_cap(), Some(32_000));
    let mut r = req();
    once(p.as_ref(), &r).await.0.unwrap();
    r.max_tokens = Some(256);
    once(p.as_ref(), &r).await.0.unwrap();
    r.max_tokens = None;
    once(plain.as_ref(), &r).await.0.unwrap();
    let caps: Vec<Value> = srv
        .requests()
        .iter()
        .map(|q| q.body["max_tokens"].clone())
        .collect();
    assert_eq!(caps, vec![json!(32_000), json!(256), json!(4096)]);
}
