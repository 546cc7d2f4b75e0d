//! The continuation guard on both loops that continue a session by themselves: a model whose
//! replies are plain text (it never asks for review) is stopped by the model-call budget or the
//! no-progress streak, Continue grants exactly one more call, and continuations are spaced.
//! Scripted model (an empty queue answers "done"), a manual clock, the tick called by hand.

mod blueprint_loop_support;
mod support;

use blueprint_loop_support::{blueprint, request};
use serde_json::json;
use std::sync::Arc;
use support::{Reply, World, call, world_guarded};
use troupe_core::continuation_guard::{GuardLimits, GuardPause};
use troupe_core::pause::PauseReason;
use troupe_core::{ManualClock, SessionId};
use troupe_workflows::SetWorkflowRequest;

const T0: i64 = 1_700_000_000_000;

fn guarded(max_model_calls: u32, no_progress_limit: u32, spacing_ms: i64) -> (World, ManualClock) {
    let clock = ManualClock::new(T0);
    let w = world_guarded(
        Arc::new(tempfile::tempdir().unwrap()),
        "test-boot",
        Arc::new(clock.clone()),
        GuardLimits {
            max_model_calls,
            no_progress_limit,
            spacing_ms,
        },
    );
    (w, clock)
}

/// Which loop the scenario runs.
#[derive(Copy, Clone)]
enum Kind {
    LightLoop,
    BlueprintLoop,
}

/// Start the loop on a fresh session and wait until the chain of continuations it starts has
/// stopped (paused, or held back by the spacing).
async fn start(w: &World, kind: Kind) -> SessionId {
    let s = w.session();
    match kind {
        Kind::LightLoop => {
            w.wf.set_workflow(
                s,
                SetWorkflowRequest {
                    kind: "lightloop".into(),
                    instructions: Some("write hello.txt".into()),
                    max_iterations: None,
                    max_model_calls: None,
                    mode: None,
                    goal: None,
                },
            )
            .await
            .unwrap();
            w.turn(s, "go").await;
        }
        Kind::BlueprintLoop => {
            let note = blueprint(w);
            w.wf.create_blueprint_loop(request(s, note)).await.unwrap();
            w.idle(s).await;
        }
    }
    s
}

fn latch(w: &World, s: SessionId) -> Option<(PauseReason, String)> {
    let t = w.wf.store().read(|tx| tx.thread(w.thread(s))).unwrap();
    t.paused
        .map(|p| (p.reason, p.description.unwrap_or_default()))
}

fn guard(w: &World, s: SessionId) -> troupe_workflows::guard::GuardView {
    w.wf.workflow(s)
        .unwrap()
        .guard
        .expect("the loop has a guard")
}

async fn budget_pauses_the_loop(kind: Kind) {
    let (w, _) = guarded(3, 0, 0);
    let s = start(&w, kind).await;
    assert_eq!(
        w.provider.calls(),
        3,
        "three calls, then the budget is spent"
    );
    let (reason, description) = latch(&w, s).expect("the session is latched");
    assert_eq!(reason, PauseReason::Workflow);
    assert!(
        description.contains("model-call budget spent: 3 of 3"),
        "{description}"
    );
    let g = guard(&w, s);
    assert_eq!((g.model_calls, g.max_model_calls), (3, 3));
    assert_eq!(g.paused, Some(GuardPause::ModelCallBudgetExhausted));
    // The workflow view shows why, next to the latch.
    let view = serde_json::to_value(w.wf.workflow(s).unwrap()).unwrap();
    assert_eq!(view["guard"]["paused"], "model_call_budget_exhausted");
    assert_eq!(view["paused"]["reason"], "workflow");
}

async fn continue_grants_one_call(kind: Kind) {
    let (w, _) = guarded(2, 0, 0);
    let s = start(&w, kind).await;
    assert_eq!(w.provider.calls(), 2);
    for granted in 1..=2 {
        w.wf.continue_session(s).await.unwrap();
        w.idle(s).await;
        assert_eq!(
            w.provider.calls(),
            2 + granted,
            "Continue grants exactly one call"
        );
        let g = guard(&w, s);
        assert_eq!(g.max_model_calls, 2 + granted as u32);
        assert!(
            latch(&w, s).is_some(),
            "paused again after the granted call"
        );
    }
}

