//! Runtime Boss provisioning scenarios (digest §8.9, 1 and 3–6): `ensure`, the briefing, the
//! persona's re-briefing, and `open` from Settings — a real engine and store, the model a queue.

mod support;

use support::{World, user_texts, world, world_on};
use troupe_channels::{ChannelDef, ChannelKind, FilterRules};
use troupe_core::SessionId;
use troupe_core::inbox::InboxMode;
use troupe_core::runtime_boss::{BOT_NAME, Persona, RuntimeSettingsPatch};
use troupe_core::thread::{EndpointSpec, Interaction};
use troupe_workflows::WorkflowError;
use troupe_workflows::runtime_boss::{briefing, open, schedule};

fn account(name: &str, enabled: bool) -> ChannelDef {
    ChannelDef {
        name: name.into(),
        kind: ChannelKind::Webhook,
        bot: "anyone".into(),
        secret_env: "UNUSED_SECRET".into(),
        outbound_url: "http://127.0.0.1:9/out".into(),
        filter: FilterRules::default(),
        enabled,
    }
}

fn patch(w: &World, json: serde_json::Value) {
    let p: RuntimeSettingsPatch = serde_json::from_value(json).unwrap();
    w.wf.patch_runtime_settings(&p, w.dir.path(), &[]).unwrap();
}

fn boss_mode(w: &World, on: bool) {
    patch(w, serde_json::json!({"boss_mode": on}));
}

/// A default model role the Runtime Boss Bot resolves to (the engine answers from the queue).
fn default_model(w: &World) {
    w.wf.collab()
        .roles()
        .set(
            "default",
            EndpointSpec {
                kind: "openai".into(),
                base_url: Some("http://127.0.0.1:9/v1".into()),
                model: "queue-model".into(),
                api_key_env: None,
                script: None,
                takes_pictures: false,
                thinking_levels: Vec::new(),
                max_output_tokens: None,
            },
        )
        .unwrap();
}

fn counts(w: &World) -> (usize, usize, usize) {
    w.wf.store()
        .read(|tx| {
            Ok((
                tx.sessions(1000)?.len(),
                tx.bots(true)?.len(),
                tx.runtime_boss_sessions()?.len(),
            ))
        })
        .unwrap()
}

/// The keys of a session's queued inbox items of one mode.
fn queued(w: &World, s: SessionId, mode: InboxMode) -> Vec<String> {
    let t = w.thread(s);
    w.wf.store()
        .read(|tx| tx.inbox(t))
        .unwrap()
        .into_iter()
        .filter(|i| i.mode == mode)
        .filter_map(|i| i.delivery_key)
        .collect()
}

