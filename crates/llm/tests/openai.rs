mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;
use troupe_llm::{
    FinishReason, LlmError, ModelRequest, ProviderKind, StreamEvent, ToolCall, build_provider,
    complete_with_retry,
};

#[tokio::test]
async fn streams_text_and_usage() {
    let srv = FakeServer::start(vec![good_stream()]).await;
    let p = build_provider(config(
        ProviderKind::OpenAi,
        &format!("{}/v1/", srv.base),
        "gpt-x",
    ))
    .unwrap();
    assert_eq!(p.endpoint(), format!("{}/v1", srv.base));
    let (r, events) = once(p.as_ref(), &simple_request()).await;
    let r = r.unwrap();
    assert_eq!(r.text, "Hello");
    assert_eq!(r.finish, FinishReason::Stop);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (12, 3));
    assert_eq!(
        r.usage.cached_input_tokens, 0,
        "no prompt_tokens_details: nothing cached"
    );
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into())
        ]
    );

    let reqs = srv.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].headers["authorization"], format!("Bearer {KEY}"));
    let b = &reqs[0].body;
    assert_eq!(b["model"], "gpt-x");
    assert_eq!(b["stream"], true);
    assert_eq!(b["stream_options"]["include_usage"], true);
    assert_eq!(b["messages"][0], json!({"role":"system","content":"sys"}));
    assert_eq!(b["messages"][1], json!({"role":"user","content":"hi"}));
    assert!(b.get("tools").is_none(), "empty tools must be omitted");
    assert!(b.get("max_tokens").is_none());
}

#[tokio::test]
async fn streamed_usage_reports_cached_prompt_tokens() {
    let srv = FakeServer::start(vec![Reply::Sse(
        openai_sse(&[
            text_chunk("ok"),
            finish_chunk("stop"),
            json!({"choices":[],"usage":{"prompt_tokens":900,"completion_tokens":2,"total_tokens":902,
                "prompt_tokens_details":{"cached_tokens":768}}}),
        ]),
        End::Close,
    )])
    .await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    let r = once(p.as_ref(), &simple_request()).await.0.unwrap();
    assert_eq!(
        (
            r.usage.input_tokens,
            r.usage.cached_input_tokens,
            r.usage.output_tokens
        ),
        (900, 768, 2)
    );
}

