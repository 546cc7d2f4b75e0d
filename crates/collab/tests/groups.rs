//! Groups, Bot↔Bot directs, mentions, the lead, judgements and asks over a real engine and
//! store, with scripted Bots and the collab tools registered.

mod support;

use std::time::Duration;
use support::*;
use troupe_collab::{AnswerRequest, CollabError, LeadRequest, NewSessionRequest};
use troupe_core::SessionId;
use troupe_core::conversation::{Author, LineKind, SessionKind};

fn bodies(w: &World, s: SessionId) -> Vec<(Author, String)> {
    w.collab
        .lines(s, None, 1000)
        .unwrap()
        .into_iter()
        .map(|l| (l.author, l.body))
        .collect()
}

const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;

#[tokio::test]
async fn routing_lead_alone_gets_an_unaddressed_line() {
    let w = world();
    let alpha = bot(&w, "Alpha", r#"{"steps":[{"text":"On it."}]}"#);
    let beta = bot(&w, "Beta", QUIET);
    let s = group(&w, &[alpha, beta]);
    w.collab
        .set_lead(
            s,
            LeadRequest {
                bot_id: Some(alpha),
                confirmed: Some(true),
            },
        )
        .unwrap();
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(s, "plan the launch".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, s, alpha), 1).await;
    let to: Vec<_> = w
        .collab
        .store()
        .read(|tx| tx.line_deliveries(line.id))
        .unwrap();
    assert_eq!(to.len(), 1);
    assert_eq!((to[0].bot_id, to[0].how.as_str()), (alpha, "lead"));
    assert_eq!(runs(&w, thread_of(&w, s, beta)), 0, "Beta only reads it");
    // Beta still reads the line, with its next model call.
    let inbox = w
        .collab
        .store()
        .read(|tx| tx.inbox(thread_of(&w, s, beta)))
        .unwrap();
    assert!(inbox.iter().any(|i| i.text.contains("plan the launch")));
    let view = w.collab.session_view(s).unwrap();
    assert!(view.members.iter().any(|m| m.bot_id == alpha && m.is_lead));
    // Woken later, Beta reads what it only heard, in order, with the line for it last.
    w.collab
        .post_line(s, "@Beta your part now".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, s, beta), 1).await;
    let seen = w
        .collab
        .store()
        .read(|tx| tx.messages(thread_of(&w, s, beta), None, 100))
        .unwrap();
    let first = format!("{:?}", seen[0].parts);
    let (a, b, c) = (
        first.find("plan the launch").unwrap(),
        first.find("On it.").unwrap(),
        first.find("your part now").unwrap(),
    );
    assert!(a < b && b < c, "{first}");
}

#[tokio::test]
async fn a_bot_mention_wakes_the_named_bot() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[{"text":"@Beta can you check the numbers in report.md?"},{"text":"thanks"}]}"#,
    );
    let beta = bot(&w, "Beta", r#"{"steps":[{"text":"@Alpha 收到,已对齐"}]}"#);
    let s = group(&w, &[alpha, beta]);
    w.collab
        .set_lead(
            s,
            LeadRequest {
                bot_id: Some(alpha),
                confirmed: Some(true),
            },
        )
        .unwrap();
    let mut for_alpha = w.collab.store().subscribe();
    let mut for_beta = w.collab.store().subscribe();
    w.collab.post_line(s, "start".into(), None).await.unwrap();
    runs_ended(&mut for_beta, thread_of(&w, s, beta), 1).await;
    // Beta's nod answers a question, not a nod: it is more than a nod to a nod, so Alpha hears
    // it as work and answers once more.
    runs_ended(&mut for_alpha, thread_of(&w, s, alpha), 2).await;
    assert_eq!(runs(&w, thread_of(&w, s, beta)), 1);
    let lines = bodies(&w, s);
    let expect = [
        "start",
        "@Beta can you check the numbers in report.md?",
        "@Alpha 收到,已对齐",
        "thanks",
    ];
    let said: Vec<&str> = lines.iter().map(|(_, b)| b.as_str()).collect();
    assert_eq!(said, expect);
}

