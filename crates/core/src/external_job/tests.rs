use super::*;

const MIN: i64 = 60_000;
const T0: i64 = 1_760_000_000_000;

fn answered(status: RemoteStatus) -> PollOutcome {
    PollOutcome::Answered(CheckAnswer {
        status,
        ..Default::default()
    })
}

#[test]
fn polls_come_at_30_s_1_2_4_then_every_5_minutes() {
    let delays: Vec<i64> = (0..7).map(poll_delay).collect();
    assert_eq!(
        delays,
        vec![30_000, MIN, 2 * MIN, 4 * MIN, 5 * MIN, 5 * MIN, 5 * MIN]
    );
    assert_eq!(next_poll_at(T0, T0, 0), T0 + 30_000);
}

#[test]
fn a_pending_answer_moves_to_the_next_step() {
    let s = settle(T0, T0 + 30_000, 0, &answered(RemoteStatus::Pending));
    assert_eq!(
        s,
        Settlement::Again {
            next_poll_at: T0 + 30_000 + MIN,
            poll_step: 1
        }
    );
    // An unanswered poll waits like a pending one: the server may be down for a while.
    let s = settle(T0, T0 + 90_000, 1, &PollOutcome::Unanswered("down".into()));
    assert_eq!(
        s,
        Settlement::Again {
            next_poll_at: T0 + 90_000 + 2 * MIN,
            poll_step: 2
        }
    );
}

#[test]
fn done_and_failed_answers_settle_the_job() {
    assert_eq!(
        settle(T0, T0 + MIN, 1, &answered(RemoteStatus::Done)),
        Settlement::Finished {
            status: JobStatus::Done
        }
    );
    assert_eq!(
        settle(T0, T0 + MIN, 1, &answered(RemoteStatus::Failed)),
        Settlement::Finished {
            status: JobStatus::Failed
        }
    );
}

#[test]
fn still_pending_three_hours_after_submit_is_lost() {
    // S-EJ4: the last poll is due exactly at three hours, never later.
    let near = T0 + LOST_AFTER_MS - 2 * MIN;
    assert_eq!(next_poll_at(T0, near, 9), T0 + LOST_AFTER_MS);
    assert_eq!(
        settle(T0, near, 9, &answered(RemoteStatus::Pending)),
        Settlement::Again {
            next_poll_at: T0 + LOST_AFTER_MS,
            poll_step: 10
        }
    );
    assert_eq!(
        settle(T0, T0 + LOST_AFTER_MS, 10, &answered(RemoteStatus::Pending)),
        Settlement::Finished {
            status: JobStatus::Lost
        }
    );
    assert_eq!(
        settle(
            T0,
            T0 + LOST_AFTER_MS,
            10,
            &PollOutcome::Unanswered("x".into())
        ),
        Settlement::Finished {
            status: JobStatus::Lost
        }
    );
    // A render that finished in the last poll is done, not lost.
    assert_eq!(
        settle(T0, T0 + LOST_AFTER_MS, 10, &answered(RemoteStatus::Done)),
        Settlement::Finished {
            status: JobStatus::Done
        }
    );
}

#[test]
fn the_same_submit_within_30_minutes_gets_the_job_back() {
    // S-EJ2.
    let pending = Earlier {
        status: JobStatus::Pending,
        created_at: T0,
    };
    assert!(dedupes(&pending, T0 + 10 * MIN));
    assert!(!dedupes(&pending, T0 + 30 * MIN));
    let done = Earlier {
        status: JobStatus::Done,
        ..pending.clone()
    };
    assert!(dedupes(&done, T0 + 29 * MIN));
    for status in [JobStatus::Failed, JobStatus::Lost] {
        let e = Earlier {
            status,
            ..pending.clone()
        };
        assert!(!dedupes(&e, T0 + MIN), "{status:?} is retried");
    }
}

#[test]
fn a_part_with_work_pending_needs_a_reason() {
    let r = check_submit(&[3], Some(PartJob::Running), None).unwrap_err();
    assert_eq!(r.code, "job_pending");
    assert!(r.text.contains("part 3") && r.text.contains(RESUBMIT_REASON));
    let r = check_submit(&[3], Some(PartJob::NotHandedOver), Some("  ")).unwrap_err();
    assert!(r.text.contains("not handed over"));
    assert_eq!(
        check_submit(&[3], Some(PartJob::Running), Some("too dark")),
        Ok(())
    );
    assert_eq!(check_submit(&[3], None, None), Ok(()));
    // Only a prompt naming exactly one part is judged.
    assert_eq!(check_submit(&[3, 4], Some(PartJob::Running), None), Ok(()));
    assert_eq!(check_submit(&[], Some(PartJob::Running), None), Ok(()));
}

#[test]
fn statuses_round_trip_and_only_pending_is_unfinished() {
    for s in [
        JobStatus::Pending,
        JobStatus::Done,
        JobStatus::Failed,
        JobStatus::Lost,
    ] {
        assert_eq!(JobStatus::parse(s.as_str()), Ok(s));
        assert_eq!(s.is_finished(), s != JobStatus::Pending);
    }
    assert!(JobStatus::parse("running").is_err());
}

#[test]
fn the_texts_say_what_the_bot_needs() {
    let a = answer::parse_check_answer(r#"{"status":"done","url":"https://m/v.mp4","cost":"1"}"#);
    let pending = JobView {
        id: "ej_1",
        remote_id: "abc",
        status: JobStatus::Pending,
        answer: None,
    };
    let t = submitted_text(&pending, false, "request_id: abc");
    assert!(t.starts_with("request_id: abc\nRegistered as external job ej_1"));
    assert!(t.contains("wakes you when it finishes"));
    assert!(submitted_text(&pending, true, "").contains("nothing was sent again"));
    let cached = cached_text(&pending);
    assert!(cached.contains("still pending") && cached.contains("server was not asked"));
    let done = JobView {
        status: JobStatus::Done,
        answer: Some(&a),
        ..pending.clone()
    };
    assert_eq!(
        finished_text(&done),
        "External job ej_1 (abc): done.\nurl: https://m/v.mp4\ncost: 1"
    );
    let lost = JobView {
        status: JobStatus::Lost,
        ..pending
    };
    assert!(finished_text(&lost).contains("lost: still pending 3 hours"));
}

#[test]
fn a_note_naming_a_polled_job_is_found_by_either_id() {
    let polled = vec![
        ("ej_4".to_string(), "abc123".to_string()),
        ("ej_5".to_string(), "x".to_string()),
    ];
    assert_eq!(
        note_names_polled_job("check whether abc123 is ready", &polled),
        Some("ej_4")
    );
    assert_eq!(
        note_names_polled_job("poll EJ_5 again", &polled),
        Some("ej_5")
    );
    assert_eq!(
        note_names_polled_job("see what the user thinks of v3", &polled),
        None
    );
    // Part of a longer word, or a remote id too short to mean anything, names nothing.
    assert_eq!(note_names_polled_job("abc1234 and ej_50", &polled), None);
    assert_eq!(note_names_polled_job("x marks it", &polled), None);
    assert_eq!(polled_job_refusal("ej_4").code, "polled_job");
}

#[test]
fn wake_keys_are_per_job_and_thread() {
    assert_eq!(wake_key(3, 9), "external_job:3:wake:9");
    assert_ne!(wake_key(3, 9), wake_key(3, 10));
}
