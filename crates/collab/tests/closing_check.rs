//! The closing check (C §14) over a real engine and store, with scripted Bots: a job opened in
//! a group with the person and one Bot, the reader filing every line under it, so each line
//! goes straight to the job's turn. S-CC-1 (failing check, fixed in the segment), S-CC-2 (the rest later, once
//! per segment, `send_message` held back), S-CC-3 (a run claim), S-CC-4 (Bot↔Bot direct).

mod support;

use std::path::PathBuf;
use support::*;
use troupe_collab::checks::NewCheckRequest;
use troupe_core::message::Origin;
use troupe_core::{BotId, CheckId, SessionId, ThreadId};
use troupe_store::{RunOutcome, WorkItemRecord};

/// Every line reads as plain and about the job opened first.
const FILED: &str = r#"{"control":"neither","belongs":"jobs","jobs":["plan_1"]}"#;

struct Job {
    w: World,
    bot: BotId,
    s: SessionId,
    plan: troupe_core::PlanId,
    /// The job's folder, where its turns work.
    folder: PathBuf,
    /// The folder from the workspace root, as checks name paths.
    rel: String,
}

fn job_in_group(script: &str) -> Job {
    let w = world();
    let bot = bot(&w, "Writer", script);
    let s = group(&w, &[bot]);
    let plan = open_job(&w, s, "the launch report");
    reader_says(&w, FILED);
    let folder = PathBuf::from(&plan.folder);
    let root = folder.parent().unwrap().parent().unwrap();
    let rel = folder.strip_prefix(root).unwrap().display().to_string();
    Job {
        w,
        bot,
        s,
        plan: plan.id,
        folder,
        rel,
    }
}

impl Job {
    /// The person's line; returns once the job's turn it opens has ended.
    async fn ask(&self, words: &str) -> WorkItemRecord {
        let mut events = self.w.collab.store().subscribe();
        self.w
            .collab
            .post_line(self.s, format!("@Writer {words}"), None)
            .await
            .unwrap();
        until(&mut events, "the job's turn ended", || {
            job(&self.w, self.bot).is_some_and(|i| !ends(&self.w, i.thread_id).is_empty())
        })
        .await;
        job(&self.w, self.bot).unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let file = self.folder.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    /// "file <job folder>/out/report.md contains 'Summary'", run once now (it fails).
    async fn summary_check(&self) -> (CheckId, String) {
        let path = format!("{}/out/report.md", self.rel);
        let checks = self.w.collab.checks();
        let c = checks
            .create(
                self.plan,
                &NewCheckRequest {
                    kind: "file_contains".into(),
                    path: Some(path.clone()),
                    pattern: Some("Summary".into()),
                    ..NewCheckRequest::default()
                },
            )
            .unwrap();
        let run = checks.run_check(c.id, None).await.unwrap();
        assert_eq!(run.outcome, RunOutcome::Failed);
        (c.id, format!("file {path} contains \"Summary\""))
    }

    fn sent_back(&self) -> Vec<serde_json::Value> {
        self.w
            .collab
            .store()
            .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100_000))
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == "closing_check_sent_back")
            .map(|e| e.payload)
            .collect()
    }
}

/// The closing check's loop lines in the thread (hidden: only the Bot reads them).
fn notes(w: &World, t: ThreadId) -> Vec<String> {
    w.collab
        .store()
        .read(|tx| tx.messages(t, None, u32::MAX))
        .unwrap()
        .into_iter()
        .filter(|m| m.origin == Origin::System("ending_hook:closing_check".into()))
        .map(|m| m.text())
        .collect()
}

fn results(w: &World, item: &WorkItemRecord) -> Vec<troupe_store::ToolCallRecord> {
    let run = runs_of(w, item.thread_id).remove(0);
    calls_of(w, run.id)
}

// S-CC-1
#[tokio::test]
async fn s_cc_1_a_reply_citing_a_file_hears_of_the_failing_check_once() {
    let j = job_in_group(
        r#"{"steps":[
            {"text":"The report is in out/report.md."},
            {"text":"The summary needs the Q3 figures, which I do not have yet."}]}"#,
    );
    j.write("out/report.md", "# Launch report\nFigures to come.\n");
    let (check, label) = j.summary_check().await;
    let item = j.ask("write the launch report").await;
    let notes = notes(&j.w, item.thread_id);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains(&label), "{}", notes[0]);
    assert!(notes[0].contains("has gone out as written"), "{}", notes[0]);
    assert!(notes[0].contains("Fix the deliverable, not the check"));
    assert_eq!(ends(&j.w, item.thread_id), vec!["completed"]);
    // The check was run again on the spot: a second run, failing as before.
    let runs = j.w.collab.store().read(|tx| tx.check(check)).unwrap().runs;
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].outcome, RunOutcome::Failed);
    let sent = j.sent_back();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["rules"], serde_json::json!(["failing_checks"]));
    assert_eq!(sent[0]["task_id"], serde_json::json!(j.plan));
}