#[tokio::test]
async fn nod_to_a_nod_wakes_nobody() {
    let w = world();
    // Alpha acknowledges Beta; Beta's answer to that is a bare nod, which must not wake Alpha.
    let alpha = bot(&w, "Alpha", r#"{"steps":[{"text":"@Beta got it"}]}"#);
    let beta = bot(&w, "Beta", r#"{"steps":[{"text":"@Alpha 收到,已对齐"}]}"#);
    let s = group(&w, &[alpha, beta]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha go".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, s, beta), 1).await;
    w.collab.engine().wait_idle(thread_of(&w, s, alpha)).await;
    assert_eq!(
        runs(&w, thread_of(&w, s, alpha)),
        1,
        "the nod to a nod woke nobody"
    );
    let suppressed = w
        .collab
        .store()
        .read(|tx| tx.session_events_after(troupe_core::EventId(0), s, 1000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "mention_nod_suppressed")
        .count();
    assert_eq!(suppressed, 1);
}

#[tokio::test]
async fn a_mention_pulls_a_roster_bot_in_before_delivery() {
    let w = world();
    let alpha = bot(&w, "Alpha", QUIET);
    let gamma = bot(&w, "Gamma Ray", r#"{"steps":[{"text":"Here."}]}"#);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Gamma Ray please join us".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, s, gamma), 1).await;
    let view = w.collab.session_view(s).unwrap();
    assert!(view.session.bot_ids.contains(&gamma));
    let lines = bodies(&w, s);
    let joined = lines
        .iter()
        .position(|(a, b)| *a == Author::System && b == "Gamma Ray joined");
    let reply = lines.iter().position(|(_, b)| b == "Here.");
    assert!(joined.is_some() && joined < reply, "{lines:?}");
    assert_eq!(runs(&w, thread_of(&w, s, alpha)), 0);
}

#[tokio::test]
async fn unknown_mention_refused_once() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[
            {"tool_calls":[{"name":"send_message","arguments":{"text":"@Zed look"}}]},
            {"tool_calls":[{"name":"send_message","arguments":{"text":"@Zed look"}}]},
            {"text":"done"}]}"#,
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha ping Zed".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, s, alpha), 1).await;
    let turn = w.collab.turns(s, 10).unwrap().remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(turn.id)).unwrap();
    assert_eq!(calls.len(), 2);
    assert!(
        calls[0].result.contains("unknown_mention"),
        "{}",
        calls[0].result
    );
    assert!(
        calls[0].result.contains("Alpha"),
        "the refusal lists the names"
    );
    assert!(!calls[1].result.contains("unknown_mention"));
    let lines = bodies(&w, s);
    assert_eq!(lines.iter().filter(|(_, b)| b == "@Zed look").count(), 1);
    assert!(
        lines
            .iter()
            .any(|(a, b)| *a == Author::System && b.contains("@Zed"))
    );
}

#[tokio::test]
async fn a_pair_direct_line_wakes_the_other_side() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[{"tool_calls":[{"name":"create_direct","arguments":{"to":"Beta","text":"can you draft the intro?"}}]},{"text":"asked Beta"}]}"#,
    );
    let beta = bot(&w, "Beta", r#"{"steps":[{"text":"Draft: Hello world."}]}"#);
    let s = group(&w, &[alpha, beta]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha get an intro".into(), None)
        .await
        .unwrap();
    let pair = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let e = events.recv().await.unwrap();
            if e.kind == "session_created" {
                return SessionId(e.session_id.unwrap().0);
            }
        }
    })
    .await
    .unwrap();
    runs_ended(&mut events, thread_of(&w, pair, beta), 1).await;
    let view = w.collab.session_view(pair).unwrap();
    assert_eq!(view.session.kind, SessionKind::BotDirect);
    assert_eq!(view.session.origin_session_id, Some(s));
    assert_eq!(view.session.opened_by_bot_id, Some(alpha));
    let lines = bodies(&w, pair);
    assert_eq!(lines[0].1, "can you draft the intro?");
    assert!(lines.iter().any(|(_, b)| b == "Draft: Hello world."));
    // The person reads it but cannot post in it.
    assert!(matches!(
        w.collab.post_line(pair, "hi".into(), None).await,
        Err(CollabError::Conflict {
            code: "not_a_member",
            ..
        })
    ));
}

