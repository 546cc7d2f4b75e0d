//! Quality (digest 003-B §6, §9, §10.1) with scripted Bots: a turn the process died under is
//! the app's (`orchestration`, for maintainers only), a search killed by the timeout teaches
//! a lesson that warns, then blocks, its kind of call; a complaint sends approved work back and
//! marks the review that approved it, which the reviewer's situation then lists.

mod deliverables;
mod support;

use deliverables::*;
use support::*;
use troupe_collab::checks::{Checks, NewCheckRequest};
use troupe_collab::holds::{HoldRequest, ScopeRequest};
use troupe_collab::quality::{Calibration, complaint_note};
use troupe_collab::tickets::TicketPatchRequest;
use troupe_core::lesson::LessonState;
use troupe_core::submission::SubmissionState;
use troupe_core::ticket::{TicketStage, TicketStatus};
use troupe_core::{BotId, RunId, SessionMessageId, ThreadId};
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{
    NewQualityEvent, NewRun, QualityEventRecord, QualityFilter, QualityType, quality_cause,
};

fn events(w: &World, maintainer: bool) -> Vec<QualityEventRecord> {
    w.collab
        .quality_events(&QualityFilter {
            maintainer,
            limit: 500,
            ..QualityFilter::default()
        })
        .unwrap()
}

