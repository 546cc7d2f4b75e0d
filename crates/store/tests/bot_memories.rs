//! A Bot's memories and its retrospectives' records, on both backends (see
//! `troupe_store::testing`): one memory per subject, at most 20 on (the database refuses the
//! 21st too), a memory turned off is not touched, and a retrospective's change can be undone
//! only while it stands as written (S-RS3).

use serde_json::json;
use std::sync::Arc;
use troupe_core::conversation::{Author, SessionKind};
use troupe_core::plan::{PlanSpec, RevisionCause};
use troupe_core::{BotId, ManualClock, PlanId};
use troupe_store::{
    CallRecord, MemoryWriter, NewBot, NewLine, NewPlan, NewRetrospective, Store, StoreError,
};

fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

fn bot_and_job(s: &Store) -> (BotId, PlanId) {
    s.write(|tx| {
        let bot = tx.create_bot(&NewBot {
            name: "Alpha".into(),
            persona: String::new(),
            endpoint: None,
            scripted: false,
        })?;
        let session = tx.create_session(SessionKind::Direct, "t", &[bot.id])?;
        let line = tx.insert_line(&NewLine::plain(session.id, Author::User, "a report".into()))?;
        let plan = tx.create_plan(
            &NewPlan {
                name: "Report".into(),
                original_request: "a report".into(),
                home_session_id: session.id,
                opening_line_id: Some(line.id),
                spec: PlanSpec::default(),
                cause: RevisionCause::Message(line.id),
            },
            |id| format!("/work/jobs/{}", id.0),
        )?;
        Ok((bot.id, plan.id))
    })
    .unwrap()
}

fn retro(plan: PlanId, bot: BotId, delivered_at: i64) -> NewRetrospective {
    NewRetrospective {
        plan_id: plan,
        bot_id: bot,
        delivered_at,
        since_at: None,
        state: "done",
        went_wrong: vec!["a review rejected a hand-over".into()],
        summary: Some("I handed over too early.".into()),
        lists: json!({"tripped_up": ["length"], "sent_back_because": [], "do_again": [],
                      "verdicts": []}),
        call: CallRecord {
            model: Some("m".into()),
            input_tokens: 1_000,
            output_tokens: 100,
            raw: None,
        },
        error: None,
    }
}

#[test]
fn one_memory_per_subject_at_most_twenty_on_and_one_turned_off_is_not_touched() {
    let s = store();
    let (bot, _) = bot_and_job(&s);
    let (m, before) = s
        .write(|tx| tx.write_bot_memory(bot, "Length", "Count words first.", MemoryWriter::Bot))
        .unwrap();
    assert_eq!(before, None);
    let (again, before) = s
        .write(|tx| tx.write_bot_memory(bot, " length ", "Count words.", MemoryWriter::Bot))
        .unwrap();
    assert_eq!((again.id, again.subject.as_str()), (m.id, "Length"));
    assert_eq!(before.as_deref(), Some("Count words first."));
    for i in 1..20 {
        s.write(|tx| tx.write_bot_memory(bot, &format!("M{i}"), "b", MemoryWriter::Bot))
            .unwrap();
    }
    let full = s.write(|tx| tx.write_bot_memory(bot, "One more", "b", MemoryWriter::Bot));
    assert!(
        matches!(&full, Err(StoreError::Invalid(m)) if m.contains("forget or merge")),
        "{full:?}"
    );
    // The database refuses it too, past the store's checks.
    let raw = s.write(|tx| {
        tx.raw_execute(&format!(
            "INSERT INTO bot_memories (bot_id, subject, body, enabled, created_at, updated_at)
             VALUES ({}, 'Raw', 'b', 1, 0, 0)",
            bot.0
        ))
    });
    assert!(format!("{raw:?}").contains("memories_full"), "{raw:?}");
    let long = s.write(|tx| {
        tx.raw_execute(&format!(
            "INSERT INTO bot_memories (bot_id, subject, body, enabled, created_at, updated_at)
             VALUES ({}, '{}', 'b', 0, 0, 0)",
            bot.0,
            "x".repeat(41)
        ))
    });
    assert!(
        long.is_err(),
        "a 41-character subject is refused by the schema"
    );

    let off = s
        .write(|tx| tx.edit_bot_memory(m.id, None, None, Some(false)))
        .unwrap();
    assert!(!off.enabled);
    let rewrite = s.write(|tx| tx.write_bot_memory(bot, "Length", "x", MemoryWriter::Bot));
    assert!(
        matches!(rewrite, Err(StoreError::Conflict(_))),
        "{rewrite:?}"
    );
    let forget = s.write(|tx| tx.forget_bot_memory(bot, "LENGTH"));
    assert!(matches!(forget, Err(StoreError::Conflict(_))), "{forget:?}");
    s.write(|tx| tx.write_bot_memory(bot, "Now there is room", "b", MemoryWriter::Bot))
        .unwrap();
    let back_on = s.write(|tx| tx.edit_bot_memory(m.id, None, None, Some(true)));
    assert!(
        matches!(back_on, Err(StoreError::Invalid(_))),
        "{back_on:?}"
    );
}