async fn no_progress_pauses_the_loop(kind: Kind) {
    let (w, _) = guarded(0, 3, 0);
    // The first turn answers the request; the second continuation does some work (a tool call,
    // then a reply), which resets the streak; after it, three idle continuations in a row.
    w.provider.push(Reply::Text("looking".into()));
    w.provider.push(Reply::Text("still looking".into()));
    w.provider.push(Reply::Tools(vec![call(
        "l1",
        "list_dir",
        json!({"path": "."}),
    )]));
    w.provider.push(Reply::Text("listed".into()));
    let s = start(&w, kind).await;
    assert_eq!(
        w.provider.calls(),
        7,
        "1 + 1 idle + 2 working + 3 idle continuations"
    );
    let (reason, description) = latch(&w, s).expect("the session is latched");
    assert_eq!(reason, PauseReason::Workflow);
    assert!(
        description.contains("3 continuations in a row made no tool call"),
        "{description}"
    );
    let g = guard(&w, s);
    assert_eq!(g.paused, Some(GuardPause::NoProgress));
    assert_eq!(g.no_progress_streak, 3);
    // Continue allows one more continuation without progress, then pauses again.
    w.wf.continue_session(s).await.unwrap();
    w.idle(s).await;
    assert_eq!(w.provider.calls(), 8);
    assert!(latch(&w, s).is_some());
}

async fn continuations_are_spaced_by_the_tick(kind: Kind) {
    let (w, clock) = guarded(0, 0, 1_000);
    let s = start(&w, kind).await;
    // The first continuation goes at once; the next is held back until a second has passed.
    assert_eq!(w.provider.calls(), 2);
    let g = guard(&w, s);
    assert_eq!(g.next_continuation_at, Some(T0 + 1_000));
    assert!(latch(&w, s).is_none(), "spacing is not a pause");
    assert!(w.wf.continuation_tick(T0 + 999).await.unwrap().is_empty());
    assert_eq!(w.provider.calls(), 2);
    clock.set(T0 + 1_000);
    let driven = w.wf.continuation_tick(T0 + 1_000).await.unwrap();
    assert_eq!(driven, vec![w.thread(s)]);
    w.idle(s).await;
    assert_eq!(w.provider.calls(), 3);
    // A repeat tick at the same time finds nothing due.
    assert!(w.wf.continuation_tick(T0 + 1_000).await.unwrap().is_empty());
    assert_eq!(guard(&w, s).next_continuation_at, Some(T0 + 2_000));
}

#[tokio::test]
async fn lightloop_pauses_when_budget_spent() {
    budget_pauses_the_loop(Kind::LightLoop).await;
}

#[tokio::test]
async fn continue_grants_exactly_one_call() {
    continue_grants_one_call(Kind::LightLoop).await;
}

#[tokio::test]
async fn no_progress_streak_pauses_loop() {
    no_progress_pauses_the_loop(Kind::LightLoop).await;
}

#[tokio::test]
async fn continuations_are_spaced() {
    continuations_are_spaced_by_the_tick(Kind::LightLoop).await;
}

#[tokio::test]
async fn blueprint_loop_pauses_when_budget_spent() {
    budget_pauses_the_loop(Kind::BlueprintLoop).await;
}

#[tokio::test]
async fn blueprint_loop_continue_grants_exactly_one_call() {
    continue_grants_one_call(Kind::BlueprintLoop).await;
}

#[tokio::test]
async fn blueprint_loop_no_progress_streak_pauses_loop() {
    no_progress_pauses_the_loop(Kind::BlueprintLoop).await;
}

#[tokio::test]
async fn blueprint_loop_continuations_are_spaced() {
    continuations_are_spaced_by_the_tick(Kind::BlueprintLoop).await;
}

#[tokio::test]
async fn a_loop_request_sets_its_own_budget_and_zero_is_unlimited() {
    let (w, _) = guarded(3, 0, 0);
    let s = w.session();
    w.wf.set_workflow(
        s,
        SetWorkflowRequest {
            kind: "lightloop".into(),
            instructions: Some("write hello.txt".into()),
            max_iterations: None,
            max_model_calls: Some(5),
            mode: None,
            goal: None,
        },
    )
    .await
    .unwrap();
    w.turn(s, "go").await;
    assert_eq!(w.provider.calls(), 5);
    assert_eq!(guard(&w, s).max_model_calls, 5);
    let note = blueprint(&w);
    let other = w.session();
    let mut req = request(other, note);
    req.max_model_calls = Some(0);
    // With no budget (and no streak limit) nothing pauses it; the model ends it by claiming
    // completion, which its auditor approves.
    for i in 0..3 {
        w.provider.push(Reply::Text(format!("step {i}")));
    }
    w.provider.push(blueprint_loop_support::stop("s1", "done"));
    w.provider.push(blueprint_loop_support::approve("a1"));
    w.wf.create_blueprint_loop(req).await.unwrap();
    blueprint_loop_support::until("the loop to complete", || {
        w.wf.workflow(other).unwrap().blueprint_loop.is_none()
    })
    .await;
    assert!(
        latch(&w, other).is_none(),
        "an unlimited budget never pauses"
    );
}
