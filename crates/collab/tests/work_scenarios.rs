//! The digests' scenarios for turns and work items (A §9, C §1) over a real engine and store,
//! with scripted Bots: where a line for a Bot's running work goes, what a segment's end leaves,
//! an ask's answer, a desk choosing work that is live (desks and jobs: desk_scenarios.rs). A
//! job's turn that must be live while a line reaches it holds at a gate (support's `GATE`)
//! the test opens. Scripts answer by rule when the newest message is a line containing the
//! rule's words, else by step: the step's index is the number of replies the thread holds.

mod support;

use support::*;
use troupe_core::PlanId;
use troupe_core::conversation::Author;
use troupe_core::inbox::InboxMode;
use troupe_core::work_item::WorkMode;
use troupe_store::FilingSource;

/// A desk that hears "draw the chart" opens a job with its first effect (the gate); the job's
/// turn holds at the gate, then does what `then` says for the line it heard meanwhile.
fn chart(then: &str) -> String {
    format!(
        r#"{{"steps":[{{"text":"unused"}},{{"text":"unused"}},{then}],
        "rules":[{{"when_user_contains":"label the axes","reply":{{"tool_calls":[{{"name":"work_on","arguments":{{"plan":"plan_1"}}}}]}}}},
            {{"when_user_contains":"bars blue","reply":{{"text":"Blue bars it is."}}}},
            {{"when_user_contains":"draw the chart","reply":{{"tool_calls":[{GATE}]}}}}]}}"#
    )
}

