//! Delegation and the ending contract over a real engine and store, with scripted Bots: a desk
//! delegates (binding its job first), the other Bot answers in `end_turn`, and the sender is
//! woken with the answer; refusals, bounces and the budget.

mod support;

use support::*;

const LEAD: &str = r#"{"steps":[{"text":"unused"}],"rules":[
    {"when_user_contains":"answered your request","reply":{"text":"The slogan is: Fast and calm."}},
    {"when_user_contains":"ask beta","reply":{"tool_calls":[{"name":"delegate","arguments":{"to":"Beta","ask":"Write a four-word slogan.","expects":"answer"}}]}}
]}"#;

const HELPER: &str = r#"{"steps":[{"text":"unused"}],"rules":[
    {"when_user_contains":"asks you","reply":{"tool_calls":[{"name":"end_turn","arguments":{"reason":"answered","answer":"Fast and calm."}}]}}
]}"#;

#[tokio::test]
async fn answer_wakes_sender_priority_2() {
    let w = world();
    let alpha = bot(&w, "Alpha", LEAD);
    let beta = bot(&w, "Beta", HELPER);
    let s = group(&w, &[alpha, beta]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha ask Beta for the slogan".into(), None)
        .await
        .unwrap();
    until(&mut events, "the lead replied in the group", || {
        lines_said(&w, s)
            .iter()
            .any(|b| b == "The slogan is: Fast and calm.")
    })
    .await;
    let desk = thread_of(&w, s, alpha);
    assert_eq!(
        ends(&w, desk),
        vec!["delegated"],
        "the desk bound its job and delegated"
    );
    let plans = w.collab.plans(s).unwrap();
    assert_eq!(plans.len(), 1);
    let delegations = w.collab.plan_delegations(plans[0].id).unwrap();
    assert_eq!(delegations.len(), 1);
    let d = &delegations[0];
    assert_eq!((d.from_bot_id, d.to_bot_id), (alpha, beta));
    assert_eq!(d.state, "replied");
    assert_eq!(d.result.as_ref().unwrap()["text"], "Fast and calm.");
    assert!(!d.waiting && d.due_at.is_none());
    // The pair's direct shows the request and the answer, and only records.
    let pair = lines_said(&w, d.pair_session_id);
    assert!(
        pair[0].starts_with(&format!("Request {}", d.id)),
        "{pair:?}"
    );
    assert!(
        pair.iter()
            .any(|b| b.contains("Answer to") && b.contains("Fast and calm."))
    );
    // Beta's work answered; the lead's work was woken by the reply and is idle again.
    let beta_job = job(&w, beta).unwrap();
    assert_eq!(ends(&w, beta_job.thread_id), vec!["answered"]);
    let alpha_job = job(&w, alpha).unwrap();
    assert_eq!(alpha_job.state.as_str(), "idle");
    assert_eq!(alpha_job.waiting_on, None, "the answer voided the wait");
    let reply_mail = w
        .collab
        .store()
        .read(|tx| tx.messages(alpha_job.thread_id, None, 100))
        .unwrap()
        .into_iter()
        .find(|m| m.delivery_key.as_deref() == Some(&format!("delegation_reply:{}", d.id.0)[..]))
        .expect("the reply reached the lead's work on the job");
    assert!(reply_mail.text().contains("Fast and calm."));
}

/// The desk opens the job with `work_on`; the job's turn tries `work_on` again, delegates to an
/// unknown Bot and to one not present here, and ends `done`.
const REFUSED: &str = r#"{"steps":[
    {"text":"unused"},
    {"tool_calls":[{"name":"delegate","arguments":{"to":"Nobody","ask":"help","expects":"answer"}}]},
    {"tool_calls":[{"name":"delegate","arguments":{"to":"Gamma","ask":"help","expects":"answer"}}]},
    {"tool_calls":[{"name":"end_turn","arguments":{"reason":"done"}}]}],
  "rules":[{"when_user_contains":"slogan please","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"slogan"}}}]}}]}"#;

#[tokio::test]
async fn refused_delegate_not_a_bounce() {
    let w = world();
    let alpha = bot(&w, "Alpha", REFUSED);
    // Beta makes delegate an offer here (it is not offered to a Bot alone); Gamma is elsewhere.
    let beta = bot(&w, "Beta", r#"{"steps":[{"text":"ok"}]}"#);
    let _gamma = bot(&w, "Gamma", r#"{"steps":[{"text":"ok"}]}"#);
    let s = group(&w, &[alpha, beta]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha slogan please".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's turn ended", || {
        job(&w, alpha).is_some_and(|j| !ends(&w, j.thread_id).is_empty())
    })
    .await;
    let j = job(&w, alpha).unwrap();
    assert_eq!(
        ends(&w, j.thread_id),
        vec!["done"],
        "three refused calls, then done"
    );
    let run = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(j.thread_id, 1))
        .unwrap()
        .remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    let results: Vec<_> = calls
        .iter()
        .map(|c| (c.name.as_str(), c.result.clone()))
        .collect();
    assert!(results[0].1.contains("already working"), "{results:?}");
    assert!(results[1].1.contains("unknown_bot"), "{results:?}");
    assert!(results[2].1.contains("not_present"), "{results:?}");
    let seg = w
        .collab
        .store()
        .read(|tx| tx.segment_work(run.id))
        .unwrap()
        .unwrap();
    assert_eq!(
        seg.bounces, 0,
        "refused calls in a bound segment spend no budget (END-19)"
    );
}

/// From a desk, a delegate names a ticket (there are none yet) twice, then the turn ends.
const DESK_REFUSED: &str = r#"{"steps":[
    {"tool_calls":[{"name":"delegate","arguments":{"to":"Beta","ask":"test it","expects":"deliverable","ticket":1}}]},
    {"tool_calls":[{"name":"delegate","arguments":{"to":"Beta","ask":"test it","expects":"deliverable","ticket":1}}]},
    {"text":"I could not ask Beta."}]}"#;

/// A desk binds a job on its way to delegating; when the delegate is then refused, nothing it
/// did is kept: no job is opened by a refused call, however often the model repeats it.
#[tokio::test]
async fn a_refused_delegate_from_a_desk_opens_no_job() {
    let w = world();
    let alpha = bot(&w, "Alpha", DESK_REFUSED);
    let beta = bot(&w, "Beta", r#"{"steps":[{"text":"ok"}]}"#);
    let s = group(&w, &[alpha, beta]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha have Beta test add.py".into(), None)
        .await
        .unwrap();
    until(&mut events, "the desk replied", || {
        lines_said(&w, s)
            .iter()
            .any(|b| b == "I could not ask Beta.")
    })
    .await;
    let desk = thread_of(&w, s, alpha);
    let run = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(desk, 1))
        .unwrap()
        .remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    assert_eq!(calls.len(), 2);
    assert!(
        calls.iter().all(|c| c.result.contains("not_on_plan")),
        "{calls:?}"
    );
    assert!(w.collab.plans(s).unwrap().is_empty(), "no job was opened");
    assert!(job(&w, alpha).is_none());
}

/// Beta posts its verdict with send_message and ends `answered` without `answer`: bounced with
/// `unanswered_request`; it then answers.
const POSTS_INSTEAD: &str = r#"{"steps":[
    {"tool_calls":[{"name":"send_message","arguments":{"text":"Looks good to me."}},
                   {"name":"end_turn","arguments":{"reason":"answered"}}]},
    {"tool_calls":[{"name":"end_turn","arguments":{"reason":"answered","answer":"Looks good."}}]}]}"#;