#[tokio::test]
async fn request_body_shapes_tools_and_tool_messages() {
    let srv = FakeServer::start(vec![good_stream()]).await;
    let mut cfg = config(ProviderKind::OpenAi, &srv.base, "gpt-x");
    cfg.api_key = None;
    let p = build_provider(cfg).unwrap();
    once(p.as_ref(), &sample_request()).await.0.unwrap();
    let req = &srv.requests()[0];
    assert!(!req.headers.contains_key("authorization"));
    let b = &req.body;
    assert_eq!(b["max_tokens"], 256);
    assert_eq!(
        b["tools"],
        json!([{"type":"function","function":{"name":"shell","description":"Run a command",
            "parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}])
    );
    let msgs = b["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 5);
    assert_eq!(msgs[2]["role"], "assistant");
    assert_eq!(msgs[2]["content"], "Looking.");
    assert_eq!(
        msgs[2]["tool_calls"][0],
        json!({"id":"call_a","type":"function","function":{"name":"shell","arguments":"{\"command\":\"ls\"}"}})
    );
    // Malformed arguments go back as an empty object: servers parse a history's arguments
    // (llama.cpp refuses the whole request otherwise); the call's result says what was wrong.
    assert_eq!(msgs[2]["tool_calls"][1]["function"]["arguments"], "{}");
    assert_eq!(
        msgs[3],
        json!({"role":"tool","tool_call_id":"call_a","content":"a.txt"})
    );
    assert_eq!(msgs[4]["role"], "tool");
    assert_eq!(msgs[4]["tool_call_id"], "call_b");
}

#[tokio::test]
async fn assembles_parallel_tool_calls_from_split_arguments() {
    let tc =
        |v: Value| json!({"choices":[{"index":0,"delta":{"tool_calls":[v]},"finish_reason":null}]});
    let chunks = vec![
        text_chunk("Running."),
        tc(
            json!({"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}),
        ),
        tc(json!({"index":0,"function":{"arguments":"{\"comm"}})),
        tc(
            json!({"index":1,"id":"call_2","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}),
        ),
        tc(json!({"index":0,"function":{"arguments":"and\": \"ls\"}"}})),
        tc(json!({"index":1,"function":{"arguments":"th\":\"a.txt\"}"}})),
        finish_chunk("tool_calls"),
        usage_chunk(50, 20),
    ];
    let srv = FakeServer::start(vec![Reply::Sse(openai_sse(&chunks), End::Close)]).await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    let (r, events) = once(p.as_ref(), &simple_request()).await;
    let r = r.unwrap();
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(r.text, "Running.");
    assert_eq!(
        r.tool_calls,
        vec![
            ToolCall {
                id: "call_1".into(),
                name: "shell".into(),
                arguments: r#"{"command": "ls"}"#.into()
            },
            ToolCall {
                id: "call_2".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a.txt"}"#.into()
            },
        ]
    );
    assert_eq!(r.usage.output_tokens, 20);
    assert!(events.contains(&StreamEvent::ToolCallStart {
        index: 1,
        id: "call_2".into(),
        name: "read_file".into()
    }));
    let args0: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallArgsDelta { index: 0, delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(args0, r#"{"command": "ls"}"#);
}

#[tokio::test]
async fn plain_json_completion_fallback() {
    let body = json!({
        "id":"x","object":"chat.completion",
        "choices":[{"index":0,"message":{"role":"assistant","content":"Sure.",
            "tool_calls":[{"id":"c9","type":"function","function":{"name":"shell","arguments":"{\"command\":\"pwd\"}"}}]},
            "finish_reason":"tool_calls"}],
        "usage":{"prompt_tokens":7,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":5}}
    });
    let srv = FakeServer::start(vec![Reply::Json(body)]).await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    let (r, events) = once(p.as_ref(), &simple_request()).await;
    let r = r.unwrap();
    assert_eq!(r.text, "Sure.");
    assert_eq!(r.tool_calls[0].id, "c9");
    assert_eq!(r.tool_calls[0].arguments, r#"{"command":"pwd"}"#);
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (7, 4));
    assert_eq!(r.usage.cached_input_tokens, 5);
    assert_eq!(text_of(&events), "Sure.");
}

/// A declined answer: streamed as `refusal` deltas, or whole in the message's `refusal` field,
/// or flagged by `content_filter` — the text is the refusal and the finish says it declined.
#[tokio::test]
async fn a_refusal_is_the_text_and_the_finish_says_it_declined() {
    let refusal_chunk =
        |t: &str| json!({"choices":[{"index":0,"delta":{"refusal":t},"finish_reason":null}]});
    let streamed = Reply::Sse(
        openai_sse(&[
            refusal_chunk("I can't "),
            refusal_chunk("help with that."),
            finish_chunk("stop"),
            usage_chunk(9, 5),
        ]),
        End::Close,
    );
    let whole = Reply::Json(json!({
        "id":"x","object":"chat.completion",
        "choices":[{"index":0,"message":{"role":"assistant","content":null,
            "refusal":"I won't do that."},"finish_reason":"stop"}],
    }));
    let filtered = Reply::Sse(
        openai_sse(&[text_chunk("Part"), finish_chunk("content_filter")]),
        End::Close,
    );
    let srv = FakeServer::start(vec![streamed, whole, filtered]).await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    let (r, events) = once(p.as_ref(), &simple_request()).await;
    let r = r.unwrap();
    assert_eq!(r.text, "I can't help with that.");
    assert_eq!(text_of(&events), "I can't help with that.");
    assert_eq!(r.finish, FinishReason::Refusal);
    let r = once(p.as_ref(), &simple_request()).await.0.unwrap();
    assert_eq!(
        (r.text.as_str(), &r.finish),
        ("I won't do that.", &FinishReason::Refusal)
    );
    let r = once(p.as_ref(), &simple_request()).await.0.unwrap();
    assert_eq!(
        (r.text.as_str(), &r.finish),
        ("Part", &FinishReason::Refusal)
    );
    assert_eq!(FinishReason::Refusal.as_str(), "refusal");
}

#[tokio::test]
async fn rate_limit_then_success_retries() {
    let srv = FakeServer::start(vec![
        Reply::Status {
            status: 429,
            headers: vec![("retry-after", "0".into())],
            body: r#"{"error":{"message":"slow down"}}"#.into(),
        },
        good_stream(),
    ])
    .await;
    let cfg = config(ProviderKind::OpenAi, &srv.base, "gpt-x");
    let out = with_retries(cfg, &simple_request()).await;
    assert_eq!(out.result.unwrap().text, "Hello");
    assert_eq!(out.attempts, 2);
    assert_eq!(out.errors.len(), 1);
    assert!(
        out.errors[0].contains("rate limited (429)"),
        "{}",
        out.errors[0]
    );
    assert!(out.errors[0].contains("slow down"));
    assert_eq!(srv.requests().len(), 2);
}

#[tokio::test]
async fn auth_failure_fails_fast_without_leaking_key() {
    let srv = FakeServer::start(vec![Reply::status(
        401,
        &format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#),
    )])
    .await;
    let base = format!("{}/v1", srv.base);
    let cfg = config(ProviderKind::OpenAi, &base, "gpt-x");
    let out = with_retries(cfg, &simple_request()).await;
    assert_eq!(out.attempts, 1);
    let err = out.result.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err:?}");
    assert!(!err.retryable());
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("auth refused (401) by {base} for model gpt-x: ")),
        "{msg}"
    );
    assert!(!msg.contains(KEY), "{msg}");
    assert!(!format!("{err:?}").contains(KEY));
    assert!(!out.errors.iter().any(|e| e.contains(KEY)));
}

#[tokio::test]
async fn not_found_and_bad_request_fail_fast() {
    for (status, check) in [
        (
            404,
            (|e: &LlmError| matches!(e, LlmError::NotFound { .. })) as fn(&LlmError) -> bool,
        ),
        (400, |e: &LlmError| matches!(e, LlmError::BadRequest { .. })),
    ] {
        let srv = FakeServer::start(vec![Reply::status(
            status,
            r#"{"error":{"message":"model nope does not exist"}}"#,
        )])
        .await;
        let cfg = config(ProviderKind::OpenAi, &srv.base, "nope");
        let out = with_retries(cfg, &simple_request()).await;
        let err = out.result.unwrap_err();
        assert!(check(&err), "{err:?}");
        assert_eq!(out.attempts, 1);
        assert!(err.to_string().contains("model nope does not exist"));
        assert!(err.to_string().contains(&srv.base));
        assert_eq!(srv.requests().len(), 1);
    }
}

#[tokio::test]
async fn server_errors_exhaust_retries() {
    let srv = FakeServer::start(vec![Reply::status(500, "upstream exploded")]).await;
    let cfg = config(ProviderKind::OpenAi, &srv.base, "gpt-x");
    let out = with_retries(cfg, &simple_request()).await;
    assert_eq!(out.attempts, 3);
    assert_eq!(out.errors.len(), 3);
    assert_eq!(srv.requests().len(), 3);
    let err = out.result.unwrap_err();
    assert!(
        matches!(err, LlmError::Server { status: 500, .. }),
        "{err:?}"
    );
    assert!(
        out.errors[2].starts_with("attempt 3: server error (500)"),
        "{:?}",
        out.errors
    );
}

#[tokio::test]
async fn dropped_stream_is_protocol_error_and_retried() {
    let dropped = Reply::Sse(
        vec![format!("data: {}\n\n", text_chunk("partial"))],
        End::Close,
    );
    let srv = FakeServer::start(vec![dropped.clone(), good_stream()]).await;
    let cfg = config(ProviderKind::OpenAi, &srv.base, "gpt-x");
    let out = with_retries(cfg, &simple_request()).await;
    assert_eq!(out.result.unwrap().text, "Hello");
    assert_eq!(out.attempts, 2);
    assert!(
        out.errors[0].contains("stream dropped mid-answer"),
        "{:?}",
        out.errors
    );

    // A single attempt against a dropping server reports Protocol.
    let srv = FakeServer::start(vec![dropped]).await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    let err = once(p.as_ref(), &simple_request()).await.0.unwrap_err();
    assert!(matches!(err, LlmError::Protocol { .. }), "{err:?}");
    assert!(err.retryable());
    assert!(err.to_string().contains("gpt-x"));
}

#[tokio::test]
async fn aborted_connection_is_protocol_error() {
    let abort = std::sync::Arc::new(tokio::sync::Notify::new());
    let srv = FakeServer::start(vec![Reply::Sse(
        vec![format!("data: {}\n\n", text_chunk("par"))],
        End::AbortOn(abort.clone()),
    )])
    .await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    let (tx, mut rx) = unbounded_channel();
    let req = simple_request();
    let cancel = CancellationToken::new();
    let call = p.complete_once(&req, &tx, &cancel);
    let killer = async {
        // Abort only once the client is reading the body.
        assert_eq!(rx.recv().await, Some(StreamEvent::TextDelta("par".into())));
        abort.notify_one();
    };
    let (r, ()) = tokio::join!(call, killer);
    let err = r.unwrap_err();
    assert!(matches!(err, LlmError::Protocol { .. }), "{err:?}");
}

#[tokio::test]
async fn garbage_data_line_is_protocol_error() {
    let srv = FakeServer::start(vec![Reply::Sse(
        vec![
            "data: <html>oops</html>\n\n".into(),
            "data: [DONE]\n\n".into(),
        ],
        End::Close,
    )])
    .await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    let err = once(p.as_ref(), &simple_request()).await.0.unwrap_err();
    match &err {
        LlmError::Protocol { detail, .. } => assert!(detail.contains("non-JSON"), "{detail}"),
        other => panic!("expected protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn error_object_inside_stream_is_mapped() {
    let srv = FakeServer::start(vec![Reply::Sse(
        vec!["data: {\"error\":{\"message\":\"overloaded\",\"code\":503}}\n\n".into()],
        End::Close,
    )])
    .await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    let err = once(p.as_ref(), &simple_request()).await.0.unwrap_err();
    assert!(
        matches!(err, LlmError::Server { status: 503, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn cancellation_mid_stream_returns_promptly() {
    let srv = FakeServer::start(vec![Reply::Sse(
        vec![format!("data: {}\n\n", text_chunk("first"))],
        End::Hang,
    )])
    .await;
    let cfg = config(ProviderKind::OpenAi, &srv.base, "gpt-x");
    let p = build_provider(cfg.clone()).unwrap();
    let (tx, mut rx) = unbounded_channel();
    let cancel = CancellationToken::new();
    let req = simple_request();
    let call = complete_with_retry(p.as_ref(), &cfg.retry, &req, &tx, &cancel);
    let canceller = async {
        assert_eq!(
            rx.recv().await,
            Some(StreamEvent::TextDelta("first".into()))
        );
        cancel.cancel();
        Instant::now()
    };
    let (out, cancelled_at) = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::join!(call, canceller)
    })
    .await
    .expect("call must end after cancel");
    assert!(cancelled_at.elapsed() < Duration::from_secs(2));
    assert!(
        matches!(out.result, Err(LlmError::Cancelled)),
        "{:?}",
        out.result
    );
    assert_eq!(out.attempts, 1);
}

#[tokio::test]
async fn hanging_stream_times_out() {
    let srv = FakeServer::start(vec![Reply::Sse(
        vec![format!("data: {}\n\n", text_chunk("x"))],
        End::Hang,
    )])
    .await;
    let mut cfg = config(ProviderKind::OpenAi, &srv.base, "gpt-x");
    cfg.timeout = Duration::from_millis(200);
    let p = build_provider(cfg).unwrap();
    let err = once(p.as_ref(), &simple_request()).await.0.unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err:?}");
    assert!(err.retryable());
    assert!(err.to_string().contains("gpt-x"));
}

/// The timeout bounds the server's silence, not the answer: a slow stream whose parts keep
/// coming runs past it and is read whole, in one attempt.
#[tokio::test]
async fn a_slow_stream_that_keeps_coming_is_not_cut() {
    let words: Vec<String> = (0..12).map(|i| format!("w{i} ")).collect();
    let mut chunks: Vec<String> = words
        .iter()
        .map(|w| format!("data: {}\n\n", text_chunk(w)))
        .collect();
    chunks.push(format!("data: {}\n\n", finish_chunk("stop")));
    chunks.push("data: [DONE]\n\n".into());
    let srv = FakeServer::start(vec![Reply::SsePaced(chunks, Duration::from_millis(100))]).await;
    let mut cfg = config(ProviderKind::OpenAi, &srv.base, "gpt-x");
    cfg.timeout = Duration::from_millis(600);
    let started = Instant::now();
    let out = with_retries(cfg.clone(), &simple_request()).await;
    let response = out.result.expect("the stream was read whole");
    assert!(
        started.elapsed() > cfg.timeout,
        "the answer took longer than the timeout"
    );
    assert_eq!(response.text, words.concat());
    assert_eq!(out.attempts, 1);
    assert_eq!(srv.requests().len(), 1);
}

/// An error status whose body never ends is still reported by its status, once the server
/// has been silent for the timeout.
#[tokio::test]
async fn an_error_status_whose_body_never_ends_is_reported_by_its_status() {
    let srv = FakeServer::start(vec![Reply::StatusHanging(400)]).await;
    let mut cfg = config(ProviderKind::OpenAi, &srv.base, "gpt-x");
    cfg.timeout = Duration::from_millis(200);
    let p = build_provider(cfg).unwrap();
    let (out, ()) = tokio::time::timeout(Duration::from_secs(10), async {
        (once(p.as_ref(), &simple_request()).await, ())
    })
    .await
    .expect("the call must end");
    let err = out.0.unwrap_err();
    assert!(err.to_string().contains("400"), "{err}");
}

#[tokio::test]
async fn connection_refused_is_connection_error() {
    // Bind then drop a listener to get a port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}/v1");
    let p = build_provider(config(ProviderKind::OpenAi, &base, "gpt-x")).unwrap();
    let err = once(p.as_ref(), &simple_request()).await.0.unwrap_err();
    assert!(matches!(err, LlmError::Connection { .. }), "{err:?}");
    assert!(err.retryable());
    assert!(err.to_string().contains(&base), "{err}");
}

#[test]
fn debug_redacts_key_and_config_validation() {
    let cfg = config(ProviderKind::OpenAi, "http://x", "m");
    let dbg = format!("{cfg:?}");
    assert!(!dbg.contains(KEY), "{dbg}");
    assert!(dbg.contains("redacted"));

    let mut bad = cfg.clone();
    bad.base_url = Some("ftp://x".into());
    assert!(matches!(
        build_provider(bad),
        Err(LlmError::InvalidConfig(_))
    ));
    let mut default = cfg;
    default.base_url = None;
    assert_eq!(
        build_provider(default).unwrap().endpoint(),
        "https://api.openai.com/v1"
    );
}

#[tokio::test]
async fn pictures_go_as_content_parts_and_tool_pictures_follow_in_a_user_message() {
    let srv = FakeServer::start(vec![good_stream()]).await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    once(p.as_ref(), &picture_request()).await.0.unwrap();
    let b = &srv.requests()[0].body;
    assert_eq!(
        b["messages"],
        json!([
            {"role":"user","content":[
                {"type":"text","text":"what is this?"},
                {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0K"}},
            ]},
            {"role":"assistant","content":null,"tool_calls":[
                {"id":"call_p","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.png\"}"}},
                {"id":"call_t","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}},
            ]},
            // A tool message cannot hold pictures: its text stays, the picture follows the
            // turn's tool messages in a user message.
            {"role":"tool","tool_call_id":"call_p","content":"a.png: image/png, 8 bytes"},
            {"role":"tool","tool_call_id":"call_t","content":"plain text"},
            {"role":"user","content":[
                {"type":"text","text":"Pictures from the tool result call_p:"},
                {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4AAQ"}},
            ]},
            // A message without pictures is sent as plain string content, as before.
            {"role":"user","content":"thanks"},
        ])
    );
}

#[tokio::test]
async fn tool_pictures_at_the_end_of_the_request_still_follow_their_tool_messages() {
    let srv = FakeServer::start(vec![good_stream()]).await;
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-x")).unwrap();
    let mut r = picture_request();
    r.messages.pop(); // the request ends with the tool results
    once(p.as_ref(), &r).await.0.unwrap();
    let msgs = srv.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(msgs.len(), 5, "{msgs:#?}");
    assert_eq!(msgs[3]["role"], "tool");
    assert_eq!(msgs[4]["role"], "user");
    assert_eq!(
        msgs[4]["content"][1]["image_url"]["url"],
        "data:image/jpeg;base64,/9j/4AAQ"
    );
}

#[test]
fn an_openai_endpoint_takes_pictures_only_when_its_config_says_so() {
    let mut cfg = config(ProviderKind::OpenAi, "http://127.0.0.1:9", "gpt-x");
    assert!(!build_provider(cfg.clone()).unwrap().takes_pictures());
    cfg.takes_pictures = true;
    assert!(build_provider(cfg).unwrap().takes_pictures());
}

#[tokio::test]
async fn a_reading_asks_for_the_lightest_thinking_level_the_endpoint_lists() {
    let srv = FakeServer::start(vec![good_stream()]).await;
    let mut listed = config(ProviderKind::OpenAi, &srv.base, "gpt-5");
    listed.thinking_levels = vec!["minimal".into(), "low".into(), "high".into()];
    let reading = ModelRequest {
        lightest_thinking: true,
        ..simple_request()
    };
    let p = build_provider(listed.clone()).unwrap();
    once(p.as_ref(), &reading).await.0.unwrap();
    once(p.as_ref(), &simple_request()).await.0.unwrap();
    // No levels listed: nothing is sent, whatever the request asks.
    let p = build_provider(config(ProviderKind::OpenAi, &srv.base, "gpt-4o")).unwrap();
    once(p.as_ref(), &reading).await.0.unwrap();
    let sent: Vec<Value> = srv
        .requests()
        .iter()
        .map(|r| r.body["reasoning_effort"].clone())
        .collect();
    assert_eq!(sent, [json!("minimal"), Value::Null, Value::Null]);
}

#[tokio::test]
async fn an_endpoints_output_cap_goes_out_and_a_smaller_asked_cap_wins() {
    let srv = FakeServer::start(vec![good_stream(), good_stream(), good_stream()]).await;
    let mut cfg = config(ProviderKind::OpenAi, &srv.base, "qwen");
    cfg.max_output_tokens = Some(8000);
    let p = build_provider(cfg).unwrap();
    assert_eq!(p.output_cap(), Some(8000));
    let mut r = simple_request();
    for asked in [None, Some(256), Some(9000)] {
        r.max_tokens = asked;
        once(p.as_ref(), &r).await.0.unwrap();
    }
    let caps: Vec<Value> = srv
        .requests()
        .iter()
        .map(|q| q.body["max_tokens"].clone())
        .collect();
    assert_eq!(caps, vec![json!(8000), json!(256), json!(8000)]);
}