// S-TURN-1
#[tokio::test]
async fn second_line_about_a_job_reaches_its_running_segment() {
    let w = world();
    let alpha = bot(&w, "Alpha", &chart(r#"{"text":"unused"}"#));
    let s = group(&w, &[alpha]);
    let desk = thread_of(&w, s, alpha);
    let mut events = w.collab.store().subscribe();
    let first = w
        .collab
        .post_line(s, "@Alpha draw the chart".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's turn holds at its gate", || {
        job(&w, alpha).is_some_and(|j| at_gate(&w, j.thread_id))
    })
    .await;
    let x = job(&w, alpha).unwrap();
    let run = live_run(&w, &x).unwrap();
    // A second line about the job (it quotes the first, so it is filed there, locked).
    let second = w
        .collab
        .post_line(s, "@Alpha make the bars blue".into(), Some(first.id))
        .await
        .unwrap();
    let filed = w
        .collab
        .store()
        .read(|tx| tx.filings_of_line(second.id))
        .unwrap();
    assert_eq!(filed.len(), 1);
    assert_eq!(Some(filed[0].plan_id), x.plan_id);
    open_gate(&w, x.plan_id.unwrap());
    until(&mut events, "the job's turn ended", || {
        !ends(&w, x.thread_id).is_empty()
    })
    .await;
    assert_eq!(
        ends(&w, x.thread_id),
        vec!["completed"],
        "one segment, no new one"
    );
    let heard = delivered(
        &w,
        x.thread_id,
        &format!("line:{}:to:{}", second.id.0, alpha.0),
    )
    .expect("the second line reached the job's thread");
    assert_eq!(heard.run_id, Some(run), "read by the running segment");
    assert!(!heard.is_root, "at its next step, not as a new task");
    let reply = line_saying(&w, s, "Blue bars it is.").expect("it answered the line");
    assert_eq!(reply.turn_id, Some(run));
    assert_eq!(runs(&w, desk), 1, "no desk ran for the second line");
    assert_eq!(jobs(&w, alpha).len(), 1);
}

// S-WI-1
#[tokio::test]
async fn a_line_said_to_a_working_bot_in_another_conversation_is_marked_and_answered_there() {
    let w = world();
    let alpha = bot(&w, "Alpha", r#"{"steps":[{"text":"placeholder"}]}"#);
    let d = direct(&w, alpha);
    let g = group(&w, &[alpha]);
    // In the direct its desk opens the job; the job's turn (which first tries work_on again,
    // refused: it has its job) holds at the gate, answers in the group what was said to it
    // there, and finishes in the direct.
    rescript(
        &w,
        alpha,
        &format!(
            r#"{{"steps":[{{"text":"unused"}},{{"tool_calls":[{GATE}]}},{{"text":"unused"}},{{"text":"The poster is done."}}],
            "rules":[
                {{"when_user_contains":"你呢","reply":{{"tool_calls":[{{"name":"send_message","arguments":{{"text":"我觉得海报用蓝色。","session_id":{}}}}}]}}}},
                {{"when_user_contains":"make the poster","reply":{{"tool_calls":[{{"name":"work_on","arguments":{{"new":{{"title":"a launch poster"}}}}}}]}}}}]}}"#,
            g.0
        ),
    );
    reader_says(
        &w,
        r#"{"control":"neither","belongs":"jobs","jobs":["plan_1"]}"#,
    );
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(d, "make the poster".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's turn holds at its gate", || {
        job(&w, alpha).is_some_and(|j| at_gate(&w, j.thread_id))
    })
    .await;
    let x = job(&w, alpha).unwrap();
    let plan = x.plan_id.unwrap();
    assert_eq!(plan, PlanId(1));
    assert_eq!(w.collab.plan(plan).unwrap().home_session_id, Some(d));
    let run = live_run(&w, &x).unwrap();
    assert_eq!(segment_of(&w, run).mode, WorkMode::Work);
    // Its segment starts on the line its desk handed over.
    let asked = line_saying(&w, d, "make the poster").unwrap();
    assert_eq!(
        w.collab
            .store()
            .read(|tx| tx.segment(run))
            .unwrap()
            .unwrap()
            .trigger_line_id,
        Some(asked.id),
        "the desk's line is the job segment's trigger"
    );
    let line = w
        .collab
        .post_line(g, "@Alpha 你呢".into(), None)
        .await
        .unwrap();
    let filed = w
        .collab
        .store()
        .read(|tx| tx.filings_of_line(line.id))
        .unwrap();
    assert_eq!(filed.len(), 1);
    assert_eq!(
        (filed[0].plan_id, filed[0].source),
        (plan, FilingSource::Reader)
    );
    // The job is the reader's to offer though its home is the direct: it is the open work of
    // the Bot the line names (C §3). It waits in the live segment's inbox, said to it in the
    // group: marked `reply_in` (WI-9) and said so in the text.
    let to = deliveries(&w, line.id);
    assert_eq!(to.len(), 1);
    assert_eq!((to[0].thread_id, to[0].reply_in), (x.thread_id, Some(g)));
    let key = format!("line:{}:to:{}", line.id.0, alpha.0);
    let mail = unread(&w, x.thread_id, &key).expect("the line is the segment's mail");
    assert_eq!(mail.mode, InboxMode::Steer);
    assert!(mail.text.contains("@Alpha 你呢"), "{}", mail.text);
    assert!(
        mail.text.contains("Said to you in \"Team\"")
            && mail.text.contains(&format!("session_id {}", g.0)),
        "{}",
        mail.text
    );
    open_gate(&w, plan);
    until(&mut events, "the job's turn ended", || {
        !ends(&w, x.thread_id).is_empty()
    })
    .await;
    assert_eq!(delivered(&w, x.thread_id, &key).unwrap().run_id, Some(run));
    let answer = line_saying(&w, g, "我觉得海报用蓝色。").expect("it answered in the group");
    assert_eq!(
        (answer.author, answer.bot_id, answer.turn_id),
        (Author::Bot, Some(alpha), Some(run))
    );
    // Its words there are the job's (a Bot's own output: a locked binding).
    let answer_filed = w
        .collab
        .store()
        .read(|tx| tx.filings_of_line(answer.id))
        .unwrap();
    assert_eq!(
        answer_filed
            .iter()
            .map(|f| (f.plan_id, f.source, f.locked))
            .collect::<Vec<_>>(),
        vec![(plan, FilingSource::Binding, true)]
    );
    // send_message did not end the segment: it went on and finished where it speaks.
    assert_eq!(ends(&w, x.thread_id), vec!["completed"]);
    assert_eq!(
        line_saying(&w, d, "The poster is done.").unwrap().turn_id,
        Some(run)
    );
    assert_eq!(
        runs(&w, thread_of(&w, g, alpha)),
        0,
        "its group desk never ran"
    );
}

