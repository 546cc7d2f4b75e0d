//! A small Server-Sent Events reader for tests: reqwest streams the body, and the text is
//! parsed by hand into messages (`id`, `event`, `data`), sent over a channel as they arrive.

#![allow(dead_code)]

use futures::StreamExt;
use std::time::Duration;
use tokio::sync::mpsc;

#[derive(Clone, Debug, PartialEq)]
pub struct SseMessage {
    pub id: Option<String>,
    pub event: String,
    pub data: String,
}

impl SseMessage {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("bad JSON in {self:?}: {e}"))
    }
    pub fn event_id(&self) -> Option<i64> {
        self.id
            .as_deref()
            .map(|i| i.parse().unwrap_or_else(|_| panic!("bad id {i:?}")))
    }
}

/// Splits a byte stream into SSE messages. Comments (keep-alives) are skipped.
#[derive(Default)]
pub struct SseParser {
    buf: String,
}

impl SseParser {
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseMessage> {
        self.buf.push_str(&String::from_utf8_lossy(chunk));
        let mut out = Vec::new();
        while let Some(end) = self.buf.find("\n\n") {
            let block: String = self.buf.drain(..end + 2).collect();
            let mut msg = SseMessage {
                id: None,
                event: "message".into(),
                data: String::new(),
            };
            let mut has_data = false;
            for line in block.lines() {
                if line.is_empty() || line.starts_with(':') {
                    continue;
                }
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => msg.id = Some(value.to_string()),
                    "event" => msg.event = value.to_string(),
                    "data" => {
                        if has_data {
                            msg.data.push('\n');
                        }
                        msg.data.push_str(value);
                        has_data = true;
                    }
                    _ => {}
                }
            }
            if has_data {
                out.push(msg);
            }
        }
        out
    }
}

/// An open event stream.
pub struct SseStream {
    pub rx: mpsc::UnboundedReceiver<SseMessage>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SseStream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SseStream {
    /// Connect; returns once the response headers are in (the server has subscribed by then).
    pub async fn connect(
        client: &reqwest::Client,
        url: &str,
        last_event_id: Option<&str>,
    ) -> SseStream {
        let mut req = client.get(url).header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id);
        }
        let resp = req.send().await.expect("connect to the event stream");
        Self::from_response(resp)
    }

    /// Start reading an event-stream response (until then, the server's sends back up).
    pub fn from_response(resp: reqwest::Response) -> SseStream {
        assert_eq!(resp.status(), 200, "event stream status");
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        assert!(ct.starts_with("text/event-stream"), "content type {ct}");
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut body = resp.bytes_stream();
            let mut parser = SseParser::default();
            while let Some(Ok(chunk)) = body.next().await {
                for m in parser.push(&chunk) {
                    if tx.send(m).is_err() {
                        return;
                    }
                }
            }
        });
        SseStream { rx, task }
    }

    /// Messages until `done` says the last one finished the wait; panics after `limit`.
    pub async fn until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&SseMessage) -> bool,
    ) -> Vec<SseMessage> {
        let mut got = Vec::new();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(m)) => {
                    let stop = done(&m);
                    got.push(m);
                    if stop {
                        return got;
                    }
                }
                Ok(None) => panic!("the event stream ended early; got {got:#?}"),
                Err(_) => panic!("timed out waiting on the event stream; got {got:#?}"),
            }
        }
    }
}

#[test]
fn parser_handles_split_chunks_and_comments() {
    let mut p = SseParser::default();
    assert!(p.push(b": keep-alive\n\nid: 3\nevent: run_").is_empty());
    let got = p.push(b"ended\ndata: {\"a\":1}\n\nevent: delta\ndata:x\n\n");
    assert_eq!(
        got,
        vec![
            SseMessage {
                id: Some("3".into()),
                event: "run_ended".into(),
                data: "{\"a\":1}".into()
            },
            SseMessage {
                id: None,
                event: "delta".into(),
                data: "x".into()
            },
        ]
    );
}