#[tokio::test]
async fn review_posted_with_send_message_bounces_unanswered_request() {
    let w = world();
    let alpha = bot(&w, "Alpha", LEAD);
    let beta = bot(&w, "Beta", POSTS_INSTEAD);
    let s = group(&w, &[alpha, beta]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha ask Beta for the slogan".into(), None)
        .await
        .unwrap();
    until(&mut events, "the delegation was answered", || {
        w.collab
            .plans(s)
            .unwrap()
            .first()
            .and_then(|p| w.collab.plan_delegations(p.id).unwrap().pop())
            .is_some_and(|d| d.state == "replied")
    })
    .await;
    let beta_job = job(&w, beta).unwrap();
    let run = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(beta_job.thread_id, 1))
        .unwrap()
        .remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    let first_end = calls.iter().find(|c| c.name == "end_turn").unwrap();
    assert!(first_end.result.contains("answer"), "{}", first_end.result);
    let seg = w
        .collab
        .store()
        .read(|tx| tx.segment_work(run.id))
        .unwrap()
        .unwrap();
    assert_eq!(seg.bounces, 1, "the bounce counted against the budget");
    assert_eq!(ends(&w, beta_job.thread_id), vec!["answered"]);
    let d = w
        .collab
        .plan_delegations(w.collab.plans(s).unwrap()[0].id)
        .unwrap()
        .remove(0);
    assert_eq!(d.result.unwrap()["text"], "Looks good.");
}