#[tokio::test]
async fn routing_without_lead_asks_judgement_and_only_joiners_work() {
    let w = world();
    let joins = r#"{"steps":[{"text":"I can help."}],
        "rules":[{"when_user_contains":"troupe-judgement","reply":{"text":"{\"join\": true}"}}]}"#;
    let sits = r#"{"steps":[{"text":"me too"}],
        "rules":[{"when_user_contains":"troupe-judgement","reply":{"text":"{\"join\": false}"}}]}"#;
    let junk = r#"{"steps":[{"text":"me too"}],
        "rules":[{"when_user_contains":"troupe-judgement","reply":{"text":"sure, why not"}}]}"#;
    let a = bot(&w, "Alpha", joins);
    let b = bot(&w, "Beta", sits);
    let c = bot(&w, "Gamma", junk);
    let s = group(&w, &[a, b, c]);
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(s, "who can help with taxes".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, s, a), 1).await;
    assert_eq!(runs(&w, thread_of(&w, s, b)), 0, "sat out");
    assert_eq!(
        runs(&w, thread_of(&w, s, c)),
        0,
        "junk is no reply and no work"
    );
    let judged = w.collab.store().read(|tx| tx.judgements(line.id)).unwrap();
    assert_eq!(judged, vec![(a, Some(true)), (b, Some(false)), (c, None)]);
}

#[tokio::test]
async fn only_live_member_answers_an_unaddressed_line_without_judgement() {
    let w = world();
    // It would sit out if asked: a Bot alone in a group is not asked, the line is said to it.
    let lone = r#"{"steps":[{"text":"On it."}],
        "rules":[{"when_user_contains":"troupe-judgement","reply":{"text":"{\"join\": false}"}}]}"#;
    let a = bot(&w, "Alpha", lone);
    let s = group(&w, &[a]);
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(s, "write a short note".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, s, a), 1).await;
    assert!(bodies(&w, s).iter().any(|(_, b)| b == "On it."));
    let judged = w.collab.store().read(|tx| tx.judgements(line.id)).unwrap();
    assert!(judged.is_empty(), "nobody was asked to judge: {judged:?}");
}

#[tokio::test]
async fn an_ask_answered_resumes_the_bot_and_keeps_its_one_answer() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[
            {"tool_calls":[{"name":"ask_user","arguments":{"question":"Which account should I deploy to?","options":[{"label":"staging"},{"label":"production"}]}}]},
            {"text":"Deploying to staging."}]}"#,
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha deploy it".into(), None)
        .await
        .unwrap();
    let t = thread_of(&w, s, alpha);
    runs_ended(&mut events, t, 1).await;
    let ask = ask_line(&w, s);
    let member = w.collab.members(s).unwrap().remove(0);
    assert_eq!(member.state, "waiting_ask");
    // Bad answers are refused and change nothing.
    for (bad, what) in [
        (
            AnswerRequest {
                options: vec![],
                text: None,
            },
            "needs",
        ),
        (
            AnswerRequest {
                options: vec![5],
                text: None,
            },
            "not one of",
        ),
        (
            AnswerRequest {
                options: vec![0, 1],
                text: None,
            },
            "single choice",
        ),
    ] {
        let e = w.collab.answer_ask(ask.id, bad).await.unwrap_err();
        assert!(
            matches!(&e, CollabError::Invalid(m) if m.contains(what)),
            "{e:?}"
        );
    }
    w.collab
        .answer_ask(
            ask.id,
            AnswerRequest {
                options: vec![0],
                text: Some("and tag it".into()),
            },
        )
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    let again = w
        .collab
        .answer_ask(
            ask.id,
            AnswerRequest {
                options: vec![1],
                text: None,
            },
        )
        .await;
    assert!(matches!(
        again,
        Err(CollabError::Conflict {
            code: "already_answered",
            ..
        })
    ));
    let answered = w.collab.store().read(|tx| tx.line(ask.id)).unwrap();
    let a = answered.ask.unwrap().answer.unwrap();
    assert_eq!(
        (a.options, a.text.as_deref()),
        (vec![0], Some("and tag it"))
    );
    assert!(
        bodies(&w, s)
            .iter()
            .any(|(_, b)| b == "Deploying to staging.")
    );
}

