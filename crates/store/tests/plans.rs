//! Plans on both backends (see `troupe_store::testing`): revisions with their causes, stale
//! edits refused, renames, delivery, dormancy and the filing of lines.

use serde_json::json;
use std::sync::Arc;
use troupe_core::conversation::{Author, SessionKind};
use troupe_core::plan::{PlanSpec, PlanStatus, RevisionCause, SpecPatch};
use troupe_core::{EventId, ManualClock, PlanId, RunId, SessionId, SessionMessageId};
use troupe_store::{
    FilingSource, NewBot, NewFiling, NewLine, NewPlan, PlanRecord, Store, StoreError, Tx,
};

fn store() -> (Store, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000));
    (troupe_store::testing::open(clock.clone()), clock)
}

/// A direct conversation and a person's line in it.
fn conversation(s: &Store, words: &str) -> (SessionId, SessionMessageId) {
    s.write(|tx| {
        let n = tx.bots(true)?.len();
        let bot = tx.create_bot(&NewBot {
            name: format!("Alpha{n}"),
            persona: String::new(),
            endpoint: None,
            scripted: true,
        })?;
        let session = tx.create_session(SessionKind::Direct, "t", &[bot.id])?;
        let line = tx.insert_line(&NewLine::plain(session.id, Author::User, words.into()))?;
        Ok((session.id, line.id))
    })
    .unwrap()
}

fn open(tx: &mut Tx<'_>, session: SessionId, line: SessionMessageId) -> PlanRecord {
    tx.create_plan(
        &NewPlan {
            name: "做一个 logo".into(),
            original_request: "@Alpha 做一个 logo".into(),
            home_session_id: session,
            opening_line_id: Some(line),
            spec: PlanSpec {
                goal: "a logo".into(),
                ..Default::default()
            },
            cause: RevisionCause::Message(line),
        },
        |id| format!("/work/jobs/{}", id.0),
    )
    .unwrap()
}

fn plan(s: &Store) -> (PlanRecord, SessionId, SessionMessageId) {
    let (session, line) = conversation(s, "@Alpha 做一个 logo");
    let p = s.write(|tx| Ok(open(tx, session, line))).unwrap();
    (p, session, line)
}

fn goal(g: &str) -> SpecPatch {
    SpecPatch {
        goal: Some(g.into()),
        ..Default::default()
    }
}

fn plan_events(s: &Store, session: SessionId) -> Vec<serde_json::Value> {
    s.read(|tx| tx.session_events_after(EventId(0), session, 1000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "plan_changed")
        .map(|e| e.payload)
        .collect()
}

#[test]
fn plan_o2_opening_a_plan_writes_revision_1_with_its_cause() {
    let (s, _) = store();
    let (p, session, line) = plan(&s);
    assert_eq!(p.version, 1);
    assert_eq!(p.status, PlanStatus::Active);
    assert_eq!(p.folder, format!("/work/jobs/{}", p.id.0));
    assert_eq!(p.original_request, "@Alpha 做一个 logo");
    assert_eq!(p.opening_line_id, Some(line));
    // The person's opening line is their activity on the job.
    assert_eq!(p.last_user_activity_at, Some(1_000));
    let revs = s.read(|tx| tx.plan_revisions(p.id)).unwrap();
    assert_eq!(revs.len(), 1);
    assert_eq!(revs[0].version, 1);
    assert_eq!(revs[0].cause, RevisionCause::Message(line));
    assert_eq!(
        revs[0].changes["name"],
        json!({"old": null, "new": "做一个 logo"})
    );
    assert_eq!(revs[0].changes["goal"]["new"], "a logo");
    assert!(
        revs[0].changes.get("rules").is_none(),
        "empty fields are not changes"
    );
    let events = plan_events(&s, session);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["change"], "opened");
    assert_eq!(events[0]["cause"], format!("message:{}", line.0));
    assert_eq!(events[0]["version"], 1);
}

