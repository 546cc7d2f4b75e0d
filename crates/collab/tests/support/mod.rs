//! What the collab tests share: a real engine and store with the conversation layer built as
//! `troupe serve` builds it (projector, situation, membership, the collab tools), scripted Bots
//! from inline scripts, and explicit waits on the store's events.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;
use troupe_collab::{Collab, NewBotRequest, NewSessionRequest, SharedRoles};
use troupe_core::thread::EndpointSpec;
use troupe_core::{BotId, SessionId, ThreadId};
use troupe_engine::{Engine, RoleTable};
use troupe_store::Event;

pub mod check_rig;
pub mod holds;
pub mod supervise;
pub mod ticket_team;
mod work;
#[allow(unused_imports)]
pub use work::*;

pub struct World {
    pub collab: Collab,
    pub dir: tempfile::TempDir,
}

pub fn world() -> World {
    world_on(Arc::new(troupe_core::SystemClock))
}

/// A world whose store reads time from `clock` (a `ManualClock` to move time in a test).
pub fn world_on(clock: Arc<dyn troupe_core::Clock>) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::testing::open_in(dir.path(), clock);
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = troupe_collab::tools::ToolHost::new();
    let builder = troupe_collab::extend(Engine::builder(store, roles.clone()), &host).unwrap();
    let collab = Collab::new(builder.build(), roles, dir.path().join("workspaces"));
    host.attach(&collab);
    // As `troupe serve` starts it: nods the word lists cannot decide are read after commit.
    collab.listen_for_nods();
    World { collab, dir }
}

pub fn script(w: &World, name: &str, json: &str) -> EndpointSpec {
    let path = w.dir.path().join(format!("{name}.json"));
    std::fs::write(&path, json).unwrap();
    EndpointSpec {
        kind: "scripted".into(),
        base_url: None,
        model: "reader-model".into(),
        api_key_env: None,
        script: Some(path.display().to_string()),
        takes_pictures: false,
        thinking_levels: Vec::new(),
        max_output_tokens: None,
    }
}

pub fn bot(w: &World, name: &str, json: &str) -> BotId {
    let endpoint = script(w, &name.to_lowercase().replace(' ', "_"), json);
    w.collab
        .create_bot(NewBotRequest {
            name: name.into(),
            persona: None,
            endpoint: Some(endpoint),
        })
        .unwrap()
        .id
}

pub fn direct(w: &World, b: BotId) -> SessionId {
    w.collab
        .create_session(NewSessionRequest {
            workspace: None,
            kind: "direct".into(),
            bot_ids: vec![b],
            title: None,
        })
        .unwrap()
        .session
        .id
}

pub fn group(w: &World, bots: &[BotId]) -> SessionId {
    w.collab
        .create_session(NewSessionRequest {
            workspace: None,
            kind: "group".into(),
            bot_ids: bots.to_vec(),
            title: Some("Team".into()),
        })
        .unwrap()
        .session
        .id
}

pub fn thread_of(w: &World, s: SessionId, b: BotId) -> ThreadId {
    w.collab
        .store()
        .read(|tx| tx.session_thread(s, b, troupe_store::CONVERSATION))
        .unwrap()
        .expect("the member has a thread")
}

pub fn runs(w: &World, t: ThreadId) -> usize {
    w.collab
        .store()
        .read(|tx| tx.runs_for_thread(t, 100))
        .unwrap()
        .len()
}

/// Wait (at most 20 s, then fail) until `n` runs of `thread` have ended, counting from when
/// `events` was subscribed.
pub async fn runs_ended(
    events: &mut tokio::sync::broadcast::Receiver<Event>,
    thread: ThreadId,
    n: usize,
) {
    let mut seen = 0;
    tokio::time::timeout(Duration::from_secs(20), async {
        while seen < n {
            let e = events.recv().await.unwrap();
            if e.kind == "run_ended" && e.thread_id == Some(thread) {
                seen += 1;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("thread {thread}: {seen} of {n} runs ended in 20 s"));
}

/// The conversation's ask line (the first one).
pub fn ask_line(w: &World, s: SessionId) -> troupe_core::conversation::SessionMessage {
    w.collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .find(|l| l.kind == troupe_core::conversation::LineKind::Ask)
        .expect("an ask line")
}

/// Give the Bot a new script (its threads are rebound to it at once): for a script that names
/// ids known only once the conversations exist. Each one is a new file, so no provider built
/// for the old one is reused.
pub fn rescript(w: &World, b: BotId, json: &str) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = w
        .collab
        .bot(b)
        .unwrap()
        .name
        .to_lowercase()
        .replace(' ', "_");
    let endpoint = script(w, &format!("{name}-rescripted-{n}"), json);
    w.collab
        .update_bot(
            b,
            troupe_collab::BotPatch {
                name: None,
                persona: None,
                endpoint: Some(Some(endpoint)),
            },
        )
        .unwrap();
}

/// A reader (the `reading` role) that gives every reading the same answer: `answer` is the
/// JSON object it answers with, e.g. `{"control":"neither","belongs":"new"}`.
pub fn reader_says(w: &World, answer: &str) {
    let text = serde_json::to_string(answer).unwrap();
    let spec = script(
        w,
        "reader",
        &format!(r#"{{"steps":[{{"text":{text}}}],"on_exhausted":"repeat_last"}}"#),
    );
    w.collab.set_role("reading", spec).unwrap();
}
