//! User quotes (C §5, S-UQ-1…S-UQ-7) over a real engine and store with scripted Bots: the
//! person's words kept apart from the transcript, filed under the job, listed in a job's
//! situation, kept through a clear, erased only on request or by taking a line back, and a
//! sent line's edit kept as the clauses it added and told to the Bots that read the line.

mod support;

use std::sync::Arc;
use std::time::Duration;
use support::check_rig::filing;
use support::*;
use troupe_collab::{CollabError, quote_section};
use troupe_core::quote::QuoteSource;
use troupe_core::{ManualClock, PlanId, SessionId, SessionMessageId};
use troupe_store::{NewQuote, QuoteFiling, UserQuote};

const QUIET: &str = r#"{"steps":[{"text":"noted"}],"on_exhausted":"repeat_last",
    "rules":[{"when_user_contains":"You changed this line","reply":{"text":"seen the change"}}]}"#;
const SLOW: &str = r#"{"steps":[{"text":"a long answer that streams slowly","chunks":40,"chunk_delay_ms":20},{"text":"second"},{"text":"third"}]}"#;

fn quotes_of_line(w: &World, l: SessionMessageId) -> Vec<UserQuote> {
    w.collab.store().read(|tx| tx.quotes_of_line(l)).unwrap()
}

fn quotes_of_plan(w: &World, p: PlanId) -> Vec<UserQuote> {
    w.collab.store().read(|tx| tx.quotes_of_plan(p)).unwrap()
}

fn section(w: &World, p: PlanId, first: bool, until: Option<i64>) -> Option<String> {
    w.collab
        .store()
        .read(|tx| quote_section(tx, p, first, until))
        .unwrap()
}

/// A job in a direct with twelve of the person's lines filed under it ("quote 1" opens it),
/// a minute apart.
fn twelve(w: &World, clock: &ManualClock, s: SessionId) -> PlanId {
    let plan = open_job(w, s, "quote 1").id;
    for i in 2..=12 {
        clock.advance(60_000);
        let l = person_line(w, s, &format!("quote {i}"));
        w.collab
            .store()
            .write(|tx| tx.file_line(&filing(l.id, plan)))
            .unwrap();
    }
    plan
}

async fn settle(w: &World, s: SessionId) {
    let t = w.collab.direct_thread(s).unwrap();
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .unwrap();
}

fn listed(text: &str) -> Vec<usize> {
    (1..=12)
        .filter(|i| text.lines().any(|l| l.ends_with(&format!(": quote {i}"))))
        .collect()
}

#[tokio::test]
async fn s_uq_1_a_later_segment_lists_the_first_four_and_the_latest_six() {
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let w = world_on(clock.clone());
    let s = direct(&w, bot(&w, "Ada", QUIET));
    let plan = twelve(&w, &clock, s);
    assert_eq!(quotes_of_plan(&w, plan).len(), 12);

    let text = section(&w, plan, false, None).expect("a section");
    assert!(text.starts_with("What the user said in this job"), "{text}");
    assert_eq!(
        listed(&text),
        vec![1, 2, 3, 4, 7, 8, 9, 10, 11, 12],
        "{text}"
    );
    assert!(text.contains("(2 omitted)"), "{text}");
    assert!(text.contains("in the direct with Ada"), "{text}");
    // UQ-5: the job's first segment lists none.
    assert_eq!(section(&w, plan, true, None), None);
}

#[tokio::test]
async fn uq_6_under_a_hold_the_quotes_are_as_they_stood_when_the_stop_was_made() {
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let w = world_on(clock.clone());
    let s = direct(&w, bot(&w, "Ada", QUIET));
    let plan = twelve(&w, &clock, s);
    let fifth = quotes_of_plan(&w, plan)[4].created_at;
    let text = section(&w, plan, false, Some(fifth)).unwrap();
    assert_eq!(listed(&text), vec![1, 2, 3, 4, 5], "{text}");
}

