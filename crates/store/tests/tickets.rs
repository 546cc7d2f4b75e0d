//! Tickets on both backends (see `troupe_store::testing`): the database's stage rules attacked
//! by raw SQL (a user's status edit moves the stage, a stage write names its source, every move
//! is logged, (stage, status) is a mapping row, the reviewer is not the owner, one sample per
//! job, a ticket's fixed fields and unique keys). The store's ticket API is in
//! `tickets_api.rs`.
//!
//! On PostgreSQL a refused statement ends its transaction, so each refusal has a write of its
//! own.

mod deliverable_world;

use deliverable_world::*;

/// `tickets` rows of `id` meeting `cond`.
fn ticket_is(s: &Store, id: i64, cond: &str) -> bool {
    count(s, "tickets", "updated_at", &format!("id = {id} AND {cond}")) == 1
}

/// The logged stage moves of ticket `id` meeting `cond`.
fn logged(s: &Store, id: i64, cond: &str) -> usize {
    count(
        s,
        "ticket_stage_changes",
        "at",
        &format!("ticket_id = {id} AND {cond}"),
    )
}

#[test]
fn stage_follows_status_trigger() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    let b = raw_ticket(&s, w.launch, 2);
    // The app starts the work: a stage write with its source, status alongside.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET stage = 'in_progress', status = 'in_progress',
                 stage_source = 'app_started', updated_at = 5 WHERE id = {a}"
        ),
    )
    .unwrap();
    assert_eq!(
        logged(
            &s,
            a,
            "from_stage = 'to_do' AND to_stage = 'in_progress' AND source = 'app_started' AND at = 5 AND part_id IS NULL"
        ),
        1
    );

    // The user drags it to Done (and retitles it in the same edit): the stage follows, the
    // source is the user's, and the move is logged.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET status = 'done', title = 'renamed', updated_at = 7 WHERE id = {a}"
        ),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        a,
        "stage = 'approved' AND status = 'done' AND stage_source = 'user' AND title = 'renamed' AND updated_at = 7"
    ));
    assert_eq!(
        logged(
            &s,
            a,
            "from_stage = 'in_progress' AND to_stage = 'approved' AND source = 'user' AND at = 7"
        ),
        1
    );

    // Each status maps to its stage; a set-aside (parked) keeps no reason.
    for (status, stage) in [
        ("parked", "dropped"),
        ("in_review", "in_review"),
        ("in_progress", "in_progress"),
        ("to_do", "to_do"),
        ("done", "approved"),
    ] {
        raw(
            &s,
            &format!("UPDATE tickets SET status = '{status}' WHERE id = {a}"),
        )
        .unwrap();
        assert!(
            ticket_is(
                &s,
                a,
                &format!("stage = '{stage}' AND stage_source = 'user' AND drop_reason IS NULL")
            ),
            "status {status} → stage {stage}"
        );
    }
    assert_eq!(logged(&s, a, "source = 'user'"), 6);

    // A lead drop has a reason; the user's restore from the board clears it.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET stage = 'dropped', status = 'parked', stage_source = 'lead_drop',
                 drop_reason = 'merged into #01' WHERE id = {b}"
        ),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        b,
        "stage = 'dropped' AND drop_reason = 'merged into #01' AND stage_source = 'lead_drop'"
    ));
    raw(
        &s,
        &format!("UPDATE tickets SET status = 'to_do' WHERE id = {b}"),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        b,
        "stage = 'to_do' AND drop_reason IS NULL AND stage_source = 'user'"
    ));

    // One edit of many rows moves each.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET status = 'in_review' WHERE plan_id = {}",
            w.launch.0
        ),
    )
    .unwrap();
    assert_eq!(
        count(
            &s,
            "tickets",
            "updated_at",
            "stage = 'in_review' AND status = 'in_review' AND stage_source = 'user'"
        ),
        2
    );

    // A status nobody knows moves nothing.
    assert_refused(
        raw(
            &s,
            &format!("UPDATE tickets SET status = 'finished' WHERE id = {a}"),
        ),
        &["NOT NULL", "not-null", "CHECK", "check constraint"],
        "an unknown status",
    );
    assert!(ticket_is(&s, a, "status = 'in_review'"));
}