#[tokio::test]
async fn a_plain_line_while_a_bot_waits_on_its_ask_is_the_answer() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[
            {"tool_calls":[{"name":"ask_user","arguments":{"question":"Which option?","options":[{"label":"A"},{"label":"B"}]}}]},
            {"text":"Using B, shorter."}]}"#,
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha go".into(), None)
        .await
        .unwrap();
    let t = thread_of(&w, s, alpha);
    runs_ended(&mut events, t, 1).await;
    let line = w
        .collab
        .post_line(s, "use option B but shorter".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    let ask = ask_line(&w, s);
    let answer = ask.ask.unwrap().answer.unwrap();
    assert_eq!(answer.text.as_deref(), Some("use option B but shorter"));
    let to = w
        .collab
        .store()
        .read(|tx| tx.line_deliveries(line.id))
        .unwrap();
    assert_eq!(to[0].how, "ask_answer");
}

#[tokio::test]
async fn a_stopped_turns_ask_takes_no_answer() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[{"tool_calls":[{"name":"ask_user","arguments":{"question":"Which?"}}]},{"text":"x"}]}"#,
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha go".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, s, alpha), 1).await;
    // The Bot only waits on its ask: Stop ends that wait and answers with the asking turn.
    let stopped = w.collab.stop_turns(s, None).await.unwrap();
    assert_eq!(stopped.len(), 1);
    assert_eq!(Some(stopped[0].id), ask_line(&w, s).turn_id);
    let ask = ask_line(&w, s);
    let r = w
        .collab
        .answer_ask(
            ask.id,
            AnswerRequest {
                options: vec![],
                text: Some("this".into()),
            },
        )
        .await;
    assert!(
        matches!(
            r,
            Err(CollabError::Conflict {
                code: "ask_closed",
                ..
            })
        ),
        "{r:?}"
    );
}

#[tokio::test]
async fn ask_user_bad_arguments_are_tool_errors_and_store_nothing() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[{"tool_calls":[{"name":"ask_user","arguments":{"question":"  ","options":[]}}]},
                     {"tool_calls":[{"name":"ask_user","arguments":{"question":"Pick","options":[{"label":"Other"}]}}]},
                     {"text":"fine"}]}"#,
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha go".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, s, alpha), 1).await;
    let turn = w.collab.turns(s, 10).unwrap().remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(turn.id)).unwrap();
    assert!(calls[0].result.contains("question"), "{}", calls[0].result);
    assert!(calls[1].result.contains("Other"), "{}", calls[1].result);
    assert!(
        w.collab
            .lines(s, None, 100)
            .unwrap()
            .iter()
            .all(|l| l.kind != LineKind::Ask)
    );
}

#[tokio::test]
async fn members_and_leads_are_validated() {
    let w = world();
    let a = bot(&w, "Alpha", QUIET);
    let b = bot(&w, "Beta", QUIET);
    let c = bot(&w, "Gamma", QUIET);
    let s = group(&w, &[a, b]);
    // Adding a present Bot is a no-op.
    assert!(!w.collab.add_member(s, a).unwrap());
    assert!(w.collab.add_member(s, c).unwrap());
    let lead = |bot_id, confirmed| LeadRequest { bot_id, confirmed };
    assert!(matches!(
        w.collab.set_lead(s, lead(Some(a), None)),
        Err(CollabError::Invalid(_))
    ));
    w.collab.set_lead(s, lead(Some(a), Some(true))).unwrap();
    assert_eq!(w.collab.lead(s).unwrap().lead, Some(a));
    w.collab.set_lead(s, lead(Some(b), Some(true))).unwrap();
    assert_eq!(
        w.collab.lead(s).unwrap().lead,
        Some(b),
        "one lead per group"
    );
    // Removing the lead clears it; the last Bot cannot leave.
    w.collab.remove_member(s, b).await.unwrap();
    assert_eq!(w.collab.lead(s).unwrap().lead, None);
    w.collab.remove_member(s, c).await.unwrap();
    assert!(matches!(
        w.collab.remove_member(s, a).await,
        Err(CollabError::Conflict {
            code: "last_member",
            ..
        })
    ));
    // An archived Bot cannot lead; a non-member is refused.
    w.collab.archive_bot(c).unwrap();
    assert!(matches!(
        w.collab.set_lead(s, lead(Some(b), Some(true))),
        Err(CollabError::Invalid(_))
    ));
    // A group of repeated or archived Bots, or a bot_direct, is refused.
    for (ids, kind) in [
        (vec![a, a], "group"),
        (vec![c], "group"),
        (vec![a], "bot_direct"),
    ] {
        let r = w.collab.create_session(NewSessionRequest {
            workspace: None,
            kind: kind.into(),
            bot_ids: ids,
            title: None,
        });
        assert!(matches!(r, Err(CollabError::Invalid(_))), "{r:?}");
    }
}

