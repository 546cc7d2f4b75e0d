//! Hand-overs (digest 003-B §4) over a real engine and store with scripted Bots in a group:
//! `submit` and what refuses it, the approval with no reviewer, implicit hand-overs and words
//! at endings, supersession, T12, and a deliverable request answered by its approval. A Bot's
//! desk hears "@Maker make the poster" and its first effect (a rule's write_file) binds it to
//! the job, whose turn runs the same rule and then the script's steps.

mod deliverables;
mod support;

use deliverables::*;
use serde_json::json;
use support::*;
use troupe_core::submission::{ApprovedBy, SubmissionOrigin, SubmissionState};
use troupe_core::ticket::TicketStage;
use troupe_store::{CheckKind, NewCheck, NewCheckRun, RunOutcome};

/// S-SUB6: one ticket, one segment since the job opened: its file hand-over is approved
/// `by: one_go` as soon as its gates pass.
#[tokio::test]
async fn s_sub6_one_go() {
    let t = Team::new(
        &maker(&[SUBMIT_POSTER, TEXT_DONE]),
        None,
        &[("Poster", Some(0), None)],
    );
    t.ask("@Maker make the poster").await;
    let subs = t
        .wait_for("the hand-over is approved", |s| {
            s.first()
                .is_some_and(|s| s.state == SubmissionState::Approved)
        })
        .await;
    let s = &subs[0];
    assert_eq!(s.origin, SubmissionOrigin::Explicit);
    assert_eq!(s.approved_by, Some(ApprovedBy::OneGo));
    assert_eq!(s.files.len(), 1);
    assert_eq!(s.files[0].path, "01-Poster/poster.png");
    assert_eq!(s.files[0].size, "poster v1".len() as i64);
    let ticket = t.ticket(0);
    assert_eq!(ticket.stage, TicketStage::Approved);
    assert_eq!(ticket.approved_by_bot_id, Some(t.maker));
    // The stage moved with its source, and the events came in order.
    let kinds = t.kinds();
    let created = kinds
        .iter()
        .position(|k| k == "submission_created")
        .unwrap();
    let approved = kinds
        .iter()
        .position(|k| k == "submission_approved")
        .unwrap();
    assert!(created < approved, "{kinds:?}");
    let moves: Vec<(String, String)> = t
        .store()
        .read(|tx| tx.ticket_stage_changes(ticket.id))
        .unwrap()
        .into_iter()
        .filter(|c| c.part_id.is_none())
        .map(|c| (c.to, c.source))
        .collect();
    assert!(
        moves.contains(&("submitted".into(), "check".into())),
        "{moves:?}"
    );
    assert!(
        moves.contains(&("approved".into(), "check".into())),
        "{moves:?}"
    );
    // The file the segment had not cited was posted on a line of the Maker's.
    let cited = t
        .store()
        .read(|tx| tx.files_cited_under_plan(t.plan))
        .unwrap();
    assert_eq!(cited.len(), 1);
    assert_eq!(cited[0].sha256.as_deref(), Some(s.files[0].sha256.as_str()));
}

/// S-SUB4: the same paths and hashes as the ticket's last hand-over are `unchanged`.
#[tokio::test]
async fn s_sub4_same_bytes_unchanged() {
    let again = r#"{"tool_calls":[{"name":"submit","arguments":{"artifacts":["01-Poster/poster.png"],"continue":true}}]}"#;
    let t = Team::new(
        &maker(&[again, again, TEXT_DONE]),
        None,
        &[("Poster", Some(0), None), ("Slogan", Some(0), None)],
    );
    t.ask("@Maker make the poster").await;
    t.wait_until_maker_ended().await;
    let subs = t.subs();
    assert_eq!(subs.len(), 1, "the repeat made no hand-over");
    let calls = t.maker_calls("submit");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].status, "ok");
    assert!(calls[1].result.contains("unchanged"), "{}", calls[1].result);
}