#[tokio::test]
async fn archiving_the_recipient_cancels_and_wakes_the_sender_once() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[{"text":"unused"}],"rules":[
            {"when_user_contains":"was cancelled","reply":{"text":"Doing it myself."}},
            {"when_user_contains":"ask beta","reply":{"tool_calls":[{"name":"delegate","arguments":{"to":"Beta","ask":"A slogan.","expects":"answer"}}]}}
        ]}"#,
    );
    // Beta never answers: its work on the job hangs.
    let beta = bot(
        &w,
        "Beta",
        r#"{"steps":[{"text":"thinking","delay_ms":60000}],"on_exhausted":"repeat_last"}"#,
    );
    let s = group(&w, &[alpha, beta]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha ask Beta for the slogan".into(), None)
        .await
        .unwrap();
    until(&mut events, "Beta's work on the job started", || {
        job(&w, beta).is_some_and(|j| w.collab.engine().is_running(j.thread_id))
    })
    .await;
    w.collab.archive_bot(beta).unwrap();
    until(&mut events, "the lead went on by itself", || {
        lines_said(&w, s).iter().any(|b| b == "Doing it myself.")
    })
    .await;
    let plan = w.collab.plans(s).unwrap()[0].id;
    let d = w.collab.plan_delegations(plan).unwrap().remove(0);
    assert_eq!(d.state, "cancelled");
    assert!(
        d.result.unwrap()["reason"]
            .as_str()
            .unwrap()
            .contains("archived")
    );
    let alpha_job = job(&w, alpha).unwrap();
    assert_eq!(ends(&w, alpha_job.thread_id).len(), 1, "woken once");
    assert_eq!(alpha_job.waiting_on, None);
    let beta_job = job(&w, beta).unwrap();
    assert_eq!(beta_job.state.as_str(), "closed");
    until(&mut events, "Beta's turn was stopped", || {
        !w.collab.engine().is_running(beta_job.thread_id)
    })
    .await;
}

/// The conversation's first ask line (a work question card here), once there is one.
fn first_ask(
    w: &World,
    s: troupe_core::SessionId,
) -> Option<troupe_core::conversation::SessionMessage> {
    w.collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .find(|l| l.kind == troupe_core::conversation::LineKind::Ask)
}

/// The job needs something only the person has; their answer to the card wakes it.
const NEEDS_KEY: &str = r#"{"steps":[
    {"text":"unused"},
    {"tool_calls":[{"name":"end_turn","arguments":{"reason":"blocked","needs_from_user":"the staging API key"}}]}],
  "rules":[
    {"when_user_contains":"the person answered","reply":{"text":"Thanks, going on."}},
    {"when_user_contains":"deploy please","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"deploy"}}}]}}
  ]}"#;

/// The person answers the card with the key (request `r1`).
async fn answer_the_key(w: &World, card: &troupe_core::conversation::SessionMessage) {
    w.collab
        .work_answer(
            card.id,
            troupe_collab::WorkAnswerRequest {
                body: "sk-staging-123".into(),
                request_id: "r1".into(),
            },
        )
        .await
        .unwrap();
}

