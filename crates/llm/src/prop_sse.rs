//! Property tests for the SSE decoder: how the network splits a byte stream
//! must not change the events it yields.

use proptest::prelude::*;

use crate::sse::{SseEvent, SseParser};

/// `n` cases unless PROPTEST_CASES says otherwise (CI bounds the run with it).
pub(crate) fn cases(n: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n);
    ProptestConfig::with_cases(n)
}

/// Feed `bytes` cut at the given points (any order, duplicates allowed), then finish.
pub(crate) fn decode_split(bytes: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.push(0);
    points.push(bytes.len());
    points.sort_unstable();
    points.dedup();
    let mut parser = SseParser::default();
    let mut out = Vec::new();
    for w in points.windows(2) {
        out.extend(parser.push(&bytes[w[0]..w[1]]));
    }
    out.extend(parser.finish());
    out
}

/// One SSE line as a server may write it: fields, comments, blank lines,
/// CRLF or LF endings, multi-byte text.
fn line() -> impl Strategy<Value = String> {
    let value = "[a-zé€😀 {}:\"\\[\\]]{0,12}";
    prop_oneof![
        value.prop_map(|v| format!("data: {v}")),
        value.prop_map(|v| format!("data:{v}")),
        "[a-z_]{1,10}".prop_map(|v| format!("event: {v}")),
        value.prop_map(|v| format!(": {v}")),
        Just(String::new()),
        Just("data".to_string()),
        "[a-z]{1,5}".prop_map(|f| format!("{f}: ignored")),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec((line(), any::<bool>()), 0..24),
        any::<bool>(),
    )
        .prop_map(|(lines, final_newline)| {
            let mut s = String::new();
            let n = lines.len();
            for (i, (l, crlf)) in lines.into_iter().enumerate() {
                s.push_str(&l);
                if i + 1 < n || final_newline {
                    s.push_str(if crlf { "\r\n" } else { "\n" });
                }
            }
            s.into_bytes()
        })
}

proptest! {
    #![proptest_config(cases(256))]

    /// Property: the events decoded from a byte stream are the same however
    /// the stream is cut into chunks (including cuts inside `\r\n` and inside
    /// a multi-byte UTF-8 character) as when it arrives in one piece.
    #[test]
    fn same_events_however_the_stream_is_split(
        bytes in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        let whole = decode_split(&bytes, &[]);
        prop_assert_eq!(decode_split(&bytes, &cuts), whole);
    }

    /// Property: byte-at-a-time delivery (the worst split) yields the same
    /// events, and every `data:` value written to an event appears in it.
    #[test]
    fn byte_at_a_time_equals_whole(values in prop::collection::vec("[a-zé😀 ]{0,8}", 1..8)) {
        let mut s = String::new();
        for v in &values {
            s.push_str(&format!("data: {v}\n\n"));
        }
        let bytes = s.into_bytes();
        let cuts: Vec<usize> = (0..bytes.len()).collect();
        let events = decode_split(&bytes, &cuts);
        let data: Vec<String> = events.into_iter().map(|e| e.data).collect();
        prop_assert_eq!(data, values);
    }
}

/// Cut `s` into pieces at the given char positions (mod its length), never
/// inside a UTF-8 character; the pieces concatenate back to `s`.
pub(crate) fn split_str(s: &str, cuts: &[usize]) -> Vec<String> {
    let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    let mut points: Vec<usize> = cuts.iter().map(|c| bounds[c % bounds.len()]).collect();
    points.push(0);
    points.push(s.len());
    points.sort_unstable();
    points.dedup();
    points
        .windows(2)
        .map(|w| s[w[0]..w[1]].to_string())
        .collect()
}

/// An answer a model could stream: text and tool calls (name, raw arguments).
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub text: String,
    pub calls: Vec<(String, String)>,
    /// Where the text and each call's arguments are cut into deltas.
    pub cuts: Vec<usize>,
    /// Where the rendered byte stream is cut into network chunks.
    pub byte_cuts: Vec<usize>,
}

pub(crate) fn answer() -> impl Strategy<Value = Answer> {
    (
        "[a-zé€😀 .,\"\\\\\n]{0,40}",
        prop::collection::vec(("[a-z_]{1,12}", "[a-z0-9é😀 {}:,\"\\[\\]]{0,30}"), 0..4),
        prop::collection::vec(any::<usize>(), 0..8),
        prop::collection::vec(any::<usize>(), 0..32),
    )
        .prop_map(|(text, calls, cuts, byte_cuts)| Answer {
            text,
            calls,
            cuts,
            byte_cuts,
        })
}

/// Drive a handler the way `HttpTarget::read_stream` does, from raw bytes.
pub(crate) fn drive<H: crate::http::StreamHandler>(
    bytes: &[u8],
    cuts: &[usize],
    mut handler: H,
) -> Result<crate::ModelResponse, crate::LlmError> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.push(0);
    points.push(bytes.len());
    points.sort_unstable();
    points.dedup();
    let mut parser = SseParser::default();
    for w in points.windows(2) {
        for ev in parser.push(&bytes[w[0]..w[1]]) {
            if handler.on_event(ev)? {
                return handler.finish(true);
            }
        }
    }
    for ev in parser.finish() {
        if handler.on_event(ev)? {
            return handler.finish(true);
        }
    }
    handler.finish(false)
}

pub(crate) fn target() -> crate::http::HttpTarget {
    let mut cfg = crate::EndpointConfig::new(crate::ProviderKind::OpenAi, "m");
    cfg.base_url = Some("http://127.0.0.1:9".into());
    crate::http::HttpTarget::new(&cfg).expect("target")
}

/// The text and each tool call's arguments as the stream's deltas delivered them.
pub(crate) fn streamed(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<crate::StreamEvent>,
    calls: usize,
) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut args = vec![String::new(); calls];
    while let Ok(ev) = rx.try_recv() {
        match ev {
            crate::StreamEvent::TextDelta(t) => text.push_str(&t),
            crate::StreamEvent::ToolCallArgsDelta { index, delta } => args[index].push_str(&delta),
            _ => {}
        }
    }
    (text, args)
}
