//! The supervisor's scenarios S-SV-1…S-SV-12 (digest C §12) that `supervisor.rs` does not
//! hold, over a real engine and store with scripted Bots, on a clock only the test moves: each
//! tick is `Collab::supervise`, and every wait is on the runs it starts or the records it reads.

mod deliverables;
mod support;

use serde_json::json;
use support::supervise::*;
use support::*;
use troupe_core::delegation::Expects;
use troupe_core::work_item::{WaitingOn, WorkState};
use troupe_core::{BotId, TicketId};
use troupe_store::{FilingSource, NewDelegation, NewFiling};

const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;

/// A script whose every call fails with `error` (the scripted provider's error object).
fn failing(error: &str) -> String {
    format!(r#"{{"steps":[{{"error":{error}}}],"on_exhausted":"repeat_last"}}"#)
}

/// File a line of the conversation to the job, as the reader or a binding files it.
fn file_to(w: &World, line: troupe_core::SessionMessageId, j: &JobWork) {
    w.collab
        .store()
        .write(|tx| {
            tx.file_line(&NewFiling {
                message_id: line,
                plan_id: j.plan,
                ticket_id: None,
                part_id: None,
                source: FilingSource::Desk,
                filed_by: "user".into(),
                locked: true,
                primary: true,
            })
        })
        .unwrap();
}

/// The ticket's verdict in a report, if the pass looked at it.
fn ticket_verdict(r: &serde_json::Value, t: TicketId) -> serde_json::Value {
    r["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["ticket_id"] == json!(t))
        .map(|v| v["verdict"].clone())
        .unwrap_or(serde_json::Value::Null)
}

/// The failures SV-15 names, as the scripted provider gives them.
const ACCOUNT_FAILURES: [&str; 4] = [
    // Spent quota (a 429 the provider names as such; retried at once, then given up).
    r#"{"kind":"rate_limited","message":"insufficient_quota: out of usage","retry_after_ms":1}"#,
    // An unknown model.
    r#"{"kind":"not_found","message":"model_not_found: no such model"}"#,
    // Refused credentials: a 401 …
    r#"{"kind":"auth","message":"invalid api key"}"#,
    // … and a 403.
    r#"{"kind":"auth","status":403,"message":"signed out"}"#,
];

/// S-SV-5 (SV-15): a Bot whose last segment failed on spent quota, an unknown model or refused
/// credentials is not picked up, tick after tick, until one of its segments ends otherwise;
/// then its failed work is picked up.
#[tokio::test]
async fn s_sv_5_no_pickup_after_an_account_failure_until_a_segment_ends_otherwise() {
    for kind in ACCOUNT_FAILURES {
        let (clock, w) = start();
        let ada = bot(&w, "Ada", &failing(kind));
        let s = direct(&w, ada);
        let cut = open_job_work(&w, s, ada, "Render the intro");
        let other = open_job_work(&w, s, ada, "Storyboard");
        work_on(&w, &cut, "render the intro").await;
        assert_eq!(state(&w, &cut), WorkState::NeedsAttention, "{kind}");
        for _ in 0..3 {
            let r = tick(&w, &cut).await;
            assert_eq!(pickup_of(&r, &cut)["verdict"], "wait", "{kind}: {r}");
            clock.advance(600_000);
        }
        assert_eq!(
            runs(&w, cut.thread),
            1,
            "{kind}: nobody woke the failed work"
        );
        let kinds = log_kinds(&w, &cut);
        assert!(
            !kinds.iter().any(|k| k == "supervisor_picked_up"),
            "{kinds:?}"
        );

        // A segment of Ada's on other work ends otherwise (its account mended): the failed
        // work is picked up within a minute.
        rescript(&w, ada, QUIET);
        work_on(&w, &other, "draw the frames").await;
        assert_eq!(last_end(&w, other.thread), "completed", "{kind}");
        clock.advance(60_000);
        let r = tick(&w, &cut).await;
        assert_eq!(pickup_of(&r, &cut)["verdict"], "pick_up", "{kind}: {r}");
        assert_eq!(runs(&w, cut.thread), 2, "{kind}");
    }
}

/// S-SV-5 (SV-15), call-backs: while Ada's last segment failed on its account, a quiet ticket
/// of hers on another job does not call her back.
#[tokio::test]
async fn s_sv_5_no_call_back_after_an_account_failure() {
    for kind in ACCOUNT_FAILURES {
        let (clock, w) = start();
        let ada = bot(&w, "Ada", &failing(kind));
        let s = direct(&w, ada);
        let cut = open_job_work(&w, s, ada, "Render the intro");
        let other = open_job_work(&w, s, ada, "Storyboard");
        let frames = add_ticket(&w, &other, "Frames", ada, None);
        work_on(&w, &cut, "render the intro").await;
        // The other job is active: a person's line is filed to it, then it stays quiet.
        file_to(&w, person_line(&w, s, "the frames too, please").id, &other);
        for _ in 0..3 {
            clock.advance(600_000);
            let r = tick(&w, &other).await;
            let v = ticket_verdict(&r, frames);
            assert!(v.is_null() || v["verdict"] == "nothing", "{kind}: {r}");
        }
        assert_eq!(runs(&w, other.thread), 0, "{kind}: nobody called Ada back");
    }
}

/// S-SV-7 (SV-13): the job's last line in the person's conversation is the Bot's, after the
/// person's last line there: the ticket is quiet only after 10 min (nothing at 2 min), counted
/// from that Bot line.
#[tokio::test]
async fn s_sv_7_a_bot_line_after_the_persons_last_makes_the_threshold_ten_minutes() {
    let (clock, w) = start();
    let ada = bot(&w, "Ada", QUIET);
    let s = direct(&w, ada);
    let plan = open_job(&w, s, "Render the intro for the launch");
    let j = work_on_job(&w, plan.id, s, ada, "Render the intro");
    let intro = add_ticket(&w, &j, "Intro", ada, None);
    clock.advance(1_000);
    // Ada answers in the conversation (its line is filed to the job), after the person's line.
    work_on(&w, &j, "render the intro").await;
    let lines = w.collab.lines(s, None, 100).unwrap();
    let last = lines.last().unwrap();
    assert_eq!(
        last.author,
        troupe_core::conversation::Author::Bot,
        "{lines:?}"
    );
    let spoke_at = last.created_at;

    clock.advance(120_000);
    let r = tick(&w, &j).await;
    assert_eq!(
        ticket_verdict(&r, intro),
        json!({"verdict": "not_yet", "at": spoke_at + 600_000}),
        "{r}"
    );
    clock.advance(600_000 - 120_000 - 1);
    assert!(
        w.collab.supervise().unwrap().tickets.is_empty(),
        "not due a millisecond before 10 min"
    );
    clock.advance(1);
    let r = tick(&w, &j).await;
    assert_eq!(
        ticket_verdict(&r, intro),
        json!({"verdict": "call_back", "bot": ada, "quiet_ms": 600_000, "n": 1}),
        "{r}"
    );
    assert_eq!(runs(&w, j.thread), 2, "called back once");
}

/// S-SV-12 (SV-10, C §13 rule 1): Bo was asked for the poster as a deliverable and handed it
/// over; while the hand-over is in review the ball is the reviewer's, so the quiet ticket calls
/// the reviewer back, never the request's recipient.
#[tokio::test]
async fn s_sv_12_a_deliverable_in_review_calls_the_reviewer_back_not_the_recipient() {
    let (clock, w) = start();
    let lead = bot(&w, "Lead", QUIET);
    let bo = deliverables::bot_on(
        &w,
        "Bo",
        "maker-model",
        &format!(
            r#"{{"steps":[{{"tool_calls":[{}]}},{},{}],"on_exhausted":"repeat_last"}}"#,
            deliverables::WRITE_POSTER,
            deliverables::SUBMIT_POSTER,
            deliverables::TEXT_DONE
        ),
    );
    let cy = deliverables::bot_on(
        &w,
        "Cy",
        "checker-model",
        r#"{"steps":[{"text":"I will look at it."}],"on_exhausted":"repeat_last"}"#,
    );
    let s = group(&w, &[lead, bo, cy]);
    let j = open_job_work(&w, s, lead, "Launch poster");
    let poster = add_ticket(&w, &j, "Poster", bo, Some(cy));
    let made = work_on_job(&w, j.plan, s, bo, "Launch poster");
    // The lead's request to Bo for the poster, as `delegate` records it.
    w.collab
        .store()
        .write(|tx| {
            let d = tx.create_delegation(&NewDelegation {
                plan_id: j.plan,
                ticket_id: Some(poster.0),
                part_ids: vec![],
                requirement_ids: vec![],
                sender_work_item: j.item,
                recipient_work_item: made.item,
                originating_run_id: None,
                pair_session_id: s,
                ask: "make the poster for the launch".into(),
                expects: Expects::Deliverable,
                continue_working: false,
            })?;
            let on = WaitingOn::Delegation {
                delegation_id: d.id,
            };
            tx.set_work_state(j.item, WorkState::Waiting, Some(&on))
        })
        .unwrap();
    // Bo makes and hands it over; Cy is queued to review it, reads it, and moves nothing.
    let mut events = w.collab.store().subscribe();
    work_on(&w, &made, "make the poster for the launch").await;
    let cy_work = |w: &World| w.collab.store().read(|tx| tx.job_item(cy, j.plan)).unwrap();
    until(&mut events, "Cy read the review request", || {
        cy_work(&w).is_some_and(|i| {
            live_run(&w, &i).is_none()
                && i.state == WorkState::Idle
                && !ends(&w, i.thread_id).is_empty()
        })
    })
    .await;
    let cy_item = cy_work(&w).unwrap();
    let ticket = w.collab.store().read(|tx| tx.ticket(poster)).unwrap();
    assert_eq!(
        ticket.stage,
        troupe_core::ticket::TicketStage::InReview,
        "{ticket:?}"
    );
    let open = w
        .collab
        .store()
        .read(|tx| tx.open_delegations_to(made.item))
        .unwrap();
    assert_eq!(
        open.len(),
        1,
        "the request is still open, its hand-over in review"
    );
    let bo_runs = runs(&w, made.thread);

    // Quiet for the threshold, twice: each call-back goes to Cy, none to Bo.
    for n in 1..=2 {
        clock.advance(120_000);
        let r = tick_on(&w, cy_item.thread_id).await;
        assert_eq!(
            ticket_verdict(&r, poster),
            json!({"verdict": "call_back", "bot": cy, "quiet_ms": 120_000, "n": n}),
            "{r}"
        );
    }
    assert_eq!(runs(&w, made.thread), bo_runs, "Bo was never called back");
    let log = w
        .collab
        .store()
        .read(|tx| tx.work_log_of_plan(j.plan, 0, 1000))
        .unwrap();
    let called: Vec<_> = log
        .iter()
        .filter(|e| e.kind == "supervisor_called_back")
        .map(|e| e.work_item_id)
        .collect();
    assert_eq!(called, [Some(cy_item.id), Some(cy_item.id)], "{log:?}");
}

/// S-SV-11 (SV-17): an upgrade finds 30 quiet jobs from before the supervisor — a quiet
/// ticket, work needing attention, a wait on a cancelled request — and wakes none of them on
/// its first tick; a job becomes supervised once something happens in it.
///
/// The old rows are made through the ordinary API and then given exactly what migration 0027
/// leaves on rows that existed before it: its `ALTER TABLE … ADD COLUMN`s put NULL in
/// `work_items.supervise_at`, `work_items.user_word_at`, `plans.supervise_at` and
/// `plans.activity_at`, and its new `work_log` and `ticket_callbacks` tables start empty (it
/// arms nothing: only later activity fires its triggers). This runs on both backends; a SQLite
/// file stopped at 0026 would test the SQLite migration alone.
#[tokio::test]
async fn s_sv_11_an_upgrade_wakes_no_old_quiet_job_on_its_first_tick() {
    let (clock, w) = start();
    let ada = bot(&w, "Ada", QUIET);
    let bo = bot(&w, "Bo", QUIET);
    let s = group(&w, &[ada, bo]);
    let mut jobs: Vec<(JobWork, TicketId)> = Vec::new();
    for n in 0..30 {
        let j = open_job_work(&w, s, ada, &format!("Old job {n}"));
        let t = add_ticket(&w, &j, &format!("Part {n}"), ada, None);
        w.collab
            .store()
            .write(|tx| match n % 3 {
                // A quiet ticket whose owner is idle.
                0 => tx.set_work_state(j.item, WorkState::Idle, None).map(|_| ()),
                // Work that needed attention and was never picked up.
                1 => tx
                    .set_work_state(j.item, WorkState::NeedsAttention, None)
                    .map(|_| ()),
                // A wait on a request that was cancelled meanwhile.
                _ => {
                    let thread_id = thread_of_new(tx, bo, &j)?;
                    let theirs = tx.create_work_item(&troupe_store::NewWorkItem {
                        bot_id: bo,
                        mode: troupe_core::work_item::WorkMode::Work,
                        plan_id: Some(j.plan),
                        session_id: None,
                        thread_id,
                        speaks_in: Some(s),
                    })?;
                    let d = tx.create_delegation(&NewDelegation {
                        plan_id: j.plan,
                        ticket_id: None,
                        part_ids: vec![],
                        requirement_ids: vec![],
                        sender_work_item: j.item,
                        recipient_work_item: theirs.id,
                        originating_run_id: None,
                        pair_session_id: s,
                        ask: "the frames".into(),
                        expects: Expects::Deliverable,
                        continue_working: false,
                    })?;
                    let on = WaitingOn::Delegation {
                        delegation_id: d.id,
                    };
                    tx.set_work_state(j.item, WorkState::Waiting, Some(&on))?;
                    tx.settle_delegation(
                        d.id,
                        troupe_core::delegation::DelegationState::Cancelled,
                        &json!({"reason": "old"}),
                    )
                    .map(|_| ())
                }
            })
            .unwrap();
        jobs.push((j, t));
    }
    // As migration 0027 leaves rows from before it.
    w.collab
        .store()
        .write(|tx| {
            tx.raw_execute("UPDATE work_items SET supervise_at = NULL, user_word_at = NULL")?;
            tx.raw_execute("UPDATE plans SET supervise_at = NULL, activity_at = NULL")?;
            tx.raw_execute("DELETE FROM work_log")?;
            tx.raw_execute("DELETE FROM ticket_callbacks")
        })
        .unwrap();

    // Days later, the first tick after the upgrade: nothing is due, nobody is woken.
    clock.advance(3 * 86_400_000);
    let r = w.collab.supervise().unwrap();
    assert!(r.is_empty(), "{r:?}");
    for (j, _) in &jobs {
        assert_eq!(runs(&w, j.thread), 0);
        assert!(log_kinds(&w, j).is_empty());
    }
    assert_eq!(
        state(&w, &jobs[1].0),
        WorkState::NeedsAttention,
        "not picked up"
    );
    assert_eq!(
        state(&w, &jobs[2].0),
        WorkState::Waiting,
        "its wait not judged"
    );

    // Something happens in one old job: from then on it is supervised like any other.
    let (j, t) = &jobs[0];
    file_to(&w, person_line(&w, s, "is part 0 coming?").id, j);
    clock.advance(120_000);
    let r = tick(&w, j).await;
    assert_eq!(ticket_verdict(&r, *t)["verdict"], "call_back", "{r}");
    assert_eq!(
        r["tickets"].as_array().unwrap().len(),
        1,
        "only that job: {r}"
    );
    assert!(r["work"].as_array().unwrap().is_empty(), "{r}");
}

/// A thread for `bot`'s work on the job, in its folder.
fn thread_of_new(
    tx: &mut troupe_store::Tx<'_>,
    bot: BotId,
    j: &JobWork,
) -> Result<troupe_core::ThreadId, troupe_store::StoreError> {
    let folder = tx.plan(j.plan)?.folder;
    Ok(tx
        .create_thread(&troupe_store::NewThread {
            workspace_root: None,
            parent_id: None,
            title: "theirs".into(),
            agent: troupe_collab::bot_binding(&tx.bot(bot)?),
            workspace: folder,
            interaction: troupe_core::thread::Interaction::Interactive,
        })?
        .id)
}

/// A step writing the poster with `content` and handing it over with `note`.
fn poster_version(content: &str, note: &str) -> String {
    format!(
        r#"{{"tool_calls":[{{"name":"write_file","arguments":{{"path":"01-Poster/poster.png","content":"{content}"}}}},{{"name":"submit","arguments":{{"artifacts":["01-Poster/poster.png"],"note":"{note}"}}}}]}}"#
    )
}

/// The Lead makes the poster and hands it over, v1 at its first task and v2 at its second.
fn lead_script() -> String {
    format!(
        r#"{{"steps":[{},{{"text":"v1 is in."}},{},{{"text":"v2 is in."}}],"on_exhausted":"repeat_last"}}"#,
        poster_version("poster v1", "first cut"),
        poster_version("poster v2", "second cut"),
    )
}

/// The job, the Lead's work on it and the poster ticket Cy reviews.
fn poster_job(w: &World, lead: BotId, cy: BotId, s: troupe_core::SessionId) -> (JobWork, TicketId) {
    let j = open_job_work(w, s, lead, "Launch poster");
    let t = add_ticket(w, &j, "Poster", lead, Some(cy));
    (j, t)
}

/// The hand-overs of the ticket, oldest first.
fn handovers(w: &World, t: TicketId) -> Vec<troupe_store::SubmissionRecord> {
    let mut subs = w
        .collab
        .store()
        .read(|tx| tx.submissions_of_ticket(t))
        .unwrap();
    subs.sort_by_key(|s| s.id);
    subs
}

/// The run of the thread that took the delivery with this key.
fn run_that_read(
    w: &World,
    thread: troupe_core::ThreadId,
    key: &str,
) -> Option<troupe_core::RunId> {
    delivered(w, thread, key).and_then(|m| m.run_id)
}

/// S-SV-1 (SV-5): Cy is reviewing poster v1 when the Lead hands over v2 (its review request
/// queued on the same work); Cy's review segment ends `nothing_new` with it unread: the work
/// stays queued — never idle — and the next segment reviews v2, with no tick.
#[tokio::test]
async fn s_sv_1_a_review_ending_nothing_new_with_v2_queued_stays_queued_and_reviews_v2() {
    let (_clock, w) = start();
    let lead = deliverables::bot_on(&w, "Lead", "lead-model", &lead_script());
    let cy = deliverables::bot_on(
        &w,
        "Cy",
        "checker-model",
        &format!(
            r#"{{"steps":[{{"tool_calls":[{GATE},{{"name":"end_turn","arguments":{{"reason":"nothing_new"}}}}]}},{{"text":"v2 reviewed."}}],"on_exhausted":"repeat_last"}}"#
        ),
    );
    let s = group(&w, &[lead, cy]);
    let (j, poster) = poster_job(&w, lead, cy, s);
    let cy_work = |w: &World| w.collab.store().read(|tx| tx.job_item(cy, j.plan)).unwrap();

    // v1 is handed over; Cy's review of it starts and holds at the gate, live.
    let mut events = w.collab.store().subscribe();
    work_on(&w, &j, "make the poster").await;
    until(&mut events, "Cy reviews v1", || {
        cy_work(&w).is_some_and(|i| at_gate(&w, i.thread_id))
    })
    .await;
    let item = cy_work(&w).unwrap();
    // v2 is handed over meanwhile: its review request is queued on the same work.
    work_on(&w, &j, "make v2 of the poster").await;
    let subs = handovers(&w, poster);
    assert_eq!(subs.len(), 2, "{subs:?}");
    let (v1, v2) = (subs[0].id, subs[1].id);
    let v2_key = format!("review:{}", v2.0);
    assert!(
        unread(&w, item.thread_id, &v2_key).is_some(),
        "v2 waits unread"
    );

    // The review of v1 ends nothing_new, v2 unread; the next segment reads v2.
    let mut events = w.collab.store().subscribe();
    open_gate(&w, j.plan);
    runs_ended(&mut events, item.thread_id, 2).await;
    w.collab.engine().wait_idle(item.thread_id).await;
    let cy_runs = runs_of(&w, item.thread_id);
    assert_eq!(cy_runs.len(), 2);
    assert_eq!(ends(&w, item.thread_id)[0], "nothing_new");
    assert_eq!(
        run_that_read(&w, item.thread_id, &format!("review:{}", v1.0)),
        Some(cy_runs[0].id)
    );
    assert_eq!(
        run_that_read(&w, item.thread_id, &v2_key),
        Some(cy_runs[1].id),
        "v2 was read by the next segment"
    );
    // The work stayed queued between the two segments: it never went idle.
    let states = states_of(&w, &item);
    let between: Vec<&str> = states
        .iter()
        .map(String::as_str)
        .skip_while(|s| *s != "running")
        .skip(1)
        .take_while(|s| *s != "running")
        .collect();
    assert_eq!(between, ["queued"], "{states:?}");
}

/// S-SV-3 (SV-11): Cy's segment failed, and a review request is queued on its work; queued
/// mail is no reason to wait: the supervisor picks the work up anyway, and the new segment
/// reads the request.
#[tokio::test]
async fn s_sv_3_failed_work_with_a_review_request_queued_is_picked_up_and_reads_it() {
    let (_clock, w) = start();
    let lead = deliverables::bot_on(&w, "Lead", "lead-model", &lead_script());
    // Fails, until the supervisor's pick-up line reaches it.
    let cy = deliverables::bot_on(
        &w,
        "Cy",
        "checker-model",
        r#"{"steps":[{"error":{"kind":"bad_request","message":"broken"}}],"on_exhausted":"repeat_last","rules":[{"when_user_contains":"Pick it up","reply":{"text":"Reviewing it now."}}]}"#,
    );
    let s = group(&w, &[lead, cy]);
    let (j, poster) = poster_job(&w, lead, cy, s);
    let cj = work_on_job(&w, j.plan, s, cy, "Launch poster");
    work_on(&w, &cj, "check the palette").await;
    assert_eq!(state(&w, &cj), WorkState::NeedsAttention);

    // v1 is handed over: its review request is queued on Cy's failed work.
    work_on(&w, &j, "make the poster").await;
    let v1 = handovers(&w, poster)[0].id;
    let key = format!("review:{}", v1.0);
    assert!(
        unread(&w, cj.thread, &key).is_some(),
        "the request waits unread"
    );
    assert_eq!(runs(&w, cj.thread), 1);

    // The mail leaves the work needing attention (its paused thread would refuse a wake):
    // the supervisor's pick-up runs it, and that segment reads the request.
    assert_eq!(state(&w, &cj), WorkState::NeedsAttention);
    let r = tick(&w, &cj).await;
    assert_eq!(pickup_of(&r, &cj)["verdict"], "pick_up", "{r}");
    let last = runs_of(&w, cj.thread).pop().unwrap();
    assert_eq!(
        run_that_read(&w, cj.thread, &key),
        Some(last.id),
        "the picking-up segment read the request"
    );
    assert!(log_kinds(&w, &cj).contains(&"supervisor_picked_up".to_string()));
}

/// S-SV-8 (SV-19, the 2026-10-12 fix): Ada's shell call ran and its ledger row closed 2 ms
/// after the command's run record (as a local agent closes it); then the daemon stopped and
/// cut her segment. After the restart the call is judged by its own `effects` row, matched by
/// the call and not by time: it is not unknown, and the cut segment is picked up.
///
/// The engine closes a row before it writes the run record; the 2 ms are the local agent's
/// order, written onto the row's `settled_at`.
#[tokio::test]
async fn s_sv_8_a_ledger_row_closing_after_the_run_record_is_not_unknown_and_is_picked_up() {
    let store = tempfile::tempdir().unwrap();
    let clock = troupe_core::ManualClock::new(1_760_000_000_000);
    let before = world_at(store.path(), std::sync::Arc::new(clock.clone()));
    let ada = bot(
        &before,
        "Ada",
        r#"{"steps":[{"tool_calls":[{"name":"shell","arguments":{"command":"echo built"}}]},{"delay_ms":60000,"text":"done"}],"on_exhausted":"repeat_last","rules":[{"when_user_contains":"Pick it up","reply":{"text":"It was built; going on."}}]}"#,
    );
    let s = direct(&before, ada);
    let j = open_job_work(&before, s, ada, "Build the site");

    // The shell runs and settles; the daemon stops during the model call after it.
    let mut events = before.collab.store().subscribe();
    before
        .collab
        .engine()
        .deliver(
            j.thread,
            troupe_core::inbox::Delivery::user_task("build the site"),
        )
        .await
        .unwrap();
    // The command's run record is written with the step that ran it.
    let recorded = |w: &World| {
        runs_of(w, j.thread).iter().any(|r| {
            !w.collab
                .store()
                .read(|tx| tx.commands(r.id))
                .unwrap()
                .is_empty()
        })
    };
    until(&mut events, "the shell call ran", || recorded(&before)).await;
    before
        .collab
        .engine()
        .shutdown(std::time::Duration::from_millis(50))
        .await;
    let run = runs_of(&before, j.thread).pop().unwrap();
    assert_eq!(run.status, troupe_core::run::RunStatus::Interrupted);
    let command = calls_of(&before, run.id)
        .into_iter()
        .find(|c| c.name == "shell")
        .unwrap();
    assert_eq!(
        before
            .collab
            .store()
            .read(|tx| tx.commands(run.id))
            .unwrap()[0]
            .call_id,
        command.call_id,
        "the command's run record names its call"
    );
    // The ledger row closes 2 ms after the run record.
    before
        .collab
        .store()
        .write(|tx| {
            tx.raw_execute(&format!(
                "UPDATE effects SET settled_at = settled_at + 2 WHERE run_id = {} AND tool = 'shell'",
                run.id.0
            ))
        })
        .unwrap();
    let row = before
        .collab
        .store()
        .read(|tx| tx.effects_for_run(run.id))
        .unwrap();
    assert_eq!(row.len(), 1, "{row:?}");
    assert_eq!(
        row[0].outcome,
        troupe_core::effect::EffectOutcome::Succeeded
    );
    assert!(row[0].settled_at.unwrap() > run.ended_at.unwrap());

    // The restart: a new daemon on the same store recovers, then ticks.
    let after = world_at(store.path(), std::sync::Arc::new(clock.clone()));
    after.collab.engine().recover().await.unwrap();
    assert_eq!(state(&after, &j), WorkState::NeedsAttention);
    let r = tick(&after, &j).await;
    assert_eq!(
        pickup_of(&r, &j),
        json!({"verdict": "pick_up", "attempt": 1, "spends_budget": true, "cause": "interrupted"}),
        "{r}"
    );
    assert_eq!(runs(&after, j.thread), 2, "the cut segment was picked up");
    let kinds = log_kinds(&after, &j);
    assert!(
        !kinds.iter().any(|k| k == "supervisor_unknown_effect"),
        "{kinds:?}"
    );
    assert!(
        supervisor_lines(&after, s).is_empty(),
        "nothing to tell the person"
    );
    assert_eq!(last_end(&after, j.thread), "completed");
}
