//! The user's word on hand-overs waiting for it (digest 003-B §4.9, §5.4; C LR-8): the reader
//! of a person's line is shown the waiting hand-overs, numbered; those it lets through are
//! approved `by: user` with the line once their gates rerun, those it objects to go back.

mod deliverables;
mod support;

use deliverables::*;
use support::*;
use troupe_collab::submissions::Hooks;
use troupe_core::conversation::Author;
use troupe_core::submission::{ApprovedBy, SubmissionState};
use troupe_core::ticket::TicketStage;
use troupe_core::{SessionId, SubmissionId};
use troupe_store::{FilingSource, NewFiling, NewLine, SubmissionRecord};

/// A job with two tickets, both the Maker's and with no reviewer: each hand-over waits on the
/// user's word (no check of the user's backs it).
fn team() -> Team {
    Team::new(
        r#"{"steps":[{"text":"On it."}],"on_exhausted":"repeat_last"}"#,
        None,
        &[("Cut", Some(0), None), ("Poster", Some(0), None)],
    )
}

/// Hand ticket `i` over the way `submit` records it, and settle it: it waits on the word.
async fn hand_over(t: &Team, i: usize) -> SubmissionRecord {
    let path = format!("0{}-x/out.png", i + 1);
    let sub = hand_over_files(t, Hooks::default(), i, vec![file(&path, i)], Vec::new())
        .await
        .unwrap();
    assert_eq!(sub.state, SubmissionState::AwaitingUser, "{sub:?}");
    sub
}

fn sub(t: &Team, id: SubmissionId) -> SubmissionRecord {
    t.store().read(|tx| tx.submission(id)).unwrap()
}

/// The hand-overs the reader of `line` was shown, by number.
fn shown(t: &Team, line: troupe_core::SessionMessageId) -> Vec<i64> {
    let r =
        t.w.collab
            .line_readings(line)
            .unwrap()
            .into_iter()
            .find(|r| r.kind == "user")
            .expect("the line was read");
    r.reading["shown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

async fn say(t: &Team, at: SessionId, words: &str) -> troupe_core::SessionMessageId {
    t.w.collab
        .post_line(at, words.into(), None)
        .await
        .unwrap()
        .id
}

/// S-LR-4: two hand-overs shown as #1, #2; 「1 可以, 2 的颜色不对」 lets #1 through and sends
/// #2 back; a #3 that was never shown is ignored.
#[tokio::test]
async fn s_lr_4_one_let_through_one_sent_back_and_unshown_numbers_ignored() {
    let t = team();
    let cut = hand_over(&t, 0).await;
    let poster = hand_over(&t, 1).await;
    reader_says(
        &t.w,
        r#"{"control":"neither","only_control":false,"status_question":false,
            "objections":["2 的颜色不对"],"let_through":[1, 2, 3],"objected_to":[2]}"#,
    );
    let line = say(&t, t.s, "1 可以, 2 的颜色不对").await;
    assert_eq!(shown(&t, line), vec![cut.id.0, poster.id.0], "oldest first");
    t.wait_for("#1 approved, #2 back in rework", |s| {
        s.iter()
            .any(|s| s.id == cut.id && s.state == SubmissionState::Approved)
            && s.iter()
                .any(|s| s.id == poster.id && s.state == SubmissionState::Rework)
    })
    .await;
    let cut = sub(&t, cut.id);
    assert_eq!(cut.approved_by, Some(ApprovedBy::User));
    assert_eq!(cut.approved_message_id, Some(line));
    assert_eq!(t.ticket(0).stage, TicketStage::Approved);
    assert_eq!(t.ticket(1).stage, TicketStage::Rework);

    // UW6: logged with the line; the ticket's stage change names the user as its source.
    let events = t
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100_000))
        .unwrap();
    let approved = events
        .iter()
        .find(|e| e.kind == "submission_approved")
        .expect("submission_approved");
    assert_eq!(approved.payload["by"], "user");
    assert_eq!(approved.payload["message_id"], line.0);
    assert!(
        events.iter().any(|e| e.kind == "ticket_stage_changed"
            && e.payload["to"] == "approved"
            && e.payload["source"] == "user"),
        "a stage change with source user"
    );
    // Nothing is posted under the user's line.
    let lines = t.w.collab.lines(t.s, None, 200).unwrap();
    assert!(
        !lines.iter().any(|l| l.parent_id == Some(line)),
        "nothing under the user's line"
    );
}

