//! Tool interceptors: a layer claims calls by tool name and stands around them — it may
//! answer in the tool's place, change the arguments the tool gets, and see or change the
//! result — while unclaimed tools run as before, and a claimed call never runs before its
//! reply is committed (the interceptor may write the store).

mod support;

use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::{Reply, build, call};
use troupe_core::inbox::Delivery;
use troupe_core::thread::Interaction;
use troupe_engine::extension::*;
use troupe_llm::ToolSpec;

/// Echoes the arguments it got, and whether its reply was committed when it ran.
#[derive(Default)]
struct Echo {
    seen: Mutex<Vec<(String, bool)>>,
}

#[async_trait]
impl ToolHandler for Echo {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        self.seen
            .lock()
            .unwrap()
            .push((arguments.to_string(), ctx.message_id.is_some()));
        ToolReply::ok(format!("tool saw {arguments}"))
    }
}

/// Claims `x__*`: answers itself when asked to, drops a `secret` argument, and marks results.
struct Around;

#[async_trait]
impl ToolInterceptor for Around {
    fn name(&self) -> &str {
        "around"
    }
    fn claims(&self, tool: &str) -> bool {
        tool.starts_with("x__")
    }
    async fn before(&self, call: &InterceptedCall<'_>, arguments: &str) -> BeforeCall {
        assert_eq!(call.owner, "test");
        let mut args: Value = serde_json::from_str(arguments).unwrap();
        if args.get("answer_me").is_some() {
            return BeforeCall::Answer(ToolReply::ok(format!("{} answered by around", call.tool)));
        }
        match args.as_object_mut().and_then(|m| m.remove("secret")) {
            Some(_) => BeforeCall::Rewrite(args.to_string()),
            None => BeforeCall::Proceed,
        }
    }
    async fn after(
        &self,
        _call: &InterceptedCall<'_>,
        arguments: &str,
        reply: ToolReply,
    ) -> ToolReply {
        ToolReply {
            content: format!("{} [model sent {arguments}]", reply.content),
            ..reply
        }
    }
}

fn tool(name: &str, read_only: bool, handler: Arc<Echo>) -> ToolRegistration {
    ToolRegistration {
        owner: "test".into(),
        spec: ToolSpec {
            name: name.into(),
            description: format!("{name} for tests"),
            parameters: json!({"type": "object", "properties": {}}),
        },
        effectful: false,
        read_only,
        available: Arc::new(|_| true),
        handler,
    }
}

/// What the model read back for each call, in order.
fn results(h: &support::Harness) -> Vec<String> {
    let last = h.provider.requests().last().unwrap().clone();
    last.messages
        .iter()
        .map(|m| format!("{m:?}"))
        .filter(|m| m.contains("saw") || m.contains("answered"))
        .collect()
}

#[tokio::test]
async fn a_claimed_call_is_rewritten_answered_or_marked_and_others_run_as_before() {
    let x = Arc::new(Echo::default());
    let y = Arc::new(Echo::default());
    let h = build(
        vec![
            // Alone in its hop, an unclaimed read-only call runs before its reply's commit.
            Reply::Tools(
                String::new(),
                vec![call("c0", "y__render", r#"{"secret":"kept"}"#)],
            ),
            Reply::Tools(
                String::new(),
                vec![
                    call("c1", "x__render", r#"{"a":1,"secret":"s"}"#),
                    call("c2", "x__render", r#"{"answer_me":true}"#),
                ],
            ),
            Reply::Text("done".into()),
        ],
        {
            let (x, y) = (x.clone(), y.clone());
            move |b| {
                b.tool(tool("x__render", true, x))
                    .unwrap()
                    .tool(tool("y__render", true, y))
                    .unwrap()
                    .interceptor(Arc::new(Around))
            }
        },
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;

    // The claimed read-only tool got the rewritten arguments once (the answered call never
    // reached it), and only after its reply was committed; the unclaimed one ran before.
    assert_eq!(
        *x.seen.lock().unwrap(),
        vec![(r#"{"a":1}"#.to_string(), true)]
    );
    assert_eq!(
        *y.seen.lock().unwrap(),
        vec![(r#"{"secret":"kept"}"#.to_string(), false)]
    );
    let read = results(&h);
    assert_eq!(read.len(), 3, "{read:?}");
    assert!(
        read[1].contains(r#"tool saw {\"a\":1} [model sent {\"a\":1,\"secret\":\"s\"}]"#),
        "{}",
        read[1]
    );
    assert!(
        read[2].contains(r#"x__render answered by around [model sent {\"answer_me\":true}]"#),
        "{}",
        read[2]
    );
    assert!(
        read[0].contains(r#"tool saw {\"secret\":\"kept\"}"#) && !read[0].contains("model sent"),
        "{}",
        read[0]
    );
}
