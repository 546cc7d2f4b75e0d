//! The conversation layer over a real engine and store, with scripted Bots.

use std::sync::Arc;
use troupe_collab::{
    BotPatch, Collab, CollabError, NewBotRequest, NewSessionRequest, SessionProjector, SharedRoles,
};
use troupe_core::SessionId;
use troupe_core::conversation::{Author, LineStatus};
use troupe_core::thread::EndpointSpec;
use troupe_engine::{Engine, RoleTable};

struct World {
    collab: Collab,
    dir: tempfile::TempDir,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::testing::open_in(dir.path(), Arc::new(troupe_core::SystemClock));
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let engine = Engine::builder(store, roles.clone())
        .message_observer(Arc::new(SessionProjector::default()))
        .build();
    let collab = Collab::new(engine, roles, dir.path().join("workspaces"));
    World { collab, dir }
}

fn script(w: &World, name: &str, json: &str) -> EndpointSpec {
    let path = w.dir.path().join(format!("{name}.json"));
    std::fs::write(&path, json).unwrap();
    EndpointSpec {
        kind: "scripted".into(),
        base_url: None,
        model: "s".into(),
        api_key_env: None,
        script: Some(path.display().to_string()),
        takes_pictures: false,
        thinking_levels: Vec::new(),
        max_output_tokens: None,
    }
}

fn bot(w: &World, name: &str, endpoint: EndpointSpec) -> troupe_core::BotId {
    w.collab
        .create_bot(NewBotRequest {
            name: name.into(),
            persona: None,
            endpoint: Some(endpoint),
        })
        .unwrap()
        .id
}

fn direct(w: &World, bot: troupe_core::BotId) -> SessionId {
    w.collab
        .create_session(NewSessionRequest {
            workspace: None,
            kind: "direct".into(),
            bot_ids: vec![bot],
            title: None,
        })
        .unwrap()
        .session
        .id
}

/// Post a line and wait until the turn it starts (or joins) has ended.
async fn say(w: &World, s: SessionId, text: &str) {
    w.collab.post_line(s, text.into(), None).await.unwrap();
    let t = w.collab.direct_thread(s).unwrap();
    w.collab.engine().wait_idle(t).await;
}

async fn settle(w: &World, s: SessionId) {
    let t = w.collab.direct_thread(s).unwrap();
    w.collab.engine().wait_idle(t).await;
}

#[tokio::test]
async fn a_user_line_reaches_the_bot_and_its_reply_becomes_a_line() {
    let w = world();
    let b = bot(
        &w,
        "Ada",
        script(&w, "ada", r#"{"steps":[{"text":"Hello, person."}]}"#),
    );
    let s = direct(&w, b);
    say(&w, s, "hi Ada").await;
    assert_eq!(w.collab.lines(s, None, 1).unwrap()[0].author, Author::User);
    let lines = w.collab.lines(s, None, 100).unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1].author, Author::Bot);
    assert_eq!(lines[1].bot_id, Some(b));
    assert_eq!(lines[1].body, "Hello, person.");
    assert_eq!(lines[1].status, LineStatus::Done);
    let turns = w.collab.turns(s, 10).unwrap();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].status, "completed");
    assert_eq!(lines[1].turn_id, Some(turns[0].id));
}

/// A reply the output cap ended is posted as said, and a system line under it tells the
/// person it was cut off and what to do; a reply that ended by itself gets none.
#[tokio::test]
async fn a_reply_cut_off_by_the_output_cap_is_said_to_be_cut_off() {
    let w = world();
    let b = bot(
        &w,
        "Ada",
        script(
            &w,
            "ada",
            r#"{"steps":[{"text":"The three causes are: first, the","finish":"length"},{"text":"All of it."}]}"#,
        ),
    );
    let s = direct(&w, b);
    say(&w, s, "why did it fail?").await;
    let lines = w.collab.lines(s, None, 100).unwrap();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[1].body, "The three causes are: first, the");
    assert_eq!(lines[2].author, Author::System);
    assert_eq!(
        lines[2].body,
        "Ada's reply above was cut off: it reached the most its model may write in one reply. \
         Ask it to go on, or raise max_output_tokens on its endpoint."
    );
    say(&w, s, "go on").await;
    let lines = w.collab.lines(s, None, 100).unwrap();
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[4].body, "All of it.");
}

