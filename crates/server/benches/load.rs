//! Bounded load on loopback against an in-process daemon whose Bots answer from a script.
//!
//! `--clients` event-stream clients (one per conversation) stay connected while an open-loop
//! generator sends `--rate` requests per second for `--secs` seconds, a fixed mix of route
//! classes (reads of a conversation's lines, of one conversation, of the conversation list, of
//! its turns; writes of a person's line, which wakes a scripted turn, and of a note). The
//! conversations are spread over `--bots` Bots. Reported: p50/p99 per route class, line to
//! first event (from sending the POST until that conversation's stream shows the line), and
//! for the streams: dropped ones, the server's lag catch-ups, and, checked against the event
//! log once the turns are done, every client's lost, repeated or out-of-order events.
//!
//! cargo bench -p troupe-server --bench load -- [--secs 60] [--clients 100] [--rate 200] [--bots 50]

#[path = "../tests/sse/mod.rs"]
mod sse;

use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use troupe_collab::{NewBotRequest, NewSessionRequest};
use troupe_core::thread::EndpointSpec;
use troupe_core::{EventId, SessionId};
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;

struct Opts {
    secs: u64,
    clients: usize,
    rate: u64,
    bots: usize,
}

fn opts() -> Opts {
    let mut o = Opts {
        secs: 60,
        clients: 100,
        rate: 200,
        bots: 50,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let val = || {
            args.get(i + 1)
                .and_then(|v| v.parse::<u64>().ok())
                .expect("a number after the flag")
        };
        match args[i].as_str() {
            "--secs" => o.secs = val(),
            "--clients" => o.clients = (val() as usize).max(1),
            "--rate" => o.rate = val().max(1),
            "--bots" => o.bots = (val() as usize).max(1),
            // `cargo bench` passes --bench; anything else unknown is ignored too.
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    o
}

/// The route classes, in the order they are reported, and the mix: request `n` is of class
/// `MIX[n % 10]` (reads 70 %, writes 30 %).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Class {
    ReadLines,
    ReadSession,
    ListSessions,
    ListTurns,
    PostLine,
    PostNote,
}

const CLASSES: [(Class, &str); 6] = [
    (
        Class::ReadLines,
        "read  GET /v1/sessions/:id/messages?limit=50",
    ),
    (Class::ReadSession, "read  GET /v1/sessions/:id"),
    (Class::ListSessions, "read  GET /v1/sessions"),
    (Class::ListTurns, "read  GET /v1/turns?session_id=:id"),
    (Class::PostLine, "write POST /v1/sessions/:id/messages"),
    (Class::PostNote, "write POST /v1/notes"),
];

const MIX: [Class; 10] = [
    Class::PostLine,
    Class::ReadLines,
    Class::ReadSession,
    Class::PostNote,
    Class::ReadLines,
    Class::PostLine,
    Class::ListSessions,
    Class::ReadLines,
    Class::ReadSession,
    Class::ListTurns,
];

#[derive(Default)]
struct Stats {
    latency: Mutex<HashMap<Class, Vec<Duration>>>,
    errors: Mutex<HashMap<Class, u64>>,
    /// Line id -> when its POST was sent.
    sent: Mutex<HashMap<i64, Instant>>,
    /// Line id -> when its event-stream client saw it.
    seen: Mutex<HashMap<i64, Instant>>,
    stream_events: AtomicU64,
}

impl Stats {
    fn took(&self, class: Class, d: Duration) {
        self.latency
            .lock()
            .unwrap()
            .entry(class)
            .or_default()
            .push(d);
    }
    fn failed(&self, class: Class) {
        *self.errors.lock().unwrap().entry(class).or_default() += 1;
    }
}

/// What one event-stream client received: the stored events' ids in arrival order.
#[derive(Default)]
struct Received {
    ids: Mutex<Vec<i64>>,
    dropped: std::sync::atomic::AtomicBool,
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort();
    let idx = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[idx].as_secs_f64() * 1000.0
}

fn load1() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let o = opts();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(o));
}