#[tokio::test]
async fn s_uq_2_a_clear_keeps_the_quotes_without_their_lines() {
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let w = world_on(clock.clone());
    let s = direct(&w, bot(&w, "Ada", QUIET));
    let plan = twelve(&w, &clock, s);
    // A line in another conversation keeps the job through the clear (PLAN-D2).
    let other = direct(&w, bot(&w, "Helper", QUIET));
    let there = person_line(&w, other, "the film also goes on the site");
    w.collab
        .store()
        .write(|tx| tx.file_line(&filing(there.id, plan)))
        .unwrap();
    let before = section(&w, plan, false, None).unwrap();

    let out = w.collab.clear_session(s, false).await.unwrap();
    assert_eq!(out.plans_kept, vec![plan]);
    assert_eq!(out.quotes_erased, 0);
    let after: Vec<_> = quotes_of_plan(&w, plan)
        .into_iter()
        .filter(|q| q.id != quotes_of_line(&w, there.id)[0].id)
        .collect();
    assert_eq!(after.len(), 12);
    assert!(after.iter().all(|q| q.message_id.is_none() && !q.erased));
    assert!(after.iter().all(|q| q.session_id == Some(s)));
    assert_eq!(section(&w, plan, false, None).unwrap(), before);
}

#[tokio::test]
async fn uq_1_deleting_a_group_unties_its_quotes_from_it_and_uq_2_erasing_empties_them() {
    let w = world();
    let a = bot(&w, "Ada", QUIET);
    let g = group(&w, &[a]);
    let d = direct(&w, a);
    let plan = open_job(&w, d, "make the film").id;
    let said = person_line(&w, g, "the film needs subtitles");
    w.collab
        .store()
        .write(|tx| tx.file_line(&filing(said.id, plan)))
        .unwrap();
    // A board quote: no conversation, untouched by erasing one.
    let board = w
        .collab
        .store()
        .write(|tx| {
            tx.insert_quote(&NewQuote {
                body: "Done when: it plays on a phone".into(),
                message_id: None,
                session_id: None,
                source: QuoteSource::BoardDoneWhenLine,
                first_quote_id: None,
                filings: vec![QuoteFiling {
                    plan_id: plan,
                    ticket_id: None,
                }],
            })
        })
        .unwrap();

    w.collab.delete_group(g, false).await.unwrap();
    let q = &quotes_of_line(&w, said.id);
    assert!(q.is_empty(), "the quote no longer names the line: {q:?}");
    let kept: Vec<_> = quotes_of_plan(&w, plan)
        .into_iter()
        .filter(|q| q.body == "the film needs subtitles")
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!((kept[0].message_id, kept[0].session_id), (None, None));

    let out = w.collab.clear_session(d, true).await.unwrap();
    assert_eq!(out.quotes_erased, 1);
    for q in quotes_of_plan(&w, plan) {
        if q.id == board.id {
            assert_eq!(q.body, "Done when: it plays on a phone");
            assert!(!q.erased);
        } else if q.session_id == Some(d) {
            assert!(q.erased && q.body.is_empty(), "{q:?}");
        }
    }
}

#[tokio::test]
async fn s_uq_3_a_long_line_keeps_its_head_and_tail_within_2000_code_points() {
    let w = world();
    let s = direct(&w, bot(&w, "Ada", QUIET));
    let words = "开".repeat(1300) + &"尾".repeat(1200);
    let l = person_line(&w, s, &words);
    let q = &quotes_of_line(&w, l.id)[0];
    assert!(q.body.chars().count() <= 2000);
    assert!(q.body.starts_with("开开开") && q.body.ends_with("尾尾尾"));
    assert!(q.body.contains("characters cut"), "{}", q.body);
    // The line itself is whole.
    assert_eq!(w.collab.line(l.id).unwrap().body, words);
}

#[tokio::test]
async fn s_uq_4_an_edit_keeps_only_the_added_clause_tied_to_the_first_quote() {
    let w = world();
    let s = direct(&w, bot(&w, "Ada", QUIET));
    let plan = open_job(&w, s, "make a teaser").id;
    let l = person_line(&w, s, "剪一支约 60 秒的宣传片");
    w.collab
        .store()
        .write(|tx| tx.file_line(&filing(l.id, plan)))
        .unwrap();

    let edited = w
        .collab
        .edit_line(l.id, "剪一支约 60 秒的宣传片,加字幕".into())
        .await
        .unwrap();
    assert!(edited.edited && edited.edited_at.is_some());
    let q = quotes_of_line(&w, l.id);
    assert_eq!(q.len(), 2);
    assert_eq!(
        q[0].body, "剪一支约 60 秒的宣传片",
        "old quotes never change"
    );
    assert_eq!(q[1].body, "加字幕");
    assert_eq!(q[1].first_quote_id, Some(q[0].id));
    assert_eq!(q[1].filings, q[0].filings, "filed like the line");
    let text = section(&w, plan, false, None).unwrap();
    assert!(
        text.contains("changed a line in the direct with Ada: 加字幕"),
        "{text}"
    );

    // Taking words out stores nothing new (UQ-9); the version is kept.
    w.collab
        .edit_line(l.id, "剪一支约 60 秒的宣传片".into())
        .await
        .unwrap();
    assert_eq!(quotes_of_line(&w, l.id).len(), 2);
    let versions = w.collab.line_versions(l.id).unwrap();
    let bodies: Vec<_> = versions.iter().map(|v| v.body.as_str()).collect();
    assert_eq!(
        bodies,
        ["剪一支约 60 秒的宣传片", "剪一支约 60 秒的宣传片,加字幕"]
    );
}

