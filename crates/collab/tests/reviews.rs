//! Reviews (digest 003-B §5) with scripted Bots in a group: a checked hand-over is queued to
//! the ticket's reviewer (another Bot, on another model unless the test says so), whose
//! `review` call is refused, kept waiting on the user, takes effect, or sends the work back.

mod deliverables;
mod support;

use deliverables::*;
use std::sync::Arc;
use support::*;
use troupe_collab::submissions::{Hooks, RequiredItems};
use troupe_core::review::Requirement;
use troupe_core::submission::{ApprovedBy, CheckSource, SubmissionState};
use troupe_core::ticket::TicketStage;
use troupe_core::words_check::Dimension;
use troupe_store::{
    CheckKind, NewCheck, ReviewResult, StoreError, SubmissionRecord, Tx, WordsStatus,
};

fn review_step(outcome: &str, verdicts: &str, note: &str) -> String {
    format!(
        r#"{{"tool_calls":[{{"name":"review","arguments":{{"submission_id":1,"verdicts":{verdicts},"outcome":"{outcome}","note":"{note}"}}}}]}}"#
    )
}

fn checker(steps: &[String]) -> String {
    format!(
        r#"{{"steps":[{}],"on_exhausted":"repeat_last"}}"#,
        steps.join(",")
    )
}

fn reviews_of(t: &Team) -> Vec<troupe_store::ReviewRecord> {
    t.store()
        .read(|tx| tx.reviews_of_submission(troupe_core::SubmissionId(1)))
        .unwrap()
}