/// Alpha's job in a group, blocked on the staging API key: Alpha, the group and its card.
async fn blocked_on_the_key(
    w: &World,
) -> (
    troupe_core::BotId,
    troupe_core::SessionId,
    troupe_core::conversation::SessionMessage,
) {
    let alpha = bot(w, "Alpha", NEEDS_KEY);
    let s = group(w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha deploy please".into(), None)
        .await
        .unwrap();
    until(&mut events, "the work question card", || {
        first_ask(w, s).is_some()
    })
    .await;
    let j = job(w, alpha).unwrap();
    until(&mut events, "the job's turn ended blocked", || {
        ends(w, j.thread_id) == vec!["blocked"]
    })
    .await;
    (alpha, s, first_ask(w, s).unwrap())
}

#[tokio::test]
async fn blocked_leaves_a_work_question_whose_answer_wakes_the_work_once() {
    let w = world();
    let (alpha, s, card) = blocked_on_the_key(&w).await;
    let mut events = w.collab.store().subscribe();
    assert!(card.body.contains("the staging API key"), "{}", card.body);
    assert_eq!(job(&w, alpha).unwrap().state.as_str(), "blocked");
    // The person is told outside the conversation: one open notification on the card.
    let told = w.collab.notifications(false, 50).unwrap();
    assert_eq!(told.open_count, 1);
    let n = &told.notifications[0];
    assert_eq!(n.kind.as_str(), "waiting_for_answer");
    assert_eq!(n.message_id, Some(card.id));
    assert_eq!(n.body, "the staging API key");
    let answer = |request: &str| {
        w.collab.work_answer(
            card.id,
            troupe_collab::WorkAnswerRequest {
                body: "sk-staging-123".into(),
                request_id: request.into(),
            },
        )
    };
    answer("r1").await.unwrap();
    until(&mut events, "the work went on", || {
        lines_said(&w, s).iter().any(|b| b == "Thanks, going on.")
    })
    .await;
    // The same request again changes nothing; another one is refused.
    answer("r1").await.unwrap();
    match answer("r2").await {
        Err(troupe_collab::CollabError::Conflict { code, .. }) => {
            assert_eq!(code, "already_answered")
        }
        other => panic!("expected already_answered, got {other:?}"),
    }
    let j = job(&w, alpha).unwrap();
    assert_eq!(ends(&w, j.thread_id).len(), 2, "woken once by the answer");
    assert_eq!(j.waiting_on, None);
    // The answer resolved the notification (WQ-5); it cannot be dismissed any more.
    let after = w.collab.notifications(true, 50).unwrap();
    assert_eq!(after.open_count, 0);
    assert_eq!(
        after.notifications[0].resolution.as_deref(),
        Some("answered")
    );
    match w.collab.dismiss_notification(after.notifications[0].id) {
        Err(troupe_collab::CollabError::Conflict { code, .. }) => assert_eq!(code, "not_open"),
        other => panic!("expected not_open, got {other:?}"),
    }
}

const SOLO: &str = r#"{"steps":[
    {"tool_calls":[{"name":"delegate","arguments":{"to":"Helper","ask":"help","expects":"answer"}}]},
    {"tool_calls":[{"name":"create_direct","arguments":{"to":"Helper","text":"hello"}}]},
    {"text":"first done"},
    {"tool_calls":[{"name":"delegate","arguments":{"to":"Helper","ask":"help","expects":"answer"}}]},
    {"tool_calls":[{"name":"create_direct","arguments":{"to":"Helper","text":"hello"}}]},
    {"text":"second done"}]}"#;