#[test]
fn a_retrospective_is_recorded_once_per_bot_and_delivery_and_counts_against_the_day() {
    let s = store();
    let (bot, plan) = bot_and_job(&s);
    s.write(|tx| tx.set_model_price("m", 1.0, 10.0)).unwrap();
    let first = s
        .write(|tx| tx.record_retrospective(&retro(plan, bot, 500)))
        .unwrap();
    assert!(first.is_some());
    let twice = s
        .write(|tx| tx.record_retrospective(&retro(plan, bot, 500)))
        .unwrap();
    assert_eq!(twice, None, "another node or tick recorded it already");
    let skipped = NewRetrospective {
        state: "skipped",
        call: CallRecord::default(),
        went_wrong: vec![],
        summary: None,
        ..retro(plan, bot, 900)
    };
    s.write(|tx| tx.record_retrospective(&skipped)).unwrap();
    let (n, cost) = s.read(|tx| tx.retrospective_spend_since(0)).unwrap();
    assert_eq!(n, 1, "a skipped one made no call");
    assert!((cost - 0.002).abs() < 1e-9, "{cost}");
    let all = s.read(|tx| tx.retrospectives_of_plan(plan)).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].tripped_up, ["length"]);
    assert_eq!(
        s.read(|tx| tx.last_retrospective_at(plan, bot)).unwrap(),
        Some(1_000)
    );
}

#[test]
fn s_rs3_undo_only_while_the_change_stands_and_the_mark_goes_with_the_persons_edit() {
    let s = store();
    let (bot, plan) = bot_and_job(&s);
    s.write(|tx| tx.write_bot_memory(bot, "Old", "An old way.", MemoryWriter::Bot))
        .unwrap();
    s.write(|tx| tx.write_bot_memory(bot, "Tone", "Formal.", MemoryWriter::Bot))
        .unwrap();
    let r = s
        .write(|tx| tx.record_retrospective(&retro(plan, bot, 500)))
        .unwrap()
        .unwrap();
    let (new, rewrite, gone, refused) = s
        .write(|tx| {
            Ok((
                tx.apply_retrospective_change(r, bot, "write", "Length", Some("Count."), None)?,
                tx.apply_retrospective_change(r, bot, "write", "Tone", Some("Plain."), None)?,
                tx.apply_retrospective_change(r, bot, "delete", "Old", None, None)?,
                tx.apply_retrospective_change(r, bot, "write", "X", Some("y"), Some("too long"))?,
            ))
        })
        .unwrap();
    assert_eq!(rewrite.before.as_deref(), Some("Formal."));
    assert_eq!(gone.before.as_deref(), Some("An old way."));
    assert!(new.undoable && rewrite.undoable && gone.undoable);
    assert!(!refused.undoable);
    assert!(
        s.read(|tx| tx.bot_memory_by_subject(bot, "X"))
            .unwrap()
            .is_none()
    );
    let tone = s
        .read(|tx| tx.bot_memory_by_subject(bot, "tone"))
        .unwrap()
        .unwrap();
    assert_eq!(
        tone.retrospective_id,
        Some(r),
        "marked as the retrospective's"
    );

    // The person edits the rewritten memory: the mark goes and Undo is no longer offered.
    let edited = s
        .write(|tx| tx.edit_bot_memory(tone.id, None, Some("Plain, short."), None))
        .unwrap();
    assert_eq!(edited.retrospective_id, None);
    let stale = s.write(|tx| tx.undo_retrospective_change(rewrite.id));
    assert!(
        matches!(&stale, Err(StoreError::Conflict(m)) if m.contains("new now")),
        "{stale:?}"
    );

    // The other two still stand: a new memory undone is gone, a deleted one comes back.
    s.write(|tx| tx.undo_retrospective_change(new.id)).unwrap();
    assert!(
        s.read(|tx| tx.bot_memory_by_subject(bot, "Length"))
            .unwrap()
            .is_none()
    );
    let back = s.write(|tx| tx.undo_retrospective_change(gone.id)).unwrap();
    assert!(back.undone_at.is_some() && !back.undoable);
    let old = s
        .read(|tx| tx.bot_memory_by_subject(bot, "Old"))
        .unwrap()
        .unwrap();
    assert_eq!(old.body, "An old way.");
    let again = s.write(|tx| tx.undo_retrospective_change(gone.id));
    assert!(matches!(again, Err(StoreError::Conflict(_))));
}