/// S-SUB5: the organizer's passing check alone backs nothing: with no reviewer and no user
/// check the hand-over waits on the user's word.
#[tokio::test]
async fn s_sub5_organizer_check_alone_waits_on_user() {
    let t = Team::new(
        &maker(&[SUBMIT_POSTER, TEXT_DONE]),
        None,
        // Two tickets: not one-go.
        &[("Poster", Some(0), None), ("Slogan", Some(0), None)],
    );
    let ticket = t.ticket(0).id;
    let plan = t.plan;
    // A check's path is the workspace's: jobs/<job>/01-Poster/poster.png.
    let job_dir = std::path::Path::new(&t.folder);
    let rel = job_dir
        .strip_prefix(job_dir.parent().unwrap().parent().unwrap())
        .unwrap()
        .display()
        .to_string();
    t.store()
        .write(|tx| {
            let c = tx.create_check(&NewCheck {
                ticket_id: Some(ticket),
                path: Some(format!("{rel}/01-Poster/poster.png")),
                ..NewCheck::new(
                    plan,
                    CheckKind::FileExists,
                    troupe_core::submission::CheckSource::Organizer,
                )
            })?;
            tx.record_check_run(&NewCheckRun {
                check_id: c.id,
                submission_id: None,
                outcome: RunOutcome::Passed,
                detail: "exists".into(),
                output_tail: String::new(),
                measured: None,
                for_reference: false,
                started_at: tx.now(),
            })
        })
        .unwrap();
    t.ask("@Maker make the poster").await;
    let subs = t
        .wait_for("the hand-over waits on the user", |s| {
            s.first()
                .is_some_and(|s| s.state == SubmissionState::AwaitingUser)
        })
        .await;
    assert_eq!(subs[0].approved_by, None);
    assert!(t.kinds().iter().any(|k| k == "submission_awaiting_word"));
    assert_eq!(t.ticket(0).stage, TicketStage::Submitted);
}

/// S-SUB8, SP1: a newer hand-over of the ticket supersedes the undecided one.
#[tokio::test]
async fn s_sub8_newer_supersedes() {
    let submit = r#"{"tool_calls":[{"name":"submit","arguments":{"artifacts":["01-Poster/poster.png"],"continue":true}}]}"#;
    let rewrite = r#"{"tool_calls":[{"name":"write_file","arguments":{"path":"01-Poster/poster.png","content":"poster v2, with subtitles"}}]}"#;
    let t = Team::new(
        &maker(&[submit, rewrite, submit, TEXT_DONE]),
        None,
        &[("Poster", Some(0), None), ("Slogan", Some(0), None)],
    );
    t.ask("@Maker make the poster").await;
    t.wait_until_maker_ended().await;
    let subs = t.subs();
    assert_eq!(subs.len(), 2);
    let (newer, older) = (&subs[0], &subs[1]);
    assert_eq!(older.state, SubmissionState::Superseded);
    assert_eq!(older.superseded_by, Some(newer.id));
    assert_eq!(newer.state, SubmissionState::AwaitingUser);
    assert_ne!(newer.files[0].sha256, older.files[0].sha256);
    assert!(t.kinds().iter().any(|k| k == "submission_superseded"));
}

/// S-SUB2: a plain-text closing is never a words hand-over.
#[tokio::test]
async fn s_sub2_plain_text_is_no_words_hand_over() {
    let t = Team::new(
        &format!(
            r#"{{"steps":[{{"text":"unused"}},{{"text":"the master is cut"}}],
            "rules":[{{"when_user_contains":"make the poster","reply":{{"tool_calls":[{ECHO}]}}}}]}}"#
        ),
        None,
        &[("Master", Some(0), None)],
    );
    t.ask("@Maker make the poster").await;
    t.wait_until_maker_ended().await;
    assert!(t.subs().is_empty(), "no words hand-over");
    assert_ne!(t.ticket(0).stage, TicketStage::Approved);
}

