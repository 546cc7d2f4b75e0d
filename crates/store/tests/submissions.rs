//! Submissions and reviews on both backends: the database's rules attacked by raw SQL (a
//! hand-over's files never change, a producer never reviews its own hand-over, the shape of an
//! approval), and the store's submissions and reviews API.
//!
//! On PostgreSQL a refused statement ends its transaction, so each refusal has a write of its
//! own.

mod deliverable_world;

use deliverable_world::*;

const HASH_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const HASH_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/// A raw explicit submission `id` of ticket `ticket` by `producer`.
fn submission_sql(id: i64, ticket: i64, plan: PlanId, producer: BotId) -> String {
    format!(
        "INSERT INTO submissions (id, ticket_id, plan_id, origin, producer_bot_id, created_at)
         VALUES ({id}, {ticket}, {}, 'explicit', {}, 1)",
        plan.0, producer.0
    )
}

#[test]
fn submission_files_immutable() {
    let (s, _) = store();
    let w = world(&s);
    let t = raw_ticket(&s, w.launch, 1);
    raw(&s, &submission_sql(1, t, w.launch, w.ada)).unwrap();
    raw(
        &s,
        &format!(
            "INSERT INTO submission_files (submission_id, path, sha256, size)
             VALUES (1, 'cut.mp4', '{HASH_A}', 10), (1, 'notes.md', '{HASH_B}', 3)"
        ),
    )
    .unwrap();
    for sql in [
        format!("UPDATE submission_files SET sha256 = '{HASH_B}' WHERE path = 'cut.mp4'"),
        "UPDATE submission_files SET size = 0".to_string(),
        "UPDATE submission_files SET path = 'other.mp4' WHERE path = 'cut.mp4'".to_string(),
        "DELETE FROM submission_files WHERE path = 'cut.mp4'".to_string(),
        "DELETE FROM submission_files".to_string(),
    ] {
        assert_refused(raw(&s, &sql), &["submission_files_immutable"], &sql);
    }
    // Both files stand as they were handed over.
    assert_eq!(
        count(
            &s,
            "submissions",
            "note",
            &format!(
                "id IN (SELECT submission_id FROM submission_files
                        WHERE path = 'cut.mp4' AND sha256 = '{HASH_A}' AND size = 10)"
            )
        ),
        1
    );
    // A hash is 64 hex digits' worth of text; a path is not empty.
    assert_refused(
        raw(
            &s,
            "INSERT INTO submission_files (submission_id, path, sha256, size)
             VALUES (1, 'x', 'abc', 1)",
        ),
        &["CHECK", "check constraint"],
        "a short hash",
    );
    // More files may still be added to the record of a new hand-over; a path only once.
    assert_refused(
        raw(
            &s,
            &format!(
                "INSERT INTO submission_files (submission_id, path, sha256, size)
                 VALUES (1, 'cut.mp4', '{HASH_B}', 1)"
            ),
        ),
        &["UNIQUE", "duplicate key"],
        "a path twice in one hand-over",
    );
}

#[test]
fn producer_never_reviews_by_trigger() {
    let (s, _) = store();
    let w = world(&s);
    let t = raw_ticket(&s, w.launch, 1);
    raw(&s, &submission_sql(1, t, w.launch, w.ada)).unwrap();
    let review = |bot: BotId| {
        format!(
            "INSERT INTO reviews (id, submission_id, reviewer_bot_id, outcome, result,
                                  same_model, created_at)
             VALUES (1, 1, {}, 'approve', 'recorded', 0, 1)",
            bot.0
        )
    };
    assert_refused(
        raw(&s, &review(w.ada)),
        &["own_submission"],
        "the producer reviewing its own hand-over",
    );
    raw(&s, &review(w.bo)).unwrap();
    assert_refused(
        raw(
            &s,
            "INSERT INTO review_verdicts (review_id, requirement_id, verdict)
             VALUES (1, 'r1', 'maybe')",
        ),
        &["CHECK", "check constraint"],
        "a verdict nobody knows",
    );
    raw(
        &s,
        "INSERT INTO review_verdicts (review_id, requirement_id, verdict, evidence)
         VALUES (1, 'r1', 'pass', 'frame 12'), (1, 'r2', 'n/a', NULL)",
    )
    .unwrap();
}