/// A person's direct whose desk moved the work to a job reads as running while the job's turn
/// runs from it: the page's Stop and a caller waiting for the Bot to finish read `running`.
#[tokio::test]
async fn a_direct_reads_running_while_the_job_its_desk_opened_works() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        &format!(
            r#"{{"steps":[{{"text":"unused"}},{{"tool_calls":[{GATE}]}},{{"text":"The poster is done."}}],
            "rules":[{{"when_user_contains":"make the poster","reply":{{"tool_calls":[{{"name":"work_on","arguments":{{"new":{{"title":"a launch poster"}}}}}}]}}}}]}}"#
        ),
    );
    let d = direct(&w, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(d, "make the poster".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's turn holds at its gate", || {
        job(&w, alpha).is_some_and(|j| at_gate(&w, j.thread_id))
    })
    .await;
    let x = job(&w, alpha).unwrap();
    assert_ne!(
        x.thread_id,
        thread_of(&w, d, alpha),
        "the work left the desk"
    );
    let view = w.collab.session_view(d).unwrap();
    assert!(view.running, "the job's turn speaks in the direct");
    assert_eq!(view.members[0].state, "running");
    open_gate(&w, x.plan_id.unwrap());
    until(&mut events, "the job's turn ended", || {
        !ends(&w, x.thread_id).is_empty()
    })
    .await;
    assert!(!w.collab.session_view(d).unwrap().running);
}

// S-WI-3
#[tokio::test]
async fn mail_left_unread_at_a_job_segments_end_queues_it_and_is_the_next_trigger() {
    let w = world();
    // The job's turn holds at the gate and ends right after it, in the same hop: a line that
    // arrives meanwhile is left unread.
    let alpha = bot(
        &w,
        "Alpha",
        &format!(
            r#"{{"steps":[{{"text":"unused"}}],"rules":[
                {{"when_user_contains":"chart in?","reply":{{"text":"Yes, it is in."}}}},
                {{"when_user_contains":"draw the chart","reply":{{"tool_calls":[{GATE},
                    {{"name":"end_turn","arguments":{{"reason":"done"}}}}]}}}}]}}"#
        ),
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    let first = w
        .collab
        .post_line(s, "@Alpha draw the chart".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's turn holds at its gate", || {
        job(&w, alpha).is_some_and(|j| at_gate(&w, j.thread_id))
    })
    .await;
    let x = job(&w, alpha).unwrap();
    // A question (it defers no call), filed under the job by its quote.
    let question = w
        .collab
        .post_line(s, "@Alpha is the chart in?".into(), Some(first.id))
        .await
        .unwrap();
    open_gate(&w, x.plan_id.unwrap());
    until(&mut events, "the job's second segment ended", || {
        ends(&w, x.thread_id).len() == 2
    })
    .await;
    assert_eq!(ends(&w, x.thread_id), vec!["done", "completed"]);
    let [one, two] = &runs_of(&w, x.thread_id)[..] else {
        panic!("two segments")
    };
    // The first segment's end left the item queued (not idle), the unread line its mail.
    let states = states_of(&w, &x);
    let after_first = states
        .iter()
        .rposition(|s| s == "running")
        .and_then(|last_start| states[..last_start].last().cloned());
    assert_eq!(
        after_first.as_deref(),
        Some("queued"),
        "settled queued before the second segment started: {states:?}"
    );
    assert_eq!(states.last().map(String::as_str), Some("idle"));
    let key = format!("line:{}:to:{}", question.id.0, alpha.0);
    assert_eq!(
        delivered(&w, x.thread_id, &key).unwrap().run_id,
        Some(two.id),
        "the first segment never read it"
    );
    let trigger = w
        .collab
        .store()
        .read(|tx| tx.segment(two.id))
        .unwrap()
        .unwrap()
        .trigger_line_id;
    assert_eq!(trigger, Some(question.id), "the mail is its next trigger");
    assert_eq!(segment_of(&w, one.id).work_item_id, x.id);
    assert_eq!(segment_of(&w, two.id).work_item_id, x.id);
    assert_eq!(
        line_saying(&w, s, "Yes, it is in.").unwrap().turn_id,
        Some(two.id)
    );
}

