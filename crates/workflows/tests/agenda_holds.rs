//! A routine (an Agenda item) under a hold (digest A HOLD-W1, W4, W6): coming due while its
//! Bot is held it starts nothing, the suppressed wake is logged once, and after the lift it
//! runs once, for its latest due time.

mod support;

use serde_json::json;
use std::sync::Arc;
use support::{World, user_texts, world_as_served};
use troupe_collab::holds::{HoldRequest, ScopeRequest};
use troupe_core::{Clock, ManualClock, SessionId};
use troupe_workflows::agenda::service::{self, NewAgendaRequest, delivery_key};

const T0: i64 = 1_700_000_000_000;
const PERIOD_MS: i64 = 600_000;

fn bot_of(w: &World, s: SessionId) -> troupe_core::BotId {
    w.wf.store().read(|tx| tx.session(s)).unwrap().bot_ids[0]
}

#[tokio::test]
async fn s_hold_9_routine_due_thrice_runs_once_after_lift() {
    let clock = ManualClock::new(T0);
    let w = world_as_served(Arc::new(clock.clone()));
    let s = w.session();
    let t = w.thread(s);
    let routine = service::create(
        w.wf.store(),
        t,
        &NewAgendaRequest {
            session_id: None,
            title: Some("standup".into()),
            trigger: json!({"kind": "every", "seconds": PERIOD_MS / 1000}),
            payload: "post the standup summary".into(),
            auto_done: false,
            wake: None,
            silent: None,
        },
    )
    .unwrap();

    let (hold, created) =
        w.wf.collab()
            .post_hold(HoldRequest {
                scope: ScopeRequest {
                    kind: "bot".into(),
                    bot_id: Some(bot_of(&w, s)),
                    session_id: None,
                    task_id: None,
                    ticket_id: None,
                    turn_id: None,
                },
                session_id: None,
                action: None,
            })
            .await
            .unwrap();
    assert!(created);

    // Due three times while the Bot is held: nothing runs.
    for n in 1..=3 {
        clock.advance(PERIOD_MS);
        let report = w.wf.agenda_tick(clock.now_ms()).await.unwrap();
        assert_eq!(report.delivered, vec![routine.id], "due time {n}");
    }
    assert_eq!(w.provider.calls(), 0, "a held Bot's routine started a turn");

    // One suppressed wake, naming the routine's cause and the hold.
    let suppressed =
        w.wf.store()
            .read(|tx| tx.events_of_kinds_since(&["wake_suppressed"], 0, 100))
            .unwrap();
    let ours: Vec<_> = suppressed
        .iter()
        .filter(|e| e.thread_id == Some(t))
        .collect();
    assert_eq!(ours.len(), 1, "{suppressed:?}");
    assert_eq!(ours[0].payload["hold_ids"], json!([hold.hold.id.0]));

    // Only the latest due time waits for the lift; the earlier two count as not run.
    let latest = T0 + 3 * PERIOD_MS;
    let queued = w.wf.store().read(|tx| tx.inbox(t)).unwrap();
    assert_eq!(queued.len(), 1, "{queued:?}");
    assert_eq!(
        queued[0].delivery_key.as_deref(),
        Some(delivery_key(routine.id, latest).as_str())
    );

    w.wf.collab().lift_hold(hold.hold.id).await.unwrap();
    w.idle(s).await;
    assert_eq!(w.provider.calls(), 1, "the routine ran other than once");
    let heard = user_texts(&w.provider.requests()[0]).join("\n");
    assert_eq!(
        heard.matches("post the standup summary").count(),
        1,
        "{heard}"
    );
    assert!(w.wf.store().read(|tx| tx.inbox(t)).unwrap().is_empty());

    // Past the lift the routine keeps its own rhythm: the next due time runs at once.
    clock.advance(PERIOD_MS);
    w.wf.agenda_tick(clock.now_ms()).await.unwrap();
    w.idle(s).await;
    assert_eq!(w.provider.calls(), 2);
}