#[test]
fn submission_rows_keep_their_shape() {
    let (s, _) = store();
    let w = world(&s);
    let t = raw_ticket(&s, w.launch, 1);
    raw(&s, &submission_sql(1, t, w.launch, w.ada)).unwrap();
    for (sql, what) in [
        (
            "UPDATE submissions SET state = 'approved' WHERE id = 1".to_string(),
            "approved by nobody",
        ),
        (
            "UPDATE submissions SET state = 'approved', approved_by = 'reviewer' WHERE id = 1"
                .to_string(),
            "approved by a reviewer not named",
        ),
        (
            "UPDATE submissions SET state = 'approved', approved_by = 'routine',
                 approved_message_id = 1 WHERE id = 1"
                .to_string(),
            "a user's line on a routine approval",
        ),
        (
            "UPDATE submissions SET superseded_by = 1 WHERE id = 1".to_string(),
            "superseded while still open",
        ),
        (
            format!(
                "INSERT INTO submissions (ticket_id, plan_id, origin, producer_bot_id, created_at)
                 VALUES ({t}, {}, 'answer', {}, 1)",
                w.launch.0, w.ada.0
            ),
            "a words hand-over with no words",
        ),
        (
            format!(
                "INSERT INTO submissions (ticket_id, plan_id, origin, created_at)
                 VALUES ({t}, {}, 'explicit', 1)",
                w.launch.0
            ),
            "a file hand-over by nobody",
        ),
        (
            "UPDATE submissions SET state = 'waiting' WHERE id = 1".to_string(),
            "a state nobody knows",
        ),
    ] {
        assert_refused(raw(&s, &sql), &["CHECK", "check constraint"], what);
    }
    raw(
        &s,
        &format!(
            "UPDATE submissions SET state = 'approved', approved_by = 'reviewer',
                 approved_by_bot_id = {} WHERE id = 1",
            w.bo.0
        ),
    )
    .unwrap();
    // An organizer reading has no producer and no files.
    raw(
        &s,
        &format!(
            "INSERT INTO submissions (ticket_id, plan_id, origin, created_at)
             VALUES ({t}, {}, 'organizer', 1)",
            w.launch.0
        ),
    )
    .unwrap();
}

use troupe_core::conversation::Author;
use troupe_core::review::{ReviewOutcome, ReviewVerdict};
use troupe_core::submission::{ApprovedBy, SubmissionOrigin, SubmissionState};
use troupe_store::{
    NewCheck, NewCheckRun, NewLine, NewReview, NewSubmission, ReviewResult, RunOutcome,
    SubmittedFile, VerdictRecord,
};

fn file(path: &str, hash: &str) -> SubmittedFile {
    SubmittedFile {
        path: path.into(),
        sha256: hash.into(),
        size: 10,
    }
}

fn hand_over(ticket: TicketId, producer: BotId, files: Vec<SubmittedFile>) -> NewSubmission {
    NewSubmission {
        ticket_id: ticket,
        origin: SubmissionOrigin::Explicit,
        producer_bot_id: Some(producer),
        run_id: None,
        work_item_id: None,
        content: None,
        note: "first cut".into(),
        claims: vec!["runs 2 minutes".into()],
        files,
        parts: vec![],
    }
}

