//! Tool sources: tools whose set changes while the engine runs are offered and dispatched like
//! fixed registrations, pass the same guards and ledger, and may settle an effect as unknown.

mod support;

use async_trait::async_trait;
use serde_json::json;
use std::sync::{Arc, Mutex};
use support::{Reply, build, call};
use troupe_core::effect::EffectOutcome;
use troupe_core::inbox::Delivery;
use troupe_core::thread::{Interaction, Thread};
use troupe_engine::extension::*;
use troupe_llm::ToolSpec;

/// Replies with a fixed answer and counts its calls.
struct Answer {
    reply: ToolReply,
    calls: Mutex<usize>,
}

#[async_trait]
impl ToolHandler for Answer {
    async fn call(&self, _ctx: &ToolCallContext, _arguments: &str) -> ToolReply {
        *self.calls.lock().unwrap() += 1;
        self.reply.clone()
    }
}

/// A source whose tools a test changes as it goes.
#[derive(Default)]
struct Changing {
    tools: Mutex<Vec<ToolRegistration>>,
}

impl ToolSource for Changing {
    fn name(&self) -> &str {
        "changing"
    }
    fn tools(&self, _thread: &Thread) -> Vec<ToolRegistration> {
        self.tools.lock().unwrap().clone()
    }
}

fn registration(name: &str, effectful: bool, handler: Arc<Answer>) -> ToolRegistration {
    ToolRegistration {
        owner: "test".into(),
        spec: ToolSpec {
            name: name.into(),
            description: format!("{name} for tests"),
            parameters: json!({"type": "object", "properties": {}}),
        },
        effectful,
        read_only: false,
        available: Arc::new(|_| true),
        handler,
    }
}

fn answer(reply: ToolReply) -> Arc<Answer> {
    Arc::new(Answer {
        reply,
        calls: Mutex::new(0),
    })
}

/// Refuses every effect, as a hold's guard does.
struct NoEffects;
impl EffectGuard for NoEffects {
    fn name(&self) -> &str {
        "no_effects"
    }
    fn check(&self, _ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        Err("effects are refused now".into())
    }
}

#[tokio::test]
async fn a_sourced_tool_appears_when_its_source_offers_it_and_is_called() {
    let source = Arc::new(Changing::default());
    let h = build(
        vec![
            Reply::Text("nothing to call yet".into()),
            Reply::Tools(String::new(), vec![call("c1", "late__tool", "{}")]),
        ],
        {
            let source = source.clone();
            move |b| b.tool_source(source)
        },
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("one"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let first = &h.provider.requests()[0];
    assert!(!first.tools.iter().any(|s| s.name == "late__tool"));

    let handler = answer(ToolReply::ok("late answer"));
    source
        .tools
        .lock()
        .unwrap()
        .push(registration("late__tool", false, handler.clone()));
    h.engine
        .deliver(t, Delivery::user_task("two"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let second = &h.provider.requests()[1];
    assert!(second.tools.iter().any(|s| s.name == "late__tool"));
    assert_eq!(*handler.calls.lock().unwrap(), 1);
    let third = &h.provider.requests()[2];
    let last = format!("{:?}", third.messages.last().unwrap());
    assert!(last.contains("late answer"), "{last}");
}

#[tokio::test]
async fn a_sourced_effectful_tool_passes_the_guards_and_a_read_only_one_does_not_need_to() {
    let source = Arc::new(Changing::default());
    let effectful = answer(ToolReply::ok("acted"));
    let read_only = answer(ToolReply::ok("looked"));
    source.tools.lock().unwrap().extend([
        registration("s__act", true, effectful.clone()),
        registration("s__look", false, read_only.clone()),
    ]);
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![call("c1", "s__act", "{}"), call("c2", "s__look", "{}")],
        )],
        {
            let source = source.clone();
            move |b| b.tool_source(source).guard(Arc::new(NoEffects))
        },
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    assert_eq!(
        *effectful.calls.lock().unwrap(),
        0,
        "the guard refused the effect"
    );
    assert_eq!(
        *read_only.calls.lock().unwrap(),
        1,
        "a read-only tool runs where effects are refused"
    );
}

#[tokio::test]
async fn an_unknown_reply_settles_the_effect_as_unknown_and_the_model_reads_it_once() {
    let source = Arc::new(Changing::default());
    source.tools.lock().unwrap().push(registration(
        "s__act",
        true,
        answer(ToolReply::unknown("sent, then no answer")),
    ));
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![call("c1", "s__act", "{}")],
        )],
        {
            let source = source.clone();
            move |b| b.tool_source(source)
        },
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let effects = h
        .engine
        .store()
        .read(|tx| tx.effects_for_thread(t))
        .unwrap();
    assert_eq!(effects.len(), 1);
    assert_eq!(effects[0].outcome, EffectOutcome::Unknown);
    // The result told the model; no later turn names it again.
    let unnamed = h
        .engine
        .store()
        .read(|tx| tx.unnamed_unknown_effects(t))
        .unwrap();
    assert!(unnamed.is_empty());
    // Nor does it hold the next line back: the model already read what happened.
    let before = h.provider.calls();
    h.engine
        .deliver(t, Delivery::user_task("next"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    assert!(h.provider.calls() > before, "the next line started a turn");
}

#[tokio::test]
async fn a_sourced_name_taken_by_a_builtin_is_left_out() {
    let source = Arc::new(Changing::default());
    let handler = answer(ToolReply::ok("impostor"));
    source
        .tools
        .lock()
        .unwrap()
        .push(registration("shell", false, handler.clone()));
    let h = build(vec![Reply::Text("hi".into())], {
        let source = source.clone();
        move |b| b.tool_source(source)
    });
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let req = &h.provider.requests()[0];
    assert_eq!(req.tools.iter().filter(|s| s.name == "shell").count(), 1);
    let shell = req.tools.iter().find(|s| s.name == "shell").unwrap();
    assert!(
        !shell.description.contains("for tests"),
        "the built-in stays"
    );
}

/// Narrows every turn to `read_file`, keeping sourced tools without an effect, as a hold does.
struct HeldTurn;
impl ToolScope for HeldTurn {
    fn name(&self) -> &str {
        "held"
    }
    fn narrow(
        &self,
        _thread: &Thread,
        _store: &troupe_store::Store,
    ) -> Result<Option<Narrowed>, String> {
        Ok(Some(Narrowed {
            only: vec!["read_file".into()],
            reason: "held".into(),
            keep_sourced_read_only: true,
        }))
    }
}

#[tokio::test]
async fn a_narrowing_that_keeps_sourced_read_only_tools_offers_them_and_not_the_effectful() {
    let source = Arc::new(Changing::default());
    let look = answer(ToolReply::ok("looked"));
    let act = answer(ToolReply::ok("acted"));
    source.tools.lock().unwrap().extend([
        registration("s__look", false, look.clone()),
        registration("s__act", true, act.clone()),
    ]);
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![call("c1", "s__look", "{}"), call("c2", "s__act", "{}")],
        )],
        {
            let source = source.clone();
            move |b| b.tool_source(source).tool_scope(Arc::new(HeldTurn))
        },
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let names: Vec<String> = h.provider.requests()[0]
        .tools
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(names, ["read_file", "s__look"]);
    assert_eq!(*look.calls.lock().unwrap(), 1);
    assert_eq!(
        *act.calls.lock().unwrap(),
        0,
        "an effect is refused by the narrowing"
    );
}
