//! What a delegation covers (digest 003-A §3) over a real engine and store with scripted Bots:
//! the ticket and parts it names must be the job's (DEL-3), a deliverable on the caller's own
//! ticket with no part is refused naming both ways on (DEL-5, S-DEL-3), one naming parts is
//! answered only once they are all approved (DEL-14), and a recipient whose hand-over is in
//! review no longer owes it (DEL-16, S-DEL-1), words do not settle a review request while its
//! hand-over waits for review (DEL-17), and a helper's work question card goes where the
//! person is, not into the Bot↔Bot direct (WQ-1). The Lead's desk hears "@Lead we need a poster".

mod deliverables;
mod support;

use deliverables::*;
use support::*;
use troupe_core::delegation::{DelegationState, Expects};
use troupe_core::submission::SubmissionState;
use troupe_store::{DelegationRecord, ToolCallRecord};

/// The Lead's script: `first` when the person's line arrives, then `then` (step 1); a woken
/// job reads step 0.
fn lead(first: &str, then: &str) -> String {
    format!(
        r#"{{"steps":[{{"text":"Thanks."}},{{"tool_calls":[{then}]}},{{"text":"Asked."}}],
        "rules":[{{"when_user_contains":"need a poster","reply":{{"tool_calls":[{first}]}}}}]}}"#
    )
}

fn delegations(t: &Team) -> Vec<DelegationRecord> {
    t.store().read(|tx| tx.delegations_of_plan(t.plan)).unwrap()
}

/// The Lead's `delegate` calls at its desk in the group, in order.
fn lead_delegates(t: &Team) -> Vec<ToolCallRecord> {
    let desk = thread_of(&t.w, t.s, t.lead.unwrap());
    runs_of(&t.w, desk)
        .iter()
        .flat_map(|r| calls_of(&t.w, r.id))
        .filter(|c| c.name == "delegate")
        .collect()
}

async fn until_delegates(t: &Team, n: usize) -> Vec<ToolCallRecord> {
    let mut events = t.store().subscribe();
    until(&mut events, "the Lead's delegate calls", || {
        lead_delegates(t).len() >= n && !delegations(t).is_empty()
    })
    .await;
    lead_delegates(t)
}

/// Give ticket `i` its parts, numbered in order.
fn add_parts(t: &Team, i: usize, labels: &[&str]) {
    let labels: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
    t.store()
        .write(|tx| tx.add_parts(t.tickets[i], &labels))
        .unwrap();
}

const ASK_POSTER: &str =
    r#""to":"Maker","ask":"make the poster for the launch","expects":"deliverable""#;

