mod support;

use std::time::{Duration, Instant};

use support::{drain, once, picture, text_of};
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;
use troupe_llm::{
    ChatMessage, EndpointConfig, FinishReason, LlmError, ModelRequest, Provider, ProviderKind,
    RetryPolicy, Script, ScriptStep, ScriptedProvider, StreamEvent, ToolCall, build_provider,
    complete_with_retry,
};

const DEMO: &str = r#"{
  "name": "demo",
  "steps": [
    { "text": "Let me look.", "tool_calls": [ { "name": "shell", "arguments": { "command": "ls" } } ] },
    { "text": "Broken args.", "tool_calls": [ { "name": "shell", "arguments": "{\"command\": \"ls" } ] },
    { "text": "Done: all good.", "chunk_delay_ms": 1, "chunks": 5 },
    { "error": { "kind": "server", "status": 503, "message": "overloaded" } }
  ],
  "rules": [ { "when_user_contains": "HELLO", "reply": { "text": "Hi!" } } ]
}"#;

fn req(messages: Vec<ChatMessage>) -> ModelRequest {
    ModelRequest {
        system: "s".into(),
        messages,
        tools: Default::default(),
        max_tokens: None,
        lightest_thinking: false,
    }
}

fn assistant_turns(n: usize) -> Vec<ChatMessage> {
    let mut m = vec![ChatMessage::user("start")];
    for i in 0..n {
        m.push(ChatMessage::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: format!("c{i}"),
                name: "shell".into(),
                arguments: "{}".into(),
            }],
        });
        m.push(ChatMessage::tool_result(format!("c{i}"), "out"));
    }
    m
}

fn demo() -> ScriptedProvider {
    ScriptedProvider::new(Script::from_json_str(DEMO).unwrap()).with_model("fake-1")
}

#[tokio::test]
async fn step_selected_by_assistant_count() {
    let p = demo();
    assert_eq!(p.endpoint(), "scripted:demo");
    assert_eq!(p.model(), "fake-1");

    let (r, events) = once(&p, &req(assistant_turns(0))).await;
    let r = r.unwrap();
    assert_eq!(r.text, "Let me look.");
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(
        r.tool_calls,
        vec![ToolCall {
            id: "call_0_0".into(),
            name: "shell".into(),
            arguments: r#"{"command":"ls"}"#.into()
        }]
    );
    assert!(r.usage.input_tokens > 0 && r.usage.output_tokens > 0);
    assert_eq!(r.usage.cached_input_tokens, 0);
    assert_eq!(events[0], StreamEvent::TextDelta("Let me look.".into()));
    assert_eq!(
        events[1],
        StreamEvent::ToolCallStart {
            index: 0,
            id: "call_0_0".into(),
            name: "shell".into()
        }
    );

    // Same request again gives the same answer: selection is stateless.
    let again = once(&p, &req(assistant_turns(0))).await.0.unwrap();
    assert_eq!(again, r);

    let r1 = once(&p, &req(assistant_turns(1))).await.0.unwrap();
    assert_eq!(r1.text, "Broken args.");
    assert_eq!(r1.tool_calls[0].id, "call_1_0");
    // Raw string arguments are passed through verbatim, even if malformed.
    assert_eq!(r1.tool_calls[0].arguments, "{\"command\": \"ls");
}

#[tokio::test]
async fn chunked_text_streams_in_pieces() {
    let p = demo();
    let (r, events) = once(&p, &req(assistant_turns(2))).await;
    let r = r.unwrap();
    assert_eq!(r.finish, FinishReason::Stop);
    assert_eq!(events.len(), 5);
    assert_eq!(text_of(&events), "Done: all good.");
    assert_eq!(r.text, "Done: all good.");
}

