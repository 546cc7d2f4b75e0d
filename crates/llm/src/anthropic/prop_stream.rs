//! Property test for the Anthropic Messages stream assembler: the answer it
//! builds does not depend on how the server cut the answer into deltas nor on
//! how the network cut the bytes.

use proptest::prelude::*;
use serde_json::json;

use super::Assembler;
use crate::FinishReason;
use crate::prop_sse::{Answer, answer, drive, split_str, streamed, target};

/// The answer rendered as a Messages SSE stream (named events, a text block
/// then one tool_use block per call, pings in between).
fn render(a: &Answer) -> Vec<u8> {
    let mut s = String::new();
    let mut ev = |name: &str, v: serde_json::Value| {
        s.push_str(&format!("event: {name}\ndata: {v}\n\n"));
    };
    ev(
        "message_start",
        json!({"type": "message_start",
        "message": {"usage": {"input_tokens": 7, "output_tokens": 1}}}),
    );
    let mut block = 0;
    if !a.text.is_empty() {
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": block,
            "content_block": {"type": "text", "text": ""}}),
        );
        for piece in split_str(&a.text, &a.cuts) {
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": block,
                "delta": {"type": "text_delta", "text": piece}}),
            );
        }
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": block}),
        );
        block += 1;
    }
    ev("ping", json!({"type": "ping"}));
    for (i, (name, args)) in a.calls.iter().enumerate() {
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": block,
            "content_block": {"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": {}}}),
        );
        for piece in split_str(args, &a.cuts) {
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": block,
                "delta": {"type": "input_json_delta", "partial_json": piece}}),
            );
        }
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": block}),
        );
        block += 1;
    }
    let stop = if a.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop},
        "usage": {"output_tokens": 3}}),
    );
    ev("message_stop", json!({"type": "message_stop"}));
    s.into_bytes()
}

proptest! {
    #![proptest_config(crate::prop_sse::cases(256))]

    /// Property: for any answer, any cutting of it into deltas and any cutting
    /// of the bytes into chunks, the assembled response carries exactly the
    /// answer's text and tool calls (ids, names, arguments — `{}` for a call
    /// that streamed none), and the streamed deltas add up to the same.
    #[test]
    fn same_answer_from_any_chunking(a in answer()) {
        let http = target();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let resp = drive(&render(&a), &a.byte_cuts, Assembler::new(&http, &tx)).expect("assembles");
        prop_assert_eq!(&resp.text, &a.text);
        let want_args: Vec<String> = a
            .calls
            .iter()
            .map(|(_, x)| if x.is_empty() { "{}".to_string() } else { x.clone() })
            .collect();
        let got: Vec<(String, String, String)> = resp
            .tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
            .collect();
        let want: Vec<(String, String, String)> = a
            .calls
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (format!("toolu_{i}"), n.clone(), want_args[i].clone()))
            .collect();
        prop_assert_eq!(got, want);
        let finish = if a.calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls };
        prop_assert_eq!(resp.finish, finish);
        prop_assert_eq!((resp.usage.input_tokens, resp.usage.output_tokens), (7, 3));

        let (text, args) = streamed(&mut rx, a.calls.len());
        prop_assert_eq!(text, a.text.clone());
        prop_assert_eq!(args, want_args);
    }
}