#[tokio::test]
async fn filings_follow_a_later_filing_of_the_line() {
    let w = world();
    let s = direct(&w, bot(&w, "Ada", QUIET));
    let one = open_job(&w, s, "job one").id;
    let two = open_job(&w, s, "job two").id;
    let l = person_line(&w, s, "both jobs use the blue logo");
    for p in [one, two] {
        w.collab
            .store()
            .write(|tx| tx.file_line(&filing(l.id, p)))
            .unwrap();
    }
    let plans: Vec<_> = quotes_of_line(&w, l.id)[0]
        .filings
        .iter()
        .map(|f| f.plan_id)
        .collect();
    assert_eq!(plans, vec![one, two]);
}

#[tokio::test]
async fn s_uq_5_a_bot_that_read_the_line_is_told_of_the_edit_in_a_new_segment() {
    let w = world();
    let b = bot(&w, "Ada", QUIET);
    let s = direct(&w, b);
    let l = w
        .collab
        .post_line(s, "make the logo blue".into(), None)
        .await
        .unwrap();
    settle(&w, s).await;
    let t = w.collab.direct_thread(s).unwrap();
    let before = runs(&w, t);
    let mut events = w.collab.store().subscribe();

    w.collab
        .edit_line(l.id, "make the logo green".into())
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    assert_eq!(runs(&w, t), before + 1);
    let note = delivered(&w, t, &format!("line:{}:edit:1:to:{}", l.id.0, b.0))
        .expect("the change was delivered");
    let text = format!("{:?}", note.parts);
    assert!(
        text.contains("You changed this line. It now reads: “make the logo green” (it was: “make the logo blue”)"),
        "{text}"
    );
    assert!(said(&w, s, "seen the change"));
}

#[tokio::test]
async fn uq_13_an_edit_lifts_the_persons_own_stop_and_waits_under_a_lasting_one() {
    use support::holds;
    use troupe_core::hold::HoldStatus;
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let w = world_on(clock.clone());
    let b = bot(&w, "Ada", QUIET);
    let s = direct(&w, b);
    let l = w
        .collab
        .post_line(s, "make the logo blue".into(), None)
        .await
        .unwrap();
    settle(&w, s).await;
    let t = w.collab.direct_thread(s).unwrap();

    // The person stops Ada; the edit is their next line to her: the Stop lifts and she
    // starts a segment on the change.
    let (stop, _) = w.collab.post_hold(holds::bot_stop(b)).await.unwrap();
    clock.advance(1_000);
    let before = runs(&w, t);
    let mut events = w.collab.store().subscribe();
    w.collab
        .edit_line(l.id, "make the logo green".into())
        .await
        .unwrap();
    assert_eq!(
        w.collab.hold(stop.hold.id).unwrap().hold.status,
        HoldStatus::Lifted
    );
    runs_ended(&mut events, t, 1).await;
    assert_eq!(runs(&w, t), before + 1);
    assert!(delivered(&w, t, &format!("line:{}:edit:1:to:{}", l.id.0, b.0)).is_some());

    // A stop no line of the person's lifts (an app hold) keeps the note until it lifts.
    let lasting = holds::app_hold_on_bot(&w, b);
    let before = runs(&w, t);
    w.collab
        .edit_line(l.id, "make the logo red".into())
        .await
        .unwrap();
    settle(&w, s).await;
    assert_eq!(runs(&w, t), before, "a Bot under a lasting stop ran");
    assert_eq!(
        w.collab.hold(lasting.id).unwrap().hold.status,
        HoldStatus::InForce
    );
    let key = format!("line:{}:edit:2:to:{}", l.id.0, b.0);
    assert!(delivered(&w, t, &key).is_none());
    assert!(unread(&w, t, &key).is_some(), "the note waits in the inbox");
}

