//! `GET /v1/events`: the conversation's stored events in order with their ids, live text
//! deltas without ids, and resumption from `Last-Event-ID` with nothing lost or repeated;
//! without `session_id`, the global stream (events of no conversation and no thread).

mod sse;

use serde_json::{Value, json};
use sse::{SseMessage, SseStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use troupe_collab::{NewBotRequest, NewSessionRequest};
use troupe_core::thread::EndpointSpec;
use troupe_core::{EventId, SessionId};
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;
use troupe_server::AppState;
use troupe_server::bootstrap::build_state;

const WAIT: Duration = Duration::from_secs(20);
const REPLY: &str = "Hello! This reply arrives in several pieces.";

struct Daemon {
    base: String,
    state: AppState,
    _dir: tempfile::TempDir,
}

async fn daemon() -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let secrets: SecretSource = Arc::new(|_| None);
    let boot = build_state(
        dir.path(),
        troupe_server::bootstrap::BootOptions {
            database: Some(troupe_store::testing::database_url_in(dir.path())),
            ..troupe_server::bootstrap::BootOptions::new(RoleTable::new(secrets.clone()), secrets)
        },
    )
    .await
    .unwrap();
    let state = boot.state;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}");
    let host_rule = troupe_server::hosts::HostRule::new(addr, &[]).unwrap();
    let app = troupe_server::app(state.clone(), host_rule);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Daemon {
        base,
        state,
        _dir: dir,
    }
}

/// A scripted Bot that streams REPLY in five pieces, for every line it gets.
fn scripted_session(d: &Daemon, dir: &Path) -> SessionId {
    let text = json!({
        "name": "chunky",
        "steps": [{"text": REPLY, "chunks": 5, "chunk_delay_ms": 40}],
        "on_exhausted": "repeat_last"
    });
    session_with_script(d, dir, &text)
}

/// A direct with a scripted Bot running `text`.
fn session_with_script(d: &Daemon, dir: &Path, text: &Value) -> SessionId {
    let script = dir.join("bot-script.json");
    std::fs::write(&script, text.to_string()).unwrap();
    let bot = d
        .state
        .collab
        .create_bot(NewBotRequest {
            name: "Chunky".into(),
            persona: None,
            endpoint: Some(EndpointSpec {
                kind: "scripted".into(),
                base_url: None,
                model: "chunky".into(),
                api_key_env: None,
                script: Some(script.display().to_string()),
                takes_pictures: false,
                thinking_levels: Vec::new(),
                max_output_tokens: None,
            }),
        })
        .unwrap();
    d.state
        .collab
        .create_session(NewSessionRequest {
            workspace: None,
            kind: "direct".into(),
            bot_ids: vec![bot.id],
            title: None,
        })
        .unwrap()
        .session
        .id
}

/// The conversation's live stream, from now on.
async fn conversation_stream(
    d: &Daemon,
    client: &reqwest::Client,
    session: SessionId,
) -> SseStream {
    SseStream::connect(
        client,
        &format!("{}/v1/events?session_id={}", d.base, session.0),
        None,
    )
    .await
}

fn stored(d: &Daemon, session: SessionId, after: i64) -> Vec<i64> {
    d.state
        .collab
        .store()
        .read(|tx| tx.session_events_after(EventId(after), session, 100_000))
        .unwrap()
        .into_iter()
        .map(|e| e.id.0)
        .collect()
}

fn ids(msgs: &[SseMessage]) -> Vec<i64> {
    msgs.iter().filter_map(SseMessage::event_id).collect()
}