#[test]
fn stage_write_needs_source() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    for sql in [
        format!("UPDATE tickets SET stage = 'in_progress', status = 'in_progress' WHERE id = {a}"),
        format!(
            "UPDATE tickets SET stage = 'in_progress', status = 'in_progress', stage_source = NULL
             WHERE id = {a}"
        ),
    ] {
        assert_refused(raw(&s, &sql), &["stage_needs_source"], &sql);
    }
    assert!(ticket_is(&s, a, "stage = 'to_do' AND stage_source IS NULL"));
    assert_eq!(logged(&s, a, "1 = 1"), 0);
    // A source nobody knows is no source.
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET stage = 'in_progress', status = 'in_progress',
                     stage_source = 'organizer' WHERE id = {a}"
            ),
        ),
        &["CHECK", "check constraint"],
        "the organizer as a source",
    );
    // Named, it moves and is logged.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET stage = 'submitted', status = 'in_review', stage_source = 'check'
             WHERE id = {a}"
        ),
    )
    .unwrap();
    assert_eq!(
        logged(
            &s,
            a,
            "from_stage = 'to_do' AND to_stage = 'submitted' AND source = 'check'"
        ),
        1
    );
    // submitted → in_review keeps the status: a stage write, not the user's edit.
    raw(
        &s,
        &format!("UPDATE tickets SET stage = 'in_review', stage_source = 'review' WHERE id = {a}"),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        a,
        "stage = 'in_review' AND status = 'in_review' AND stage_source = 'review'"
    ));
    // A write that leaves the stage alone logs nothing.
    raw(
        &s,
        &format!("UPDATE tickets SET title = 'other' WHERE id = {a}"),
    )
    .unwrap();
    assert_eq!(logged(&s, a, "1 = 1"), 2);
}

#[test]
fn stage_status_pair_checked() {
    let (s, _) = store();
    let w = world(&s);
    // Every row of the mapping stands.
    for (n, (stage, status)) in [
        ("to_do", "to_do"),
        ("in_progress", "in_progress"),
        ("submitted", "in_review"),
        ("in_review", "in_review"),
        ("rework", "in_progress"),
        ("approved", "done"),
        ("dropped", "parked"),
    ]
    .into_iter()
    .enumerate()
    {
        raw(&s, &ticket_sql(w.launch, n as i64 + 1, stage, status)).unwrap();
    }
    // Any other pair is refused, made so or written so.
    for (stage, status) in [
        ("approved", "in_review"),
        ("to_do", "done"),
        ("rework", "in_review"),
        ("dropped", "to_do"),
        ("submitted", "in_progress"),
    ] {
        assert_refused(
            raw(&s, &ticket_sql(w.ad, 1, stage, status)),
            &["ticket_stage_status"],
            &format!("a new ticket at {stage}/{status}"),
        );
    }
    let a = raw_id(w.launch, 4);
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET stage = 'approved', stage_source = 'review' WHERE id = {a}"
            ),
        ),
        &["ticket_stage_status"],
        "approved with status In review",
    );
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET stage = 'rework', status = 'done', stage_source = 'review'
                 WHERE id = {a}"
            ),
        ),
        &["ticket_stage_status"],
        "rework with status Done",
    );
    assert!(ticket_is(&s, a, "stage = 'in_review'"));
    // A reason only on a dropped ticket.
    assert_refused(
        raw(
            &s,
            &format!("UPDATE tickets SET drop_reason = 'why' WHERE id = {a}"),
        ),
        &["drop_reason_only_dropped"],
        "a drop reason on a live ticket",
    );
}