// S-WI-5 (text-only half: a line carries no files in this API)
#[tokio::test]
async fn a_plain_line_where_a_bot_waits_on_its_ask_is_the_answer_and_its_work_goes_on() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[
            {"tool_calls":[{"name":"ask_user","arguments":{"question":"Which colour, blue or green?"}}]},
            {"text":"Going with blue."}]}"#,
    );
    let s = group(&w, &[alpha]);
    let t = thread_of(&w, s, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha paint the banner".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    assert_eq!(w.collab.members(s).unwrap()[0].state, "waiting_ask");
    // Text only, in the conversation it asked in, naming nobody.
    let line = w
        .collab
        .post_line(s, "blue, please".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    let ask = ask_line(&w, s).ask.unwrap();
    assert_eq!(
        ask.answer.unwrap().text.as_deref(),
        Some("blue, please"),
        "taken as the answer"
    );
    let to = deliveries(&w, line.id);
    assert_eq!(to.len(), 1);
    assert_eq!((to[0].how.as_str(), to[0].thread_id), ("ask_answer", t));
    // The asking work goes on with the answer: its next segment, same work item and thread,
    // reads it and replies; no job opened and nothing else woke.
    let [first, second] = &runs_of(&w, t)[..] else {
        panic!("the asking segment and the one the answer resumed")
    };
    assert_eq!(
        segment_of(&w, first.id).work_item_id,
        segment_of(&w, second.id).work_item_id
    );
    let key = format!("line:{}:to:{}", line.id.0, alpha.0);
    assert_eq!(delivered(&w, t, &key).unwrap().run_id, Some(second.id));
    assert_eq!(
        line_saying(&w, s, "Going with blue.").unwrap().turn_id,
        Some(second.id)
    );
    assert!(w.collab.plans(s).unwrap().is_empty());
    assert_eq!(items(&w, alpha).len(), 1, "only its desk");
}

// S-WI-6
#[tokio::test]
async fn a_desk_choosing_its_running_job_hands_over_its_line_verbatim_and_ends_merged() {
    let w = world();
    // The job's turn answers the handed-over line by trying work_on itself (refused: it has
    // its job), which shows it read it, then finishes, acknowledging the line by its short id.
    let alpha = bot(
        &w,
        "Alpha",
        &chart(
            r##"{"text":"Chart drawn, axes labelled.","tool_calls":[{"name":"end_turn","arguments":{"reason":"done","inbox":[{"id":"#2","disposition":"adopted"}]}}]}"##,
        ),
    );
    let s = group(&w, &[alpha]);
    let desk = thread_of(&w, s, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha draw the chart".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's turn holds at its gate", || {
        job(&w, alpha).is_some_and(|j| at_gate(&w, j.thread_id))
    })
    .await;
    let x = job(&w, alpha).unwrap();
    assert_eq!(x.plan_id, Some(PlanId(1)));
    let run = live_run(&w, &x).unwrap();
    // Nothing files this line (no reader): the desk hears it and chooses the running job.
    let line = w
        .collab
        .post_line(s, "@Alpha also label the axes".into(), None)
        .await
        .unwrap();
    until(&mut events, "the second desk ended", || {
        ends(&w, desk).len() == 2
    })
    .await;
    assert_eq!(ends(&w, desk), vec!["moved", "merged"]);
    let mail = unread(&w, x.thread_id, &format!("job:1:line:{}", line.id.0))
        .expect("the running segment has the desk's line");
    assert_eq!(mail.mode, InboxMode::Steer);
    assert!(
        mail.text.starts_with("#2 ") && mail.text.ends_with(&format!("] {}", line.body)),
        "the line itself, verbatim, with its short id: {}",
        mail.text
    );
    assert_eq!(jobs(&w, alpha).len(), 1, "no copy of the job's work");
    open_gate(&w, PlanId(1));
    until(&mut events, "the job's turn ended", || {
        !ends(&w, x.thread_id).is_empty()
    })
    .await;
    assert_eq!(ends(&w, x.thread_id), vec!["done"]);
    assert_eq!(
        segment_of(&w, run).bounces,
        0,
        "acknowledged by the id it was shown"
    );
    let heard = delivered(&w, x.thread_id, &format!("job:1:line:{}", line.id.0)).unwrap();
    assert_eq!(heard.run_id, Some(run), "read by the running segment");
    let calls = calls_of(&w, run);
    assert!(
        calls
            .iter()
            .any(|c| c.name == "work_on" && c.result.contains("already working")),
        "{calls:?}"
    );
    assert_eq!(
        line_saying(&w, s, "Chart drawn, axes labelled.")
            .unwrap()
            .turn_id,
        Some(run)
    );
    // END-3: what became of the line is kept with it.
    let kept = w.collab.line_flow(line.id).unwrap().dispositions;
    assert_eq!(kept.len(), 1, "{kept:?}");
    let d = &kept[0];
    assert_eq!(
        (d.bot_name.as_str(), d.disposition.disposition.as_str()),
        ("Alpha", "adopted")
    );
    assert_eq!(d.disposition.turn_id, run);
    assert!(!d.disposition.by_prose);
}

// END-6: a prose ending answers the person's lines it read and gave no disposition.
#[tokio::test]
async fn a_prose_ending_records_the_lines_it_read_as_answered() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        &chart(r#"{"text":"Chart drawn, axes labelled."}"#),
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    let first = w
        .collab
        .post_line(s, "@Alpha draw the chart".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's turn holds at its gate", || {
        job(&w, alpha).is_some_and(|j| at_gate(&w, j.thread_id))
    })
    .await;
    let x = job(&w, alpha).unwrap();
    let run = live_run(&w, &x).unwrap();
    let line = w
        .collab
        .post_line(s, "@Alpha also label the axes".into(), None)
        .await
        .unwrap();
    until(&mut events, "the line reached the running segment", || {
        unread(&w, x.thread_id, &format!("job:1:line:{}", line.id.0)).is_some()
    })
    .await;
    open_gate(&w, PlanId(1));
    until(&mut events, "the job's turn ended", || {
        !ends(&w, x.thread_id).is_empty()
    })
    .await;
    let kept = w.collab.line_flow(line.id).unwrap().dispositions;
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].disposition.disposition, "answered");
    assert!(kept[0].disposition.by_prose);
    assert_eq!(kept[0].disposition.turn_id, run);
    // The line that woke a turn is not mail it read (END-9): nothing is kept of it.
    assert!(
        w.collab
            .line_flow(first.id)
            .unwrap()
            .dispositions
            .is_empty()
    );
}

