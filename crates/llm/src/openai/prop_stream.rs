//! Property test for the OpenAI stream assembler: the answer it builds does
//! not depend on how the server cut the answer into deltas nor on how the
//! network cut the bytes.

use proptest::prelude::*;
use serde_json::json;

use super::Assembler;
use crate::FinishReason;
use crate::prop_sse::{Answer, answer, drive, split_str, streamed, target};

/// The answer rendered as a chat-completions SSE stream.
fn render(a: &Answer) -> Vec<u8> {
    let mut s = String::new();
    let mut chunk = |delta: serde_json::Value| {
        let v = json!({"choices": [{"index": 0, "delta": delta}]});
        s.push_str(&format!("data: {v}\n\n"));
    };
    chunk(json!({"role": "assistant"}));
    for piece in split_str(&a.text, &a.cuts) {
        chunk(json!({"content": piece}));
    }
    for (i, (name, args)) in a.calls.iter().enumerate() {
        chunk(
            json!({"tool_calls": [{"index": i, "id": format!("call_{i}"), "type": "function",
            "function": {"name": name, "arguments": ""}}]}),
        );
        for piece in split_str(args, &a.cuts) {
            chunk(json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}));
        }
    }
    let finish = if a.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    s.push_str(&format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    ));
    s.push_str(&format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}})
    ));
    s.into_bytes()
}

proptest! {
    #![proptest_config(crate::prop_sse::cases(256))]

    /// Property: for any answer, any cutting of it into deltas and any cutting
    /// of the bytes into chunks, the assembled response carries exactly the
    /// answer's text and tool calls (ids, names, full arguments, in order),
    /// and the streamed deltas add up to the same text and arguments.
    #[test]
    fn same_answer_from_any_chunking(a in answer()) {
        let http = target();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let resp = drive(&render(&a), &a.byte_cuts, Assembler::new(&http, &tx)).expect("assembles");
        prop_assert_eq!(&resp.text, &a.text);
        let got: Vec<(String, String, String)> = resp
            .tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
            .collect();
        let want: Vec<(String, String, String)> = a
            .calls
            .iter()
            .enumerate()
            .map(|(i, (n, args))| (format!("call_{i}"), n.clone(), args.clone()))
            .collect();
        prop_assert_eq!(got, want);
        let finish = if a.calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls };
        prop_assert_eq!(resp.finish, finish);
        prop_assert_eq!(resp.usage.input_tokens, 7);

        let (text, args) = streamed(&mut rx, a.calls.len());
        prop_assert_eq!(text, a.text.clone());
        let want_args: Vec<String> = a.calls.iter().map(|(_, x)| x.clone()).collect();
        prop_assert_eq!(args, want_args);
    }
}