#[test]
fn reviewer_is_not_owner() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    raw(
        &s,
        &format!(
            "UPDATE tickets SET owner_bot_id = {}, reviewer_bot_id = {} WHERE id = {a}",
            w.ada.0, w.bo.0
        ),
    )
    .unwrap();
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET reviewer_bot_id = {} WHERE id = {a}",
                w.ada.0
            ),
        ),
        &["reviewer_is_owner"],
        "the owner made reviewer",
    );
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET owner_bot_id = {} WHERE id = {a}",
                w.bo.0
            ),
        ),
        &["reviewer_is_owner"],
        "the reviewer made owner",
    );
    assert_refused(
        raw(
            &s,
            &format!(
                "INSERT INTO tickets (plan_id, number, title, owner_bot_id, reviewer_bot_id,
                     folder, created_at, updated_at)
                 VALUES ({}, 2, 'x', {}, {}, '/tmp/x', 1, 1)",
                w.launch.0, w.cy.0, w.cy.0
            ),
        ),
        &["reviewer_is_owner"],
        "a new ticket its owner reviews",
    );
    // Either alone is fine.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET owner_bot_id = NULL, reviewer_bot_id = {} WHERE id = {a}",
            w.ada.0
        ),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        a,
        &format!("owner_bot_id IS NULL AND reviewer_bot_id = {}", w.ada.0)
    ));
}

#[test]
fn one_sample_per_plan() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    let b = raw_ticket(&s, w.launch, 2);
    let other = raw_ticket(&s, w.ad, 1);
    for id in [a, other] {
        raw(
            &s,
            &format!("UPDATE tickets SET is_sample = 1 WHERE id = {id}"),
        )
        .unwrap();
    }
    assert_refused(
        raw(
            &s,
            &format!("UPDATE tickets SET is_sample = 1 WHERE id = {b}"),
        ),
        &["tickets_one_sample", "tickets.plan_id"],
        "a second sample in the job",
    );
    // Moving the sample: the old one gives it up first.
    raw(
        &s,
        &format!("UPDATE tickets SET is_sample = 0 WHERE id = {a}"),
    )
    .unwrap();
    raw(
        &s,
        &format!("UPDATE tickets SET is_sample = 1 WHERE id = {b}"),
    )
    .unwrap();
    assert_eq!(count(&s, "tickets", "updated_at", "is_sample = 1"), 2);
}

#[test]
fn ticket_rows_keep_their_shape() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    let b = raw_ticket(&s, w.launch, 2);
    assert_refused(
        raw(
            &s,
            &ticket_sql(w.launch, 1, "to_do", "to_do").replace(&a.to_string(), "77"),
        ),
        &["UNIQUE", "duplicate key"],
        "a second #01 in the job",
    );
    for (sql, rule) in [
        (
            format!("UPDATE tickets SET folder = '/elsewhere' WHERE id = {a}"),
            "ticket_fixed",
        ),
        (
            format!("UPDATE tickets SET number = 9 WHERE id = {a}"),
            "ticket_fixed",
        ),
        (
            format!("UPDATE tickets SET plan_id = {} WHERE id = {a}", w.ad.0),
            "ticket_fixed",
        ),
        (
            format!("INSERT INTO ticket_dependencies (ticket_id, depends_on_id) VALUES ({a}, {a})"),
            "depends_on_self",
        ),
        (
            format!("UPDATE tickets SET title = '  ' WHERE id = {a}"),
            "CHECK",
        ),
    ] {
        let rules = [rule, "check constraint"];
        let rules: &[&str] = if rule == "CHECK" { &rules } else { &rules[..1] };
        assert_refused(raw(&s, &sql), rules, &sql);
    }
    raw(
        &s,
        &format!("INSERT INTO ticket_dependencies (ticket_id, depends_on_id) VALUES ({b}, {a})"),
    )
    .unwrap();
    // Two layout keys alike in one job are refused; in two jobs they are fine.
    raw(
        &s,
        &format!("UPDATE tickets SET key = 'intro' WHERE id = {a}"),
    )
    .unwrap();
    assert_refused(
        raw(
            &s,
            &format!("UPDATE tickets SET key = 'intro' WHERE id = {b}"),
        ),
        &["UNIQUE", "duplicate key"],
        "a layout key twice in one job",
    );
    let other = raw_ticket(&s, w.ad, 1);
    raw(
        &s,
        &format!("UPDATE tickets SET key = 'intro' WHERE id = {other}"),
    )
    .unwrap();
}
