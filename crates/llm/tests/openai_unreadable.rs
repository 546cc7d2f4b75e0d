//! An answer the server made but could not read (llama.cpp's and Ollama's tool-call parsers
//! answer 500 for a malformed call): the tool calls that streamed before the error are kept,
//! a whole one as the answer, one cut short as an answer ended `unreadable`.
mod support;

use serde_json::{Value, json};
use support::*;
use troupe_llm::{FinishReason, LlmError, ProviderKind};

/// llama.cpp's words when the model's output does not parse as text or a tool call.
const PEG_ERROR: &str = r#"{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}"#;

/// One streamed piece of tool call 0: its id and name with the first piece, then arguments.
fn call_piece(first: bool, args: &str) -> Value {
    let function = if first {
        json!({"name": "write_file", "arguments": args})
    } else {
        json!({"arguments": args})
    };
    let mut piece = json!({"index": 0, "function": function});
    if first {
        piece["id"] = json!("call_1");
        piece["type"] = json!("function");
    }
    json!({"choices":[{"index":0,"delta":{"tool_calls":[piece]},"finish_reason":null}]})
}

/// The stream llama.cpp sends for a call wrapped in a code fence: the fence as text, the call
/// as it parsed it (`args` in two pieces), then the parse error in place of a finish.
fn fenced_call_then_error(args: (&str, &str)) -> Reply {
    let lines = vec![
        format!("data: {}\n\n", text_chunk("```json\n")),
        format!("data: {}\n\n", call_piece(true, args.0)),
        format!("data: {}\n\n", call_piece(false, args.1)),
        format!(
            "data: {}\n\n",
            serde_json::from_str::<Value>(PEG_ERROR).unwrap()
        ),
    ];
    Reply::Sse(lines, End::Close)
}

#[tokio::test]
async fn a_tool_call_streamed_whole_before_the_parse_error_is_the_answer() {
    let srv = FakeServer::start(vec![fenced_call_then_error((
        r#"{"path": "a.txt", "#,
        r#""content": "hi"}"#,
    ))])
    .await;
    let cfg = config(ProviderKind::OpenAi, &srv.base, "qwen");
    let out = with_retries(cfg, &simple_request()).await;
    let answer = out.result.unwrap();
    assert_eq!(out.attempts, 1, "{:?}", out.errors);
    assert_eq!(answer.finish, FinishReason::ToolCalls);
    assert_eq!(answer.tool_calls.len(), 1);
    assert_eq!(answer.tool_calls[0].name, "write_file");
    assert_eq!(
        answer.tool_calls[0].arguments,
        r#"{"path": "a.txt", "content": "hi"}"#
    );
    assert_eq!(answer.text, "", "the fence alone is not the model's words");
}

#[tokio::test]
async fn a_tool_call_cut_short_by_the_parse_error_is_kept_as_far_as_it_came() {
    // Arguments that never closed: asking again would get the same call, so the answer is
    // the call as far as it came, ended `unreadable`, for the model to be told why.
    let srv = FakeServer::start(vec![
        fenced_call_then_error((r#"{"path": "a.txt", "#, r#""content": "say "hi"#)),
        good_stream(),
    ])
    .await;
    let cfg = config(ProviderKind::OpenAi, &srv.base, "qwen");
    let out = with_retries(cfg, &simple_request()).await;
    assert_eq!(out.attempts, 1, "{:?}", out.errors);
    let answer = out.result.unwrap();
    assert_eq!(answer.finish, FinishReason::Unreadable);
    assert_eq!(answer.tool_calls.len(), 1);
    assert_eq!(
        answer.tool_calls[0].arguments,
        r#"{"path": "a.txt", "content": "say "hi"#
    );
    assert_eq!(answer.text, "", "the fence alone is not the model's words");
}

#[tokio::test]
async fn a_parse_error_before_any_named_call_is_retried() {
    let srv = FakeServer::start(vec![
        Reply::Sse(
            vec![
                format!("data: {}\n\n", text_chunk("<tool_call>")),
                format!(
                    "data: {}\n\n",
                    serde_json::from_str::<Value>(PEG_ERROR).unwrap()
                ),
            ],
            End::Close,
        ),
        good_stream(),
    ])
    .await;
    let cfg = config(ProviderKind::OpenAi, &srv.base, "qwen");
    let out = with_retries(cfg, &simple_request()).await;
    assert_eq!(out.attempts, 2);
    let answer = out.result.unwrap();
    assert_eq!(
        (answer.text.as_str(), answer.tool_calls.len()),
        ("Hello", 0)
    );
}

#[test]
fn unreadable_answers_are_told_from_other_server_errors() {
    let server = |detail: &str| LlmError::from_status(500, "http://e", "m", detail.into(), None);
    for words in [
        "The model produced output that does not match the expected peg-native format",
        "Failed to parse input at pos 395: <|tool_call_start|>[f(x=1)]",
        "error parsing tool call: raw='{\"input\":1}]', err=invalid character ']'",
    ] {
        assert!(server(words).is_unreadable_answer(), "{words}");
    }
    assert!(!server("out of memory").is_unreadable_answer());
    // A request the server refuses is the client's to mend, not the model's.
    let bad = LlmError::from_status(400, "http://e", "m", "error parsing tool call".into(), None);
    assert!(!bad.is_unreadable_answer());
}