#[tokio::test]
async fn uq_13_an_unread_line_s_inbox_item_holds_only_the_new_words() {
    let w = world();
    let b = bot(&w, "Slow", SLOW);
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    let mut stream = w.collab.engine().subscribe_stream();
    w.collab.post_line(s, "first".into(), None).await.unwrap();
    while !matches!(
        stream.recv().await.unwrap(),
        troupe_engine::StreamNotice::TextDelta { .. }
    ) {}
    let l = w
        .collab
        .post_line(s, "use the old intro".into(), None)
        .await
        .unwrap();
    w.collab
        .edit_line(l.id, "use the new intro".into())
        .await
        .unwrap();
    let key = format!("line:{}:to:{}", l.id.0, b.0);
    // Read after the edit, or still waiting: either way only the new words are there.
    let text = match unread(&w, t, &key) {
        Some(item) => item.text,
        None => format!("{:?}", delivered(&w, t, &key).unwrap().parts),
    };
    assert!(text.contains("use the new intro (发出后改过)"), "{text}");
    assert!(!text.contains("use the old intro"), "{text}");
    settle(&w, s).await;
    assert!(
        delivered(&w, t, &format!("line:{}:edit:1:to:{}", l.id.0, b.0)).is_none(),
        "a Bot that had not read it is not told of a change"
    );
}

#[tokio::test]
async fn s_uq_6_taking_back_an_unread_line_erases_its_quote() {
    let w = world();
    let b = bot(&w, "Slow", SLOW);
    let s = direct(&w, b);
    let mut stream = w.collab.engine().subscribe_stream();
    w.collab.post_line(s, "first".into(), None).await.unwrap();
    while !matches!(
        stream.recv().await.unwrap(),
        troupe_engine::StreamNotice::TextDelta { .. }
    ) {}
    let l = w
        .collab
        .post_line(s, "never mind this".into(), None)
        .await
        .unwrap();
    w.collab.withdraw_line(l.id).unwrap();
    let q = &quotes_of_line(&w, l.id)[0];
    assert!(q.erased && q.body.is_empty(), "{q:?}");
    // A taken-back line is sent again, not edited (UQ-17).
    assert!(matches!(
        w.collab.edit_line(l.id, "something else".into()).await,
        Err(CollabError::Conflict { code: "not_editable", ref message }) if message.starts_with("taken_back")
    ));
    settle(&w, s).await;
}

#[tokio::test]
async fn s_uq_7_a_line_that_opened_a_segment_is_not_taken_back_but_is_editable() {
    let w = world();
    let s = direct(&w, bot(&w, "Ada", QUIET));
    let l = w
        .collab
        .post_line(s, "write the script".into(), None)
        .await
        .unwrap();
    settle(&w, s).await;
    assert!(matches!(
        w.collab.withdraw_line(l.id),
        Err(CollabError::Conflict {
            code: "already_read",
            ..
        })
    ));
    let q = &quotes_of_line(&w, l.id)[0];
    assert!(!q.erased && q.body == "write the script");
    w.collab
        .edit_line(l.id, "write the script, in English".into())
        .await
        .unwrap();
    settle(&w, s).await;
}

