//! Routines on both backends (see `troupe_store::testing`): one per name a Bot (compared
//! without case), at most 20 a Bot — the database refuses the 21st past the store too — one
//! run recorded per due time, and the due list a tick reads.

use serde_json::json;
use std::sync::Arc;
use troupe_core::conversation::SessionKind;
use troupe_core::plan::{PlanSpec, RevisionCause};
use troupe_core::{BotId, ManualClock, PlanId, SessionId};
use troupe_store::{NewBot, NewPlan, NewRoutine, RoutineEdit, RoutineStatus, Store, StoreError};

fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

fn bot_and_direct(s: &Store) -> (BotId, SessionId) {
    s.write(|tx| {
        let bot = tx.create_bot(&NewBot {
            name: "Alpha".into(),
            persona: String::new(),
            endpoint: None,
            scripted: false,
        })?;
        let session = tx.create_session(SessionKind::Direct, "t", &[bot.id])?;
        Ok((bot.id, session.id))
    })
    .unwrap()
}

fn job(s: &Store, session: SessionId, name: &str) -> PlanId {
    s.write(|tx| {
        tx.create_plan(
            &NewPlan {
                name: name.into(),
                original_request: String::new(),
                home_session_id: session,
                opening_line_id: None,
                spec: PlanSpec::default(),
                cause: RevisionCause::User,
            },
            |id| format!("/work/jobs/{}", id.0),
        )
        .map(|p| p.id)
    })
    .unwrap()
}

fn routine(bot: BotId, session: SessionId, plan: PlanId, name: &str) -> NewRoutine {
    NewRoutine {
        bot_id: bot,
        session_id: session,
        plan_id: plan,
        name: name.into(),
        instruction: "Sum up.".into(),
        schedule: json!({"kind": "every", "seconds": 3600}),
        next_due_at: Some(5_000),
        created_by: "user",
    }
}

#[test]
fn one_routine_per_name_and_at_most_twenty_a_bot_even_past_the_store() {
    let s = store();
    let (a, d) = bot_and_direct(&s);
    let (j0, jx) = (job(&s, d, "J0"), job(&s, d, "Jx"));
    let first = s
        .write(|tx| tx.create_routine(&routine(a, d, j0, "Émile")))
        .unwrap();
    assert_eq!(first.status, RoutineStatus::Active);
    let folded = s.write(|tx| tx.create_routine(&routine(a, d, jx, "émile")));
    assert!(matches!(folded, Err(StoreError::Conflict(_))), "{folded:?}");
    assert_eq!(
        s.read(|tx| tx.routine_by_name(a, "ÉMILE"))
            .unwrap()
            .map(|r| r.id),
        Some(first.id)
    );
    for i in 1..20 {
        let plan = job(&s, d, &format!("J{i}"));
        s.write(|tx| tx.create_routine(&routine(a, d, plan, &format!("R{i}"))))
            .unwrap();
    }
    let plan = job(&s, d, "J20");
    let full = s.write(|tx| tx.create_routine(&routine(a, d, plan, "One more")));
    assert!(
        matches!(&full, Err(StoreError::Invalid(m)) if m.contains("20 routines")),
        "{full:?}"
    );
    let raw = s.write(|tx| {
        tx.raw_execute(&format!(
            "INSERT INTO routines (bot_id, session_id, plan_id, name, instruction, schedule,
                 created_by, created_at, updated_at)
             VALUES ({}, {}, {}, 'Raw', 'i', '{{}}', 'user', 0, 0)",
            a.0, d.0, plan.0
        ))
    });
    assert!(format!("{raw:?}").contains("routines_full"), "{raw:?}");
    // One standing job per routine: a deleted routine's job may stand for a new one, a job
    // that stands for one may not stand for another.
    let again = s.write(|tx| {
        tx.delete_routine(first.id)?;
        tx.create_routine(&routine(a, d, j0, "Again"))
    });
    assert!(again.is_ok(), "{again:?}");
    let twice = s.write(|tx| {
        let r1 = tx.routine_by_name(a, "R1")?.unwrap();
        tx.delete_routine(r1.id)?;
        tx.create_routine(&routine(a, d, j0, "Third"))
    });
    assert!(
        twice.is_err(),
        "job {j0} stands for \"Again\" already: {twice:?}"
    );
}

#[test]
fn a_due_time_runs_once_and_the_tick_finds_due_and_owed_routines() {
    let s = store();
    let (a, d) = bot_and_direct(&s);
    let plan = job(&s, d, "Brief");
    let r = s
        .write(|tx| tx.create_routine(&routine(a, d, plan, "Brief")))
        .unwrap();
    assert!(s.read(|tx| tx.due_routines(4_999, 10)).unwrap().is_empty());
    assert_eq!(s.read(|tx| tx.due_routines(5_000, 10)).unwrap(), vec![r.id]);
    assert!(s.write(|tx| tx.record_routine_run(r.id, 5_000)).unwrap());
    assert!(
        !s.write(|tx| tx.record_routine_run(r.id, 5_000)).unwrap(),
        "the same due time runs once"
    );
    // Moved on, nothing due; owed, it is looked at whatever the time.
    s.write(|tx| {
        tx.edit_routine(
            r.id,
            &RoutineEdit {
                next_due_at: Some(Some(9_000)),
                ..RoutineEdit::default()
            },
        )
    })
    .unwrap();
    assert!(s.read(|tx| tx.due_routines(6_000, 10)).unwrap().is_empty());
    s.write(|tx| {
        tx.edit_routine(
            r.id,
            &RoutineEdit {
                owed_due_at: Some(Some(5_500)),
                ..RoutineEdit::default()
            },
        )
    })
    .unwrap();
    assert_eq!(s.read(|tx| tx.due_routines(6_000, 10)).unwrap(), vec![r.id]);
    // Paused, never.
    s.write(|tx| {
        tx.edit_routine(
            r.id,
            &RoutineEdit {
                status: Some(RoutineStatus::Paused),
                ..RoutineEdit::default()
            },
        )
    })
    .unwrap();
    assert!(s.read(|tx| tx.due_routines(10_000, 10)).unwrap().is_empty());
    let view = s.read(|tx| tx.routine(r.id)).unwrap();
    assert_eq!(view.runs, 1);
    // Listed with or without a Bot and a conversation (both backends type the open filters).
    for (bot, session) in [
        (None, None),
        (Some(a), None),
        (None, Some(d)),
        (Some(a), Some(d)),
    ] {
        assert_eq!(
            s.read(|tx| tx.routines(bot, session)).unwrap(),
            vec![view.clone()]
        );
    }
    assert!(
        s.read(|tx| tx.routines(Some(BotId(a.0 + 1)), None))
            .unwrap()
            .is_empty()
    );
    assert!(s.read(|tx| tx.is_routine_plan(plan)).unwrap());
}