/// T8: the producer never reviews its own hand-over.
#[tokio::test]
async fn producer_never_reviews() {
    let submit = r#"{"tool_calls":[{"name":"submit","arguments":{"artifacts":["01-Poster/poster.png"],"continue":true}}]}"#;
    let own = review_step("approve", "[]", "looks fine to me");
    let t = Team::new(
        &maker(&[submit, &own, TEXT_DONE]),
        Some(&checker(&[r#"{"text":"I will look at it."}"#.into()])),
        &[("Poster", Some(0), Some(1))],
    );
    t.ask("@Maker make the poster").await;
    t.wait_until_maker_ended().await;
    let calls = t.maker_calls("review");
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0].result.contains("own_submission"),
        "{}",
        calls[0].result
    );
    assert!(reviews_of(&t).is_empty(), "nothing was recorded");
    let s = &t.subs()[0];
    assert_eq!(s.state, SubmissionState::InReview, "queued to its reviewer");
    assert_eq!(t.ticket(0).stage, TicketStage::InReview);
    // What a desk's `review` reads before sending the Bot to its job: a review waits for the
    // Checker there, none for the Maker (its own hand-over).
    let waits = |b| t.store().read(|tx| tx.review_waits_for(t.s, b)).unwrap();
    assert!(waits(t.checker.unwrap()));
    assert!(!waits(t.maker));
}

/// S-R1 (simplified): a reviewer on the maker's model passes an item the user said twice
/// (an unconfirmed offer) → `review.awaiting_user`; the maker is told nothing.
#[tokio::test]
async fn s_r1_same_model_pass_awaits_user() {
    let approve = review_step(
        "approve",
        r#"[{"requirement_id":"ck_1","verdict":"pass","evidence":"ffprobe says 107 s"}]"#,
        "good cut",
    );
    let t = Team::build(
        Hooks::default(),
        &maker(&[SUBMIT_POSTER, TEXT_DONE]),
        Some((
            "maker-model",
            &checker(&[approve, r#"{"text":"Reviewed."}"#.into()]),
        )),
        &[("Poster", Some(0), Some(1))],
    );
    let plan = t.plan;
    t.store()
        .write(|tx| {
            tx.create_check(&NewCheck {
                dimension: Some(Dimension::RunningTime),
                status: Some(WordsStatus::Offer),
                said_count: 2,
                min: Some(108.0),
                max: Some(132.0),
                ..NewCheck::new(plan, CheckKind::Words, CheckSource::Words)
            })
        })
        .unwrap();
    t.ask("@Maker make the poster").await;
    let subs = t
        .wait_for("the approve waits on the user", |s| {
            s.first()
                .is_some_and(|s| s.state == SubmissionState::AwaitingUser)
        })
        .await;
    let r = &subs[0].reviews;
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].result, ReviewResult::AwaitingUser);
    assert!(r[0].same_model, "{:?}", r[0]);
    assert_eq!(r[0].verdicts[0].requirement_id, "ck_1");
    assert!(t.kinds().iter().any(|k| k == "review_awaiting_user"));
    assert_eq!(subs[0].approved_by, None);
    // The maker is told nothing: no line reaches its work from the review.
    t.wait_until_maker_ended().await;
    let j = job(&t.w, t.maker).unwrap();
    let told = t
        .store()
        .read(|tx| tx.messages(j.thread_id, None, u32::MAX))
        .unwrap()
        .into_iter()
        .any(|m| {
            m.delivery_key
                .as_deref()
                .is_some_and(|k| k.starts_with("review"))
        });
    assert!(!told);
}

/// A picture item, as the ledger will give one.
struct PictureItem;

impl RequiredItems for PictureItem {
    fn requirements(
        &self,
        _tx: &Tx<'_>,
        _sub: &SubmissionRecord,
    ) -> Result<Vec<Requirement>, StoreError> {
        Ok(vec![Requirement {
            id: "picture".into(),
            said_count: 1,
            about_picture: true,
            user_backed: false,
        }])
    }
}

/// S-R6: a picture item passed without reading an image of the job after the hand-over is
/// refused and nothing changes; after a read the same approve takes effect.
#[tokio::test]
async fn s_r6_picture_item_needs_a_read() {
    let approve = review_step(
        "approve",
        r#"[{"requirement_id":"picture","verdict":"pass","evidence":"the colours match the brief"}]"#,
        "",
    );
    let read =
        r#"{"tool_calls":[{"name":"read_file","arguments":{"path":"01-Poster/poster.png"}}]}"#;
    let hooks = Hooks {
        required: Arc::new(PictureItem),
        ..Hooks::default()
    };
    let t = Team::build(
        hooks,
        &maker(&[SUBMIT_POSTER, TEXT_DONE]),
        Some((
            "checker-model",
            &checker(&[
                approve.clone(),
                read.into(),
                approve,
                r#"{"text":"Approved."}"#.into(),
            ]),
        )),
        &[("Poster", Some(0), Some(1))],
    );
    t.ask("@Maker make the poster").await;
    let subs = t
        .wait_for("approved by its reviewer", |s| {
            s.first()
                .is_some_and(|s| s.state == SubmissionState::Approved)
        })
        .await;
    let r = &subs[0].reviews;
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(r[0].result, ReviewResult::Refused);
    assert!(r[0].reasons[0].contains("read_file"), "{:?}", r[0].reasons);
    assert_eq!(r[1].result, ReviewResult::Recorded);
    assert!(!r[1].same_model);
    assert_eq!(subs[0].approved_by, Some(ApprovedBy::Reviewer));
    assert_eq!(subs[0].approved_by_bot_id, t.checker);
    let ticket = t.ticket(0);
    assert_eq!(ticket.stage, TicketStage::Approved);
    assert_eq!(ticket.approved_by_bot_id, Some(t.maker));
    let kinds = t.kinds();
    let refused = kinds.iter().position(|k| k == "review_refused").unwrap();
    let viewed = kinds.iter().position(|k| k == "artifact_viewed").unwrap();
    let approved = kinds
        .iter()
        .position(|k| k == "submission_approved")
        .unwrap();
    assert!(refused < viewed && viewed < approved, "{kinds:?}");
    let checker_calls = t.calls(t.checker.unwrap(), "review");
    assert!(
        checker_calls[0].result.contains("refused"),
        "{}",
        checker_calls[0].result
    );
}

/// §5.3 step 5: a reject sends the ticket back and wakes its producer with the note.
#[tokio::test]
async fn reject_sends_back_with_note() {
    let reject = review_step(
        "reject",
        r#"[{"requirement_id":"title","verdict":"fail","evidence":"the title is 12 px"}]"#,
        "Make the title bigger",
    );
    let t = Team::new(
        &maker(&[
            SUBMIT_POSTER,
            TEXT_DONE,
            r#"{"text":"On it: a bigger title."}"#,
        ]),
        Some(&checker(&[reject, r#"{"text":"Sent back."}"#.into()])),
        &[("Poster", Some(0), Some(1))],
    );
    t.ask("@Maker make the poster").await;
    t.wait_for("sent back", |s| {
        s.first()
            .is_some_and(|s| s.state == SubmissionState::Rework)
    })
    .await;
    assert_eq!(t.ticket(0).stage, TicketStage::Rework);
    t.wait_until_runs(t.maker, 2).await;
    let j = job(&t.w, t.maker).unwrap();
    let note = t
        .store()
        .read(|tx| tx.messages(j.thread_id, None, u32::MAX))
        .unwrap()
        .into_iter()
        .find(|m| {
            m.delivery_key
                .as_deref()
                .is_some_and(|k| k.starts_with("review:"))
        })
        .expect("the maker heard the review");
    assert!(
        note.text().contains("Make the title bigger"),
        "{}",
        note.text()
    );
    assert!(
        said(&t.w, t.s, "On it: a bigger title."),
        "the maker was woken"
    );
    assert_eq!(reviews_of(&t)[0].result, ReviewResult::Recorded);
}