/// S-SUB3 (W3): a bare acknowledgement is refused with `answer_not_deliverable`, no file
/// hint; the words themselves are handed over and wait on the user's word (W5).
#[tokio::test]
async fn s_sub3_bare_acknowledgement_refused() {
    let t = Team::new(
        &format!(
            r#"{{"steps":[{{"text":"unused"}},
                {{"tool_calls":[{{"name":"end_turn","arguments":{{"reason":"done","answer":"收到"}}}}]}},
                {{"text":"Three titles for the launch.","tool_calls":[{{"name":"end_turn","arguments":{{"reason":"done","answer":"1. Light Up the Night\n2. Every Spark Counts\n3. Made to Shine"}}}}]}},
                {{"text":"unused"}}],
            "rules":[{{"when_user_contains":"three titles","reply":{{"tool_calls":[{ECHO}]}}}}]}}"#
        ),
        None,
        &[("Titles", Some(0), None)],
    );
    t.ask("@Maker give me three titles").await;
    t.wait_until_maker_ended().await;
    let ends = t.maker_calls("end_turn");
    assert!(
        ends[0].result.contains("answer_not_deliverable"),
        "{}",
        ends[0].result
    );
    assert!(
        !ends[0].result.contains("submit"),
        "no file hint: {}",
        ends[0].result
    );
    let subs = t.subs();
    assert_eq!(subs.len(), 1);
    assert_eq!(subs[0].origin, SubmissionOrigin::Answer);
    assert!(
        subs[0]
            .content
            .as_deref()
            .unwrap()
            .contains("Every Spark Counts")
    );
    assert!(subs[0].files.is_empty());
    // W5: words are never approved by checks alone, even one-go.
    assert_eq!(subs[0].state, SubmissionState::AwaitingUser);
}

/// S-SUB7 (IS2): what a reviewer writes into the ticket's folder is notes, never a hand-over.
#[tokio::test]
async fn s_sub7_reviewer_notes_not_submitted() {
    let notes = r#"{"name":"write_file","arguments":{"path":"01-Poster/review-notes.md","content":"colours too dark"}}"#;
    let t = Team::new(
        &maker(&[TEXT_DONE]),
        Some(&format!(
            r#"{{"steps":[{{"text":"unused"}},{{"text":"Notes are in the folder."}}],
            "rules":[{{"when_user_contains":"look at the poster","reply":{{"tool_calls":[{notes}]}}}}]}}"#
        )),
        &[("Poster", Some(0), Some(1))],
    );
    t.ask("@Checker look at the poster").await;
    let checker = t.checker.unwrap();
    t.wait_until_ended(checker).await;
    assert!(
        std::path::Path::new(&t.folder)
            .join("01-Poster/review-notes.md")
            .exists(),
        "the notes were written"
    );
    assert!(
        t.subs().is_empty(),
        "no implicit hand-over of a reviewer's notes"
    );
}

/// IS1: the producer's new file in its ticket's folder is handed over at a prose ending.
#[tokio::test]
async fn is1_prose_ending_hands_over_new_files() {
    let t = Team::new(
        &maker(&[TEXT_DONE]),
        None,
        &[("Poster", Some(0), None), ("Slogan", Some(0), None)],
    );
    t.ask("@Maker make the poster").await;
    let subs = t
        .wait_for("an implicit hand-over waits on the user", |s| {
            s.first()
                .is_some_and(|s| s.state == SubmissionState::AwaitingUser)
        })
        .await;
    assert_eq!(subs[0].origin, SubmissionOrigin::Implicit);
    assert_eq!(subs[0].files[0].path, "01-Poster/poster.png");
}