#[tokio::test]
async fn ensure_idempotent() {
    let w = world();
    let accounts = [account("acme", true), account("dormant", false)];
    boss_mode(&w, true);
    let first = w.wf.ensure_runtime_boss(w.dir.path(), &accounts).unwrap();
    assert_eq!(first.accounts.len(), 1, "a disabled account gets no boss");
    let boss = first.accounts[0].session_id;
    assert_eq!(first.created, vec![boss]);
    assert_eq!(first.briefed, vec![boss]);

    // What the session is: home workspace, slot {boss, boss}, interactive, the Runtime Boss Bot.
    let home = w.dir.path().join("workspaces").join("home");
    assert!(home.is_dir(), "the home workspace is made");
    let t = w.thread(boss);
    let thread = w.wf.store().read(|tx| tx.thread(t)).unwrap();
    assert_eq!(thread.workspace, home.display().to_string());
    assert_eq!(thread.interaction, Interaction::Interactive);
    assert_eq!(
        thread.workflow,
        Some(serde_json::json!({"kind": "boss", "role": "boss"}))
    );
    let (row, bot_name) =
        w.wf.store()
            .read(|tx| {
                let row = tx.runtime_boss_row(boss)?.unwrap();
                let bot = tx.bot(tx.session(boss)?.bot_ids[0])?;
                Ok((row, bot.name))
            })
            .unwrap();
    assert_eq!(bot_name, BOT_NAME);
    assert_eq!(row.account.as_deref(), Some("acme"));
    assert_eq!(row.chat_id.as_deref(), Some("boss"));
    assert_eq!(row.scope_key, "boss");
    assert!(
        w.wf.store()
            .read(|tx| tx.is_runtime_boss_session(boss))
            .unwrap()
    );
    assert_eq!(
        w.wf.store()
            .read(|tx| tx.runtime_boss_session("acme"))
            .unwrap(),
        Some(boss)
    );
    assert_eq!(
        queued(&w, boss, InboxMode::Steer),
        vec![briefing::key(boss, 1)]
    );

    // Again, and after a restart on the same data: nothing new, no second briefing.
    let before = counts(&w);
    let again = w.wf.ensure_runtime_boss(w.dir.path(), &accounts).unwrap();
    assert!(again.created.is_empty() && again.briefed.is_empty());
    assert_eq!(again.accounts[0].session_id, boss);
    assert_eq!(counts(&w), before);
    let dir = w.dir.clone();
    drop(w);
    let w = world_on(dir, "second-boot");
    let restarted = w.wf.ensure_runtime_boss(w.dir.path(), &accounts).unwrap();
    assert!(restarted.created.is_empty() && restarted.briefed.is_empty());
    assert_eq!(counts(&w), before);
    assert_eq!(
        queued(&w, boss, InboxMode::Steer),
        vec![briefing::key(boss, 1)]
    );

    // RB-1 in the database: a second session for the account is refused.
    let other = w.session();
    let dup =
        w.wf.store()
            .write(|tx| tx.insert_runtime_boss_session(other, Some("acme"), "boss"));
    assert!(dup.is_err(), "one runtime boss session per account");

    // RB-7: off keeps the session (and making nothing new).
    boss_mode(&w, false);
    let off = w.wf.ensure_runtime_boss(w.dir.path(), &accounts).unwrap();
    assert!(!off.boss_mode && off.accounts.is_empty());
    assert_eq!(
        w.wf.store()
            .read(|tx| tx.runtime_boss_session("acme"))
            .unwrap(),
        Some(boss)
    );
    assert!(!w.wf.store().read(|tx| tx.session(boss)).unwrap().archived);
}

#[tokio::test]
async fn briefing_interval_is_one_agenda_item() {
    let w = world();
    let accounts = [account("acme", true)];
    boss_mode(&w, true);
    let boss =
        w.wf.ensure_runtime_boss(w.dir.path(), &accounts)
            .unwrap()
            .accounts[0]
            .session_id;
    assert!(schedule::current(&w.wf, boss).unwrap().is_none());
    let p: RuntimeSettingsPatch =
        serde_json::from_value(serde_json::json!({"briefing_interval_days": 7})).unwrap();
    w.wf.patch_runtime_settings(&p, w.dir.path(), &accounts)
        .unwrap();
    let item = schedule::current(&w.wf, boss)
        .unwrap()
        .expect("the refresh item");
    assert_eq!(item.trigger_kind, "every");
    assert_eq!(item.trigger["seconds"], 7 * 86_400);
    assert!(item.payload.contains("session_list") && item.payload.contains("memory_search"));
    // Twice: still one item; a new interval re-times it.
    w.wf.ensure_runtime_boss(w.dir.path(), &accounts).unwrap();
    let p: RuntimeSettingsPatch =
        serde_json::from_value(serde_json::json!({"briefing_interval_days": 2})).unwrap();
    w.wf.patch_runtime_settings(&p, w.dir.path(), &accounts)
        .unwrap();
    let t = w.thread(boss);
    let live: Vec<_> =
        w.wf.store()
            .read(|tx| tx.agenda_items(Some(t), Some(troupe_store::AgendaStatus::Active), 100))
            .unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].id, item.id);
    assert_eq!(live[0].trigger["seconds"], 2 * 86_400);
    // Mode off: the reminder stops.
    let p: RuntimeSettingsPatch =
        serde_json::from_value(serde_json::json!({"boss_mode": false})).unwrap();
    w.wf.patch_runtime_settings(&p, w.dir.path(), &accounts)
        .unwrap();
    assert!(schedule::current(&w.wf, boss).unwrap().is_none());
}

#[tokio::test]
async fn open_disabled_409() {
    let w = world();
    default_model(&w);
    let before = counts(&w);
    let e = w.wf.open_runtime_boss(w.dir.path(), &[]).await.unwrap_err();
    match e {
        WorkflowError::Conflict { code, .. } => assert_eq!(code, "boss_disabled"),
        other => panic!("expected 409 boss_disabled, got {other}"),
    }
    assert_eq!(counts(&w), before, "a refused open makes nothing");
    assert_eq!(w.provider.calls(), 0);
}

