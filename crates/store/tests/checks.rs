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
        "'words', 'words', 0, 0, 'running_time', '{\"kind\":\"seconds\",\"seconds\":120.0}', 'about', 108, 132, 7, 'offer', 2",
    )
    .unwrap();
    insert(
        "kind, source, gate, confirmed, dimension, value, status, said_count",
        "'words', 'words', 1, 1, 'frame_rate', '{\"kind\":\"frames_per_second\",\"fps\":60.0}', 'in_force', 1",
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
        ("an unknown kind", "kind, source", "'sames', 'user'"),
        (
            "a seams check with both a path and a command",
            "kind, source, path, command",
            "'seams', 'user', 'a/*.md', 'ls'",
        ),
        (
            "a seams check with neither",
            "kind, source, command",
            "'seams', 'user', '  '",
        ),
    ] {
        assert_refused(insert(cols, vals), &["CHECK", "check constraint"], what);
    }
}

use troupe_core::submission::CheckSource;
use troupe_core::words_check::{Bound, Dimension, Value as Said};
use troupe_store::{
    CheckEdit, CheckKind, NewAcceptanceCheckCall, NewCheck, NewCheckRun, RunOutcome, WordsStatus,
};

fn command(plan: PlanId, cmd: &str) -> NewCheck {
    NewCheck {
        command: Some(cmd.into()),
        ..NewCheck::new(plan, CheckKind::Command, CheckSource::User)
    }
}

fn run(check: CheckId, outcome: RunOutcome, tail: &str) -> NewCheckRun {
    NewCheckRun {
        check_id: check,
        submission_id: None,
        outcome,
        detail: format!("{outcome}"),
        output_tail: tail.into(),
        measured: None,
        for_reference: false,
        started_at: 1,
    }
}

fn offer(plan: PlanId) -> NewCheck {
    NewCheck {
        dimension: Some(Dimension::RunningTime),
        value: Some(Said::Seconds { seconds: 120.0 }),
        bound: Some(Bound::About),
        min: Some(108.0),
        max: Some(132.0),
        quote_id: Some(7),
        status: Some(WordsStatus::Offer),
        said_count: 2,
        ..NewCheck::new(plan, CheckKind::Words, CheckSource::Words)
    }
}