#[tokio::test]
async fn a_line_sent_while_the_bot_works_joins_its_running_turn() {
    let w = world();
    let slow = r#"{"steps":[{"text":"a long first answer that streams slowly","chunks":20,"chunk_delay_ms":20},{"text":"and the second"}]}"#;
    let b = bot(&w, "Slow", script(&w, "slow", slow));
    let s = direct(&w, b);
    let mut stream = w.collab.engine().subscribe_stream();
    w.collab.post_line(s, "first".into(), None).await.unwrap();
    // Wait until the Bot is visibly answering the first line.
    while !matches!(
        stream.recv().await.unwrap(),
        troupe_engine::StreamNotice::TextDelta { .. }
    ) {}
    let t = w.collab.direct_thread(s).unwrap();
    assert!(w.collab.engine().is_running(t));
    w.collab.post_line(s, "second".into(), None).await.unwrap();
    settle(&w, s).await;
    let bodies: Vec<String> = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .map(|l| l.body)
        .collect();
    assert_eq!(
        bodies,
        [
            "first",
            "second",
            "a long first answer that streams slowly",
            "and the second"
        ]
    );
    assert_eq!(
        w.collab.turns(s, 10).unwrap().len(),
        1,
        "the second line joined the running turn"
    );
}

#[tokio::test]
async fn a_failed_model_call_shows_in_the_conversation_and_the_next_line_works() {
    let w = world();
    let b = bot(
        &w,
        "Flaky",
        script(
            &w,
            "flaky",
            r#"{"steps":[{"error":{"kind":"auth","status":401,"message":"bad key"}}],"rules":[{"when_user_contains":"again","reply":{"text":"fine now"}}]}"#,
        ),
    );
    let s = direct(&w, b);
    say(&w, s, "hello").await;
    let lines = w.collab.lines(s, None, 100).unwrap();
    let failed = lines.last().unwrap();
    assert_eq!(failed.status, LineStatus::Failed);
    assert!(
        failed.body.contains("401") && failed.body.contains("scripted"),
        "{}",
        failed.body
    );
    assert_eq!(
        w.collab
            .session_view(s)
            .unwrap()
            .paused
            .unwrap()
            .reason
            .as_str(),
        "failed"
    );
    say(&w, s, "again").await;
    assert_eq!(
        w.collab.lines(s, None, 100).unwrap().last().unwrap().body,
        "fine now"
    );
}

#[tokio::test]
async fn stop_ends_a_running_turn_and_keeps_the_partial_reply() {
    let w = world();
    let b = bot(
        &w,
        "Talker",
        script(
            &w,
            "talk",
            r#"{"steps":[{"text":"one two three four five six seven eight nine ten","chunks":10,"chunk_delay_ms":200}]}"#,
        ),
    );
    let s = direct(&w, b);
    assert!(matches!(
        w.collab.stop(s).await,
        Err(CollabError::Conflict {
            code: "not_running",
            ..
        })
    ));
    let mut events = w.collab.engine().subscribe_stream();
    w.collab.post_line(s, "talk".into(), None).await.unwrap();
    // Wait for the first streamed words.
    loop {
        if let troupe_engine::StreamNotice::TextDelta { .. } = events.recv().await.unwrap() {
            break;
        }
    }
    let run = w.collab.stop(s).await.unwrap();
    assert_eq!(run.status.as_str(), "stopped");
    let last = w.collab.lines(s, None, 100).unwrap().pop().unwrap();
    assert_eq!(last.status, LineStatus::Interrupted);
    assert!("one two three four five six seven eight nine ten".starts_with(&last.body));
}