#[tokio::test]
async fn the_situation_names_the_members_the_lead_and_the_mention_rules() {
    use troupe_engine::extension::{ContextContributor, ContextParts};
    let w = world();
    let a = bot(&w, "Alpha", QUIET);
    let b = bot(&w, "Beta", QUIET);
    let s = group(&w, &[a, b]);
    w.collab
        .set_lead(
            s,
            LeadRequest {
                bot_id: Some(a),
                confirmed: Some(true),
            },
        )
        .unwrap();
    let situation = |bot| {
        let t = w
            .collab
            .store()
            .read(|tx| tx.thread(thread_of(&w, s, bot)))
            .unwrap();
        let mut parts = ContextParts::default();
        troupe_collab::ConversationSituation.contribute(&t, w.collab.store(), &mut parts);
        parts.situation.join("\n")
    };
    let alpha = situation(a);
    assert!(
        alpha.contains("Beta") && alpha.contains("You lead it"),
        "{alpha}"
    );
    assert!(alpha.contains("@Name"));
    let beta = situation(b);
    assert!(
        beta.contains("Alpha (lead)") && !beta.contains("You lead it"),
        "{beta}"
    );
}

#[tokio::test]
async fn membership_refuses_a_turn_to_a_bot_that_left() {
    let w = world();
    let a = bot(&w, "Alpha", QUIET);
    let b = bot(&w, "Beta", QUIET);
    let s = group(&w, &[a, b]);
    let t = thread_of(&w, s, b);
    w.collab.remove_member(s, b).await.unwrap();
    w.collab
        .engine()
        .deliver(t, troupe_core::inbox::Delivery::user_task("still there?"))
        .await
        .unwrap();
    w.collab
        .engine()
        .request_drive(t, "test", false)
        .await
        .unwrap();
    assert_eq!(runs(&w, t), 0, "a departed Bot takes no turn here");
}

/// Alpha nods to Beta ("@Beta got it"); Beta answers in words the lists do not know as a nod,
/// so the Bot-line reading decides whether Alpha wakes. Alpha's later turns say "done".
fn nod_back_world(reader: Option<&str>) -> (World, SessionId, troupe_core::BotId) {
    let w = world();
    if let Some(answer) = reader {
        let text = serde_json::to_string(answer).unwrap();
        let spec = script(
            &w,
            "reader",
            &format!(
                r#"{{"steps":[{{"text":"{{\"control\":\"neither\"}}"}}],"on_exhausted":"repeat_last",
                    "rules":[{{"when_user_contains":"troupe-reader:bot","reply":{{"text":{text}}}}}]}}"#
            ),
        );
        w.collab.set_role("reading", spec).unwrap();
    }
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[{"text":"@Beta got it"},{"text":"done"}],"on_exhausted":"repeat_last"}"#,
    );
    let beta = bot(
        &w,
        "Beta",
        r#"{"steps":[{"text":"@Alpha sounds good, I'll take it from here"}]}"#,
    );
    let s = group(&w, &[alpha, beta]);
    (w, s, alpha)
}