#[test]
fn submission_round_trip() {
    let (s, _) = store();
    let w = world(&s);
    let t = lay_out(
        &s,
        w.launch,
        vec![LayoutItem {
            parts: vec!["C01".into(), "C02".into()],
            reviewer_bot_id: Some(w.bo),
            ..item("Intro", w.ada)
        }],
    )
    .remove(0);
    let parts = s.read(|tx| tx.parts_of_ticket(t.id)).unwrap();
    let run = live_run(&s);
    let first = s
        .write(|tx| {
            tx.create_submission(&NewSubmission {
                run_id: Some(run),
                parts: vec![parts[1].id],
                ..hand_over(
                    t.id,
                    w.ada,
                    vec![file("cut.mp4", HASH_A), file("a.md", HASH_B)],
                )
            })
        })
        .unwrap();
    assert_eq!(first.state, SubmissionState::Checking);
    assert_eq!(first.plan_id, w.launch);
    assert_eq!(
        first
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>(),
        vec!["a.md", "cut.mp4"]
    );
    assert_eq!(first.parts, vec![parts[1].id]);
    assert_eq!(first.claims, vec!["runs 2 minutes".to_string()]);
    assert_eq!(first.run_id, Some(run));
    assert_eq!(
        s.read(|tx| tx.last_handover_files(t.id)).unwrap(),
        Some((
            first.id,
            vec![
                ("a.md".to_string(), HASH_B.to_string()),
                ("cut.mp4".to_string(), HASH_A.to_string())
            ]
        ))
    );

    // Its check ran for it, and a reviewer looked.
    let check = s
        .write(|tx| {
            tx.create_check(&NewCheck {
                path: Some("cut.mp4".into()),
                ticket_id: Some(t.id),
                ..NewCheck::new(
                    w.launch,
                    troupe_store::CheckKind::FileExists,
                    troupe_core::submission::CheckSource::User,
                )
            })
        })
        .unwrap();
    s.write(|tx| {
        tx.record_check_run(&NewCheckRun {
            check_id: check.id,
            submission_id: Some(first.id),
            outcome: RunOutcome::Passed,
            detail: "cut.mp4 is there".into(),
            output_tail: String::new(),
            measured: None,
            for_reference: false,
            started_at: 1,
        })
    })
    .unwrap();
    s.write(|tx| tx.set_submission_state(first.id, SubmissionState::InReview))
        .unwrap();
    let review = s
        .write(|tx| {
            tx.record_review(&NewReview {
                submission_id: first.id,
                reviewer_bot_id: w.bo,
                run_id: None,
                outcome: ReviewOutcome::Approve,
                note: "good".into(),
                result: ReviewResult::AwaitingUser,
                reasons: vec!["same model".into()],
                same_model: true,
                reviewer_model: Some("m1".into()),
                producer_model: Some("m1".into()),
                verdicts: vec![
                    VerdictRecord {
                        requirement_id: "r1".into(),
                        verdict: ReviewVerdict::Pass,
                        evidence: Some("frame 12".into()),
                    },
                    VerdictRecord {
                        requirement_id: "r2".into(),
                        verdict: ReviewVerdict::NotApplicable,
                        evidence: None,
                    },
                ],
            })
        })
        .unwrap();
    assert_eq!(review.verdicts.len(), 2);
    assert_eq!(events(&s, w.group, "review_awaiting_user").len(), 1);

    // The producer never reviews its own.
    let own = s.write(|tx| {
        tx.record_review(&NewReview {
            reviewer_bot_id: w.ada,
            verdicts: vec![],
            ..NewReview {
                submission_id: first.id,
                reviewer_bot_id: w.ada,
                run_id: None,
                outcome: ReviewOutcome::Reject,
                note: String::new(),
                result: ReviewResult::Recorded,
                reasons: vec![],
                same_model: false,
                reviewer_model: None,
                producer_model: None,
                verdicts: vec![],
            }
        })
    });
    assert!(
        matches!(&own, Err(StoreError::Invalid(m)) if m.starts_with("own_submission")),
        "{own:?}"
    );

    // A newer hand-over supersedes the undecided one.
    let second = s
        .write(|tx| {
            let n = tx.create_submission(&hand_over(t.id, w.ada, vec![file("cut.mp4", HASH_B)]))?;
            tx.supersede_undecided(t.id, Some(n.id))?;
            Ok(n)
        })
        .unwrap();
    let listed = s.read(|tx| tx.submissions_of_plan(w.launch, None)).unwrap();
    assert_eq!(
        listed.iter().map(|x| x.id).collect::<Vec<_>>(),
        vec![second.id, first.id],
        "newest first"
    );
    let old = &listed[1];
    assert_eq!(old.state, SubmissionState::Superseded);
    assert_eq!(old.superseded_by, Some(second.id));
    assert!(old.decided_at.is_some());
    assert_eq!(old.check_runs.len(), 1);
    assert_eq!(old.check_runs[0].outcome, RunOutcome::Passed);
    assert_eq!(old.reviews.len(), 1);
    assert_eq!(
        old.reviews[0].verdicts[0].evidence.as_deref(),
        Some("frame 12")
    );
    assert_eq!(old.files.len(), 2);
    assert!(listed[0].check_runs.is_empty() && listed[0].reviews.is_empty());
    assert_eq!(
        s.read(|tx| tx.submissions_of_plan(w.launch, Some(t.id)))
            .unwrap()
            .len(),
        2
    );
    assert!(
        s.read(|tx| tx.submissions_of_plan(w.ad, None))
            .unwrap()
            .is_empty()
    );

    // Approved by its reviewer: the ticket records who made it.
    let approved = s
        .write(|tx| tx.approve_submission(second.id, ApprovedBy::Reviewer, Some(w.bo), None))
        .unwrap();
    assert_eq!(approved.state, SubmissionState::Approved);
    assert_eq!(approved.approved_by, Some(ApprovedBy::Reviewer));
    assert_eq!(
        s.read(|tx| tx.ticket(t.id)).unwrap().approved_by_bot_id,
        Some(w.ada)
    );
    assert_eq!(
        s.read(|tx| tx.last_handover_files(t.id))
            .unwrap()
            .unwrap()
            .0,
        second.id
    );
    // A decided one is not superseded.
    assert!(
        s.write(|tx| tx.supersede_undecided(t.id, None))
            .unwrap()
            .is_empty()
    );
    for kind in [
        "submission_created",
        "submission_superseded",
        "submission_approved",
    ] {
        assert!(!events(&s, w.group, kind).is_empty(), "{kind} told");
    }
    assert_eq!(
        events(&s, w.group, "submission_approved")[0]["by"],
        "reviewer"
    );
}