/// A pid that belongs to no live process.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// S-QE1: a turn that stalled — its process died under it, found at the next start — is an
/// `orchestration` event on the Bot, not a `model` one, and only maintainers see it.
#[tokio::test]
async fn s_qe1_a_stalled_turn_is_orchestration_not_model() {
    let w = world();
    let b = bot(&w, "Ada", r#"{"steps":[{"text":"hi"}]}"#);
    let s = direct(&w, b);
    let t = thread_of(&w, s, b);
    let pid = dead_pid();
    let run = w
        .collab
        .store()
        .write(|tx| {
            tx.deliver(
                t,
                &troupe_core::inbox::Delivery::user_task("cut the trailer"),
            )?;
            Ok(tx
                .start_run(&NewRun {
                    thread_id: t,
                    trigger: "inbox".into(),
                    owner_pid: pid,
                    owner_boot: "dead-boot".into(),
                })?
                .id)
        })
        .unwrap();
    let report = w.collab.engine().recover().await.unwrap();
    assert_eq!(report.interrupted_runs, [run]);
    let all = events(&w, true);
    let on_turn: Vec<_> = all.iter().filter(|e| e.turn_id == Some(run)).collect();
    assert_eq!(on_turn.len(), 1, "{all:?}");
    assert_eq!(on_turn[0].kind, QualityType::Orchestration);
    assert_eq!(on_turn[0].cause, quality_cause::CRASH);
    assert_eq!(on_turn[0].bot_id, Some(b));
    assert!(all.iter().all(|e| e.kind != QualityType::Model), "{all:?}");
    assert!(
        events(&w, false).iter().all(|e| e.turn_id != Some(run)),
        "hidden from non-maintainers"
    );
}

/// B §9.1 `model`: a reply the model declined (the provider's refusal finish) and a reply cut
/// off at the length cap are the model's, each named by its cause; a whole reply says nothing.
#[tokio::test]
async fn a_declined_or_cut_off_reply_is_the_models() {
    let w = world();
    for (finish, cause) in [
        (Some("refusal"), Some(quality_cause::DECLINED)),
        (Some("length"), Some(quality_cause::CUT_OFF)),
        (None, None),
    ] {
        let step = match finish {
            Some(f) => serde_json::json!({"text": "I can't help with that.", "finish": f}),
            None => serde_json::json!({"text": "Here it is."}),
        };
        let name = format!("Bot{}", finish.unwrap_or("whole"));
        let b = bot(&w, &name, &serde_json::json!({"steps": [step]}).to_string());
        let s = direct(&w, b);
        let t = thread_of(&w, s, b);
        let mut ended = w.collab.store().subscribe();
        w.collab
            .post_line(s, "write the intro".into(), None)
            .await
            .unwrap();
        runs_ended(&mut ended, t, 1).await;
        let seen: Vec<_> = events(&w, true)
            .into_iter()
            .filter(|e| e.bot_id == Some(b))
            .map(|e| (e.kind, e.cause))
            .collect();
        match cause {
            Some(c) => assert_eq!(seen, [(QualityType::Model, c.to_string())], "{finish:?}"),
            None => assert!(seen.is_empty(), "{seen:?}"),
        }
    }
}

/// Orchestration events are listed only with `maintainer`, never reach the report, and are
/// not streamed as `quality_event`.
#[tokio::test]
async fn orchestration_hidden_without_maintainer() {
    let w = world();
    let b = bot(&w, "Ada", r#"{"steps":[{"text":"hi"}]}"#);
    w.collab
        .store()
        .write(|tx| {
            tx.quality_event(
                NewQualityEvent::new(QualityType::Orchestration, quality_cause::STALL).bot(Some(b)),
            )?;
            tx.quality_event(
                NewQualityEvent::new(QualityType::Execution, quality_cause::CHECKS_FAILED)
                    .bot(Some(b)),
            )?;
            Ok(())
        })
        .unwrap();
    let seen: Vec<QualityType> = events(&w, false).iter().map(|e| e.kind).collect();
    assert_eq!(seen, [QualityType::Execution]);
    let all: Vec<QualityType> = events(&w, true).iter().map(|e| e.kind).collect();
    assert_eq!(all.len(), 2);
    assert!(all.contains(&QualityType::Orchestration));
    let only = w
        .collab
        .quality_events(&QualityFilter {
            kind: Some(QualityType::Orchestration),
            limit: 10,
            ..QualityFilter::default()
        })
        .unwrap();
    assert!(
        only.is_empty(),
        "asking for the type is not being a maintainer"
    );
    let report = w.collab.quality_report(7).unwrap();
    assert_eq!(report.rows.len(), 1, "{report:?}");
    assert_eq!(report.rows[0].checks_failed, 1);
    assert!(
        report.rows[0]
            .failure_shapes
            .keys()
            .all(|k| !k.starts_with("orchestration")),
        "{report:?}"
    );
    let streamed = w
        .collab
        .store()
        .read(|tx| tx.events_of_kinds(&["quality_event"], troupe_core::EventId(0), 100))
        .unwrap();
    assert_eq!(streamed.len(), 1);
    assert_eq!(streamed[0].payload["type"], "execution");
}

fn shell(command: &str, timeout: u64) -> String {
    let args = serde_json::json!({"command": command, "timeout_secs": timeout});
    format!(r#"{{"tool_calls":[{{"name":"shell","arguments":{args}}}]}}"#)
}

fn shell_calls(w: &World, t: ThreadId) -> Vec<troupe_store::ToolCallRecord> {
    let mut runs = runs_of(w, t);
    runs.sort_by_key(|r| r.id.0);
    runs.iter()
        .flat_map(|r| calls_of(w, r.id))
        .filter(|c| c.name == "shell")
        .collect()
}

/// S-L1: `grep -r foo <data>` killed by the timeout teaches a lesson; in a later turn
/// `grep -r bar <data>` is not run and a warning comes back; run again in that turn it runs;
/// `<data>/sub` is another kind; a warned call that times out again blocks the kind.
#[tokio::test]
async fn s_l1_a_timed_out_search_warns_then_blocks_its_kind() {
    let w = world();
    let data = w.dir.path().join("data");
    std::fs::create_dir_all(data.join("sub")).unwrap();
    std::fs::write(data.join("sub/a.txt"), "nothing here").unwrap();
    let d = data.display().to_string();
    let slow = |pattern: &str| shell(&format!("grep -r {pattern} {d}; sleep 5"), 1);
    let steps = [
        // Turn 1: the search is killed by the timeout.
        slow("foo"),
        r#"{"text":"That search took too long."}"#.to_string(),
        // Turn 2: warned, then run; the folder one level down is not affected.
        shell(&format!("grep -r bar {d}"), 30),
        shell(&format!("grep -r bar {d}"), 30),
        shell(&format!("grep -r bar {d}/sub"), 30),
        r#"{"text":"Searched."}"#.to_string(),
        // Turn 3: warned, run again, killed again: the kind is blocked.
        slow("baz"),
        slow("baz"),
        r#"{"text":"Still too slow."}"#.to_string(),
        // Turn 4: blocked.
        shell(&format!("grep -r qux {d}"), 30),
        r#"{"text":"Blocked."}"#.to_string(),
    ];
    let b = bot(
        &w,
        "Ada",
        &format!(
            r#"{{"steps":[{}],"on_exhausted":"repeat_last"}}"#,
            steps.join(",")
        ),
    );
    let s = direct(&w, b);
    let t = thread_of(&w, s, b);
    for (n, words) in ["search one", "search two", "search three", "search four"]
        .iter()
        .enumerate()
    {
        let mut ev = w.collab.store().subscribe();
        w.collab
            .post_line(s, words.to_string(), None)
            .await
            .unwrap();
        runs_ended(&mut ev, t, 1).await;
        assert_eq!(runs(&w, t), n + 1);
        match n {
            0 => {
                let lessons = w.collab.lessons().unwrap();
                assert_eq!(lessons.len(), 1, "{lessons:?}");
                assert_eq!(lessons[0].program, "grep -r");
                assert_eq!(lessons[0].place, d);
                assert_eq!(lessons[0].state, LessonState::Warn);
                let timed = events(&w, false)
                    .into_iter()
                    .filter(|e| e.cause == quality_cause::COMMAND_TIMED_OUT)
                    .count();
                assert_eq!(timed, 1);
            }
            1 => {
                let calls = shell_calls(&w, t);
                assert_eq!(calls.len(), 4, "{calls:?}");
                assert_eq!(calls[1].status, "refused", "{}", calls[1].result);
                assert!(calls[1].result.contains("Narrow it"), "{}", calls[1].result);
                assert!(calls[1].result.contains("[lesson"), "{}", calls[1].result);
                assert_ne!(calls[2].status, "refused", "the repeat runs");
                assert!(
                    calls[2].result.contains("exit code: 1"),
                    "{}",
                    calls[2].result
                );
                assert_ne!(calls[3].status, "refused", "a folder down is another kind");
                assert_eq!(w.collab.lessons().unwrap().len(), 1);
            }
            2 => {
                let calls = shell_calls(&w, t);
                assert_eq!(calls[4].status, "refused");
                assert!(calls[5].result.contains("timed out"), "{}", calls[5].result);
                let lessons = w.collab.lessons().unwrap();
                assert_eq!(lessons[0].state, LessonState::Block);
                assert_eq!(lessons[0].timeouts, 2);
            }
            _ => {
                let calls = shell_calls(&w, t);
                assert_eq!(calls.len(), 7);
                assert_eq!(calls[6].status, "refused");
                assert!(
                    calls[6].result.contains("no longer runs"),
                    "{}",
                    calls[6].result
                );
            }
        }
    }
    // The user retires it: the kind runs again.
    let id = w.collab.lessons().unwrap()[0].id;
    let off = w.collab.set_lesson_state(id, LessonState::Off).unwrap();
    assert_eq!(off.state, LessonState::Off);
}

fn review_approve() -> String {
    r#"{"tool_calls":[{"name":"review","arguments":{"submission_id":1,"verdicts":[],"outcome":"approve","note":"fine"}}]}"#.to_string()
}

/// The reviewer's situation, read as its segment in the group reads it.
fn calibration_of(t: &Team, reviewer: BotId) -> String {
    let j = job(&t.w, reviewer).unwrap();
    let run: RunId = runs_of(&t.w, j.thread_id)[0].id;
    let mut thread = t.store().read(|tx| tx.thread(j.thread_id)).unwrap();
    thread.lease.holder = Some(run);
    let mut parts = ContextParts::default();
    Calibration.contribute(&thread, t.store(), &mut parts);
    parts.situation.join("\n")
}

/// S-RM1: reviewer R approved hand-over H of the ticket; the user says "这版节奏太拖了" under
/// it; the ticket goes to rework, `review_miss(H, R)` is recorded once, and R's next situation
/// lists it with the user's words.
#[tokio::test]
async fn s_rm1_a_complaint_marks_the_approving_review() {
    let t = Team::new(
        &maker(&[
            SUBMIT_POSTER,
            TEXT_DONE,
            r#"{"text":"I will slow it down."}"#,
        ]),
        Some(&format!(
            r#"{{"steps":[{},{{"text":"Approved."}}],"on_exhausted":"repeat_last"}}"#,
            review_approve()
        )),
        &[("Poster", Some(0), Some(1))],
    );
    let checker = t.checker.unwrap();
    t.ask("@Maker make the poster").await;
    t.wait_for("approved by its reviewer", |s| {
        s.first()
            .is_some_and(|s| s.state == SubmissionState::Approved)
    })
    .await;
    assert!(calibration_of(&t, checker).is_empty(), "no miss yet");
    let handed: SessionMessageId =
        t.w.collab
            .lines(t.s, None, 100)
            .unwrap()
            .into_iter()
            .find(|l| l.body.starts_with("Handed over for #01"))
            .expect("the hand-over's line")
            .id;
    reader_says(
        &t.w,
        r#"{"control":"neither","only_control":false,"status_question":false,"objections":["这版节奏太拖了"],"let_through":[],"belongs":"no_telling"}"#,
    );
    // The user had stopped the maker's work on the job: the complaint lifts it (CP3).
    let (held, _) =
        t.w.collab
            .post_hold(HoldRequest {
                scope: ScopeRequest {
                    kind: "bot_plan".into(),
                    bot_id: Some(t.maker),
                    session_id: None,
                    task_id: Some(t.plan),
                    ticket_id: None,
                    turn_id: None,
                },
                session_id: Some(t.s),
                action: None,
            })
            .await
            .unwrap();
    let line =
        t.w.collab
            .post_line(t.s, "这版节奏太拖了".into(), Some(handed))
            .await
            .unwrap();
    let subs = t
        .wait_for("sent back by the complaint", |s| {
            s.first()
                .is_some_and(|s| s.state == SubmissionState::Rework)
        })
        .await;
    assert_eq!(t.ticket(0).stage, TicketStage::Rework);
    let misses = t
        .store()
        .read(|tx| tx.review_misses_of(checker, t.s, 5))
        .unwrap();
    assert_eq!(misses.len(), 1, "{misses:?}");
    assert_eq!(misses[0].submission_id, subs[0].id);
    assert_eq!(misses[0].words, "这版节奏太拖了");
    let all = events(&t.w, false);
    let miss: Vec<_> = all
        .iter()
        .filter(|e| e.kind == QualityType::ReviewMiss)
        .collect();
    assert_eq!(miss.len(), 1, "{all:?}");
    assert_eq!(miss[0].bot_id, Some(checker));
    assert_eq!(miss[0].model.as_deref(), Some("checker-model"));
    let complaint: Vec<_> = all
        .iter()
        .filter(|e| e.cause == quality_cause::COMPLAINT)
        .collect();
    assert_eq!(complaint.len(), 1);
    assert_eq!(complaint[0].bot_id, Some(t.maker));
    assert!(t.kinds().iter().any(|k| k == "review_miss"));
    // Once per (hand-over, reviewer): the same complaint again records nothing new.
    let again = t
        .store()
        .write(|tx| tx.record_review_misses(subs[0].id, None, Some(t.s), "again"))
        .unwrap();
    assert!(again.is_empty());
    let said = calibration_of(&t, checker);
    assert!(said.contains("这版节奏太拖了"), "{said}");
    assert!(said.contains("#01"), "{said}");
    // The maker was woken with the user's words.
    t.wait_until_runs(t.maker, 2).await;
    let j = job(&t.w, t.maker).unwrap();
    let told = t
        .store()
        .read(|tx| tx.messages(j.thread_id, None, u32::MAX))
        .unwrap()
        .into_iter()
        .any(|m| m.text().contains("这版节奏太拖了") && m.text().contains("rework"));
    assert!(told, "the maker heard the complaint");
    assert_eq!(complaint[0].source_kind.as_deref(), Some("line"));
    assert!(
        !t.w.collab.hold(held.hold.id).unwrap().hold.in_force(),
        "the complaint lifted the user's stop on the maker's work"
    );
    // CP5: the turn the line wakes reads that the fix stays with the maker.
    let note = t
        .store()
        .read(|tx| complaint_note(tx, line.id))
        .unwrap()
        .expect("a note for the complaint's turn");
    assert!(note.contains("#01") && note.contains("Maker"), "{note}");
    assert!(
        note.contains("这版节奏太拖了") && note.contains("anyone else"),
        "{note}"
    );

    // QE1: clearing the conversation keeps the events and the miss, and drops only the link
    // to the line.
    t.w.collab.clear_session(t.s, false).await.unwrap();
    let after = events(&t.w, false);
    let complaint = after
        .iter()
        .find(|e| e.cause == quality_cause::COMPLAINT)
        .expect("the complaint's event stays");
    assert_eq!(
        (complaint.source_kind.as_deref(), complaint.source_id),
        (None, None)
    );
    for e in &all {
        assert!(after.iter().any(|a| a.id == e.id), "{e:?} stays: {after:?}");
    }
    let misses = t
        .store()
        .read(|tx| tx.review_misses_of(checker, t.s, 5))
        .unwrap();
    assert_eq!(misses[0].line_id, None);
    assert_eq!(misses[0].words, "这版节奏太拖了");
}

/// A reviewer's reject is an `execution` event on the producer's work, with its model.
#[tokio::test]
async fn a_reject_is_an_execution_event_on_the_producer() {
    let reject = r#"{"tool_calls":[{"name":"review","arguments":{"submission_id":1,"verdicts":[],"outcome":"reject","note":"too dark"}}]}"#;
    let t = Team::new(
        &maker(&[SUBMIT_POSTER, TEXT_DONE, r#"{"text":"Lighter, then."}"#]),
        Some(&format!(
            r#"{{"steps":[{reject},{{"text":"Sent back."}}],"on_exhausted":"repeat_last"}}"#
        )),
        &[("Poster", Some(0), Some(1))],
    );
    t.ask("@Maker make the poster").await;
    t.wait_for("sent back", |s| {
        s.first()
            .is_some_and(|s| s.state == SubmissionState::Rework)
    })
    .await;
    let rejects: Vec<_> = events(&t.w, false)
        .into_iter()
        .filter(|e| e.cause == quality_cause::REVIEW_REJECTED)
        .collect();
    assert_eq!(rejects.len(), 1);
    assert_eq!(rejects[0].kind, QualityType::Execution);
    assert_eq!(rejects[0].bot_id, Some(t.maker));
    assert_eq!(rejects[0].model.as_deref(), Some("maker-model"));
    assert_eq!(rejects[0].task_id, Some(t.plan));
    assert_eq!(rejects[0].ticket_id, Some(t.tickets[0]));
    let report = t.w.collab.quality_report(7).unwrap();
    let row = report
        .rows
        .iter()
        .find(|r| r.bot_id == Some(t.maker) && r.model.as_deref() == Some("maker-model"))
        .expect("the maker's row");
    assert_eq!(row.rejects, 1);
    assert_eq!(row.hand_overs, 1);
    assert!(row.model_calls >= 1, "{row:?}");
    assert_eq!(row.spend_usd, None, "an unpriced model has no spend");
    t.w.collab
        .set_model_price("maker-model", 3.0, 15.0)
        .unwrap();
    let priced = t.w.collab.quality_report(7).unwrap();
    let row = priced
        .rows
        .iter()
        .find(|r| r.bot_id == Some(t.maker) && r.model.as_deref() == Some("maker-model"))
        .unwrap();
    assert!(row.spend_usd.is_some(), "{row:?}");
}

/// A check written on work already handed over is `unclear` (the work was asked with less than
/// it is judged by now); the user's board edit taking approved work back is `execution`.
#[tokio::test]
async fn a_late_check_is_unclear_and_a_board_send_back_is_execution() {
    let t = Team::new(
        &maker(&[SUBMIT_POSTER, TEXT_DONE, r#"{"text":"Back on it."}"#]),
        Some(&format!(
            r#"{{"steps":[{},{{"text":"Approved."}}],"on_exhausted":"repeat_last"}}"#,
            review_approve()
        )),
        &[("Poster", Some(0), Some(1))],
    );
    t.ask("@Maker make the poster").await;
    t.wait_for("approved by its reviewer", |s| {
        s.first()
            .is_some_and(|s| s.state == SubmissionState::Approved)
    })
    .await;
    let checks = Checks::new(
        t.store().clone(),
        std::sync::Arc::new(support::check_rig::Videos::default()),
    );
    checks
        .create(
            t.plan,
            &NewCheckRequest {
                kind: "file_exists".into(),
                path: Some("01-Poster/poster.png".into()),
                ticket_id: Some(t.tickets[0].0),
                ..NewCheckRequest::default()
            },
        )
        .unwrap();
    let unclear: Vec<_> = events(&t.w, false)
        .into_iter()
        .filter(|e| e.kind == QualityType::Unclear)
        .collect();
    assert_eq!(unclear.len(), 1, "{unclear:?}");
    assert_eq!(unclear[0].cause, quality_cause::CHECK_AFTER_HANDOVER);
    assert_eq!(unclear[0].bot_id, Some(t.maker));
    assert_eq!(unclear[0].ticket_id, Some(t.tickets[0]));
    assert_eq!(unclear[0].source_kind.as_deref(), Some("check"));

    t.w.collab
        .patch_ticket(
            t.tickets[0],
            TicketPatchRequest {
                status: Some(TicketStatus::InProgress),
                ..TicketPatchRequest::default()
            },
        )
        .unwrap();
    let back: Vec<_> = events(&t.w, false)
        .into_iter()
        .filter(|e| e.cause == quality_cause::USER_SENT_BACK)
        .collect();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].kind, QualityType::Execution);
    assert_eq!(back[0].bot_id, Some(t.maker));
    assert_eq!(back[0].detail["from"], "approved");
    assert!(
        t.store()
            .read(|tx| tx.review_misses_of(t.checker.unwrap(), t.s, 5))
            .unwrap()
            .is_empty(),
        "a board edit is no review miss (RM2)"
    );
}