#[tokio::test]
async fn del3_a_ticket_named_must_be_one_of_the_jobs_and_is_kept_with_the_request() {
    let t = Team::with_lead_script(
        &maker(&[TEXT_DONE]),
        &lead(
            &format!(r#"{{"name":"delegate","arguments":{{{ASK_POSTER},"ticket":9}}}}"#),
            &format!(r#"{{"name":"delegate","arguments":{{{ASK_POSTER},"ticket":2}}}}"#),
        ),
        None,
        &[("Slogans", Some(0), None), ("Poster", Some(0), None)],
    );
    t.ask("@Lead we need a poster").await;
    let calls = until_delegates(&t, 2).await;
    assert_eq!(calls[0].status, "error");
    assert!(
        calls[0].result.contains("not_on_plan")
            && calls[0].result.contains("#01 Slogans")
            && calls[0].result.contains("#02 Poster"),
        "the refusal names the job's tickets: {}",
        calls[0].result
    );
    assert_eq!(calls[1].status, "ok", "{}", calls[1].result);
    let d = delegations(&t);
    assert_eq!(d.len(), 1, "the refused call recorded nothing");
    assert_eq!(
        d[0].ticket_id,
        Some(t.tickets[1].0),
        "the request keeps the ticket it names (#02 is the Poster)"
    );
    let asked = t
        .store()
        .read(|tx| tx.work_item(d[0].recipient_work_item))
        .unwrap();
    assert_eq!(
        asked.ticket_id,
        Some(t.tickets[1].0),
        "the Maker's work on the request is on #02 (DEL-7)"
    );
}

#[tokio::test]
async fn del5_a_deliverable_on_the_callers_own_ticket_without_parts_is_refused_naming_both_ways() {
    let ask_words = r#"{"name":"delegate","arguments":{"to":"Maker","ask":"three slogan lines for the poster","expects":"answer"}}"#;
    let t = Team::with_lead_script(
        r#"{"steps":[{"text":"unused"}]}"#,
        &lead(
            &format!(r#"{{"name":"delegate","arguments":{{{ASK_POSTER}}}}}"#),
            ask_words,
        ),
        None,
        &[("Poster", Some(2), None)],
    );
    t.ask("@Lead we need a poster").await;
    let calls = until_delegates(&t, 2).await;
    let refusal = &calls[0].result;
    assert_eq!(calls[0].status, "error");
    assert!(refusal.contains("own_ticket"), "{refusal}");
    assert!(
        refusal.contains("plan_items") && refusal.contains("expects \"answer\""),
        "the refusal names both ways on: {refusal}"
    );
    assert_eq!(calls[1].status, "ok", "{}", calls[1].result);
    let d = delegations(&t);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].expects, Expects::Answer);
}

#[tokio::test]
async fn del3_parts_named_must_be_the_tickets() {
    let t = Team::with_lead_script(
        r#"{"steps":[{"text":"unused"}]}"#,
        &lead(
            &format!(r#"{{"name":"delegate","arguments":{{{ASK_POSTER},"parts":["Back"]}}}}"#),
            &format!(r#"{{"name":"delegate","arguments":{{{ASK_POSTER},"parts":["front"]}}}}"#),
        ),
        None,
        &[("Poster", Some(0), None)],
    );
    add_parts(&t, 0, &["Front", "Side"]);
    t.ask("@Lead we need a poster").await;
    let calls = until_delegates(&t, 2).await;
    assert_eq!(calls[0].status, "error");
    assert!(
        calls[0].result.contains("has no part \"Back\"")
            && calls[0].result.contains("1 Front, 2 Side"),
        "{}",
        calls[0].result
    );
    assert_eq!(calls[1].status, "ok", "{}", calls[1].result);
    let parts = t
        .store()
        .read(|tx| tx.parts_of_ticket(t.tickets[0]))
        .unwrap();
    let d = delegations(&t);
    assert_eq!(
        d[0].part_ids,
        vec![parts[0].id.0],
        "the part named, by its label"
    );
    assert_eq!(
        d[0].ticket_id,
        Some(t.tickets[0].0),
        "parts pin the ticket they belong to"
    );
}

/// DEL-3: a requirement named must be an entry in force for the work; none is here.
#[tokio::test]
async fn del3_requirements_named_must_apply_to_the_work() {
    let t = Team::with_lead_script(
        r#"{"steps":[{"text":"unused"}]}"#,
        &lead(
            &format!(
                r#"{{"name":"delegate","arguments":{{{ASK_POSTER},"requirement_ids":[99]}}}}"#
            ),
            &format!(r#"{{"name":"delegate","arguments":{{{ASK_POSTER}}}}}"#),
        ),
        None,
        &[("Poster", Some(0), None)],
    );
    t.ask("@Lead we need a poster").await;
    let calls = until_delegates(&t, 2).await;
    assert_eq!(calls[0].status, "error");
    assert!(
        calls[0].result.contains("requirement 99 does not apply")
            && calls[0].result.contains("the ones that do: none"),
        "{}",
        calls[0].result
    );
    assert_eq!(calls[1].status, "ok", "{}", calls[1].result);
    assert_eq!(delegations(&t)[0].requirement_ids, Vec::<i64>::new());
}

/// The Maker hands over the Side only: approved, it does not answer a request for the Front.
#[tokio::test]
async fn del14_a_request_naming_parts_waits_for_every_one_of_them() {
    let side = r#"{"tool_calls":[{"name":"submit","arguments":{"artifacts":["01-Poster/poster.png"],"parts":["Side"]}}]}"#;
    let t = Team::with_lead_script(
        &maker(&[side, TEXT_DONE]),
        &lead(
            &format!(r#"{{"name":"delegate","arguments":{{{ASK_POSTER},"parts":["Front"]}}}}"#),
            r#"{"name":"shell","arguments":{"command":"true"}}"#,
        ),
        None,
        &[("Poster", Some(0), None)],
    );
    add_parts(&t, 0, &["Front", "Side"]);
    t.ask("@Lead we need a poster").await;
    t.wait_for("the Side is approved", |s| {
        s.first()
            .is_some_and(|s| s.state == SubmissionState::Approved)
    })
    .await;
    let d = delegations(&t);
    assert_eq!(
        d[0].state,
        DelegationState::Open,
        "the Front it asked for is not approved yet"
    );
}

/// S-DEL-1: the Maker's hand-over is with the Checker; asked how it goes, its desk takes the
/// line to the job, where the Maker answers and ends — not sent back as still owing the request
/// it handed in for.
#[tokio::test]
async fn del16_a_request_whose_hand_over_is_in_review_is_not_owed() {
    let going = r#"{"when_user_contains":"how is the poster going","reply":{"tool_calls":[{"name":"work_on","arguments":{"plan":"plan_1"}}]}}"#;
    let maker_script = format!(
        r#"{{"steps":[{{"text":"unused"}},{SUBMIT_POSTER},{{"text":"unused"}},{{"text":"It is with the Checker for review."}}],
        "rules":[{going},{{"when_user_contains":"make the poster","reply":{{"tool_calls":[{WRITE_POSTER}]}}}}]}}"#
    );
    let t = Team::with_lead_script(
        &maker_script,
        &lead(
            &format!(r#"{{"name":"delegate","arguments":{{{ASK_POSTER}}}}}"#),
            r#"{"name":"shell","arguments":{"command":"true"}}"#,
        ),
        Some(r#"{"steps":[{"text":"I will look at it soon."}]}"#),
        &[("Poster", Some(0), Some(1))],
    );
    assert_eq!(t.plan.0, 1, "the Maker's desk script names plan_1");
    t.ask("@Lead we need a poster").await;
    t.wait_for("the poster is in review", |s| {
        s.first()
            .is_some_and(|s| s.state == SubmissionState::InReview)
    })
    .await;
    t.wait_until_maker_ended().await;
    let before = t.maker_runs();
    t.ask("@Maker how is the poster going?").await;
    t.wait_until_runs(t.maker, before + 1).await;
    let mut events = t.store().subscribe();
    until(&mut events, "the Maker answered", || {
        lines_said(&t.w, t.s)
            .iter()
            .any(|l| l == "It is with the Checker for review.")
    })
    .await;
    assert_eq!(
        t.bounces_of_maker("work_ending"),
        Vec::<String>::new(),
        "nothing is owed while the hand-over is in review"
    );
    assert_eq!(delegations(&t)[0].state, DelegationState::Open);
}

/// DEL-17 through a turn: the poster's hand-over waits for the Checker's formal review; asked
/// by the Lead to look it over, the Checker ends `answered` in words — which do not settle the
/// request while the hand-over in its reach waits (the review itself will, DEL-18).
#[tokio::test]
async fn del17_words_do_not_settle_a_review_request_while_its_hand_over_waits_for_review() {
    let checker = r#"{"steps":[{"text":"Noted."}],"on_exhausted":"repeat_last",
        "rules":[{"when_user_contains":"look over the poster","reply":{"tool_calls":[{"name":"end_turn",
            "arguments":{"reason":"answered","answer":"Looks good to me."}}]}}]}"#;
    let t = Team::with_lead_script(
        &maker(&[TEXT_DONE]),
        &lead(
            r#"{"name":"delegate","arguments":{"to":"Checker","ask":"look over the poster","expects":"review","ticket":1}}"#,
            r#"{"name":"shell","arguments":{"command":"true"}}"#,
        ),
        Some(checker),
        &[("Poster", Some(0), Some(1))],
    );
    std::fs::create_dir_all(format!("{}/01-Poster", t.folder)).unwrap();
    std::fs::write(format!("{}/01-Poster/poster.png", t.folder), "poster v1").unwrap();
    let sub = hand_over_files(
        &t,
        Default::default(),
        0,
        vec![file("01-Poster/poster.png", 1)],
        Vec::new(),
    )
    .await
    .unwrap();
    assert_eq!(sub.state, SubmissionState::InReview);
    t.ask("@Lead we need a poster review").await;
    let mut events = t.store().subscribe();
    // The Checker's work on the request, in its own thread.
    let asked = |t: &Team| {
        let item = delegations(t)[0].recipient_work_item;
        let thread = t.store().read(|tx| tx.work_item(item)).unwrap().thread_id;
        let calls: Vec<_> = runs_of(&t.w, thread)
            .iter()
            .flat_map(|r| calls_of(&t.w, r.id))
            .filter(|c| c.name == "end_turn")
            .collect();
        (thread, calls)
    };
    until(&mut events, "the Checker answered in words", || {
        !delegations(&t).is_empty() && !asked(&t).1.is_empty()
    })
    .await;
    let (thread, ended) = asked(&t);
    t.w.collab.engine().wait_idle(thread).await;
    assert_eq!(ended[0].status, "ok", "{}", ended[0].result);
    let d = delegations(&t);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        d[0].state,
        DelegationState::Open,
        "the hand-over still waits for its review"
    );
}

/// WQ-1: a helper asked through delegation speaks in the Bot↔Bot direct, where the person is
/// not; its work question card goes where the person is — the job's conversation — and the
/// answer there reaches the helper's work.
#[tokio::test]
async fn wq1_a_delegated_helpers_card_is_posted_where_the_person_is() {
    let blocked = r#"{"tool_calls":[{"name":"end_turn","arguments":{"reason":"blocked","needs_from_user":"the poster's size"}}]}"#;
    let maker_script = format!(
        r#"{{"steps":[{{"text":"unused"}},{blocked}],
        "rules":[{{"when_user_contains":"the person answered","reply":{{"text":"Thanks, A2 it is."}}}},
                 {{"when_user_contains":"make the poster","reply":{{"tool_calls":[{WRITE_POSTER}]}}}}]}}"#
    );
    let t = Team::with_lead_script(
        &maker_script,
        &lead(
            &format!(r#"{{"name":"delegate","arguments":{{{ASK_POSTER}}}}}"#),
            r#"{"name":"shell","arguments":{"command":"true"}}"#,
        ),
        None,
        &[("Poster", Some(0), None)],
    );
    t.ask("@Lead we need a poster").await;
    let mut events = t.store().subscribe();
    let card = || {
        t.w.collab
            .lines(t.s, None, 100)
            .unwrap()
            .into_iter()
            .find(|l| l.kind == troupe_core::conversation::LineKind::Ask)
    };
    until(&mut events, "the card is in the group", || card().is_some()).await;
    let card = card().unwrap();
    assert!(card.body.contains("the poster's size"), "{}", card.body);
    let pair = delegations(&t)[0].pair_session_id;
    assert!(
        t.w.collab
            .lines(pair, None, 100)
            .unwrap()
            .iter()
            .all(|l| l.kind != troupe_core::conversation::LineKind::Ask),
        "no card in the Bot↔Bot direct"
    );
    t.w.collab
        .work_answer(
            card.id,
            troupe_collab::WorkAnswerRequest {
                body: "A2".into(),
                request_id: "r1".into(),
            },
        )
        .await
        .unwrap();
    until(&mut events, "the Maker went on with the answer", || {
        let j = job(&t.w, t.maker).unwrap();
        t.store()
            .read(|tx| tx.messages(j.thread_id, None, 100))
            .unwrap()
            .iter()
            .any(|m| m.text() == "Thanks, A2 it is.")
    })
    .await;
}