#[test]
fn board_status_edit_supersedes_undecided() {
    let (s, _) = store();
    let w = world(&s);
    let t = lay_out(&s, w.launch, vec![item("Intro", w.ada)]).remove(0);
    let sub = s
        .write(|tx| tx.create_submission(&hand_over(t.id, w.ada, vec![file("a.mp4", HASH_A)])))
        .unwrap();
    s.write(|tx| tx.set_submission_state(sub.id, SubmissionState::AwaitingUser))
        .unwrap();
    assert_eq!(events(&s, w.group, "submission_awaiting_word").len(), 1);
    let edit = s
        .write(|tx| {
            tx.board_patch(
                t.id,
                &BoardPatch {
                    status: Some(TicketStatus::InProgress),
                    ..BoardPatch::default()
                },
            )
        })
        .unwrap();
    assert_eq!(edit.superseded, vec![sub.id]);
    let after = s.read(|tx| tx.submission(sub.id)).unwrap();
    assert_eq!(after.state, SubmissionState::Superseded);
    assert_eq!(after.superseded_by, None);
    // Nothing approved or open is left to compare with.
    assert_eq!(s.read(|tx| tx.last_handover_files(t.id)).unwrap(), None);
}

#[test]
fn submission_input_is_checked() {
    let (s, _) = store();
    let w = world(&s);
    let ts = lay_out(
        &s,
        w.launch,
        vec![
            LayoutItem {
                parts: vec!["C01".into()],
                ..item("One", w.ada)
            },
            item("Two", w.ada),
        ],
    );
    let foreign_part = s.read(|tx| tx.parts_of_ticket(ts[0].id)).unwrap()[0].id;
    let bad = [
        (
            NewSubmission {
                origin: SubmissionOrigin::Answer,
                ..hand_over(ts[1].id, w.ada, vec![])
            },
            "content",
        ),
        (
            NewSubmission {
                origin: SubmissionOrigin::Answer,
                content: Some("the title".into()),
                ..hand_over(ts[1].id, w.ada, vec![file("a", HASH_A)])
            },
            "files",
        ),
        (hand_over(ts[1].id, w.ada, vec![file("a", "ABC")]), "sha256"),
        (hand_over(ts[1].id, w.ada, vec![file(" ", HASH_A)]), "path"),
        (
            NewSubmission {
                parts: vec![foreign_part],
                ..hand_over(ts[1].id, w.ada, vec![file("a", HASH_A)])
            },
            "parts",
        ),
    ];
    for (sub, field) in bad {
        match s.write(|tx| tx.create_submission(&sub)) {
            Err(StoreError::Invalid(m)) => assert!(m.contains(field), "{field}: {m}"),
            other => panic!("{field}: expected a refusal, got {other:?}"),
        }
    }
    // Words are handed over as words.
    let words = s
        .write(|tx| {
            tx.create_submission(&NewSubmission {
                origin: SubmissionOrigin::Answer,
                content: Some("Three titles: A, B, C".into()),
                ..hand_over(ts[1].id, w.ada, vec![])
            })
        })
        .unwrap();
    assert_eq!(words.content.as_deref(), Some("Three titles: A, B, C"));
    // Approval's shape: a reviewer names itself, a user's line is the user's.
    for (by, bot, line) in [
        (ApprovedBy::Reviewer, None, None),
        (ApprovedBy::NoReviewer, Some(w.bo), None),
        (
            ApprovedBy::Routine,
            None,
            Some(troupe_core::SessionMessageId(1)),
        ),
    ] {
        assert!(matches!(
            s.write(|tx| tx.approve_submission(words.id, by, bot, line)),
            Err(StoreError::Invalid(_))
        ));
    }
}