#[tokio::test]
async fn board_writing_keeps_changed_clauses_and_added_lines_filed_under_the_job() {
    let r = support::check_rig::rig("make a film");
    let w = &r.w;
    let version = w.collab.store().read(|tx| tx.plan(r.plan)).unwrap().version;
    w.collab
        .patch_plan_spec(
            r.plan,
            troupe_collab::PlanPatchRequest {
                version,
                goal: Some("a teaser for the launch".into()),
                done_when: Some("- plays on a phone".into()),
                rules: Some("- no stock music".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let version = version + 1;
    w.collab
        .patch_plan_spec(
            r.plan,
            troupe_collab::PlanPatchRequest {
                version,
                goal: Some("a teaser for the launch, with subtitles".into()),
                done_when: Some("- plays on a phone\n- under 60 s".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let ticket = r.ticket();
    w.collab
        .patch_ticket(
            ticket.id,
            troupe_collab::tickets::TicketPatchRequest {
                description: Some("the opening shot".into()),
                done_when: Some("- lit from the left".into()),
                ..Default::default()
            },
        )
        .unwrap();
    // A status change is not writing.
    w.collab
        .patch_ticket(
            ticket.id,
            troupe_collab::tickets::TicketPatchRequest {
                status: Some(troupe_core::ticket::TicketStatus::InProgress),
                ..Default::default()
            },
        )
        .unwrap();

    let board: Vec<_> = quotes_of_plan(w, r.plan)
        .into_iter()
        .filter(|q| q.source.is_board())
        .map(|q| (q.source, q.body, q.session_id, q.filings[0].ticket_id))
        .collect();
    let t = Some(ticket.id.0);
    assert_eq!(
        board,
        vec![
            (
                QuoteSource::BoardGoalClause,
                "a teaser for the launch".into(),
                None,
                None
            ),
            (
                QuoteSource::BoardDoneWhenLine,
                "- plays on a phone".into(),
                None,
                None
            ),
            (
                QuoteSource::BoardRule,
                "- no stock music".into(),
                None,
                None
            ),
            (
                QuoteSource::BoardGoalClause,
                "with subtitles".into(),
                None,
                None
            ),
            (
                QuoteSource::BoardDoneWhenLine,
                "- under 60 s".into(),
                None,
                None
            ),
            (
                QuoteSource::BoardTicketDescriptionClause,
                "the opening shot".into(),
                None,
                t
            ),
            (
                QuoteSource::BoardDoneWhenLine,
                "- lit from the left".into(),
                None,
                t
            ),
        ]
    );
    let text = section(w, r.plan, false, None).unwrap();
    assert!(text.contains("on the flow board: with subtitles"), "{text}");
}

const ASKS: &str = r#"{"steps":[
    {"tool_calls":[{"name":"ask_user","arguments":{"question":"Which colour, blue or green?","options":[{"label":"blue"},{"label":"green"}]}}]},
    {"tool_calls":[{"name":"ask_user","arguments":{"question":"Which font?"}}]},
    {"text":"Going with it."}],"on_exhausted":"repeat_last"}"#;

#[tokio::test]
async fn answers_are_kept_as_answer_quotes_and_a_typed_answer_is_not_editable() {
    let w = world();
    let alpha = bot(&w, "Alpha", ASKS);
    let s = group(&w, &[alpha]);
    let t = thread_of(&w, s, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha paint the banner".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    // Answered by the card: the picks and the words, kept with the answer.
    let ask = ask_line(&w, s);
    w.collab
        .answer_ask(
            ask.id,
            troupe_collab::AnswerRequest {
                options: vec![0],
                text: Some("and a bold border".into()),
            },
        )
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    let kept = quotes_of_line(&w, ask.id);
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].source, QuoteSource::Answer);
    assert!(
        kept[0].body.contains("blue") && kept[0].body.contains("and a bold border"),
        "{:?}",
        kept[0]
    );
    assert_eq!(kept[0].session_id, Some(s));

    // Answered by typing: the line's quote is an answer's, and the line is not editable.
    let typed = w
        .collab
        .post_line(s, "the serif one".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    assert_eq!(quotes_of_line(&w, typed.id)[0].source, QuoteSource::Answer);
    assert!(matches!(
        w.collab.edit_line(typed.id, "the sans one".into()).await,
        Err(CollabError::Conflict { code: "not_editable", ref message }) if message.starts_with("answer:")
    ));
    assert_eq!(w.collab.line(typed.id).unwrap().body, "the serif one");
}

/// What `QuoteSituation` gives the segment holding the thread now.
fn quote_situation(w: &World, t: troupe_core::ThreadId) -> String {
    use troupe_engine::extension::{ContextContributor, ContextParts};
    let thread = w.collab.store().read(|tx| tx.thread(t)).unwrap();
    let mut parts = ContextParts::default();
    troupe_collab::QuoteSituation.contribute(&thread, w.collab.store(), &mut parts);
    parts.situation.join("\n")
}

/// Until a work segment of the Bot's on a job is live; answers its work item.
async fn live_job(
    w: &World,
    events: &mut tokio::sync::broadcast::Receiver<troupe_store::Event>,
    b: troupe_core::BotId,
) -> troupe_store::WorkItemRecord {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Some(j) = jobs(w, b)
                .into_iter()
                .find(|j| w.collab.engine().is_running(j.thread_id))
            {
                return j;
            }
            events.recv().await.unwrap();
        }
    })
    .await
    .expect("a job's segment went live")
}

/// A Bot that opens a job on "job four", then thinks for a long time (so a test can look).
const OPENS: &str = r#"{"steps":[{"text":"thinking","delay_ms":60000}],"on_exhausted":"repeat_last",
    "rules":[{"when_user_contains":"job four","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"four"}}}]}}]}"#;

#[tokio::test]
async fn uq_4_uq_5_the_job_s_first_segment_lists_nothing_a_later_one_the_person_s_words() {
    let w = world();
    let beta = bot(&w, "Beta", OPENS);
    let s = group(&w, &[beta]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Beta job four, about 60 seconds".into(), None)
        .await
        .unwrap();
    let first = live_job(&w, &mut events, beta).await;
    let plan = first.plan_id.unwrap();
    assert_eq!(quote_situation(&w, first.thread_id), "", "UQ-5");
    w.collab
        .engine()
        .stop(first.thread_id, troupe_engine::StopMode::Internal)
        .await
        .unwrap();
    let desk = thread_of(&w, s, beta);
    let _ = w
        .collab
        .engine()
        .stop(desk, troupe_engine::StopMode::Internal)
        .await;

    // Back to the job from the desk: a later segment on it reads the person's words.
    rescript(
        &w,
        beta,
        &format!(
            r#"{{"steps":[{{"text":"thinking","delay_ms":60000}}],"on_exhausted":"repeat_last",
            "rules":[{{"when_user_contains":"back to it","reply":{{"tool_calls":[{{"name":"work_on","arguments":{{"plan":"{plan}"}}}}]}}}}]}}"#
        ),
    );
    w.collab
        .post_line(s, "@Beta back to it, with subtitles".into(), None)
        .await
        .unwrap();
    let text = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            for t in [first.thread_id, desk] {
                let text = quote_situation(&w, t);
                if text.contains("back to it") {
                    return text;
                }
            }
            events.recv().await.unwrap();
        }
    })
    .await
    .expect("a later segment on the job read the person's words");
    assert!(text.starts_with("What the user said in this job"), "{text}");
    assert!(
        text.contains("in the group \"Team\": @Beta job four, about 60 seconds"),
        "{text}"
    );
    for t in [first.thread_id, desk] {
        let _ = w
            .collab
            .engine()
            .stop(t, troupe_engine::StopMode::Internal)
            .await;
    }
}