// ASK-4 for work on a job: the member waits on its job's ask, and a plain line is the answer.
#[tokio::test]
async fn a_plain_line_answers_the_ask_a_bots_job_made_in_the_group() {
    let w = world();
    // Its desk opens the job; the job's turn (which first tries work_on again, refused) asks
    // in the group, where its work speaks; the answer's line gets the last reply.
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[{"text":"unused"},
            {"tool_calls":[{"name":"ask_user","arguments":{"question":"Blue or green?"}}]}],
           "rules":[
            {"when_user_contains":"blue, please","reply":{"text":"Going with blue."}},
            {"when_user_contains":"paint the banner","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"a banner"}}}]}}]}"#,
    );
    let g = group(&w, &[alpha]);
    let desk = thread_of(&w, g, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(g, "@Alpha paint the banner".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's ask is open", || {
        job(&w, alpha).is_some_and(|j| {
            w.collab
                .store()
                .read(|tx| tx.open_ask_of_thread(j.thread_id))
                .unwrap()
                .is_some()
        })
    })
    .await;
    let x = job(&w, alpha).unwrap();
    until(&mut events, "the asking segment ended", || {
        !ends(&w, x.thread_id).is_empty()
    })
    .await;
    assert_eq!(w.collab.members(g).unwrap()[0].state, "waiting_ask");
    let line = w
        .collab
        .post_line(g, "blue, please".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job answered", || {
        line_saying(&w, g, "Going with blue.").is_some()
    })
    .await;
    let ask = ask_line(&w, g).ask.unwrap();
    assert_eq!(ask.answer.unwrap().text.as_deref(), Some("blue, please"));
    let to = deliveries(&w, line.id);
    assert_eq!(to.len(), 1);
    assert_eq!(
        (to[0].how.as_str(), to[0].thread_id),
        ("ask_answer", x.thread_id)
    );
    let [_, second] = &runs_of(&w, x.thread_id)[..] else {
        panic!("the asking segment and the one the answer started")
    };
    assert_eq!(
        line_saying(&w, g, "Going with blue.").unwrap().turn_id,
        Some(second.id)
    );
    assert_eq!(runs(&w, desk), 1, "the desk ran only for the first line");
}