/// A Bot alone is not offered the tools that need another Bot: `delegate` needs one in the
/// conversation, `create_direct` one anywhere (the built-in demo Bot aside).
#[tokio::test]
async fn tools_that_need_another_bot_are_not_offered_to_a_bot_alone() {
    let w = world();
    let solo = bot(&w, "Solo", SOLO);
    // The built-in demo Bot (scripted, under its name) is no one to open a direct with.
    w.collab
        .store()
        .write(|tx| {
            tx.create_bot(&troupe_store::NewBot {
                name: "Demo (scripted)".into(),
                persona: String::new(),
                endpoint: Some(script(&w, "demo", r#"{"steps":[{"text":"canned"}]}"#)),
                scripted: true,
            })
        })
        .unwrap();
    let s = direct(&w, solo);
    let t = thread_of(&w, s, solo);
    let results = |w: &World| -> Vec<String> {
        let run = w
            .collab
            .store()
            .read(|tx| tx.runs_for_thread(t, 1))
            .unwrap()
            .remove(0);
        let calls = w.collab.store().read(|tx| tx.tool_calls(run.id)).unwrap();
        calls.into_iter().map(|c| c.result).collect()
    };
    let mut events = w.collab.store().subscribe();
    w.collab.post_line(s, "hi".into(), None).await.unwrap();
    until(&mut events, "the first turn replied", || {
        lines_said(&w, s).iter().any(|b| b == "first done")
    })
    .await;
    let first = results(&w);
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(
        first.iter().all(|r| r.contains("is not available")),
        "{first:?}"
    );

    // Another Bot exists now, not in this direct: create_direct reaches it; delegate, which
    // asks only Bots present here, is still not offered.
    let _helper = bot(&w, "Helper", r#"{"steps":[{"text":"ok"}]}"#);
    w.collab.post_line(s, "again".into(), None).await.unwrap();
    until(&mut events, "the second turn replied", || {
        lines_said(&w, s).iter().any(|b| b == "second done")
    })
    .await;
    let second = results(&w);
    assert_eq!(second.len(), 2, "{second:?}");
    assert!(second[0].contains("is not available"), "{second:?}");
    assert!(!second[1].contains("not available"), "{second:?}");
    let directs = w
        .collab
        .sessions(50)
        .unwrap()
        .into_iter()
        .filter(|v| v.session.kind.as_str() == "bot_direct")
        .count();
    assert_eq!(directs, 1, "create_direct opened Solo ↔ Helper");
}

/// A desk that asks, then is given a plain line instead of an answer.
const ASKS_THEN_GOES_ON: &str = r#"{"steps":[{"text":"unused"}],"rules":[
    {"when_user_contains":"deploy please","reply":{"tool_calls":[{"name":"end_turn","arguments":{"reason":"blocked","needs_from_user":"the staging API key"}}]}},
    {"when_user_contains":"never mind","reply":{"text":"Going on without it."}},
    {"when_user_contains":"the person answered","reply":{"text":"Thanks, going on."}}
]}"#;

/// WQ-2/WQ-5 at a desk: a desk that ended blocked waits on the person (it does not close), so
/// their answer to its card is taken and wakes it.
#[tokio::test]
async fn a_desk_that_ended_blocked_takes_the_answer_to_its_card() {
    let w = world();
    let alpha = bot(&w, "Alpha", ASKS_THEN_GOES_ON);
    let s = direct(&w, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "deploy please".into(), None)
        .await
        .unwrap();
    let desk = thread_of(&w, s, alpha);
    until(&mut events, "the turn ended blocked", || {
        ends(&w, desk) == vec!["blocked"]
    })
    .await;
    let card = first_ask(&w, s).unwrap();
    answer_the_key(&w, &card).await;
    until(&mut events, "the desk went on with the answer", || {
        lines_said(&w, s).iter().any(|b| b == "Thanks, going on.")
    })
    .await;
}

/// WQ-8: a card the work went on without takes no answer — the page shows it closed, and an
/// answer sent to it anyway is refused `superseded`, not queued for work that moved on.
#[tokio::test]
async fn a_work_question_the_work_went_on_without_takes_no_answer() {
    let w = world();
    let alpha = bot(&w, "Alpha", ASKS_THEN_GOES_ON);
    let s = direct(&w, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "deploy please".into(), None)
        .await
        .unwrap();
    let card = || first_ask(&w, s);
    until(&mut events, "the work question card", || card().is_some()).await;
    let desk = thread_of(&w, s, alpha);
    until(&mut events, "the turn ended blocked", || {
        ends(&w, desk) == vec!["blocked"]
    })
    .await;
    assert_eq!(
        card().unwrap().ask.unwrap().closed_at,
        None,
        "open while it waits: {:?}",
        card()
    );
    w.collab
        .post_line(s, "never mind, go on".into(), None)
        .await
        .unwrap();
    until(&mut events, "the Bot went on", || {
        lines_said(&w, s)
            .iter()
            .any(|b| b == "Going on without it.")
    })
    .await;
    until(&mut events, "its segment ended", || {
        ends(&w, desk).len() == 2
    })
    .await;
    let ask = card().unwrap().ask.unwrap();
    assert!(ask.closed_at.is_some());
    assert_eq!(ask.closed_why.as_deref(), Some("superseded"));
    match w
        .collab
        .work_answer(
            card().unwrap().id,
            troupe_collab::WorkAnswerRequest {
                body: "sk-staging-123".into(),
                request_id: "r1".into(),
            },
        )
        .await
    {
        Err(troupe_collab::CollabError::Conflict { code, .. }) => assert_eq!(code, "superseded"),
        other => panic!("expected superseded, got {other:?}"),
    }
    assert_eq!(ends(&w, desk).len(), 2, "nothing was woken by it");
}

/// HOLD-L2 over WQ-6: the person stopped Alpha while its job waited on their answer;
/// answering the card is their word to it — the stop is lifted and the work goes on — and the
/// answer is kept as the person's words on the job (WQ-5).
#[tokio::test]
async fn answering_a_work_question_lifts_the_stop_on_its_bot() {
    let w = world();
    let (alpha, s, card) = blocked_on_the_key(&w).await;
    let mut events = w.collab.store().subscribe();
    let (h, _) = w
        .collab
        .post_hold(support::holds::bot_stop(alpha))
        .await
        .unwrap();
    answer_the_key(&w, &card).await;
    until(&mut events, "the work went on", || {
        lines_said(&w, s).iter().any(|b| b == "Thanks, going on.")
    })
    .await;
    assert_eq!(
        w.collab.hold(h.hold.id).unwrap().hold.status,
        troupe_core::hold::HoldStatus::Lifted
    );
    let quotes = w
        .collab
        .store()
        .read(|tx| tx.quotes_of_line(card.id))
        .unwrap();
    assert!(
        quotes.iter().any(|q| q.body == "sk-staging-123"),
        "{quotes:?}"
    );
}