#[test]
fn checks_round_trip() {
    let (s, _) = store();
    let w = world(&s);
    let c = s
        .write(|tx| {
            tx.create_check(&NewCheck {
                done_when_line: Some("the tests pass".into()),
                cwd: Some("app".into()),
                expected_output: Some("ok".into()),
                ..command(w.launch, "make test")
            })
        })
        .unwrap();
    assert_eq!(c.timeout_secs, 120);
    assert!(c.gate && !c.confirmed && c.runs.is_empty());
    assert_eq!(c.source, CheckSource::User);
    // Timeouts outside 1–600 s are refused with the field named.
    for t in [0, 601] {
        match s.write(|tx| {
            tx.create_check(&NewCheck {
                timeout_secs: Some(t),
                ..command(w.launch, "true")
            })
        }) {
            Err(StoreError::Invalid(m)) => assert!(m.starts_with("timeout_secs"), "{m}"),
            other => panic!("timeout {t}: {other:?}"),
        }
    }
    // What a kind needs is named.
    let no_path = NewCheck::new(w.launch, CheckKind::FileExists, CheckSource::User);
    assert!(matches!(
        s.write(|tx| tx.create_check(&no_path)),
        Err(StoreError::Invalid(m)) if m.starts_with("path")
    ));

    // Runs: the tail is kept to 4000 characters, and only the newest five stay.
    let long = format!("{}END", "x".repeat(5000));
    let first = s
        .write(|tx| tx.record_check_run(&run(c.id, RunOutcome::Failed, &long)))
        .unwrap();
    assert_eq!(first.output_tail.chars().count(), 4000);
    assert!(first.output_tail.ends_with("END"));
    for _ in 0..6 {
        s.write(|tx| tx.record_check_run(&run(c.id, RunOutcome::Passed, "ok")))
            .unwrap();
    }
    let runs = s.read(|tx| tx.runs_of_check(c.id)).unwrap();
    assert_eq!(runs.len(), 5);
    assert!(runs.iter().all(|r| r.outcome == RunOutcome::Passed));
    assert!(runs.windows(2).all(|p| p[0].id > p[1].id), "newest first");
    assert_eq!(events(&s, w.group, "check_run").len(), 7);

    // The user's edit; an organizer's check becomes the user's.
    let edited = s
        .write(|tx| {
            tx.edit_check(
                c.id,
                &CheckEdit {
                    timeout_secs: Some(600),
                    expected_output: Some(None),
                    ..CheckEdit::default()
                },
            )
        })
        .unwrap();
    assert_eq!((edited.timeout_secs, edited.expected_output), (600, None));
    assert_eq!(edited.runs.len(), 5);
    let org = s
        .write(|tx| {
            tx.create_check(&NewCheck {
                source: CheckSource::Organizer,
                ..command(w.launch, "make")
            })
        })
        .unwrap();
    let org = s
        .write(|tx| {
            tx.edit_check(
                org.id,
                &CheckEdit {
                    command: Some(Some("make all".into())),
                    ..CheckEdit::default()
                },
            )
        })
        .unwrap();
    assert_eq!(org.source, CheckSource::User);
    assert_eq!(org.command.as_deref(), Some("make all"));

    // Removed: kept, listed only when asked.
    assert!(s.write(|tx| tx.remove_check(org.id)).unwrap());
    assert!(!s.write(|tx| tx.remove_check(org.id)).unwrap());
    assert_eq!(
        s.read(|tx| tx.checks_of_plan(w.launch, false))
            .unwrap()
            .len(),
        1
    );
    let all = s.read(|tx| tx.checks_of_plan(w.launch, true)).unwrap();
    assert_eq!(all.len(), 2);
    assert!(all[1].removed_at.is_some());
    assert_eq!(all[0].runs.len(), 5);
    assert!(
        s.read(|tx| tx.checks_of_plan(w.ad, true))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn words_checks_round_trip() {
    let (s, _) = store();
    let w = world(&s);
    let o = s.write(|tx| tx.create_check(&offer(w.launch))).unwrap();
    assert_eq!(o.status, Some(WordsStatus::Offer));
    assert!(!o.gate && !o.confirmed, "an offer never gates");
    assert_eq!(o.value, Some(Said::Seconds { seconds: 120.0 }));
    assert_eq!(
        (o.min, o.max, o.bound),
        (Some(108.0), Some(132.0), Some(Bound::About))
    );
    assert_eq!((o.said_count, o.quote_id), (2, Some(7)));
    // Measured at once, with what it measured.
    let r = s
        .write(|tx| {
            tx.record_check_run(&NewCheckRun {
                measured: Some(107.0),
                for_reference: false,
                ..run(o.id, RunOutcome::Failed, "")
            })
        })
        .unwrap();
    assert_eq!(r.measured, Some(107.0));
    // Never edited.
    assert!(matches!(
        s.write(|tx| tx.edit_check(o.id, &CheckEdit::default())),
        Err(StoreError::Conflict(m)) if m.starts_with("derived_check")
    ));
    // Said again, differently.
    let again = s
        .write(|tx| {
            tx.set_words_reading(
                o.id,
                Said::Seconds { seconds: 180.0 },
                Bound::About,
                Some(162.0),
                Some(198.0),
                Some(9),
                1,
                WordsStatus::Offer,
            )
        })
        .unwrap();
    assert_eq!(
        (again.max, again.quote_id, again.gate),
        (Some(198.0), Some(9), false)
    );
    assert!(matches!(
        s.write(|tx| tx.set_words_reading(
            o.id,
            Said::FramesPerSecond { fps: 24.0 },
            Bound::Exact,
            None,
            None,
            None,
            1,
            WordsStatus::Offer
        )),
        Err(StoreError::Invalid(_))
    ));
    // Confirmed: in force, a gate.
    let c = s.write(|tx| tx.confirm_check(o.id)).unwrap();
    assert_eq!(c.status, Some(WordsStatus::InForce));
    assert!(c.gate && c.confirmed);
    assert_eq!(events(&s, w.group, "check_confirmed").len(), 1);
    // An offer a later number withdrew cannot be confirmed.
    let gone = s.write(|tx| tx.create_check(&offer(w.launch))).unwrap();
    s.write(|tx| tx.remove_check(gone.id)).unwrap();
    assert!(matches!(
        s.write(|tx| tx.confirm_check(gone.id)),
        Err(StoreError::Conflict(m)) if m.starts_with("withdrawn")
    ));
    // A user's check is not confirmed.
    let mine = s
        .write(|tx| tx.create_check(&command(w.launch, "true")))
        .unwrap();
    assert!(matches!(
        s.write(|tx| tx.confirm_check(mine.id)),
        Err(StoreError::Invalid(_))
    ));
}

#[test]
fn plan_large_job_and_delivery() {
    use troupe_core::large_job::{LargeJob, LargeSource, LargeState};
    let (s, _) = store();
    let w = world(&s);
    let d = s.read(|tx| tx.plan_deliverables(w.launch)).unwrap();
    assert_eq!(d.large_state, LargeState::Unread);
    assert!(!d.laid_out && !d.delivered && !d.user_said_no_need);
    let large = LargeJob {
        state: LargeState::Large,
        source: Some(LargeSource::Reader),
        evidence: Some("a 5-minute MV".into()),
        ..LargeJob::unread()
    };
    let d = s.write(|tx| tx.set_large_job(w.launch, &large)).unwrap();
    assert_eq!(d.large_job(), large);
    // The same again tells nothing new.
    s.write(|tx| tx.set_large_job(w.launch, &large)).unwrap();
    assert_eq!(events(&s, w.group, "large_job_changed").len(), 1);
    // "No need" is sticky.
    let no_need = LargeJob {
        state: LargeState::NotLarge,
        source: Some(LargeSource::User),
        evidence: None,
        user_said_no_need: true,
        laid_out: false,
    };
    s.write(|tx| tx.set_large_job(w.launch, &no_need)).unwrap();
    assert!(matches!(
        s.write(|tx| tx.set_large_job(w.launch, &large)),
        Err(StoreError::Invalid(_))
    ));
    // Delivered, and active again.
    assert!(s.write(|tx| tx.set_plan_delivered(w.launch, true)).unwrap());
    assert!(!s.write(|tx| tx.set_plan_delivered(w.launch, true)).unwrap());
    let d = s.read(|tx| tx.plan_deliverables(w.launch)).unwrap();
    assert!(d.delivered && d.delivered_at == Some(1_000));
    assert!(
        s.write(|tx| tx.set_plan_delivered(w.launch, false))
            .unwrap()
    );
    assert!(
        !s.read(|tx| tx.plan_deliverables(w.launch))
            .unwrap()
            .delivered
    );
    assert_eq!(events(&s, w.group, "plan_delivered").len(), 1);
    assert_eq!(events(&s, w.group, "plan_reopened").len(), 1);
}

#[test]
fn seams_checks_keep_reference_runs_and_bill_their_calls() {
    let (s, _) = store();
    let w = world(&s);
    let c = s
        .write(|tx| {
            tx.create_check(&NewCheck {
                path: Some("shots/C*.mp4".into()),
                ..NewCheck::new(w.launch, CheckKind::Seams, CheckSource::User)
            })
        })
        .unwrap();
    assert_eq!(c.kind, CheckKind::Seams);
    assert!(c.gate);
    // Both sources, or none, is refused with the fields named.
    for (path, cmd) in [(Some("a/*.md"), Some("ls")), (None, None)] {
        let both = NewCheck {
            path: path.map(str::to_string),
            command: cmd.map(str::to_string),
            ..NewCheck::new(w.launch, CheckKind::Seams, CheckSource::User)
        };
        assert!(matches!(
            s.write(|tx| tx.create_check(&both)),
            Err(StoreError::Invalid(m)) if m.starts_with("path, command")
        ));
    }
    let r = s
        .write(|tx| {
            tx.record_check_run(&NewCheckRun {
                for_reference: true,
                ..run(c.id, RunOutcome::Failed, "C2→C10: the car turns red")
            })
        })
        .unwrap();
    assert!(r.for_reference);
    assert!(s.read(|tx| tx.check(c.id)).unwrap().runs[0].for_reference);
    // A call that sent pictures is picture spend; a text-only one is not.
    s.write(|tx| {
        tx.set_model_price("judge-1", 1_000_000.0, 0.0)?;
        for pictures in [2, 0] {
            tx.record_acceptance_check_call(&NewAcceptanceCheckCall {
                check_id: c.id,
                model: "judge-1".into(),
                pictures,
                input_tokens: 3,
                output_tokens: 1,
                answer: "read",
                raw: Some("{}".into()),
            })?;
        }
        Ok(())
    })
    .unwrap();
    let calls = s.read(|tx| tx.acceptance_check_calls(c.id)).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].cost_usd, Some(3.0));
    assert_eq!(s.read(|tx| tx.picture_spend_since(0)).unwrap(), 3.0);
}
