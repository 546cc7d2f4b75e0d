//! The `boss-synergy` toolset (issue 18 items 16-17, digest §8), on a real engine and store
//! with the workflow layer installed and a queue model:
//!
//! - `toolset_offers_exactly_boss_synergy`: a runtime boss turn is offered exactly the
//!   toolset — no `task`, no file tools — while an ordinary session keeps its tools.
//! - `read_only_shell_refuses_writes`: the shell runs a plain read; chaining, redirection and
//!   a write command are refused as `read_only_shell` and nothing is written.
//! - `worker_cannot_boss_project`: a Boss Mode worker calling boss_project is refused
//!   `not_boss` (409, RB-5) and nothing is registered or created.
//! - `boss_project_registers_once`: a relative directory is refused (422); an absolute one is
//!   created, registered and gets an interactive project boss (slot boss/boss) told the
//!   coordinator's session id; the repeat answers the existing project and opens nothing.
//! - `session_list_and_read`: the boss lists conversations and reads another's lines.
//! - `session_send_tasks_or_steers`: an idle conversation gets a task, a busy one a steer;
//!   sending to oneself or to no session is refused.
//! - `memory_round_trip`: memory_write, memory_search, memory_read, memory_edit through the
//!   model's tool calls; a boss-role session that is not the runtime boss is refused.

mod support;

use serde_json::json;
use support::{Reply, World, call, tool_results, world};
use troupe_core::SessionId;
use troupe_workflows::runtime_boss::ensure::boss_slot;
use troupe_workflows::runtime_boss::toolset::tool_names;

/// A session made a runtime boss session the way provisioning leaves it (slot boss/boss, a
/// `runtime_boss_sessions` row), without a channel account.
fn runtime_boss(w: &World) -> SessionId {
    let s = w.session();
    w.set_slot(s, boss_slot());
    w.wf.store()
        .write(|tx| tx.insert_runtime_boss_session(s, None, "boss"))
        .unwrap();
    s
}