// S-CC-1
#[tokio::test]
async fn s_cc_1_a_file_fixed_in_the_segment_passes_its_check_again_and_no_note_comes() {
    let j = job_in_group(
        r##"{"steps":[
            {"tool_calls":[{"name":"write_file","arguments":{"path":"out/report.md","content":"# Launch report\n## Summary\nOn track.\n"}}]},
            {"text":"The report is in out/report.md."}]}"##,
    );
    j.write("out/report.md", "# Launch report\n");
    let (check, _) = j.summary_check().await;
    let item = j.ask("write the launch report").await;
    assert!(notes(&j.w, item.thread_id).is_empty());
    assert_eq!(ends(&j.w, item.thread_id), vec!["completed"]);
    let runs = j.w.collab.store().read(|tx| tx.check(check)).unwrap().runs;
    assert_eq!(runs[0].outcome, RunOutcome::Passed, "re-evaluated now");
    assert!(j.sent_back().is_empty());
}

// S-CC-2
#[tokio::test]
async fn s_cc_2_the_rest_later_with_nothing_to_bring_it_back_is_sent_back_once_per_segment() {
    let j = job_in_group(
        r#"{"steps":[
            {"text":"The outline is done. Results to follow."},
            {"text":"Results to follow."}]}"#,
    );
    let item = j.ask("write the launch report").await;
    let notes = notes(&j.w, item.thread_id);
    assert_eq!(notes.len(), 1, "the second time in the segment: no note");
    assert!(notes[0].contains("\"Results to follow.\""), "{}", notes[0]);
    assert!(notes[0].contains("book a check_back"), "{}", notes[0]);
    assert_eq!(ends(&j.w, item.thread_id), vec!["completed"]);
    assert_eq!(j.sent_back()[0]["rules"], serde_json::json!(["rest_later"]));
}

// S-CC-2, CC-4, CC-5
#[tokio::test]
async fn s_cc_2_send_message_is_held_back_once_with_the_note_as_its_result_not_an_error() {
    let j = job_in_group(
        r#"{"steps":[
            {"tool_calls":[{"name":"send_message","arguments":{"text":"The outline is done. Results to follow."}}]},
            {"tool_calls":[{"name":"send_message","arguments":{"text":"The outline is done. Results to follow."}}]},
            {"text":"That is the outline for now."}]}"#,
    );
    let item = j.ask("write the launch report").await;
    let calls = results(&j.w, &item);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].status, "ok", "a send-back is not a tool error");
    assert!(
        calls[0].result.contains("\"posted\":false"),
        "{}",
        calls[0].result
    );
    assert!(
        calls[0].result.contains("was not sent"),
        "{}",
        calls[0].result
    );
    assert!(
        calls[1].result.contains("\"posted\":true"),
        "{}",
        calls[1].result
    );
    let posted = lines_said(&j.w, j.s)
        .into_iter()
        .filter(|l| l == "The outline is done. Results to follow.")
        .count();
    assert_eq!(posted, 1, "held once, then sent as is");
    assert!(notes(&j.w, item.thread_id).is_empty());
    assert_eq!(j.sent_back().len(), 1);
    assert_eq!(j.sent_back()[0]["via"], "send_message");
}

// S-CC-2
#[tokio::test]
async fn s_cc_2_a_check_back_booked_in_the_segment_backs_the_rest_later() {
    let j = job_in_group(
        r#"{"steps":[
            {"tool_calls":[{"name":"check_back","arguments":{"after_minutes":30,"note":"post the results"}}]},
            {"text":"The outline is done. Results to follow."}]}"#,
    );
    let item = j.ask("write the launch report").await;
    assert!(
        results(&j.w, &item)[0].status == "ok",
        "{:?}",
        results(&j.w, &item)
    );
    assert!(notes(&j.w, item.thread_id).is_empty());
    assert!(j.sent_back().is_empty());
}