// UQ-13, END-3: a Bot still working on a line the person changes reads the change between
// steps, with the line's short id, and its ending says what it did with it.
#[tokio::test]
async fn uq_13_a_working_bot_reads_the_change_with_its_id_and_disposes_of_it() {
    let w = world();
    let b = bot(
        &w,
        "Ada",
        &format!(
            r##"{{"steps":[{{"tool_calls":[{GATE}]}},
                {{"text":"Green it is.","tool_calls":[{{"name":"end_turn","arguments":{{"reason":"answered",
                  "inbox":[{{"id":"#1","disposition":"adopted"}}]}}}}]}}]}}"##
        ),
    );
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    let mut events = w.collab.store().subscribe();
    let l = w
        .collab
        .post_line(s, "make the logo blue".into(), None)
        .await
        .unwrap();
    assert_eq!(l.id.0, 1, "the script disposes of #1");
    until(&mut events, "the turn holds at its gate", || at_gate(&w, t)).await;
    w.collab
        .edit_line(l.id, "make the logo green".into())
        .await
        .unwrap();
    let note = unread(&w, t, &format!("line:{}:edit:1:to:{}", l.id.0, b.0))
        .expect("the change waits for the working turn");
    assert_eq!(note.mode, troupe_core::inbox::InboxMode::Steer);
    assert!(
        note.text.starts_with("#1 You changed this line."),
        "{}",
        note.text
    );
    let workspace = w.collab.store().read(|tx| tx.thread(t)).unwrap().workspace;
    std::fs::write(std::path::Path::new(&workspace).join("go"), "").unwrap();
    runs_ended(&mut events, t, 1).await;
    let kept = w.collab.line_flow(l.id).unwrap().dispositions;
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].disposition.disposition, "adopted");
}
