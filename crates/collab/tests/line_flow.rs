//! A line's own flow (AT-8): how it was read, where it was filed (by the jobs' names as they
//! are now) and whom it woke.

mod support;

use support::*;
use troupe_core::SessionMessageId;

#[tokio::test]
async fn at_8_a_lines_flow_says_how_it_was_read_where_it_was_filed_and_whom_it_woke() {
    let w = world();
    let alpha = bot(&w, "Alpha", r#"{"steps":[{"text":"On the poster."}]}"#);
    let beta = bot(&w, "Beta", r#"{"steps":[{"text":"Looking."}]}"#);
    let s = group(&w, &[alpha, beta]);
    let tb = thread_of(&w, s, beta);

    // A person's line naming Beta: read (here by the word lists: no reading model is set), on
    // no job, and it woke Beta because it named it.
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(s, "@Beta look at the poster".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, tb, 1).await;
    let flow = w.collab.line_flow(line.id).unwrap();
    assert_eq!((flow.author.as_str(), flow.session_id), ("user", s));
    assert_eq!(flow.routing.as_deref(), Some("routed"));
    let woke: Vec<(&str, &str)> = flow
        .woke
        .iter()
        .map(|d| (d.bot_name.as_str(), d.how.as_str()))
        .collect();
    assert_eq!(woke, [("Beta", "mention")]);
    assert_eq!(
        (flow.filed_under.as_deref(), flow.filing_step),
        (None, false)
    );
    assert!(
        flow.readings.iter().any(|r| r.kind == "user"),
        "{:?}",
        flow.readings
    );

    // Alpha's reply from its work on a job is filed there by the work's binding: a locked
    // signal, so no filing step of its own.
    let job = open_job_work(&w, s, alpha, "Poster");
    task_on_job(&w, &job, "Make the poster.").await;
    let reply = line_saying(&w, s, "On the poster.").unwrap();
    let flow = w.collab.line_flow(reply.id).unwrap();
    assert_eq!(flow.filed_under.as_deref(), Some("Filed under: Poster"));
    assert!(!flow.filing_step);
    assert_eq!(flow.filings.len(), 1);
    assert_eq!(
        (flow.filings[0].task_id, flow.filings[0].source.as_str()),
        (job.plan, "binding")
    );
    assert!(flow.woke.is_empty(), "{:?}", flow.woke);

    assert!(w.collab.line_flow(SessionMessageId(9_999)).is_err());
}