/// UW5: a line no model could read lets nothing through, whatever the word lists see.
#[tokio::test]
async fn uw5_no_reading_lets_nothing_through() {
    let t = team();
    let cut = hand_over(&t, 0).await;
    reader_says(&t.w, "sure, looks fine to me");
    let line = say(&t, t.s, "可以").await;
    assert_eq!(shown(&t, line), vec![cut.id.0]);
    // The routing of the line is done once it is routed; the hand-over still waits.
    assert_eq!(
        t.w.collab.line(line).unwrap().routing.as_deref(),
        Some("routed")
    );
    assert_eq!(sub(&t, cut.id).state, SubmissionState::AwaitingUser);
}

/// UW1: in the user's direct with a Bot, only that Bot's hand-overs are shown, and only in a
/// conversation of the job; moving on there lets them through (UW2, the reader's call).
#[tokio::test]
async fn uw1_a_direct_shows_only_its_bots_hand_overs_in_the_jobs_conversations() {
    let t = team();
    let cut = hand_over(&t, 0).await;
    let other = bot(&t.w, "Other", r#"{"steps":[{"text":"Hi."}]}"#);
    let with_other = direct(&t.w, other);
    let with_maker = direct(&t.w, t.maker);
    reader_says(
        &t.w,
        r#"{"control":"neither","objections":[],"let_through":[1]}"#,
    );
    // Not a conversation of the job yet: nothing shown, nothing let through.
    let first = say(&t, with_maker, "now the flyer please").await;
    assert!(shown(&t, first).is_empty());
    assert_eq!(sub(&t, cut.id).state, SubmissionState::AwaitingUser);

    // The user spoke about the job there: it is the job's conversation now.
    t.store()
        .write(|tx| {
            let l = tx.insert_line(&NewLine::plain(
                with_maker,
                Author::User,
                "about the cut".into(),
            ))?;
            tx.file_line(&NewFiling {
                message_id: l.id,
                plan_id: t.plan,
                ticket_id: None,
                part_id: None,
                source: FilingSource::Reader,
                filed_by: "reader".into(),
                locked: false,
                primary: true,
            })
        })
        .unwrap();
    let elsewhere = say(&t, with_other, "1 is fine").await;
    assert!(shown(&t, elsewhere).is_empty(), "another Bot's direct");
    let line = say(&t, with_maker, "now the flyer please").await;
    assert_eq!(shown(&t, line), vec![cut.id.0]);
    t.wait_for("let through in the direct", |s| {
        s.iter()
            .any(|s| s.id == cut.id && s.state == SubmissionState::Approved)
    })
    .await;
    assert_eq!(sub(&t, cut.id).approved_message_id, Some(line));
}

/// UW1: at most the latest six are shown.
#[tokio::test]
async fn uw1_at_most_the_latest_six_are_shown() {
    let items: Vec<(String, Option<usize>, Option<usize>)> =
        (0..8).map(|i| (format!("T{i}"), Some(0), None)).collect();
    let items: Vec<_> = items.iter().map(|(n, o, r)| (n.as_str(), *o, *r)).collect();
    let t = Team::new(
        r#"{"steps":[{"text":"On it."}],"on_exhausted":"repeat_last"}"#,
        None,
        &items,
    );
    let mut subs = Vec::new();
    for i in 0..8 {
        subs.push(hand_over(&t, i).await.id.0);
    }
    reader_says(
        &t.w,
        r#"{"control":"neither","objections":[],"let_through":[]}"#,
    );
    let line = say(&t, t.s, "how is it going?").await;
    assert_eq!(shown(&t, line), subs[2..].to_vec());
}
