//! Wake guidance (AG): an Agenda delivery that wakes a loop still executing carries the
//! remaining one-shot waits with their cancel calls, and in that turn effectful tools are
//! refused; a pending stop suppresses the guidance.

mod support;

use serde_json::json;
use std::sync::Arc;
use support::{Reply, World, call, tool_results, user_texts, world_clocked};
use troupe_core::{Clock, ManualClock, ThreadId};
use troupe_workflows::SetWorkflowRequest;
use troupe_workflows::agenda::service::{self, NewAgendaRequest};
use troupe_workflows::agenda::wake;

const T0: i64 = 1_700_000_000_000;

fn clocked() -> (World, ManualClock) {
    let clock = ManualClock::new(T0);
    let w = world_clocked(
        Arc::new(tempfile::tempdir().unwrap()),
        "wake-boot",
        Arc::new(clock.clone()),
    );
    (w, clock)
}

fn watch(w: &World, t: ThreadId, seconds: i64, payload: &str) -> String {
    service::create(
        w.wf.store(),
        t,
        &NewAgendaRequest {
            session_id: None,
            title: None,
            trigger: json!({"kind": "delay", "seconds": seconds}),
            payload: payload.into(),
            auto_done: true,
            wake: None,
            silent: None,
        },
    )
    .unwrap()
    .id
    .to_string()
}

fn lightloop() -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "lightloop".into(),
        instructions: Some("ship the release".into()),
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

fn guidance(w: &World, t: ThreadId) -> Option<String> {
    w.wf.store().read(|tx| wake::guidance(tx, t)).unwrap()
}

#[tokio::test]
async fn a_watch_waking_a_light_loop_lists_the_remaining_waits_and_refuses_other_effects() {
    let (w, clock) = clocked();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop()).await.unwrap();
    let first = watch(&w, t, 600, "is CI green?");
    let second = watch(&w, t, 1200, "is the deploy done?");
    w.provider.push(Reply::Text("waiting for CI".into()));
    w.turn(s, "start").await;
    assert_eq!(w.provider.calls(), 1, "the watches hold the continuation");

    // The first watch fires: its delivery wakes the loop with the guidance.
    w.provider.push(Reply::Tools(vec![call(
        "x",
        "shell",
        json!({"command": "echo hi > f"}),
    )]));
    w.provider.push(Reply::Tools(vec![call(
        "c",
        "agenda_cancel",
        json!({"id": second}),
    )]));
    w.provider.push(Reply::Tools(vec![call(
        "s",
        "loop_stop",
        json!({"summary": "released"}),
    )]));
    w.provider.push(Reply::Tools(vec![call(
        "a",
        "light_loop_approve",
        json!({"summary": "ok"}),
    )]));
    clock.advance(600_000);
    w.wf.agenda_tick(clock.now_ms()).await.unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while w.wf.workflow(s).unwrap().last_terminal.is_none() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the loop did not end"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    w.idle(s).await;
    let reqs = w.provider.requests();
    let woke = user_texts(&reqs[1]).join("\n");
    assert!(woke.contains("<light-loop-agenda-wakeup>"), "{woke}");
    assert!(
        woke.contains(&format!("agenda_cancel(id=\"{second}\")")),
        "{woke}"
    );
    assert!(
        !woke.contains(&format!("agenda_cancel(id=\"{first}\")")),
        "the delivered watch is done: {woke}"
    );
    assert!(woke.contains("loop_stop"), "{woke}");
    let refused = tool_results(&reqs[2]).join("\n");
    assert!(
        refused.contains("shell is refused: in this turn an Agenda delivery woke the loop"),
        "{refused}"
    );
    // The wake turn is offered only the Agenda's tools and the stop tool.
    let mut offered: Vec<String> = reqs[1].tools.iter().map(|t| t.name.clone()).collect();
    offered.sort();
    assert_eq!(offered, ["agenda_cancel", "agenda_list", "loop_stop"]);
    assert!(
        !w.wf
            .store()
            .read(|tx| Ok(std::path::Path::new(&tx.thread(t)?.workspace)
                .join("f")
                .exists()))
            .unwrap()
    );
    let cancelled = tool_results(&reqs[3]).pop().unwrap();
    assert!(
        !cancelled.contains("refused"),
        "agenda_cancel acts: {cancelled}"
    );
}

#[tokio::test]
async fn guidance_is_given_only_to_loops_still_executing() {
    let (w, _clock) = clocked();
    let s = w.session();
    let t = w.thread(s);
    assert_eq!(guidance(&w, t), None, "no loop, no guidance");
    w.wf.set_workflow(s, lightloop()).await.unwrap();
    let id = watch(&w, t, 600, "x");
    let g = guidance(&w, t).unwrap();
    assert!(g.contains(&format!("agenda_cancel(id=\"{id}\")")), "{g}");
    // A pending claim suppresses it: a review is already on its way.
    let mut slot = w.wf.workflow(s).unwrap().slot.unwrap();
    slot["stop_request"] =
        json!({"summary": "done", "requested_at": T0, "requester_message_id": 1});
    w.set_slot(s, slot);
    assert_eq!(guidance(&w, t), None);
}

#[tokio::test]
async fn a_running_blueprint_loop_without_intent_gets_its_own_guidance() {
    let (w, _clock) = clocked();
    let s = w.session();
    let t = w.thread(s);
    let note =
        w.wf.store()
            .write(|tx| {
                tx.create_note(&troupe_store::NewNote {
                    kind: troupe_store::NoteKind::Blueprint,
                    title: "bp".into(),
                    body: "b".into(),
                })
            })
            .unwrap()
            .id;
    let hang = Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(hang.clone()));
    let l =
        w.wf.create_blueprint_loop(troupe_workflows::NewBlueprintLoopRequest {
            session_id: s,
            note_id: note,
            note_version: None,
            run_mode: None,
            instruction: None,
            max_iterations: None,
            max_model_calls: None,
        })
        .await
        .unwrap();
    hang.notified().await;
    let g = guidance(&w, t).unwrap();
    assert!(
        g.contains("<blueprint-loop-agenda-wakeup>") && g.contains("blueprint_loop_stop"),
        "{g}"
    );
    w.wf.cancel_blueprint_loop(l.record.id).await.unwrap();
    assert_eq!(guidance(&w, t), None, "an ended loop gets none");
}
