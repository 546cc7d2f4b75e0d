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