/// A text step says how it ended: cut off at the cap, or declined.
#[tokio::test]
async fn a_text_step_can_end_cut_off_or_declined() {
    let script = Script::from_json_str(
        r#"{"steps":[{"text":"The first half","finish":"length"},
                     {"text":"I can't help with that.","finish":"refusal"}]}"#,
    )
    .unwrap();
    let p = ScriptedProvider::new(script);
    let r = once(&p, &req(assistant_turns(0))).await.0.unwrap();
    assert_eq!(
        (r.text.as_str(), r.finish),
        ("The first half", FinishReason::Length)
    );
    let r = once(&p, &req(assistant_turns(1))).await.0.unwrap();
    assert_eq!(r.finish, FinishReason::Refusal);
}

#[tokio::test]
async fn error_step_and_exhaustion() {
    let p = demo();
    let err = once(&p, &req(assistant_turns(3))).await.0.unwrap_err();
    assert!(
        matches!(err, LlmError::Server { status: 503, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("scripted:demo") && err.to_string().contains("fake-1"));

    let err = once(&p, &req(assistant_turns(4))).await.0.unwrap_err();
    match &err {
        LlmError::ScriptExhausted { script, step, .. } => {
            assert_eq!(script, "demo");
            assert_eq!(*step, 4);
        }
        other => panic!("{other:?}"),
    }
    assert!(!err.retryable());
    assert!(err.to_string().contains("step 4"), "{err}");

    // Retrying an error step replays it (stateless) until attempts run out.
    let (tx, _rx) = unbounded_channel();
    let policy = RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(1),
    };
    let out = complete_with_retry(
        &p,
        &policy,
        &req(assistant_turns(3)),
        &tx,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(out.attempts, 2);
}

#[tokio::test]
async fn repeat_last_when_exhausted() {
    let s = Script::from_json_str(
        r#"{"steps":[{"text":"a"},{"text":"b"}],"on_exhausted":"repeat_last"}"#,
    )
    .unwrap();
    let p = ScriptedProvider::new(s);
    assert_eq!(
        once(&p, &req(assistant_turns(7))).await.0.unwrap().text,
        "b"
    );
}

#[tokio::test]
async fn rules_answer_first_call_after_matching_user_message() {
    let p = demo();
    let mut m = assistant_turns(2);
    m.push(ChatMessage::user("well, hello there"));
    let r = once(&p, &req(m.clone())).await.0.unwrap();
    assert_eq!(r.text, "Hi!");
    assert!(r.tool_calls.is_empty());

    // Not the first call after the user message any more: back to steps (index 3 = error).
    m.push(ChatMessage::assistant("Hi!"));
    m.push(ChatMessage::tool_result("x", "y"));
    assert!(once(&p, &req(m)).await.0.is_err());

    // Non-matching user text falls through to the step.
    let mut m = assistant_turns(0);
    m.push(ChatMessage::user("goodbye"));
    assert_eq!(once(&p, &req(m)).await.0.unwrap().text, "Let me look.");
}

#[tokio::test]
async fn cancellation_during_chunk_delay() {
    let s = Script::new(
        "slow",
        vec![ScriptStep {
            chunks: 50,
            chunk_delay_ms: 10_000,
            ..ScriptStep::text("x".repeat(100))
        }],
    );
    let p = ScriptedProvider::new(s);
    let (tx, mut rx) = unbounded_channel();
    let cancel = CancellationToken::new();
    let r = req(vec![ChatMessage::user("go")]);
    let call = p.complete_once(&r, &tx, &cancel);
    let canceller = async {
        assert!(matches!(rx.recv().await, Some(StreamEvent::TextDelta(_))));
        cancel.cancel();
        Instant::now()
    };
    let (res, at) = tokio::time::timeout(Duration::from_secs(5), async {
        tokio::join!(call, canceller)
    })
    .await
    .unwrap();
    assert!(matches!(res, Err(LlmError::Cancelled)), "{res:?}");
    assert!(at.elapsed() < Duration::from_secs(1));
    assert!(drain(&mut rx).is_empty());
}

#[test]
fn load_errors_name_file_and_problem() {
    let dir = std::env::temp_dir().join(format!("troupe-llm-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            r#"{"steps":[{"text":"a"},{"text":"b"},{"text":"c"},{"tool_calls":[{"name":""}]}]}"#,
            "step 3: tool_calls[0].name must be a non-empty string",
        ),
        (
            r#"{"steps":[{"txt":"a"}]}"#,
            "step 0: unknown field \"txt\"",
        ),
        (
            r#"{"steps":[{"error":{"kind":"boom"}}]}"#,
            "step 0: error.kind \"boom\" is not one of",
        ),
        (
            r#"{"steps":[{"text":"a","chunks":0}]}"#,
            "step 0: chunks must be at least 1",
        ),
        (
            r#"{"steps":[],"rules":[{"reply":{"text":"x"}}]}"#,
            "rules[0].when_user_contains must be a non-empty string",
        ),
        (
            r#"{"steps":[{"text":"a"}],"on_exhausted":"loop"}"#,
            "on_exhausted must be",
        ),
        (
            r#"{"steps":[{"text":"a","finish":"tool_calls"}]}"#,
            "step 0: finish must be \"stop\", \"length\" or \"refusal\"",
        ),
        (
            r#"{"steps":[{"tool_calls":[{"name":"shell"}],"finish":"length"}]}"#,
            "step 0: finish is for a text answer",
        ),
        (r#"{"steps": [ "#, "invalid JSON"),
        (r#"{"steps":[]}"#, "at least one step or rule"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let path = dir.join(format!("case{i}.json"));
        std::fs::write(&path, text).unwrap();
        let err = Script::load(&path).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains(want), "case {i}: {err}");
    }
    let missing = dir.join("missing.json");
    let err = Script::load(&missing).unwrap_err().to_string();
    assert!(
        err.contains("missing.json") && err.contains("cannot read"),
        "{err}"
    );

    // build_provider loads the file named by base_url.
    let good = dir.join("good.json");
    std::fs::write(&good, DEMO).unwrap();
    let mut cfg = EndpointConfig::new(ProviderKind::Scripted, "fake-2");
    cfg.base_url = Some(good.display().to_string());
    let p = build_provider(cfg).unwrap();
    assert_eq!(p.endpoint(), format!("scripted:{}", good.display()));
    assert_eq!(p.model(), "fake-2");
    let no_path = EndpointConfig::new(ProviderKind::Scripted, "m");
    assert!(matches!(
        build_provider(no_path),
        Err(LlmError::InvalidConfig(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn pictures_do_not_change_the_scripted_reply_and_the_flag_comes_from_the_config() {
    let p = demo();
    assert!(!p.takes_pictures());
    let p = p.with_takes_pictures(true);
    assert!(p.takes_pictures());
    // A rule matches on the text alone; the picture beside it changes nothing.
    let mut m = assistant_turns(0);
    m.push(ChatMessage::user_with_images(
        "hello, see this",
        vec![picture("image/png", "iVBORw0K")],
    ));
    assert_eq!(once(&p, &req(m)).await.0.unwrap().text, "Hi!");
    // A tool result with a picture counts like any other: the step follows the assistant count.
    let mut m = assistant_turns(0);
    m.push(ChatMessage::Assistant {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: "c".into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        }],
    });
    m.push(ChatMessage::ToolResult {
        call_id: "c".into(),
        content: "a picture".into(),
        is_error: false,
        images: vec![picture("image/png", "iVBORw0K")],
    });
    assert_eq!(once(&p, &req(m)).await.0.unwrap().text, "Broken args.");

    // build_provider carries the config's flag.
    let dir = tempdir_for("pictures");
    let path = dir.join("demo.json");
    std::fs::write(&path, DEMO).unwrap();
    let mut cfg = EndpointConfig::new(ProviderKind::Scripted, "m");
    cfg.base_url = Some(path.display().to_string());
    assert!(!build_provider(cfg.clone()).unwrap().takes_pictures());
    cfg.takes_pictures = true;
    assert!(build_provider(cfg).unwrap().takes_pictures());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempdir_for(what: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("troupe-llm-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
