//! Attribution over a real engine and store, with scripted Bots and a scripted reader: a quoted
//! line's jobs file the new line (locked), the reader files a line under a job it was shown,
//! and a line nobody could read goes to the Bot's desk unplaced.

mod support;

use support::*;
use troupe_core::PlanId;
use troupe_core::conversation::Author;
use troupe_store::FilingSource;

/// The desk's first effect opens the job; the job writes, says so, and later shortens it.
const WRITER: &str = r#"{"steps":[
    {"tool_calls":[{"name":"write_file","arguments":{"path":"report.md","content":"long"}}]},
    {"text":"Written."},
    {"text":"Shorter now."}]}"#;

#[tokio::test]
async fn quoted_reply_inherits_every_target() {
    let w = world();
    let alpha = bot(&w, "Alpha", WRITER);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha write the report".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job said it wrote", || {
        said(&w, s, "Written.")
    })
    .await;
    let plan = w.collab.plans(s).unwrap()[0].id;
    let written = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .find(|l| l.body == "Written.")
        .unwrap();
    // The job's own line is filed under it by its binding.
    let bound = w
        .collab
        .store()
        .read(|tx| tx.filings_of_line(written.id))
        .unwrap();
    assert_eq!(bound[0].plan_id, plan);
    assert_eq!(bound[0].source, FilingSource::Binding);
    let desk = thread_of(&w, s, alpha);
    let desk_runs = runs(&w, desk);
    let line = w
        .collab
        .post_line(s, "@Alpha make it shorter".into(), Some(written.id))
        .await
        .unwrap();
    until(&mut events, "the job answered the quoted line", || {
        said(&w, s, "Shorter now.")
    })
    .await;
    let filed = w
        .collab
        .store()
        .read(|tx| tx.filings_of_line(line.id))
        .unwrap();
    assert_eq!(filed.len(), 1);
    assert_eq!(filed[0].plan_id, plan);
    assert_eq!(filed[0].source, FilingSource::QuotedReply);
    assert!(filed[0].locked);
    assert_eq!(runs(&w, desk), desk_runs, "the desk did not run for it");
    assert_eq!(runs(&w, job(&w, alpha).unwrap().thread_id), 2);
}

/// Reads every line as plain (no stop) and about plan_1.
fn reader_files_under_plan_1(w: &World) {
    let spec = script(
        w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\",\"belongs\":\"jobs\",\"jobs\":[\"plan_1\"]}"}],
            "on_exhausted":"repeat_last"}"#,
    );
    w.collab.set_role("reading", spec).unwrap();
}

#[tokio::test]
async fn the_reader_files_a_line_under_a_job_it_was_shown() {
    let w = world();
    let alpha = bot(&w, "Alpha", WRITER);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    // No job yet: the reader's plan_1 was not shown, so the line is no telling → the desk.
    reader_files_under_plan_1(&w);
    let first = w
        .collab
        .post_line(s, "@Alpha write the report".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job said it wrote", || {
        said(&w, s, "Written.")
    })
    .await;
    let reading = w
        .collab
        .store()
        .read(|tx| tx.filing_reading(first.id))
        .unwrap()
        .unwrap();
    assert!(reading.candidates.is_empty());
    assert_eq!(
        reading.filing,
        Some(troupe_core::reading::filing::Filing::NoTelling)
    );
    assert_eq!(w.collab.plans(s).unwrap()[0].id, PlanId(1));
    // Now plan_1 is shown, and the reader's filing sends the line to the job, not the desk.
    let desk = thread_of(&w, s, alpha);
    let desk_runs = runs(&w, desk);
    let line = w
        .collab
        .post_line(s, "@Alpha now shorten it".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job answered", || {
        said(&w, s, "Shorter now.")
    })
    .await;
    let filed = w
        .collab
        .store()
        .read(|tx| tx.filings_of_line(line.id))
        .unwrap();
    assert_eq!(filed[0].plan_id, PlanId(1));
    assert_eq!(filed[0].source, FilingSource::Reader);
    assert!(
        !filed[0].locked,
        "a reading is a default, not a locked signal"
    );
    assert_eq!(runs(&w, desk), desk_runs);
    let plan = w.collab.plan(PlanId(1)).unwrap();
    assert!(plan.last_user_activity_at.is_some());
}

#[tokio::test]
async fn reader_down_goes_to_desk() {
    let w = world();
    // One job in the conversation; the Bot's desk binds to it on its first effect.
    let alpha = bot(&w, "Alpha", WRITER);
    let s = group(&w, &[alpha]);
    let opening = w
        .collab
        .store()
        .write(|tx| {
            tx.insert_line(&troupe_store::NewLine::plain(
                s,
                Author::User,
                "the report job".into(),
            ))
        })
        .unwrap();
    let plan = w
        .collab
        .open_plan(troupe_collab::OpenPlan {
            home_session_id: s,
            opening_line_id: Some(opening.id),
            title: None,
            cause: troupe_core::plan::RevisionCause::User,
        })
        .unwrap();
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(s, "@Alpha write it".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job said it wrote", || {
        said(&w, s, "Written.")
    })
    .await;
    let reading = w
        .collab
        .store()
        .read(|tx| tx.filing_reading(line.id))
        .unwrap()
        .unwrap();
    assert!(reading.filing.is_none(), "no reading model: unread");
    assert!(reading.failure.is_some());
    let desk_run = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(thread_of(&w, s, alpha), 1))
        .unwrap()
        .remove(0);
    let verdict = w
        .collab
        .store()
        .read(|tx| tx.segment_verdict(desk_run.id))
        .unwrap();
    assert_eq!(verdict.as_deref(), Some("unread"));
    assert_eq!(desk_run.end_reason.unwrap().code(), "moved");
    assert_eq!(
        job(&w, alpha).unwrap().plan_id,
        Some(plan.id),
        "its one candidate"
    );
}

#[tokio::test]
async fn done_in_place_runs_at_the_desk_and_opens_no_job() {
    let w = world();
    let spec = script(
        &w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\",\"belongs\":\"done_in_place\"}"}],
            "on_exhausted":"repeat_last"}"#,
    );
    w.collab.set_role("reading", spec).unwrap();
    let alpha = bot(&w, "Alpha", WRITER);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(s, "@Alpha jot this down for me".into(), None)
        .await
        .unwrap();
    until(&mut events, "the Bot said it wrote", || {
        said(&w, s, "Written.")
    })
    .await;
    assert!(
        w.collab.plans(s).unwrap().is_empty(),
        "no job opened (DS-5a)"
    );
    assert!(job(&w, alpha).is_none());
    let desk = thread_of(&w, s, alpha);
    let dir = w
        .collab
        .store()
        .read(|tx| tx.thread(desk))
        .unwrap()
        .workspace;
    assert!(
        std::path::Path::new(&dir).join("report.md").exists(),
        "it ran at the desk"
    );
    let filed = w
        .collab
        .store()
        .read(|tx| tx.filings_of_line(line.id))
        .unwrap();
    assert!(filed.is_empty());
}