#[tokio::test]
async fn bot_names_are_unique_case_insensitively_and_patches_rebind_threads() {
    let w = world();
    let b = bot(&w, "Ada", script(&w, "a", r#"{"steps":[{"text":"x"}]}"#));
    let dup = w.collab.create_bot(NewBotRequest {
        name: "ada".into(),
        persona: None,
        endpoint: None,
    });
    assert!(matches!(dup, Err(CollabError::Invalid(m)) if m.contains("already exists")));
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    w.collab
        .update_bot(
            b,
            BotPatch {
                persona: Some("Speak like a pirate.".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let agent = w.collab.store().read(|tx| tx.thread(t)).unwrap().agent;
    assert!(agent.system_prompt.contains("Speak like a pirate."));
    // Archived: leaves the list, history stays, no new conversations.
    w.collab.archive_bot(b).unwrap();
    assert!(w.collab.bots().unwrap().is_empty());
    let err = w.collab.create_session(NewSessionRequest {
        workspace: None,
        kind: "direct".into(),
        bot_ids: vec![b],
        title: None,
    });
    assert!(matches!(err, Err(CollabError::Invalid(_))));
    assert_eq!(w.collab.session_view(s).unwrap().session.bot_ids, vec![b]);
}

#[tokio::test]
async fn the_demo_bot_is_offered_only_when_no_model_is_configured() {
    let w = world();
    let demo = w.collab.ensure_demo_bot(w.dir.path()).unwrap().unwrap();
    assert!(demo.scripted && demo.name.contains("scripted"));
    // Idempotent.
    assert_eq!(
        w.collab.ensure_demo_bot(w.dir.path()).unwrap().unwrap().id,
        demo.id
    );
    let s = direct(&w, demo.id);
    say(&w, s, "hello there").await;
    let reply = w.collab.lines(s, None, 10).unwrap().pop().unwrap();
    assert!(reply.body.contains("scripted demo"), "{}", reply.body);

    let other = world();
    other
        .collab
        .set_role(
            "default",
            EndpointSpec {
                kind: "openai".into(),
                base_url: Some("http://127.0.0.1:9/v1".into()),
                model: "m".into(),
                api_key_env: None,
                script: None,
                takes_pictures: false,
                thinking_levels: Vec::new(),
                max_output_tokens: None,
            },
        )
        .unwrap();
    assert!(
        other
            .collab
            .ensure_demo_bot(other.dir.path())
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn invalid_requests_are_refused_with_what_is_wrong_and_write_nothing() {
    let w = world();
    let b = bot(&w, "Ada", script(&w, "a", r#"{"steps":[{"text":"x"}]}"#));
    let two = w.collab.create_session(NewSessionRequest {
        workspace: None,
        kind: "direct".into(),
        bot_ids: vec![b, b],
        title: None,
    });
    assert!(matches!(two, Err(CollabError::Invalid(m)) if m.contains("named twice")));
    let group = w.collab.create_session(NewSessionRequest {
        workspace: None,
        kind: "grop".into(),
        bot_ids: vec![b],
        title: None,
    });
    assert!(matches!(group, Err(CollabError::Invalid(m)) if m.contains("unknown session kind")));
    assert!(w.collab.sessions(50).unwrap().is_empty());
    let s = direct(&w, b);
    assert!(matches!(
        w.collab.post_line(s, "  ".into(), None).await,
        Err(CollabError::Invalid(_))
    ));
    assert!(w.collab.lines(s, None, 10).unwrap().is_empty());
    let bad_role = w.collab.set_role(
        "reviewer",
        EndpointSpec {
            kind: "openai".into(),
            base_url: None,
            model: "m".into(),
            api_key_env: None,
            script: None,
            takes_pictures: false,
            thinking_levels: Vec::new(),
            max_output_tokens: None,
        },
    );
    assert!(matches!(bad_role, Err(CollabError::Invalid(m)) if m.contains("unknown role")));
}