fn offered(w: &World, request: usize) -> Vec<String> {
    let mut names: Vec<String> = w.provider.requests()[request]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn toolset_offers_exactly_boss_synergy() {
    let w = world();
    let boss = runtime_boss(&w);
    w.turn(boss, "what can you do?").await;
    let mut expected: Vec<String> = tool_names().into_iter().map(String::from).collect();
    expected.sort();
    assert_eq!(offered(&w, 0), expected);
    for absent in ["task", "write_file", "delete_file", "boss_spawn"] {
        assert!(!offered(&w, 0).contains(&absent.to_string()), "{absent}");
    }

    // The same slot without the runtime boss row is not narrowed: the toolset is the row's.
    let plain = w.session();
    w.set_slot(plain, boss_slot());
    w.turn(plain, "hello").await;
    assert!(offered(&w, 1).contains(&"write_file".to_string()));
}

#[tokio::test]
async fn read_only_shell_refuses_writes() {
    let w = world();
    let boss = runtime_boss(&w);
    w.provider.push(Reply::Tools(vec![
        call("c1", "shell", json!({"command": "ls"})),
        call("c2", "shell", json!({"command": "ls; touch made"})),
        call("c3", "shell", json!({"command": "cat x > made"})),
        call("c4", "shell", json!({"command": "touch made"})),
    ]));
    w.turn(boss, "look around").await;
    let results = tool_results(&w.provider.requests()[1]);
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(
        results[0].starts_with("exit code: 0"),
        "ls ran: {}",
        results[0]
    );
    for r in &results[1..] {
        assert!(r.contains("read_only_shell"), "{r}");
    }
    let made = walk(w.dir.path()).into_iter().any(|p| p.ends_with("made"));
    assert!(!made, "a refused command wrote nothing");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[tokio::test]
async fn memory_round_trip() {
    let w = world();
    let boss = runtime_boss(&w);
    w.provider.push(Reply::Tools(vec![
        call(
            "c1",
            "memory_write",
            json!({"category": "people", "title": "Ana", "body": "Prefers short reports."}),
        ),
        call("c2", "memory_search", json!({"query": "SHORT reports"})),
        call(
            "c3",
            "memory_edit",
            json!({"category": "people", "title": "Ana", "old_text": "short", "new_text": "one-line"}),
        ),
        call("c4", "memory_read", json!({"category": "people", "title": "Ana"})),
        call("c5", "memory_read", json!({"category": "people", "title": "Bo"})),
    ]));
    w.turn(boss, "remember Ana").await;
    let r: Vec<serde_json::Value> = tool_results(&w.provider.requests()[1])
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    assert_eq!(r[0]["status"], "created", "{}", r[0]);
    assert_eq!(r[1]["count"], 1, "{}", r[1]);
    assert_eq!(r[1]["memories"][0]["title"], "Ana");
    assert_eq!(r[2]["status"], "edited", "{}", r[2]);
    assert_eq!(
        r[3]["memory"]["body"], "Prefers one-line reports.",
        "{}",
        r[3]
    );
    assert_eq!(r[4]["code"], "not_found", "{}", r[4]);

    // A boss-role session that is not the runtime boss sees the tool but is refused.
    let other = w.session();
    w.set_slot(other, boss_slot());
    w.provider.push(Reply::Tools(vec![call(
        "c6",
        "memory_write",
        json!({"category": "people", "title": "Eve", "body": "x"}),
    )]));
    w.turn(other, "remember Eve").await;
    let last = w.provider.requests().len() - 1;
    let refused = &tool_results(&w.provider.requests()[last])[0];
    assert!(refused.contains("not_runtime_boss"), "{refused}");
    let eve =
        w.wf.store()
            .read(|tx| tx.memory_by_title("people", "Eve"))
            .unwrap();
    assert_eq!(eve, None, "nothing was written");
}

/// A Boss Mode worker's slot under the boss `root`.
fn worker_slot(root: SessionId) -> serde_json::Value {
    json!({"kind": "boss", "role": "worker", "worker_role": "code", "root_session_id": root.0})
}

#[tokio::test]
async fn worker_cannot_boss_project() {
    let w = world();
    let root = runtime_boss(&w);
    let worker = w.session();
    w.set_slot(worker, worker_slot(root));
    let dir = w.dir.path().join("by-worker");
    w.provider.push(Reply::Tools(vec![call(
        "c1",
        "boss_project",
        json!({"directory": dir.display().to_string()}),
    )]));
    w.turn(worker, "open a project").await;
    let r: serde_json::Value =
        serde_json::from_str(&tool_results(&w.provider.requests()[1])[0]).unwrap();
    assert_eq!(r["code"], "not_boss", "{r}");
    assert_eq!(r["status"], 409);
    assert!(!dir.exists(), "nothing was created");
    assert!(w.wf.store().read(|tx| tx.projects(10)).unwrap().is_empty());
}

#[tokio::test]
async fn boss_project_registers_once() {
    let w = world();
    let boss = runtime_boss(&w);
    let dir = w.dir.path().join("projects").join("app");
    let d = dir.display().to_string();
    w.provider.push(Reply::Tools(vec![
        call("c0", "boss_project", json!({"directory": "relative/app"})),
        call(
            "c1",
            "boss_project",
            json!({"directory": d, "title": "App", "instructions": "Ship the login page."}),
        ),
        call(
            "c2",
            "boss_project",
            json!({"directory": d, "title": "Again"}),
        ),
    ]));
    let sessions_before = w.wf.store().read(|tx| tx.sessions(1000)).unwrap().len();
    w.turn(boss, "open the app project").await;
    let r: Vec<serde_json::Value> = tool_results(&w.provider.requests()[1])
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    assert_eq!(r[0]["status"], 422, "{}", r[0]);
    assert_eq!(r[1]["status"], "opened", "{}", r[1]);
    assert_eq!(r[2]["status"], "existing", "{}", r[2]);
    assert_eq!(
        r[2]["project"], r[1]["project"],
        "the repeat answers the same project"
    );
    assert!(dir.is_dir(), "the directory was created");

    let projects = w.wf.store().read(|tx| tx.projects(10)).unwrap();
    assert_eq!(projects.len(), 1);
    let pb = projects[0].session_id.expect("a project boss session");
    assert_eq!(
        w.wf.store().read(|tx| tx.sessions(1000)).unwrap().len(),
        sessions_before + 1,
        "one project boss session, opened once"
    );
    let t = w.thread(pb);
    let thread = w.wf.store().read(|tx| tx.thread(t)).unwrap();
    assert_eq!(thread.workspace, d);
    assert_eq!(thread.parent_id, None, "bosses are peers");
    assert_eq!(thread.workflow, Some(boss_slot()));
    let inbox = w.wf.store().read(|tx| tx.inbox(t)).unwrap();
    let text = inbox
        .iter()
        .map(|i| i.text.clone())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains(&format!("session {}", boss.0)) && text.contains("Ship the login page."),
        "{text}"
    );
}

#[tokio::test]
async fn session_list_and_read() {
    let w = world();
    let other = w.session();
    w.turn(other, "the deploy is blocked on review").await;
    let boss = runtime_boss(&w);
    w.provider.push(Reply::Tools(vec![
        call("c1", "session_list", json!({})),
        call(
            "c2",
            "session_read",
            json!({"session_id": other.0, "limit": 5}),
        ),
        call("c3", "session_read", json!({"session_id": 999_999})),
    ]));
    w.turn(boss, "what is going on?").await;
    let last = w.provider.requests().len() - 1;
    let r: Vec<serde_json::Value> = tool_results(&w.provider.requests()[last])
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    let listed: Vec<i64> = r[0]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_id"].as_i64().unwrap())
        .collect();
    assert!(
        listed.contains(&other.0) && listed.contains(&boss.0),
        "{}",
        r[0]
    );
    let texts: Vec<&str> = r[1]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert!(
        texts.contains(&"the deploy is blocked on review"),
        "{}",
        r[1]
    );
    assert_eq!(r[2]["code"], "not_found", "{}", r[2]);
}

/// Whether `text` reached the session's thread (still in its inbox, or already a message).
fn reached(w: &World, s: SessionId, text: &str) -> bool {
    let t = w.thread(s);
    let (inbox, messages) =
        w.wf.store()
            .read(|tx| Ok((tx.inbox(t)?, tx.messages(t, None, 1000)?)))
            .unwrap();
    inbox.iter().any(|i| i.text.contains(text)) || format!("{messages:?}").contains(text)
}

#[tokio::test]
async fn session_send_tasks_or_steers() {
    let w = world();
    let idle = w.session();
    let busy = w.session();
    let boss = runtime_boss(&w);
    w.hanging_turn(busy, "long work").await;
    w.provider.push(Reply::Tools(vec![
        call(
            "c1",
            "session_send",
            json!({"session_id": idle.0, "text": "report status A"}),
        ),
        call(
            "c2",
            "session_send",
            json!({"session_id": busy.0, "text": "also check B"}),
        ),
        call(
            "c3",
            "session_send",
            json!({"session_id": boss.0, "text": "me"}),
        ),
        call(
            "c4",
            "session_send",
            json!({"session_id": 999_999, "text": "nobody"}),
        ),
    ]));
    w.turn(boss, "coordinate").await;
    let request = w
        .provider
        .requests()
        .iter()
        .rposition(|r| tool_results(r).len() == 4)
        .expect("the boss's tool results");
    let r: Vec<serde_json::Value> = tool_results(&w.provider.requests()[request])
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    assert_eq!(r[0]["status"], "task", "{}", r[0]);
    assert_eq!(r[1]["status"], "steer", "{}", r[1]);
    assert_eq!(r[2]["code"], "to_self", "{}", r[2]);
    assert_eq!(r[3]["code"], "not_found", "{}", r[3]);
    assert!(reached(
        &w,
        idle,
        &format!("[From session {}] report status A", boss.0)
    ));
    assert!(reached(&w, busy, "also check B"));
}

/// `scope_list` names the places work is coordinated from: the registered projects with their
/// project bosses, and the chats channels reach with their conversations.
#[tokio::test]
async fn scope_list_names_projects_and_chats() {
    let w = world();
    let project_boss = w.session();
    let chat = w.session();
    let bot = w.wf.store().read(|tx| tx.session(chat)).unwrap().bot_ids[0];
    w.wf.store()
        .write(|tx| {
            tx.project_register("/srv/site", "Site", project_boss)?;
            tx.insert_channel_chat(&troupe_store::ChannelChat {
                account: "acme".into(),
                chat_id: "c-9".into(),
                chat_type: "group".into(),
                chat_name: Some("Ops".into()),
                session_id: chat,
                bot_id: bot,
                created_at: 0,
            })?;
            Ok(())
        })
        .unwrap();
    let boss = runtime_boss(&w);
    w.provider
        .push(Reply::Tools(vec![call("c1", "scope_list", json!({}))]));
    w.turn(boss, "where does work happen?").await;
    let last = w.provider.requests().len() - 1;
    let r: serde_json::Value =
        serde_json::from_str(&tool_results(&w.provider.requests()[last])[0]).unwrap();
    assert_eq!(
        r["projects"],
        json!([{"directory": "/srv/site", "title": "Site", "session_id": project_boss.0}])
    );
    assert_eq!(
        r["chats"],
        json!([{"account": "acme", "chat_id": "c-9", "chat_type": "group", "chat_name": "Ops",
                "session_id": chat.0}])
    );
}