#[tokio::test]
async fn open_kickoff_once() {
    let w = world();
    default_model(&w);
    boss_mode(&w, true);
    let first = w.wf.open_runtime_boss(w.dir.path(), &[]).await.unwrap();
    assert!(first.created && first.kickoff);
    let boss = first.session_id;
    let row =
        w.wf.store()
            .read(|tx| tx.runtime_boss_row(boss))
            .unwrap()
            .unwrap();
    assert_eq!(row.account, None, "a channel-less local session");
    assert_eq!(
        w.wf.store().read(|tx| tx.session(boss)).unwrap().title,
        "Runtime Boss (local)"
    );
    w.idle(boss).await;
    assert_eq!(w.provider.calls(), 1, "one greeting turn");
    let req = &w.provider.requests()[0];
    let said = user_texts(req).join("\n");
    assert!(
        said.contains(open::KICKOFF_TEXT),
        "the kickoff task: {said}"
    );
    assert!(
        said.contains("[Runtime Boss briefing]"),
        "the briefing joins the greeting turn: {said}"
    );
    assert!(req.system.contains("<boss-persona>"));
    assert!(req.system.contains("<boss-report-style>"));
    assert!(req.system.contains("<boss-discipline>"));
    assert!(
        !req.system.contains("<boss-reply-target>"),
        "a local session has no chat to reply to"
    );

    // RB-6: idempotent, the kickoff at most once.
    let second = w.wf.open_runtime_boss(w.dir.path(), &[]).await.unwrap();
    assert_eq!(second.session_id, boss);
    assert!(!second.created && !second.kickoff);
    w.idle(boss).await;
    assert_eq!(w.provider.calls(), 1);
    assert_eq!(counts(&w).2, 1);

    // An account appears: its routed session is the one opened, with no greeting (RB-6).
    let routed =
        w.wf.open_runtime_boss(w.dir.path(), &[account("acme", true)])
            .await
            .unwrap();
    assert_ne!(routed.session_id, boss);
    assert!(!routed.created && !routed.kickoff);
    assert!(queued(&w, routed.session_id, InboxMode::Task).is_empty());
    assert_eq!(w.provider.calls(), 1);
}

#[tokio::test]
async fn open_no_model() {
    let w = world();
    boss_mode(&w, true);
    let opened = w.wf.open_runtime_boss(w.dir.path(), &[]).await.unwrap();
    assert!(opened.created);
    assert!(!opened.kickoff, "no model: no kickoff, and no error");
    let boss = opened.session_id;
    assert!(queued(&w, boss, InboxMode::Task).is_empty());
    assert_eq!(
        queued(&w, boss, InboxMode::Steer),
        vec![briefing::key(boss, 1)],
        "the briefing still waits for the first turn"
    );
    assert_eq!(w.provider.calls(), 0);
    // Still idempotent without a model.
    let again = w.wf.open_runtime_boss(w.dir.path(), &[]).await.unwrap();
    assert_eq!(again.session_id, boss);
    assert!(!again.created && !again.kickoff);
}