/// Wait for the first event of one of `kinds`.
async fn nod_event(
    events: &mut tokio::sync::broadcast::Receiver<troupe_store::Event>,
    kinds: &[&str],
) -> troupe_store::Event {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let e = events.recv().await.unwrap();
            if kinds.contains(&e.kind.as_str()) {
                return e;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {kinds:?} event in 20 s"))
}

#[tokio::test]
async fn nod_read_as_bare_status_wakes_nobody() {
    // MEN-8: the lists cannot call Beta's line a nod; the reader says bare_status, so Alpha,
    // whose nod woke Beta's turn, is not woken — it only hears the line.
    let (w, s, alpha) = nod_back_world(Some(
        r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":true,"asks_ok_only":false}"#,
    ));
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha go".into(), None)
        .await
        .unwrap();
    let e = nod_event(&mut events, &["mention_nod_suppressed"]).await;
    assert_eq!(e.payload["bot_id"], alpha.0);
    assert_eq!(e.payload["read"], true);
    let ta = thread_of(&w, s, alpha);
    w.collab.engine().wait_idle(ta).await;
    assert_eq!(runs(&w, ta), 1, "the nod read as bare woke Alpha");
    let line = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .find(|l| l.body.starts_with("@Alpha sounds good"))
        .unwrap();
    assert!(
        w.collab
            .store()
            .read(|tx| tx.line_deliveries(line.id))
            .unwrap()
            .is_empty(),
        "delivered to nobody as work"
    );
    let heard = w.collab.store().read(|tx| tx.inbox(ta)).unwrap();
    assert!(heard.iter().any(|i| i.text.contains("take it from here")));
    // The reading is kept with the turn: asked again, the stored one answers.
    let kept = w
        .collab
        .read_bot_text(line.turn_id.unwrap(), &line.body, "@Beta got it")
        .await
        .unwrap();
    assert!(kept.by_model && kept.reading.bare_status);
}

#[tokio::test]
async fn nod_read_as_more_than_a_nod_wakes_the_bot() {
    let (w, s, alpha) = nod_back_world(Some(
        r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":false,"asks_ok_only":false}"#,
    ));
    let mut events = w.collab.store().subscribe();
    let ta = thread_of(&w, s, alpha);
    w.collab
        .post_line(s, "@Alpha go".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, ta, 2).await;
    let line = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .find(|l| l.body.starts_with("@Alpha sounds good"))
        .unwrap();
    let to = w
        .collab
        .store()
        .read(|tx| tx.line_deliveries(line.id))
        .unwrap();
    assert_eq!(to.len(), 1);
    assert_eq!((to[0].bot_id, to[0].how.as_str()), (alpha, "mention"));
    // Its second turn read the line once, as the line for it (the heard copy gave way).
    let seen = w
        .collab
        .store()
        .read(|tx| tx.messages(ta, None, 100))
        .unwrap();
    let copies = seen
        .iter()
        .filter(|m| format!("{:?}", m.parts).contains("take it from here"))
        .count();
    assert_eq!(copies, 1);
}

#[tokio::test]
async fn nod_reader_failure_falls_back_to_the_list_and_wakes() {
    // No reading model: the fixed list decides, and it found more than a nod — Alpha wakes.
    let (w, s, alpha) = nod_back_world(None);
    let mut events = w.collab.store().subscribe();
    let ta = thread_of(&w, s, alpha);
    w.collab
        .post_line(s, "@Alpha go".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, ta, 2).await;
    let all = w
        .collab
        .store()
        .read(|tx| tx.session_events_after(troupe_core::EventId(0), s, 1000))
        .unwrap();
    assert!(all.iter().any(|e| e.kind == "mention_nod_reading"));
    assert!(!all.iter().any(|e| e.kind == "mention_nod_suppressed"));
    let line = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .find(|l| l.body.starts_with("@Alpha sounds good"))
        .unwrap();
    // What was read is the word lists' reading (no model made it), kept with the turn.
    let kept = w
        .collab
        .read_bot_text(line.turn_id.unwrap(), &line.body, "@Beta got it")
        .await
        .unwrap();
    assert!(!kept.by_model && !kept.reading.bare_status);
}