#[test]
fn line_files_and_artifact_views() {
    let (s, _) = store();
    let w = world(&s);
    let run = live_run(&s);
    let line = s
        .write(|tx| {
            tx.insert_line(&NewLine {
                bot_id: Some(w.ada),
                turn_id: Some(run),
                ..NewLine::plain(w.group, Author::Bot, "here it is".into())
            })
            .map(|l| l.id)
        })
        .unwrap();
    let files = vec![
        ("work/cut.mp4".to_string(), Some(HASH_A.to_string())),
        ("work/notes.md".to_string(), None),
    ];
    assert_eq!(s.write(|tx| tx.record_line_files(line, &files)).unwrap(), 2);
    // Cited again: the first citation stays.
    assert_eq!(s.write(|tx| tx.record_line_files(line, &files)).unwrap(), 0);
    let cited = s.read(|tx| tx.files_cited_in_turn(run)).unwrap();
    assert_eq!(cited.len(), 2);
    assert_eq!(cited[0].first_cited_at, 1_000);
    assert_eq!(s.read(|tx| tx.line_files(line)).unwrap(), cited);
    // Under the job once the line is filed there.
    assert!(
        s.read(|tx| tx.files_cited_under_plan(w.launch))
            .unwrap()
            .is_empty()
    );
    s.write(|tx| {
        tx.file_line(&troupe_store::NewFiling {
            message_id: line,
            plan_id: w.launch,
            ticket_id: None,
            part_id: None,
            source: troupe_store::FilingSource::Reader,
            filed_by: "reader".into(),
            locked: false,
            primary: true,
        })
    })
    .unwrap();
    assert_eq!(
        s.read(|tx| tx.files_cited_under_plan(w.launch))
            .unwrap()
            .len(),
        2
    );

    // An image read once per path and segment.
    assert!(
        s.write(|tx| tx.record_artifact_view(run, "work/still.png"))
            .unwrap()
    );
    assert!(
        !s.write(|tx| tx.record_artifact_view(run, "work/still.png"))
            .unwrap()
    );
    assert!(
        s.write(|tx| tx.record_artifact_view(run, "work/other.png"))
            .unwrap()
    );
    assert_eq!(s.read(|tx| tx.artifact_views(run)).unwrap().len(), 2);
    let viewed = s
        .read(|tx| tx.events_after(EventId(0), None, 1000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "artifact_viewed")
        .count();
    assert_eq!(viewed, 2);
}