#[tokio::test]
async fn persona_rebrief() {
    let w = world();
    let accounts = [account("acme", true)];
    let p: RuntimeSettingsPatch = serde_json::from_value(
        serde_json::json!({"boss_mode": true, "persona": {"preset": "project_manager"}}),
    )
    .unwrap();
    let (_, made) =
        w.wf.patch_runtime_settings(&p, w.dir.path(), &accounts)
            .unwrap();
    let boss = made.accounts[0].session_id;
    assert_eq!(made.briefed, vec![boss]);
    w.turn(boss, "hello").await;
    let first = w.provider.requests().last().unwrap().clone();
    assert!(first.system.contains("project manager"));
    assert!(user_texts(&first).join("\n").contains("project manager"));

    // A persona change is briefed once more, under a versioned key.
    let p: RuntimeSettingsPatch =
        serde_json::from_value(serde_json::json!({"persona": {"preset": "ops_assistant"}}))
            .unwrap();
    let (settings, changed) =
        w.wf.patch_runtime_settings(&p, w.dir.path(), &accounts)
            .unwrap();
    assert_eq!(settings.persona, Some(Persona::OpsAssistant));
    assert_eq!(changed.briefed, vec![boss]);
    assert_eq!(
        queued(&w, boss, InboxMode::Steer),
        vec![briefing::key(boss, 2)]
    );
    assert_eq!(
        briefing::key(boss, 2),
        format!("boss-identity:{}:v2", boss.0)
    );
    // The same persona again: no third briefing.
    let (_, same) =
        w.wf.patch_runtime_settings(&p, w.dir.path(), &accounts)
            .unwrap();
    assert!(same.briefed.is_empty());
    assert_eq!(queued(&w, boss, InboxMode::Steer).len(), 1);

    // The next turn reads the new persona, and the discipline is there whatever the persona.
    w.turn(boss, "what now?").await;
    let next = w.provider.requests().last().unwrap().clone();
    assert!(next.system.contains("operations assistant"));
    assert!(!next.system.contains("project manager"));
    assert!(next.system.contains("<boss-discipline>"));
    let custom: RuntimeSettingsPatch = serde_json::from_value(serde_json::json!({"persona": {
        "preset": "custom", "formality": 0.9, "conciseness": 0.1, "proactiveness": 0.5, "warmth": 0.5}}))
    .unwrap();
    w.wf.patch_runtime_settings(&custom, w.dir.path(), &accounts)
        .unwrap();
    w.turn(boss, "and now?").await;
    let third = w.provider.requests().last().unwrap().clone();
    assert!(third.system.contains("Write formally"));
    assert!(third.system.contains("<boss-discipline>"));
}

#[tokio::test]
async fn briefing_lists_the_world() {
    let w = world();
    let other = w.session();
    w.wf.store()
        .write(|tx| {
            tx.memory_upsert("user", "prefers", "short answers in the morning")?;
            tx.project_register("/srv/atlas", "Atlas", other)?;
            Ok(())
        })
        .unwrap();
    boss_mode(&w, true);
    let boss =
        w.wf.ensure_runtime_boss(w.dir.path(), &[account("acme", true)])
            .unwrap()
            .accounts[0]
            .session_id;
    let t = w.thread(boss);
    let text =
        w.wf.store()
            .read(|tx| tx.inbox(t))
            .unwrap()
            .into_iter()
            .find(|i| i.delivery_key.as_deref() == Some(briefing::key(boss, 1).as_str()))
            .expect("the briefing")
            .text;
    assert!(text.contains(&format!("- session {}", other.0)), "{text}");
    assert!(
        !text.contains(&format!("- session {} ", boss.0)),
        "not itself"
    );
    assert!(text.contains("/srv/atlas \"Atlas\""), "{text}");
    assert!(text.contains("[user] prefers: short answers"), "{text}");
    assert!(text.contains("<boss-persona>") && text.contains("<boss-report-style>"));
}

#[tokio::test]
async fn boss_name_is_a_memory_row_and_rebriefs() {
    let w = world();
    let accounts = [account("acme", true)];
    boss_mode(&w, true);
    let boss =
        w.wf.ensure_runtime_boss(w.dir.path(), &accounts)
            .unwrap()
            .accounts[0]
            .session_id;
    for bad in ["", "   ", &"n".repeat(65), "two\nlines"] {
        assert!(
            matches!(w.wf.set_boss_name(bad), Err(WorkflowError::Invalid(_))),
            "{bad:?} refused"
        );
    }
    assert_eq!(w.wf.boss_name().unwrap(), None);
    assert_eq!(w.wf.set_boss_name("  Ada ").unwrap(), "Ada");
    let row =
        w.wf.store()
            .read(|tx| tx.memory_by_title("self", "boss_name"))
            .unwrap()
            .unwrap();
    assert_eq!(row.body, "Ada");
    let again = w.wf.ensure_runtime_boss(w.dir.path(), &accounts).unwrap();
    assert_eq!(again.briefed, vec![boss], "a new name is briefed once");
    assert_eq!(
        queued(&w, boss, InboxMode::Steer),
        vec![briefing::key(boss, 1), briefing::key(boss, 2)]
    );
    w.turn(boss, "who are you?").await;
    let req = w.provider.requests().last().unwrap().clone();
    assert!(req.system.contains("Your name is Ada."));
    assert!(user_texts(&req).join("\n").contains("Your name is Ada."));
}