fn line_of<'a>(msgs: &'a [SseMessage], author: &str) -> Option<&'a SseMessage> {
    msgs.iter().find(|m| {
        m.event == "session_message" && m.json()["payload"]["message"]["author"] == author
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stream_shows_deltas_lines_and_run_end_then_resumes_from_last_event_id() {
    let d = daemon().await;
    let session = scripted_session(&d, d._dir.path());
    let client = reqwest::Client::new();
    let url = format!("{}/v1/events?session_id={}", d.base, session.0);
    let mut stream = SseStream::connect(&client, &url, None).await;

    d.state
        .collab
        .post_line(session, "hi there".into(), None)
        .await
        .unwrap();
    let got = stream.until(WAIT, |m| m.event == "run_ended").await;

    // The backlog (session_created) comes first, then the turn.
    assert_eq!(got[0].event, "session_created", "{got:#?}");
    let user = line_of(&got, "user").expect("the user's line");
    assert_eq!(user.json()["payload"]["message"]["body"], "hi there");
    let bot = line_of(&got, "bot").expect("the Bot's reply");
    assert_eq!(bot.json()["payload"]["message"]["body"], REPLY);
    assert_eq!(bot.json()["session_id"], session.0);

    let deltas: Vec<&SseMessage> = got.iter().filter(|m| m.event == "delta").collect();
    assert!(deltas.len() >= 2, "the reply streams in pieces: {got:#?}");
    assert!(deltas.iter().all(|m| m.id.is_none()), "deltas carry no id");
    let streamed: String = deltas
        .iter()
        .map(|m| m.json()["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(streamed, REPLY);
    for m in &deltas {
        let v = m.json();
        assert_eq!(v["session_id"], session.0);
        assert!(v["turn_id"].is_i64(), "{v}");
    }
    let pos = |m: &SseMessage| got.iter().position(|x| std::ptr::eq(x, m)).unwrap();
    assert!(
        pos(deltas[0]) < pos(bot),
        "deltas stream before the stored reply"
    );
    assert!(pos(user) < pos(bot));

    // Every stored event has an id, strictly increasing, and they are exactly the store's.
    assert!(
        got.iter()
            .filter(|m| m.event != "delta")
            .all(|m| m.id.is_some()),
        "{got:#?}"
    );
    let seen = ids(&got);
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "ids strictly increase: {seen:?}"
    );
    let last = *seen.last().unwrap();
    let in_store: Vec<i64> = stored(&d, session, 0)
        .into_iter()
        .filter(|i| *i <= last)
        .collect();
    assert_eq!(seen, in_store, "nothing missing, nothing extra");
    let ended = got.last().unwrap().json();
    assert_eq!(ended["kind"], "run_ended");
    drop(stream);

    // Resume from the middle: the replay starts right after it.
    let mid = seen[seen.len() / 2];
    let expected = stored(&d, session, mid);
    let want_last = *expected.last().unwrap();
    let mut again = SseStream::connect(&client, &url, Some(&mid.to_string())).await;
    let replay = again.until(WAIT, |m| m.event_id() == Some(want_last)).await;
    assert_eq!(
        ids(&replay),
        expected,
        "the replay is exactly what followed {mid}"
    );

    // `?after=` does the same for clients that cannot set the header, and `ev_N` is accepted.
    let after_url = format!("{url}&after=ev_{mid}");
    let mut third = SseStream::connect(&client, &after_url, None).await;
    let replay = third.until(WAIT, |m| m.event_id() == Some(want_last)).await;
    assert_eq!(ids(&replay), expected);

    // A second line on the resumed stream arrives live, after the replay, without a repeat.
    d.state
        .collab
        .post_line(session, "once more".into(), None)
        .await
        .unwrap();
    let more = again.until(WAIT, |m| m.event == "run_ended").await;
    let more_ids = ids(&more);
    assert!(
        more_ids.first().is_some_and(|f| *f > want_last),
        "{more_ids:?}"
    );
    let all: Vec<i64> = stored(&d, session, want_last)
        .into_iter()
        .filter(|i| i <= more_ids.last().unwrap())
        .collect();
    assert_eq!(more_ids, all);
}

/// Many concurrent writers (published out of commit order now and then) and a client that
/// does not read while 12 MB of events commit (so the broadcast lags): the stream still
/// delivers every event of the conversation once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_and_a_lagging_client_lose_nothing() {
    let d = daemon().await;
    let session = scripted_session(&d, d._dir.path());
    let other = scripted_session_named(&d, "Other");
    let client = reqwest::Client::new();
    let url = format!("{}/v1/events?session_id={}", d.base, session.0);
    // Connected, but nothing is read until the writers are done.
    let resp = client.get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let padding = "x".repeat(1000);

    let writers: Vec<_> = (0..6)
        .map(|w| {
            let store = d.state.collab.store().clone();
            let padding = padding.clone();
            std::thread::spawn(move || {
                for i in 0..NOTES {
                    let target = if i % 3 == 0 { other } else { session };
                    let note = json!({"writer": w, "i": i, "padding": padding});
                    store
                        .write(|tx| tx.session_event("test_note", target, None, note.clone()))
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let expected = stored(&d, session, 0);
    let last = *expected.last().unwrap();
    let mut stream = SseStream::from_response(resp);
    let got = stream.until(WAIT, |m| m.event_id() == Some(last)).await;
    assert_eq!(ids(&got), expected);
    let notes: Vec<&SseMessage> = got.iter().filter(|m| m.event == "test_note").collect();
    let per_writer = (0..NOTES).filter(|i| i % 3 != 0).count();
    assert_eq!(
        notes.len(),
        6 * per_writer,
        "two of every three notes are this conversation's"
    );
    assert!(notes.iter().all(|m| m.json()["session_id"] == session.0));
}

const NOTES: usize = 2000;

fn scripted_session_named(d: &Daemon, name: &str) -> SessionId {
    let bot = d
        .state
        .collab
        .create_bot(NewBotRequest {
            name: name.into(),
            persona: None,
            endpoint: None,
        })
        .unwrap();
    d.state
        .collab
        .create_session(NewSessionRequest {
            workspace: None,
            kind: "direct".into(),
            bot_ids: vec![bot.id],
            title: None,
        })
        .unwrap()
        .session
        .id
}

/// A job's work speaks in the conversation from a thread of its own: its turns' events are the
/// conversation's too (the page's reply stamps and the job's turn list hear them).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_jobs_work_speaking_in_a_conversation_streams_its_turn_events_there() {
    let d = daemon().await;
    let script = json!({
        "rules": [{"when_user_contains": "poster", "reply": {"tool_calls": [
            {"name": "work_on", "arguments": {"new": {"title": "Poster"}}}]}}],
        "steps": [{"text": "unused"}, {"text": "On the poster."}],
        "on_exhausted": "repeat_last"
    });
    let session = session_with_script(&d, d._dir.path(), &script);
    let client = reqwest::Client::new();
    let mut stream = conversation_stream(&d, &client, session).await;
    d.state
        .collab
        .post_line(session, "make the poster".into(), None)
        .await
        .unwrap();
    let desk = d.state.collab.direct_thread(session).unwrap();
    let got = stream
        .until(WAIT, |m| {
            m.event == "run_ended" && m.json()["thread_id"].as_i64() != Some(desk.0)
        })
        .await;
    let job_thread = got.last().unwrap().json()["thread_id"].as_i64().unwrap();
    let (speaks_in, plan) = d
        .state
        .collab
        .store()
        .read(|tx| {
            let item = tx
                .work_item_of_thread(troupe_core::ThreadId(job_thread))?
                .unwrap();
            Ok((item.speaks_in, item.plan_id))
        })
        .unwrap();
    assert_eq!(speaks_in, Some(session));
    assert!(plan.is_some(), "the line opened a job");
    assert!(
        got.iter().any(|m| m.event == "run_started"
            && m.json()["thread_id"].as_i64() == Some(job_thread)),
        "the job's turn start: {got:#?}"
    );
}

#[tokio::test]
async fn unknown_session_is_404_and_bad_ids_are_422() {
    let d = daemon().await;
    let client = reqwest::Client::new();
    let get = |q: &str| client.get(format!("{}/v1/events{q}", d.base)).send();

    let r = get("?session_id=999").await.unwrap();
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");

    // Without session_id it is the global stream; an empty or bad one, or a bad id, is 422.
    for q in [
        "?session_id=",
        "?session_id=abc",
        "?after=abc",
        "?session_id=1&after=x",
    ] {
        let r = get(q).await.unwrap();
        assert_eq!(r.status(), 422, "{q}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid", "{q}");
    }

    let session = scripted_session_named(&d, "Plain");
    let r = client
        .get(format!("{}/v1/events?session_id={}", d.base, session.0))
        .header("last-event-id", "not-an-id")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn global_stream_carries_hold_upserts_and_no_conversation_events() {
    let d = daemon().await;
    let session = scripted_session(&d, d._dir.path());
    let client = reqwest::Client::new();
    let mut global = SseStream::connect(&client, &format!("{}/v1/events", d.base), None).await;
    let mut mine = conversation_stream(&d, &client, session).await;

    // A conversation's line and reply stay on its own stream.
    d.state
        .collab
        .post_line(session, "hello".into(), None)
        .await
        .unwrap();
    mine.until(WAIT, |m| m.event == "run_ended").await;

    // A stop from that conversation's menu: hold_upsert globally and in the conversation.
    let made = client
        .post(format!("{}/v1/holds", d.base))
        .json(&json!({"scope": {"kind": "everything"}, "session_id": session.0}))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 201);
    let hold: Value = made.json().await.unwrap();
    let got = global.until(WAIT, |m| m.event == "hold_upsert").await;
    for m in &got {
        let e = m.json();
        assert!(
            e["session_id"].is_null() && e["thread_id"].is_null(),
            "a conversation's or thread's event on the global stream: {e}"
        );
        assert_ne!(m.event, "delta");
    }
    let upsert = got.last().unwrap().json();
    assert_eq!(upsert["payload"]["hold"]["id"], hold["id"], "{upsert}");
    assert_eq!(upsert["payload"]["hold_ids"], json!([hold["id"]]));
    let here = mine.until(WAIT, |m| m.event == "hold_upsert").await;
    assert_eq!(
        here.last().unwrap().json()["session_id"],
        json!(session.0),
        "the conversation's copy is its own"
    );

    // Resuming the global stream after the upsert gives what followed, not it again.
    let last = got.last().unwrap().event_id().unwrap();
    client
        .post(format!("{}/v1/holds/{}/lift", d.base, hold["id"]))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    let mut again = SseStream::connect(
        &client,
        &format!("{}/v1/events", d.base),
        Some(&last.to_string()),
    )
    .await;
    let next = again.until(WAIT, |m| m.event == "hold_upsert").await;
    assert!(ids(&next).iter().all(|id| *id > last), "{next:#?}");
    assert_eq!(
        next.last().unwrap().json()["payload"]["hold"]["status"],
        "lifted"
    );
}