// S-CC-3
#[tokio::test]
async fn s_cc_3_tests_pass_with_no_command_run_is_sent_back() {
    let j = job_in_group(
        r#"{"steps":[
            {"text":"Updated out/report.md; tests pass."},
            {"text":"To be exact: the tests were not verified."}]}"#,
    );
    j.write("out/report.md", "# Launch report\n");
    let item = j.ask("write the launch report").await;
    let notes = notes(&j.w, item.thread_id);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].contains("this turn ran no command"),
        "{}",
        notes[0]
    );
    assert_eq!(
        j.sent_back()[0]["rules"],
        serde_json::json!(["claimed_run"])
    );
}

// S-CC-3
#[tokio::test]
async fn s_cc_3_a_claim_it_says_was_not_verified_gets_no_note() {
    let j =
        job_in_group(r#"{"steps":[{"text":"Updated out/report.md; tests pass, not verified."}]}"#);
    j.write("out/report.md", "# Launch report\n");
    let item = j.ask("write the launch report").await;
    assert!(notes(&j.w, item.thread_id).is_empty());
    assert!(j.sent_back().is_empty());
}

// S-CC-3
#[tokio::test]
async fn s_cc_3_a_command_run_in_the_segment_backs_the_claim() {
    let j = job_in_group(
        r#"{"steps":[
            {"tool_calls":[{"name":"shell","arguments":{"command":"test -s out/report.md"}}]},
            {"text":"Updated out/report.md; tests pass."}]}"#,
    );
    j.write("out/report.md", "# Launch report\n");
    let item = j.ask("write the launch report").await;
    assert!(notes(&j.w, item.thread_id).is_empty());
    assert!(j.sent_back().is_empty());
}

// CC-4 for a reply that ends with end_turn
#[tokio::test]
async fn an_end_turn_after_an_unbacked_promise_is_sent_back_once_and_the_turn_goes_on() {
    let j = job_in_group(
        r#"{"steps":[
            {"text":"The outline is done. Results to follow.","tool_calls":[{"name":"end_turn","arguments":{"reason":"done"}}]},
            {"tool_calls":[{"name":"end_turn","arguments":{"reason":"done"}}]}]}"#,
    );
    let item = j.ask("write the launch report").await;
    let calls = results(&j.w, &item);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].status, "ok");
    assert!(
        calls[0].result.starts_with("Not ended. Closing check"),
        "{}",
        calls[0].result
    );
    assert_eq!(ends(&j.w, item.thread_id), vec!["done"]);
    assert_eq!(j.sent_back()[0]["via"], "reply");
}

// S-CC-4
#[tokio::test]
async fn s_cc_4_a_bot_to_bot_direct_without_the_user_is_not_checked() {
    // Writer opens a direct with Editor (session 2) and promises more there: no check. The
    // same words to the person's group are held back.
    let j = job_in_group(
        r#"{"steps":[
            {"tool_calls":[{"name":"create_direct","arguments":{"to":"Editor","text":"Please read the outline."}}]},
            {"tool_calls":[{"name":"send_message","arguments":{"text":"Results to follow.","session_id":2}}]},
            {"tool_calls":[{"name":"send_message","arguments":{"text":"Results to follow."}}]},
            {"text":"That is all for now."}]}"#,
    );
    // Editor reads and says nothing back, so nobody is woken again.
    bot(
        &j.w,
        "Editor",
        r#"{"steps":[{"text":""}],"on_exhausted":"repeat_last"}"#,
    );
    let item = j.ask("write the launch report").await;
    let calls = results(&j.w, &item);
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert!(
        calls[0].result.contains("\"session_id\":2"),
        "{}",
        calls[0].result
    );
    assert!(
        calls[1].result.contains("\"posted\":true"),
        "{}",
        calls[1].result
    );
    assert!(said(&j.w, SessionId(2), "Results to follow."));
    assert!(
        calls[2].result.contains("\"posted\":false"),
        "{}",
        calls[2].result
    );
    assert!(!said(&j.w, j.s, "Results to follow."));
    assert_eq!(j.sent_back().len(), 1);
}

/// The job's turn answers "look at the cut" by citing the delivered master.
const CITES_MASTER: &str = r#"{"steps":[{"text":"Noted."}],"on_exhausted":"repeat_last",
    "rules":[{"when_user_contains":"look at the cut","reply":{"text":"The cut is in deliverables/EP01_MASTER.mp4."}}]}"#;