/// T12 (S-T1): a segment that rewrites an approved ticket's files without submit is sent back
/// once, told the approved version is the old one, with every path it wrote; the ticket stays
/// approved and no implicit hand-over reopens it.
#[tokio::test]
async fn t12_change_to_approved_ticket_bounced_once() {
    let bigger = r#"{"name":"write_file","arguments":{"path":"01-Poster/poster.png","content":"poster v2, bigger title"}}"#;
    let t = Team::new(
        &format!(
            r#"{{"steps":[{{"text":"unused"}},{SUBMIT_POSTER},{{"text":"Here is the poster."}},
                {{"text":"unused"}},{{"text":"Made the title bigger."}},{{"text":"Still done."}}],
            "rules":[{{"when_user_contains":"title bigger","reply":{{"tool_calls":[{bigger}]}}}},
                     {{"when_user_contains":"make the poster","reply":{{"tool_calls":[{WRITE_POSTER}]}}}}]}}"#
        ),
        None,
        &[("Poster", Some(0), None)],
    );
    t.ask("@Maker make the poster").await;
    t.wait_for("approved", |s| {
        s.first()
            .is_some_and(|s| s.state == SubmissionState::Approved)
    })
    .await;
    t.wait_until_maker_ended().await;
    let before = t.maker_runs();
    t.ask("@Maker make the title bigger").await;
    t.wait_until_runs(t.maker, before + 1).await;
    let bounces = t.bounces_of_maker("approved_change");
    assert_eq!(bounces.len(), 1, "{bounces:?}");
    assert!(bounces[0].contains("submit"), "{}", bounces[0]);
    assert!(
        bounces[0].contains("01-Poster/poster.png"),
        "{}",
        bounces[0]
    );
    assert!(bounces[0].contains("old version"), "{}", bounces[0]);
    assert_eq!(t.ticket(0).stage, TicketStage::Approved);
    assert_eq!(t.subs().len(), 1, "no hand-over reopened it");
}

/// DEL-13/14: a deliverable request is answered when its hand-over is approved, with the
/// submission and its files; the sender is woken out of its wait.
#[tokio::test]
async fn deliverable_delegation_answered_on_approval() {
    let t = Team::with_lead(
        &maker(&[SUBMIT_POSTER, TEXT_DONE]),
        &[("Poster", Some(0), None)],
    );
    t.ask("@Lead we need a poster").await;
    let subs = t
        .wait_for("approved", |s| {
            s.first()
                .is_some_and(|s| s.state == SubmissionState::Approved)
        })
        .await;
    let lead = t.lead.unwrap();
    let d = t
        .store()
        .read(|tx| tx.delegations_of_plan(t.plan))
        .unwrap()
        .remove(0);
    assert_eq!(d.state, troupe_core::delegation::DelegationState::Replied);
    let result = d.result.unwrap();
    assert_eq!(result["submission_id"], json!(subs[0].id));
    assert_eq!(result["files"], json!(["01-Poster/poster.png"]));
    let lead_job = job(&t.w, lead).unwrap();
    assert!(
        delivered(
            &t.w,
            lead_job.thread_id,
            &format!("delegation_reply:{}", d.id.0)
        )
        .is_some()
            || unread(
                &t.w,
                lead_job.thread_id,
                &format!("delegation_reply:{}", d.id.0)
            )
            .is_some(),
        "the Lead heard the answer"
    );
}

/// Models name the ticket they hand over unasked: a `ticket` that is the work's own is taken,
/// another one is refused naming the ticket the files go to (it never chooses a ticket).
#[tokio::test]
async fn submit_takes_a_named_ticket_only_when_it_is_the_works_own() {
    let wrong = r#"{"tool_calls":[{"name":"submit","arguments":{"artifacts":["01-Poster/poster.png"],"ticket":2}}]}"#;
    let junk = r#"{"tool_calls":[{"name":"submit","arguments":{"artifacts":["01-Poster/poster.png"],"ticket":"the poster"}}]}"#;
    let right = r##"{"tool_calls":[{"name":"submit","arguments":{"artifacts":["01-Poster/poster.png"],"ticket":"#01"}}]}"##;
    let t = Team::new(
        &maker(&[wrong, junk, right, TEXT_DONE]),
        None,
        &[("Poster", Some(0), None)],
    );
    t.ask("@Maker make the poster").await;
    t.wait_for("the hand-over is approved", |s| {
        s.first()
            .is_some_and(|s| s.state == SubmissionState::Approved)
    })
    .await;
    let calls = t.maker_calls("submit");
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(calls[0].status, "error");
    assert!(
        calls[0].result.contains("go to ticket #01 \"Poster\"")
            && calls[0].result.contains("not #02"),
        "{}",
        calls[0].result
    );
    assert_eq!(calls[1].status, "error");
    assert!(
        calls[1].result.contains("give the ticket's number"),
        "{}",
        calls[1].result
    );
    assert_eq!(calls[2].status, "ok", "{}", calls[2].result);
    assert_eq!(t.subs().len(), 1, "only the matching call handed over");
}