#[test]
fn a_plan_opens_only_from_a_line_of_its_home_with_a_sound_name_and_folder() {
    let (s, _) = store();
    let (a, _) = conversation(&s, "one");
    let (_, other_line) = conversation(&s, "two");
    let new = |name: &str, line| NewPlan {
        name: name.into(),
        original_request: String::new(),
        home_session_id: a,
        opening_line_id: line,
        spec: PlanSpec::default(),
        cause: RevisionCause::User,
    };
    let e = s
        .write(|tx| tx.create_plan(&new("x", Some(other_line)), |_| "/x".into()))
        .unwrap_err();
    assert!(
        matches!(e, StoreError::Invalid(ref m) if m.contains("opening_line_id")),
        "{e}"
    );
    let e = s
        .write(|tx| tx.create_plan(&new("  ", None), |_| "/x".into()))
        .unwrap_err();
    assert!(matches!(e, StoreError::Invalid(_)), "{e}");
    let e = s
        .write(|tx| tx.create_plan(&new("x", None), |_| "relative/dir".into()))
        .unwrap_err();
    assert!(
        matches!(e, StoreError::Invalid(ref m) if m.contains("absolute")),
        "{e}"
    );
    assert!(
        s.read(|tx| tx.plans_of_session(a, true))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn the_schema_refuses_a_blank_name_and_an_unknown_status() {
    let (s, _) = store();
    let (p, _, _) = plan(&s);
    for sql in [
        format!("UPDATE plans SET name = '  ' WHERE id = {}", p.id.0),
        format!("UPDATE plans SET status = 'closed' WHERE id = {}", p.id.0),
        format!("UPDATE plans SET dormant_at = 5 WHERE id = {}", p.id.0),
    ] {
        let r = s.write(|tx| tx.raw_execute(&sql));
        assert!(r.is_err(), "{sql} was accepted");
    }
}

#[test]
fn stale_spec_patch_is_refused_and_nothing_is_written() {
    let (s, _) = store();
    let (p, session, _) = plan(&s);
    let p2 = s
        .write(|tx| tx.patch_plan(p.id, 1, &goal("a round logo"), RevisionCause::User))
        .unwrap();
    assert_eq!(p2.version, 2);
    let e = s
        .write(|tx| tx.patch_plan(p.id, 1, &goal("a square logo"), RevisionCause::User))
        .unwrap_err();
    match e {
        StoreError::Conflict(m) => assert!(m.contains("version 2"), "{m}"),
        other => panic!("expected a conflict, got {other}"),
    }
    let now = s.read(|tx| tx.plan(p.id)).unwrap();
    assert_eq!(now, p2, "a refused edit writes nothing");
    assert_eq!(s.read(|tx| tx.plan_revisions(p.id)).unwrap().len(), 2);
    assert_eq!(plan_events(&s, session).len(), 2);
}

#[test]
fn a_patch_that_changes_nothing_is_refused() {
    let (s, _) = store();
    let (p, _, _) = plan(&s);
    for patch in [SpecPatch::default(), goal("a logo")] {
        let e = s
            .write(|tx| tx.patch_plan(p.id, 1, &patch, RevisionCause::User))
            .unwrap_err();
        assert!(
            matches!(e, StoreError::Invalid(ref m) if m == "nothing to change"),
            "{e}"
        );
    }
    let e = s
        .write(|tx| tx.patch_plan(PlanId(999), 1, &goal("x"), RevisionCause::User))
        .unwrap_err();
    assert!(matches!(e, StoreError::NotFound { .. }), "{e}");
}

#[test]
fn plan_o2_each_revision_records_old_and_new_values_and_its_cause() {
    let (s, _) = store();
    let (p, _, _) = plan(&s);
    let patch = SpecPatch {
        goal: Some("a round logo".into()),
        progress: Some("sketches done".into()),
        status: Some(PlanStatus::Active),
        ..Default::default()
    };
    let p2 = s
        .write(|tx| tx.patch_plan(p.id, 1, &patch, RevisionCause::Turn(RunId(9))))
        .unwrap();
    let revs = s.read(|tx| tx.plan_revisions(p.id)).unwrap();
    let last = revs.last().unwrap();
    assert_eq!(
        (last.version, last.cause),
        (2, RevisionCause::Turn(RunId(9)))
    );
    assert_eq!(
        last.changes,
        json!({
            "goal": {"old": "a logo", "new": "a round logo"},
            "progress": {"old": "", "new": "sketches done"},
        }),
        "an unchanged status sent back is not a change"
    );
    assert_eq!(p2.spec.progress, "sketches done");
}

#[test]
fn plan_3_a_rename_sets_renamed_at_and_keeps_the_folder() {
    let (s, clock) = store();
    let (p, _, _) = plan(&s);
    clock.advance(500);
    let rename = SpecPatch {
        name: Some("  做《一拳超人》动画 ".into()),
        ..Default::default()
    };
    let p2 = s
        .write(|tx| tx.patch_plan(p.id, 1, &rename, RevisionCause::User))
        .unwrap();
    assert_eq!(p2.name, "做《一拳超人》动画");
    assert_eq!(p2.renamed_at, Some(1_500));
    assert_eq!(p2.folder, p.folder, "the folder keeps its first name");
    assert_eq!(p2.original_request, p.original_request);
}

#[test]
fn plan_2_only_the_person_renames() {
    let (s, _) = store();
    let (p, _, line) = plan(&s);
    let rename = SpecPatch {
        name: Some("another name".into()),
        goal: Some("x".into()),
        ..Default::default()
    };
    for cause in [RevisionCause::Message(line), RevisionCause::Turn(RunId(1))] {
        let e = s
            .write(|tx| tx.patch_plan(p.id, 1, &rename, cause))
            .unwrap_err();
        assert!(
            matches!(e, StoreError::Invalid(ref m) if m.starts_with("name:")),
            "{e}"
        );
    }
    // Sending the current name back is no rename.
    let same = SpecPatch {
        name: Some(p.name.clone()),
        goal: Some("x".into()),
        ..Default::default()
    };
    let p2 = s
        .write(|tx| tx.patch_plan(p.id, 1, &same, RevisionCause::Message(line)))
        .unwrap();
    assert_eq!(p2.renamed_at, None);
}

#[test]
fn done_sets_delivered_at_and_active_clears_it() {
    let (s, clock) = store();
    let (p, _, _) = plan(&s);
    clock.advance(100);
    let status = |s: PlanStatus| SpecPatch {
        status: Some(s),
        ..Default::default()
    };
    let done = s
        .write(|tx| tx.patch_plan(p.id, 1, &status(PlanStatus::Done), RevisionCause::User))
        .unwrap();
    assert_eq!(
        (done.status, done.delivered_at),
        (PlanStatus::Done, Some(1_100))
    );
    let back = s
        .write(|tx| tx.patch_plan(p.id, 2, &status(PlanStatus::Active), RevisionCause::User))
        .unwrap();
    assert_eq!((back.status, back.delivered_at), (PlanStatus::Active, None));
    let e = s
        .write(|tx| tx.patch_plan(p.id, 3, &status(PlanStatus::Parked), RevisionCause::User))
        .unwrap_err();
    assert!(
        matches!(e, StoreError::Invalid(ref m) if m.contains("hold")),
        "{e}"
    );
}

#[test]
fn plan_d9_a_user_patch_wakes_a_dormant_plan_and_a_turn_does_not() {
    let (s, clock) = store();
    let (p, session, _) = plan(&s);
    assert!(
        s.write(|tx| tx.set_plan_dormant(p.id, "set_aside"))
            .unwrap()
    );
    assert!(!s.write(|tx| tx.set_plan_dormant(p.id, "again")).unwrap());
    let d = s.read(|tx| tx.plan(p.id)).unwrap();
    assert_eq!(
        d.dormant_cause.as_deref(),
        Some("set_aside"),
        "the first cause stays"
    );
    assert_eq!(d.version, 1, "dormancy is no revision of the spec");
    assert!(
        s.read(|tx| tx.plans_of_session(session, false))
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        s.read(|tx| tx.plans_of_session(session, true))
            .unwrap()
            .len(),
        1
    );

    // A Bot's turn revising it only revises it.
    let by_turn = s
        .write(|tx| tx.patch_plan(p.id, 1, &goal("b"), RevisionCause::Turn(RunId(3))))
        .unwrap();
    assert!(by_turn.is_dormant());
    assert_eq!(by_turn.last_user_activity_at, Some(1_000));

    clock.advance(1_000);
    let by_user = s
        .write(|tx| tx.patch_plan(p.id, 2, &goal("c"), RevisionCause::User))
        .unwrap();
    assert!(!by_user.is_dormant());
    assert_eq!(by_user.dormant_cause, None);
    assert_eq!(by_user.last_user_activity_at, Some(2_000));
    let changes: Vec<String> = plan_events(&s, session)
        .iter()
        .map(|e| e["change"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(changes, ["opened", "dormant", "edited", "edited", "woken"]);

    assert!(
        s.write(|tx| tx.set_plan_dormant(p.id, "delivered"))
            .unwrap()
    );
    assert!(s.write(|tx| tx.wake_plan(p.id)).unwrap());
    assert!(!s.write(|tx| tx.wake_plan(p.id)).unwrap());
    clock.advance(1_000);
    s.write(|tx| tx.touch_plan_user_activity(p.id)).unwrap();
    assert_eq!(
        s.read(|tx| tx.plan(p.id)).unwrap().last_user_activity_at,
        Some(3_000)
    );
}

#[test]
fn filings_are_idempotent_and_bring_a_plan_into_another_conversation() {
    let (s, _) = store();
    let (p, home, opening) = plan(&s);
    let (elsewhere, far_line) = conversation(&s, "the logo needs more red");
    let filing = |message, ticket: Option<i64>, primary| NewFiling {
        message_id: message,
        plan_id: p.id,
        ticket_id: ticket,
        part_id: None,
        source: FilingSource::Reader,
        filed_by: "reader".into(),
        locked: false,
        primary,
    };
    assert!(
        s.write(|tx| tx.file_line(&filing(opening, None, true)))
            .unwrap()
    );
    assert!(
        !s.write(|tx| tx.file_line(&filing(opening, None, true)))
            .unwrap()
    );
    assert!(
        s.write(|tx| tx.file_line(&filing(opening, Some(2), false)))
            .unwrap()
    );
    assert!(
        !s.write(|tx| tx.file_line(&filing(opening, Some(2), false)))
            .unwrap()
    );
    let filed = s.read(|tx| tx.filings_of_line(opening)).unwrap();
    assert_eq!(filed.len(), 2);
    assert_eq!((filed[0].ticket_id, filed[0].primary), (None, true));
    assert_eq!(filed[0].source, FilingSource::Reader);

    assert!(
        s.read(|tx| tx.plans_of_session(elsewhere, true))
            .unwrap()
            .is_empty()
    );
    assert!(
        s.write(|tx| tx.file_line(&filing(far_line, None, true)))
            .unwrap()
    );
    let there = s.read(|tx| tx.plans_of_session(elsewhere, true)).unwrap();
    assert_eq!(there.iter().map(|p| p.id).collect::<Vec<_>>(), [p.id]);
    assert_eq!(
        s.read(|tx| tx.plans_of_session(home, true)).unwrap().len(),
        1
    );

    let lines = s.read(|tx| tx.plan_lines(p.id, None, 10)).unwrap();
    assert_eq!(
        lines.iter().map(|l| l.id).collect::<Vec<_>>(),
        [opening, far_line]
    );
    let after = s.read(|tx| tx.plan_lines(p.id, Some(opening), 10)).unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!(s.read(|tx| tx.plan_lines(p.id, None, 1)).unwrap().len(), 1);

    let changes: Vec<_> = plan_events(&s, home)
        .into_iter()
        .filter(|e| e["change"] == "filed")
        .collect();
    assert_eq!(
        changes.len(),
        3,
        "one event per filing made, none for a repeat"
    );
}
