//! Bounded load on loopback against an in-process daemon with a scripted Bot.
//!
//! N event-stream clients (one per conversation) stay connected while an open-loop generator
//! sends R requests per second for S seconds: reads of a conversation's lines, and every
//! `--line-every`th request a new user line. Reported: throughput, p50/p99 latency of reads,
//! of posting a line, and of line-to-first-event (from sending the POST until the client on
//! that conversation's event stream sees the `session_message` of that line), and errors.
//!
//! cargo bench -p troupe-server --bench load -- [--secs 30] [--clients 100] [--rate 200] [--line-every 5]

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
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;

struct Opts {
    secs: u64,
    clients: usize,
    rate: u64,
    line_every: u64,
}

fn opts() -> Opts {
    let mut o = Opts {
        secs: 30,
        clients: 100,
        rate: 200,
        line_every: 5,
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
            "--clients" => o.clients = val() as usize,
            "--rate" => o.rate = val(),
            "--line-every" => o.line_every = val().max(1),
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

#[derive(Default)]
struct Stats {
    reads: Mutex<Vec<Duration>>,
    posts: Mutex<Vec<Duration>>,
    /// Line id -> when its POST was sent.
    sent: Mutex<HashMap<i64, Instant>>,
    /// Line id -> when its event-stream client saw it.
    seen: Mutex<HashMap<i64, Instant>>,
    errors: AtomicU64,
    stream_events: AtomicU64,
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort();
    let idx = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[idx].as_secs_f64() * 1000.0
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
    let script = dir.path().join("bench-script.json");
    let reply = json!({"name": "bench", "steps": [{"text": "Noted, thank you.", "chunks": 3}], "on_exhausted": "repeat_last"});
    std::fs::write(&script, reply.to_string()).unwrap();
    let bot = state
        .collab
        .create_bot(NewBotRequest {
            name: "Bench".into(),
            persona: None,
            endpoint: Some(EndpointSpec {
                kind: "scripted".into(),
                base_url: None,
                model: "bench".into(),
                api_key_env: None,
                script: Some(script.display().to_string()),
            }),
        })
        .unwrap();
    let sessions: Vec<i64> = (0..o.clients)
        .map(|_| {
            state
                .collab
                .create_session(NewSessionRequest {
                    kind: "direct".into(),
                    bot_ids: vec![bot.id],
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

    // The event-stream clients.
    let mut streams = Vec::new();
    for sid in &sessions {
        let resp = client
            .get(format!("{base}/v1/events?session_id={sid}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let stats = stats.clone();
        streams.push(tokio::spawn(async move {
            let mut body = resp.bytes_stream();
            let mut parser = sse::SseParser::default();
            while let Some(chunk) = body.next().await {
                let Ok(chunk) = chunk else {
                    stats.errors.fetch_add(1, Ordering::Relaxed);
                    return;
                };
                let now = Instant::now();
                for m in parser.push(&chunk) {
                    stats.stream_events.fetch_add(1, Ordering::Relaxed);
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
        }));
    }
    eprintln!(
        "load: {} clients, {} req/s (every {}th a line) for {} s against {base}",
        o.clients, o.rate, o.line_every, o.secs
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
        let is_line = n.is_multiple_of(o.line_every);
        inflight.push(tokio::spawn(async move {
            let t0 = Instant::now();
            if is_line {
                let r = client
                    .post(format!("{base}/v1/sessions/{sid}/messages"))
                    .json(&json!({"body": format!("line {n}")}))
                    .send()
                    .await;
                match r {
                    Ok(r) if r.status().is_success() => {
                        let v: Value = r.json().await.unwrap_or(Value::Null);
                        stats.posts.lock().unwrap().push(t0.elapsed());
                        match v["id"].as_i64() {
                            Some(id) => {
                                stats.sent.lock().unwrap().insert(id, t0);
                            }
                            None => {
                                stats.errors.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    _ => {
                        stats.errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            } else {
                let r = client
                    .get(format!("{base}/v1/sessions/{sid}/messages?limit=50"))
                    .send()
                    .await;
                let ok = match r {
                    Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
                    _ => false,
                };
                if ok {
                    stats.reads.lock().unwrap().push(t0.elapsed());
                } else {
                    stats.errors.fetch_add(1, Ordering::Relaxed);
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
    // Give the last lines' events a bounded moment to arrive.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let missing = {
            let sent = stats.sent.lock().unwrap();
            let seen = stats.seen.lock().unwrap();
            sent.keys().filter(|id| !seen.contains_key(id)).count()
        };
        if missing == 0 || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let streams_alive = streams.iter().filter(|s| !s.is_finished()).count();
    for s in &streams {
        s.abort();
    }

    let mut reads = stats.reads.lock().unwrap().clone();
    let mut posts = stats.posts.lock().unwrap().clone();
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
    let done = reads.len() + posts.len();
    println!("duration_s: {:.1}", elapsed.as_secs_f64());
    println!(
        "requests_ok: {done} ({:.1}/s)",
        done as f64 / elapsed.as_secs_f64()
    );
    println!(
        "reads: {} p50 {:.2} ms p99 {:.2} ms",
        reads.len(),
        pct(&mut reads, 0.5),
        pct(&mut reads, 0.99)
    );
    println!(
        "posts: {} p50 {:.2} ms p99 {:.2} ms",
        posts.len(),
        pct(&mut posts, 0.5),
        pct(&mut posts, 0.99)
    );
    println!(
        "line_to_first_event: {} p50 {:.2} ms p99 {:.2} ms; never seen: {unseen}",
        to_event.len(),
        pct(&mut to_event, 0.5),
        pct(&mut to_event, 0.99)
    );
    println!(
        "stream_events_received: {}",
        stats.stream_events.load(Ordering::Relaxed)
    );
    println!("event_streams_alive_at_end: {streams_alive}/{}", o.clients);
    println!(
        "errors: {}",
        stats.errors.load(Ordering::Relaxed) + unseen as u64
    );
    let _ = state.collab.engine().shutdown(Duration::from_secs(5)).await;
}