// MSG-1 with WI-9: a reply by `parent_id` alone goes where the answered line was said.
#[tokio::test]
async fn send_message_with_only_a_parent_answers_where_that_line_was_said() {
    let w = world();
    let alpha = bot(&w, "Alpha", r#"{"steps":[{"text":"placeholder"}]}"#);
    let d = direct(&w, alpha);
    let g = group(&w, &[alpha]);
    let question = person_line(&w, g, "which font do we use?");
    rescript(
        &w,
        alpha,
        &format!(
            r#"{{"steps":[
                {{"tool_calls":[{{"name":"send_message","arguments":{{"text":"Inter, everywhere.","parent_id":{q}}}}}]}},
                {{"tool_calls":[{{"name":"send_message","arguments":{{"text":"lost","parent_id":999999}}}}]}},
                {{"text":"Answered in the group."}}]}}"#,
            q = question.id.0
        ),
    );
    let t = thread_of(&w, d, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(d, "answer the font question in the group".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    let answer = line_saying(&w, g, "Inter, everywhere.").expect("posted in the group");
    assert_eq!(answer.parent_id, Some(question.id));
    assert!(line_saying(&w, d, "Inter, everywhere.").is_none());
    assert!(line_saying(&w, g, "lost").is_none() && line_saying(&w, d, "lost").is_none());
    let refused = w
        .collab
        .store()
        .read(|tx| tx.messages(t, None, u32::MAX))
        .unwrap()
        .into_iter()
        .flat_map(|m| m.parts)
        .any(|p| format!("{p:?}").contains("parent_id: message 999999 does not exist"));
    assert!(refused, "the unknown parent is named");
}

// C §3, WI-8 in a person's direct: a line the reader files under a job whose work is running
// reaches that work between its steps; the desk only reads it, and no desk turn starts.
#[tokio::test]
async fn in_a_direct_a_line_filed_under_a_running_job_reaches_its_turn() {
    let w = world();
    let reader = script(
        &w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],"on_exhausted":"repeat_last",
            "rules":[{"when_user_contains":"troupe-reader:filing","reply":{"text":"{\"belongs\":\"jobs\",\"jobs\":[\"plan_1\"]}"}}]}"#,
    );
    w.collab.set_role("reading", reader).unwrap();
    let alpha = bot(
        &w,
        "Alpha",
        &format!(
            r##"{{"steps":[{{"text":"unused"}},{{"tool_calls":[{GATE}]}},
                {{"text":"Chart drawn, axes labelled.","tool_calls":[{{"name":"end_turn","arguments":{{"reason":"done","inbox":[{{"id":"#2","disposition":"adopted"}}]}}}}]}}],
              "rules":[{{"when_user_contains":"draw the chart","reply":{{"tool_calls":[{{"name":"work_on","arguments":{{"new":{{"title":"the chart"}}}}}}]}}}}]}}"##
        ),
    );
    let s = direct(&w, alpha);
    let desk = w.collab.direct_thread(s).unwrap();
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "draw the chart".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's turn holds at its gate", || {
        job(&w, alpha).is_some_and(|j| at_gate(&w, j.thread_id))
    })
    .await;
    let x = job(&w, alpha).unwrap();
    assert_eq!(x.plan_id, Some(PlanId(1)));
    let line = w
        .collab
        .post_line(s, "also label the axes".into(), None)
        .await
        .unwrap();
    assert_eq!(line.id.0, 2, "the script disposes of #2");
    let filed = w
        .collab
        .store()
        .read(|tx| tx.filings_of_line(line.id))
        .unwrap();
    assert!(
        filed.iter().any(|f| f.plan_id == PlanId(1)),
        "filed by the reader: {filed:?}"
    );
    let mail = unread(
        &w,
        x.thread_id,
        &format!("line:{}:to:{}", line.id.0, alpha.0),
    )
    .expect("the running segment has the line");
    assert_eq!(mail.mode, InboxMode::Steer);
    open_gate(&w, PlanId(1));
    until(&mut events, "the job's turn ended", || {
        !ends(&w, x.thread_id).is_empty()
    })
    .await;
    assert_eq!(ends(&w, x.thread_id), vec!["done"]);
    // The desk ran once, for the first line: the second woke no desk turn.
    assert_eq!(ends(&w, desk).len(), 1, "{:?}", ends(&w, desk));
    assert_eq!(
        w.collab.line_flow(line.id).unwrap().dispositions[0]
            .disposition
            .disposition,
        "adopted"
    );
}