async fn run(o: Opts) {
    let dir = tempfile::tempdir().unwrap();
    let secrets: SecretSource = Arc::new(|_| None);
    let boot = troupe_server::bootstrap::build_state(
        dir.path(),
        troupe_server::bootstrap::BootOptions::new(RoleTable::new(secrets.clone()), secrets),
    )
    .await
    .unwrap();
    let state = boot.state;
    // A reply streamed in three pieces after a short think, as a fast model would.
    let script = dir.path().join("bench-script.json");
    let reply = json!({"name": "bench", "steps": [{"text": "Noted, thank you.", "chunks": 3, "delay_ms": 20, "chunk_delay_ms": 5}], "on_exhausted": "repeat_last"});
    std::fs::write(&script, reply.to_string()).unwrap();
    let bots: Vec<_> = (0..o.bots)
        .map(|i| {
            state
                .collab
                .create_bot(NewBotRequest {
                    name: format!("Bench {i}"),
                    persona: None,
                    endpoint: Some(EndpointSpec {
                        kind: "scripted".into(),
                        base_url: None,
                        model: "bench".into(),
                        api_key_env: None,
                        script: Some(script.display().to_string()),
                        takes_pictures: false,
                        thinking_levels: Vec::new(),
                        max_output_tokens: None,
                    }),
                })
                .unwrap()
                .id
        })
        .collect();
    let sessions: Vec<i64> = (0..o.clients)
        .map(|i| {
            state
                .collab
                .create_session(NewSessionRequest {
                    workspace: None,
                    kind: "direct".into(),
                    bot_ids: vec![bots[i % bots.len()]],
                    title: None,
                })
                .unwrap()
                .session
                .id
                .0
        })
        .collect();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}");
    let host_rule = troupe_server::hosts::HostRule::new(addr, &[]).unwrap();
    let app = troupe_server::app(state.clone(), host_rule);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let stats = Arc::new(Stats::default());
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .unwrap();

    // The event-stream clients, each from the start of its conversation's log.
    let mut streams = Vec::new();
    let mut received = Vec::new();
    for sid in &sessions {
        let resp = client
            .get(format!("{base}/v1/events?session_id={sid}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let stats = stats.clone();
        let got = Arc::new(Received::default());
        received.push(got.clone());
        streams.push(tokio::spawn(async move {
            let mut body = resp.bytes_stream();
            let mut parser = sse::SseParser::default();
            while let Some(chunk) = body.next().await {
                let Ok(chunk) = chunk else {
                    got.dropped.store(true, Ordering::Relaxed);
                    return;
                };
                let now = Instant::now();
                for m in parser.push(&chunk) {
                    stats.stream_events.fetch_add(1, Ordering::Relaxed);
                    if let Some(id) = m.event_id() {
                        got.ids.lock().unwrap().push(id);
                    }
                    if m.event == "session_message" {
                        let v: Value = serde_json::from_str(&m.data).unwrap_or(Value::Null);
                        let line = &v["payload"]["message"];
                        if line["author"] == "user"
                            && let Some(id) = line["id"].as_i64()
                        {
                            stats.seen.lock().unwrap().entry(id).or_insert(now);
                        }
                    }
                }
            }
            // The server never ends a stream while it runs: an end here is a drop.
            got.dropped.store(true, Ordering::Relaxed);
        }));
    }
    let lagged_before = troupe_server::routes::events::lagged_catch_ups();
    let load_before = load1();
    eprintln!(
        "load: {} clients over {} Bots, {} req/s for {} s against {base} (load1 {load_before})",
        o.clients, o.bots, o.rate, o.secs
    );

    let start = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / o.rate as f64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut n: u64 = 0;
    let mut inflight = Vec::new();
    while start.elapsed() < Duration::from_secs(o.secs) {
        tick.tick().await;
        n += 1;
        let sid = sessions[(n.wrapping_mul(2_654_435_761) % sessions.len() as u64) as usize];
        let (client, stats, base) = (client.clone(), stats.clone(), base.clone());
        let class = MIX[(n % MIX.len() as u64) as usize];
        inflight.push(tokio::spawn(async move {
            let t0 = Instant::now();
            let request = match class {
                Class::ReadLines => {
                    client.get(format!("{base}/v1/sessions/{sid}/messages?limit=50"))
                }
                Class::ReadSession => client.get(format!("{base}/v1/sessions/{sid}")),
                Class::ListSessions => client.get(format!("{base}/v1/sessions")),
                Class::ListTurns => {
                    client.get(format!("{base}/v1/turns?session_id={sid}&limit=20"))
                }
                Class::PostLine => client
                    .post(format!("{base}/v1/sessions/{sid}/messages"))
                    .json(&json!({"body": format!("line {n}")})),
                Class::PostNote => client
                    .post(format!("{base}/v1/notes"))
                    .json(&json!({"title": format!("note {n}"), "body": "written under load"})),
            };
            let body = match request.send().await {
                Ok(r) if r.status().is_success() => r.bytes().await.ok(),
                _ => None,
            };
            let Some(body) = body else {
                stats.failed(class);
                return;
            };
            stats.took(class, t0.elapsed());
            if class == Class::PostLine {
                match serde_json::from_slice::<Value>(&body)
                    .ok()
                    .and_then(|v| v["id"].as_i64())
                {
                    Some(id) => {
                        stats.sent.lock().unwrap().insert(id, t0);
                    }
                    None => stats.failed(class),
                }
            }
        }));
        if inflight.len() > 1000 {
            inflight.retain(|h: &tokio::task::JoinHandle<()>| !h.is_finished());
        }
    }
    for h in inflight {
        let _ = h.await;
    }
    let elapsed = start.elapsed();
    let load_after = load1();

    // Wait (bounded) until the turns the lines woke are done and every stream has caught up
    // with its conversation's log; then compare each client with the log.
    let store = state.collab.store().clone();
    let logs = |store: &troupe_store::Store| -> Vec<Vec<i64>> {
        sessions
            .iter()
            .map(|s| {
                store
                    .read(|tx| tx.session_events_after(EventId(0), SessionId(*s), 1_000_000))
                    .unwrap()
                    .iter()
                    .map(|e| e.id.0)
                    .collect()
            })
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut log = logs(&store);
    loop {
        let settled = state.collab.engine().live_runs() == 0;
        let caught_up = log.iter().zip(&received).all(|(l, r)| {
            r.dropped.load(Ordering::Relaxed) || r.ids.lock().unwrap().last() == l.last()
        });
        if (settled && caught_up) || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        log = logs(&store);
    }
    let lagged = troupe_server::routes::events::lagged_catch_ups() - lagged_before;
    let (mut lost, mut repeated, mut out_of_order, mut clients_short, mut dropped) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    for (l, r) in log.iter().zip(&received) {
        let ids = r.ids.lock().unwrap();
        if r.dropped.load(Ordering::Relaxed) {
            dropped += 1;
        }
        let got: std::collections::HashSet<i64> = ids.iter().copied().collect();
        repeated += ids.len() - got.len();
        out_of_order += ids.windows(2).filter(|w| w[1] <= w[0]).count();
        let missing = l.iter().filter(|id| !got.contains(id)).count();
        lost += missing;
        clients_short += usize::from(missing > 0);
    }
    for s in &streams {
        s.abort();
    }

    let (mut to_event, unseen) = {
        let sent = stats.sent.lock().unwrap();
        let seen = stats.seen.lock().unwrap();
        let mut v = Vec::new();
        let mut unseen = 0;
        for (id, t0) in sent.iter() {
            match seen.get(id) {
                Some(t) => v.push(t.saturating_duration_since(*t0)),
                None => unseen += 1,
            }
        }
        (v, unseen)
    };
    let mut latency = stats.latency.lock().unwrap().clone();
    let errors = stats.errors.lock().unwrap().clone();
    let done: usize = latency.values().map(Vec::len).sum();
    println!(
        "duration_s: {:.1}  load1: {load_before} before, {load_after} after",
        elapsed.as_secs_f64()
    );
    println!(
        "requests_ok: {done} ({:.1}/s), errors: {}",
        done as f64 / elapsed.as_secs_f64(),
        errors.values().sum::<u64>()
    );
    let mut reads_all = Vec::new();
    for (class, name) in CLASSES {
        let v = latency.entry(class).or_default();
        if !matches!(class, Class::PostLine | Class::PostNote) {
            reads_all.extend(v.iter().copied());
        }
        println!(
            "{name:<46} {:>6} ok {:>4} err  p50 {:>7.2} ms  p99 {:>7.2} ms",
            v.len(),
            errors.get(&class).copied().unwrap_or(0),
            pct(v, 0.5),
            pct(v, 0.99)
        );
    }
    println!(
        "{:<46} {:>6} ok           p50 {:>7.2} ms  p99 {:>7.2} ms",
        "all reads",
        reads_all.len(),
        pct(&mut reads_all, 0.5),
        pct(&mut reads_all, 0.99)
    );
    println!(
        "line to first event: {} p50 {:.2} ms p99 {:.2} ms; never seen: {unseen}",
        to_event.len(),
        pct(&mut to_event, 0.5),
        pct(&mut to_event, 0.99)
    );
    let stored: usize = log.iter().map(Vec::len).sum();
    println!(
        "event streams: {} clients, {} events received ({stored} stored for their conversations), \
         dropped {dropped}, lag catch-ups {lagged}, events lost {lost} (clients short {clients_short}), \
         repeated {repeated}, out of order {out_of_order}",
        o.clients,
        stats.stream_events.load(Ordering::Relaxed),
    );
    let read_p99 = pct(&mut reads_all, 0.99);
    println!(
        "goal: read p99 < 50 ms {}; no client loses an event {}",
        if read_p99 < 50.0 { "met" } else { "NOT met" },
        if lost == 0 && dropped == 0 {
            "met"
        } else {
            "NOT met"
        }
    );
    let _ = state.collab.engine().shutdown(Duration::from_secs(5)).await;
}