// CC-1: checks from words
#[tokio::test]
async fn cc_1_an_offer_from_words_is_left_out_and_once_confirmed_it_is_measured_again() {
    use support::check_rig::rig;
    use troupe_core::words_check::probe::MediaFacts;
    let r = rig("剪一个产品短片");
    let _listener = r.checks.listen_for_filed_lines();
    assert!(r.w.collab.use_checks(r.checks.clone()));
    rescript(&r.w, r.bot, CITES_MASTER);
    reader_says(&r.w, FILED);
    let offer = |r: &support::check_rig::Rig| {
        r.w.collab
            .store()
            .read(|tx| tx.checks_of_plan(r.plan, false))
            .unwrap()
            .into_iter()
            .find(|c| c.kind == troupe_store::CheckKind::Words)
    };
    let mut events = r.w.collab.store().subscribe();
    r.user_says("片长约 2 分钟");
    r.videos.put(
        "EP01_MASTER.mp4",
        MediaFacts {
            duration_secs: Some(107.0),
            width: Some(1920),
            height: Some(1080),
            stored_width: Some(1920),
            stored_height: Some(1080),
            fps: Some(25.0),
            has_video: true,
            ..MediaFacts::default()
        },
    );
    until(&mut events, "an offer", || offer(&r).is_some()).await;
    r.bot_delivers("deliverables/EP01_MASTER.mp4");
    until(&mut events, "the offer measured on the master", || {
        offer(&r).is_some_and(|c| c.runs.first().is_some_and(|k| k.measured.is_some()))
    })
    .await;
    let id = offer(&r).unwrap().id;
    assert_eq!(offer(&r).unwrap().runs[0].outcome, RunOutcome::Failed);

    // An offer is no evidence either way: the reply citing the master gets no note.
    let ended = |n: usize| {
        let w = &r.w;
        let bot = r.bot;
        move || job(w, bot).is_some_and(|i| ends(w, i.thread_id).len() == n)
    };
    r.w.collab
        .post_line(r.session, "@Maker look at the cut".into(), None)
        .await
        .unwrap();
    until(&mut events, "the first turn ended", ended(1)).await;
    let item = job(&r.w, r.bot).unwrap();
    assert!(notes(&r.w, item.thread_id).is_empty());
    let newest_before = r.check(id).runs[0].id;

    // Confirmed, it is a gate: the next reply citing the master hears of it, measured again.
    r.checks.confirm(id).await.unwrap();
    let newest_confirmed = r.check(id).runs[0].id;
    assert!(newest_confirmed > newest_before, "measured on confirming");
    r.w.collab
        .post_line(r.session, "@Maker look at the cut again".into(), None)
        .await
        .unwrap();
    until(&mut events, "the second turn ended", ended(2)).await;
    let notes = notes(&r.w, item.thread_id);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("running time of") && notes[0].contains("from the user's words"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("107.00 s"), "{}", notes[0]);
    let after = r.check(id).runs;
    assert!(
        after[0].id > newest_confirmed,
        "measured again by the closing check"
    );
    assert_eq!(after[0].outcome, RunOutcome::Failed);
}

impl Job {
    /// "`test -s out/report.md` exits 0", run in the job's folder, once now (it fails).
    async fn command_check(&self) -> CheckId {
        let checks = self.w.collab.checks();
        let c = checks
            .create(
                self.plan,
                &NewCheckRequest {
                    kind: "command".into(),
                    command: Some("test -s out/report.md".into()),
                    cwd: Some(self.rel.clone()),
                    ..NewCheckRequest::default()
                },
            )
            .unwrap();
        let run = checks.run_check(c.id, None).await.unwrap();
        assert_eq!(run.outcome, RunOutcome::Failed);
        c.id
    }
}

// CC-1: command checks
#[tokio::test]
async fn cc_1_a_command_check_reads_its_latest_run_and_is_never_run_by_the_check() {
    let j = job_in_group(r#"{"steps":[{"text":"The report is in out/report.md."}]}"#);
    let check = j.command_check().await;
    j.write("out/report.md", "# Launch report\n");
    let item = j.ask("write the launch report").await;
    let notes = notes(&j.w, item.thread_id);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].contains("command `test -s out/report.md`: failed — exit 1"),
        "{}",
        notes[0]
    );
    let runs = j.w.collab.store().read(|tx| tx.check(check)).unwrap().runs;
    assert_eq!(runs.len(), 1, "a command check is not run again");
}

// CC-1: command checks
#[tokio::test]
async fn cc_1_a_command_check_the_segment_ran_cleanly_in_its_folder_is_skipped() {
    let j = job_in_group(
        r#"{"steps":[
            {"tool_calls":[{"name":"shell","arguments":{"command":"test -s out/report.md"}}]},
            {"text":"The report is in out/report.md."}]}"#,
    );
    j.command_check().await;
    j.write("out/report.md", "# Launch report\n");
    let item = j.ask("write the launch report").await;
    assert!(notes(&j.w, item.thread_id).is_empty());
    assert!(j.sent_back().is_empty());
}
