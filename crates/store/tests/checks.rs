//! Acceptance checks and checks from the user's words on both backends: the database's rules
//! attacked by raw SQL (the last five runs kept, the timeout's bounds, the output tail's
//! length, each kind's shape, an offer never a gate), and the store's checks API.
//!
//! On PostgreSQL a refused statement ends its transaction, so each refusal has a write of its
//! own.

mod deliverable_world;

use deliverable_world::*;

/// The raw insert of a user's command check of `plan` with id `id` and `timeout` ("DEFAULT":
/// none given).
fn command_check_sql(id: i64, plan: PlanId, timeout: &str) -> String {
    let (column, value) = match timeout {
        "DEFAULT" => ("", String::new()),
        t => (", timeout_secs", format!(", {t}")),
    };
    format!(
        "INSERT INTO checks (id, plan_id, kind, command, source, created_at, updated_at{column})
         VALUES ({id}, {}, 'command', 'true', 'user', 1, 1{value})",
        plan.0
    )
}

fn run_sql(check: i64, outcome: &str, at: i64) -> String {
    format!(
        "INSERT INTO check_runs (check_id, outcome, detail, started_at, ended_at)
         VALUES ({check}, '{outcome}', 'run at {at}', {at}, {at})"
    )
}

#[test]
fn check_runs_keep_five() {
    let (s, _) = store();
    let w = world(&s);
    raw(&s, &command_check_sql(1, w.launch, "DEFAULT")).unwrap();
    raw(&s, &command_check_sql(2, w.launch, "DEFAULT")).unwrap();
    for at in 1..=7 {
        raw(
            &s,
            &run_sql(1, if at % 2 == 0 { "passed" } else { "failed" }, at),
        )
        .unwrap();
    }
    raw(&s, &run_sql(2, "error", 1)).unwrap();
    raw(&s, &run_sql(2, "blocked", 2)).unwrap();
    assert_eq!(count(&s, "check_runs", "detail", "check_id = 1"), 5);
    // The newest five stay: runs at 3…7.
    assert_eq!(
        count(
            &s,
            "check_runs",
            "detail",
            "check_id = 1 AND started_at >= 3"
        ),
        5
    );
    // Another check's runs are its own.
    assert_eq!(count(&s, "check_runs", "detail", "check_id = 2"), 2);
    // Many at once: still five.
    raw(
        &s,
        "INSERT INTO check_runs (check_id, outcome, started_at, ended_at)
         VALUES (2, 'passed', 10, 10), (2, 'passed', 11, 11), (2, 'passed', 12, 12),
                (2, 'passed', 13, 13), (2, 'passed', 14, 14)",
    )
    .unwrap();
    assert_eq!(count(&s, "check_runs", "detail", "check_id = 2"), 5);
    assert_eq!(
        count(
            &s,
            "check_runs",
            "detail",
            "check_id = 2 AND started_at >= 10"
        ),
        5
    );
    // A run's outcome is one of four.
    assert_refused(
        raw(&s, &run_sql(1, "pending", 20)),
        &["CHECK", "check constraint"],
        "a pending run",
    );
}

#[test]
fn check_timeout_bounds() {
    let (s, _) = store();
    let w = world(&s);
    raw(&s, &command_check_sql(1, w.launch, "DEFAULT")).unwrap();
    assert_eq!(
        count(&s, "checks", "updated_at", "id = 1 AND timeout_secs = 120"),
        1
    );
    raw(&s, &command_check_sql(2, w.launch, "1")).unwrap();
    raw(&s, &command_check_sql(3, w.launch, "600")).unwrap();
    for bad in ["0", "601", "-5"] {
        assert_refused(
            raw(&s, &command_check_sql(9, w.launch, bad)),
            &["check_timeout"],
            &format!("a timeout of {bad} s"),
        );
    }
    assert_refused(
        raw(&s, "UPDATE checks SET timeout_secs = 700 WHERE id = 1"),
        &["check_timeout"],
        "a timeout raised past 600 s",
    );
    // The output tail is at most 4000 characters (and characters, not bytes).
    let tail = |n: usize| "é".repeat(n);
    raw(
        &s,
        &format!(
            "INSERT INTO check_runs (check_id, outcome, output_tail, started_at, ended_at)
             VALUES (1, 'failed', '{}', 1, 1)",
            tail(4000)
        ),
    )
    .unwrap();
    assert_refused(
        raw(
            &s,
            &format!(
                "INSERT INTO check_runs (check_id, outcome, output_tail, started_at, ended_at)
                 VALUES (1, 'failed', '{}', 1, 1)",
                tail(4001)
            ),
        ),
        &["CHECK", "check constraint"],
        "an output tail of 4001 characters",
    );
}

#[test]
fn check_kinds_keep_their_shape() {
    let (s, _) = store();
    let w = world(&s);
    let insert = |cols: &str, vals: &str| {
        raw(
            &s,
            &format!(
                "INSERT INTO checks (plan_id, created_at, updated_at, {cols})
                 VALUES ({}, 1, 1, {vals})",
                w.launch.0
            ),
        )
    };
    // Each kind with what it needs.
    insert("kind, path, source", "'file_exists', 'out.mp4', 'user'").unwrap();
    insert(
        "kind, path, pattern, negate, source",
        "'file_contains', 'a.md', 'TODO', 1, 'user'",
    )
    .unwrap();
    insert(
        "kind, command, cwd, expected_exit, expected_output, source",
        "'command', 'make test', 'app', 0, 'ok', 'organizer'",
    )
    .unwrap();
    insert(
        "kind, source, gate, confirmed, dimension, value, bound, min, max, quote_id, status, said_count",
        "'words', 'words', 0, 0, 'running_time', 120, 'about', 108, 132, 7, 'offer', 2",
    )
    .unwrap();
    insert(
        "kind, source, gate, confirmed, dimension, value, status, said_count",
        "'words', 'words', 1, 1, 'frame_rate', 60, 'in_force', 1",
    )
    .unwrap();
    for (what, cols, vals) in [
        (
            "a file check with no path",
            "kind, source",
            "'file_exists', 'user'",
        ),
        (
            "a pattern check with no pattern",
            "kind, path, source",
            "'file_matches_regex', 'a.md', 'user'",
        ),
        (
            "a blank command",
            "kind, command, source",
            "'command', '  ', 'user'",
        ),
        (
            "a words check with no dimension",
            "kind, source, gate, status",
            "'words', 'words', 0, 'offer'",
        ),
        (
            "a words check the user wrote",
            "kind, source, gate, dimension, status",
            "'words', 'user', 0, 'aspect', 'offer'",
        ),
        (
            "a user's check that says it came from words",
            "kind, path, source",
            "'file_exists', 'a', 'words'",
        ),
        (
            "an offer that gates",
            "kind, source, gate, dimension, status",
            "'words', 'words', 1, 'aspect', 'offer'",
        ),
        (
            "an unknown dimension",
            "kind, source, gate, dimension, status",
            "'words', 'words', 0, 'loudness', 'offer'",
        ),
        ("an unknown kind", "kind, source", "'seams', 'user'"),
    ] {
        assert_refused(insert(cols, vals), &["CHECK", "check constraint"], what);
    }
}
