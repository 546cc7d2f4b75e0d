//! A channel account's signed inbound messages under a steady rate (issue 18): how long from
//! sending `POST /v1/channels/:account/inbound` until its `202` is read.
//!
//! An in-process daemon (`bootstrap::build_state`, a SQLite file at `full` durability, as
//! `troupe serve` opens it) behind the real router (`troupe_server::app`) on a loopback port, one
//! webhook account `acme` whose outbound URL is a local receiver (it answers every send 200, and
//! counts them). Every Bot's model is a scripted endpoint that answers at once, so the turns the
//! messages wake run (and answer) while the next messages arrive.
//!
//! The `202` comes after the message's item is committed: the route awaits `Channels::accept`,
//! which delivers in one `Store::write` (the line, the inbox item with its key
//! `channel:<account>:<message_id>`, the dedupe row — and with Boss Mode on the `received`
//! reaction) that returns after its commit, then asks the engine for a drive, then answers. After
//! the run the bench checks every message has its dedupe row and every answer said
//! `accepted: true, duplicate: false`.
//!
//! The sender is open-loop: message `i` is sent at `start + i / rate` whatever became of the
//! earlier ones (each its own task on a client runtime of its own, on its own thread). Each is
//! timed from its scheduled time (so a sender running behind counts against the answer) and from
//! its actual send; `late` counts answers over 20 ms from their scheduled time, `sent_late` sends
//! that left more than 2 ms behind schedule (tokio's timer alone wakes up to 1 ms late).
//! Messages go round-robin to `--chats` direct chats, each a new `message_id`; one warm-up
//! message per chat is sent first and not counted (with Boss Mode off it makes the chat's
//! conversation).
//!
//! Two daemons, one after the other, each in its own data directory:
//! * `off`: Boss Mode off, each chat has its own conversation with the account's Bot `Ada`;
//!   its answer is carried back to the chat (a signed reply to the receiver).
//! * `on`: `[experimental] boss_mode = true`: provisioning makes the account's runtime boss
//!   session at boot and every message goes there (prefixed, with `channel_*` metadata, and a
//!   `received` reaction recorded in the same commit).
//!
//! cargo bench -p troupe-server --bench channel_inbound -- [--rate 200] [--seconds 10]
//!     [--chats 20] [--mode off|on|both]
//!
//! Run without `--bench` (as `cargo test --benches` does) it sends 20/s for 1 s in both modes.

use axum::body::Bytes;
use axum::extract::State;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use troupe_channels::{ChannelDef, ChannelKind, FilterRules, SIGNATURE_HEADER, sign};
use troupe_collab::NewBotRequest;
use troupe_core::runtime_boss::RuntimeSettingsPatch;
use troupe_core::thread::EndpointSpec;
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;

const ACCOUNT: &str = "acme";
const SECRET_ENV: &str = "BENCH_CHANNEL_SECRET";
const SECRET: &str = "bench-s3cret";
const GOAL: Duration = Duration::from_millis(20);

struct Opts {
    rate: f64,
    seconds: f64,
    chats: usize,
    modes: Vec<bool>,
}

fn opts() -> Opts {
    let args: Vec<String> = std::env::args().collect();
    let benching = args.iter().any(|a| a == "--bench");
    let get = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let num = |name: &str, bench: f64, smoke: f64| {
        get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(if benching { bench } else { smoke })
    };
    let modes = match get("--mode").as_deref().unwrap_or("both") {
        "off" => vec![false],
        "on" => vec![true],
        "both" => vec![false, true],
        other => panic!("--mode: off, on or both, not {other}"),
    };
    Opts {
        rate: num("--rate", 200.0, 20.0),
        seconds: num("--seconds", 10.0, 1.0),
        chats: num("--chats", 20.0, 4.0) as usize,
        modes,
    }
}

/// The chat service's side: every signed send answered 200 and counted.
async fn receiver() -> (Arc<AtomicUsize>, String) {
    async fn got(State(n): State<Arc<AtomicUsize>>, body: Bytes) -> &'static str {
        assert!(!body.is_empty());
        n.fetch_add(1, Ordering::SeqCst);
        "{}"
    }
    let n = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new()
        .route("/out", axum::routing::post(got))
        .with_state(n.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/out", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (n, url)
}

fn script(dir: &std::path::Path) -> EndpointSpec {
    let path = dir.join("model.json");
    let s = json!({"name": "channel-bench", "steps": [{"text": "On it."}], "on_exhausted": "repeat_last"});
    std::fs::write(&path, s.to_string()).unwrap();
    EndpointSpec {
        kind: "scripted".into(),
        base_url: None,
        model: "bench".into(),
        api_key_env: None,
        script: Some(path.display().to_string()),
        takes_pictures: false,
        thinking_levels: Vec::new(),
        max_output_tokens: None,
    }
}

/// One message's signed body.
fn message(chat: usize, id: &str) -> (Vec<u8>, String) {
    let body = json!({
        "chat_id": format!("chat-{chat}"),
        "chat_type": "dm",
        "chat_name": format!("Chat {chat}"),
        "sender_id": format!("u{chat}"),
        "sender_name": format!("Person {chat}"),
        "message_id": id,
        "text": format!("please look at item {id}"),
    })
    .to_string()
    .into_bytes();
    let sig = sign(SECRET.as_bytes(), &body);
    (body, sig)
}

struct Answer {
    /// From the scheduled send time.
    scheduled: Duration,
    /// From the actual send.
    sent: Duration,
    /// How far behind schedule the send left.
    behind: Duration,
    ok: bool,
}

async fn post(client: &reqwest::Client, url: &str, chat: usize, id: &str) -> (u16, Value) {
    let (body, sig) = message(chat, id);
    let r = client
        .post(url)
        .header("content-type", "application/json")
        .header(SIGNATURE_HEADER, sig)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The open-loop run on a client runtime of its own: every message sent on schedule.
fn paced(url: String, o: &Opts, tag: &'static str) -> Vec<Answer> {
    let rate = o.rate;
    let n = (o.rate * o.seconds).round() as usize;
    let chats = o.chats;
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let client = reqwest::Client::new();
            // Open the connections first, so the first sends do not pay for them.
            for i in 0..chats {
                let (status, v) = post(&client, &url, i, &format!("{tag}-warm-{i}")).await;
                assert_eq!(status, 202, "{v}");
            }
            let start = tokio::time::Instant::now() + Duration::from_millis(50);
            let mut tasks = Vec::with_capacity(n);
            for i in 0..n {
                let at = start + Duration::from_secs_f64(i as f64 / rate);
                let client = client.clone();
                let url = url.clone();
                tasks.push(tokio::spawn(async move {
                    tokio::time::sleep_until(at).await;
                    let t0 = tokio::time::Instant::now();
                    let (status, v) = post(&client, &url, i % chats, &format!("{tag}-{i}")).await;
                    let done = tokio::time::Instant::now();
                    Answer {
                        scheduled: done - at,
                        sent: done - t0,
                        behind: t0 - at,
                        ok: status == 202 && v["accepted"] == true && v["duplicate"] == false,
                    }
                }));
            }
            let mut out = Vec::with_capacity(n);
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        })
    })
    .join()
    .unwrap()
}

fn q(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3
}

fn load1() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

async fn run(o: &Opts, boss_mode: bool) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let (sends, outbound_url) = receiver().await;
    let secrets: SecretSource = Arc::new(|name| (name == SECRET_ENV).then(|| SECRET.to_string()));
    let mut roles = RoleTable::new(secrets.clone());
    // The runtime boss's Bot has no endpoint of its own: it uses the default role.
    roles.set_role("default", script(dir.path())).unwrap();
    let mut boot = troupe_server::bootstrap::BootOptions::new(roles, secrets);
    boot.channels = vec![ChannelDef {
        name: ACCOUNT.into(),
        kind: ChannelKind::Webhook,
        bot: "Ada".into(),
        secret_env: SECRET_ENV.into(),
        outbound_url,
        filter: FilterRules::default(),
        enabled: true,
    }];
    boot.runtime_boss = RuntimeSettingsPatch {
        boss_mode: Some(boss_mode),
        ..Default::default()
    };
    let state = troupe_server::bootstrap::build_state(dir.path(), boot)
        .await
        .unwrap()
        .state;
    let collab = state.collab.clone();
    collab
        .create_bot(NewBotRequest {
            name: "Ada".into(),
            persona: None,
            endpoint: Some(script(dir.path())),
        })
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let host_rule = troupe_server::hosts::HostRule::new(addr, &[]).unwrap();
    let app = troupe_server::app(state.clone(), host_rule);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let url = format!("http://{addr}/v1/channels/{ACCOUNT}/inbound");
    let mode = if boss_mode { "on" } else { "off" };
    eprintln!(
        "channel_inbound boss_mode={mode}: {} messages at {}/s to {} chats, {url}",
        (o.rate * o.seconds).round(),
        o.rate,
        o.chats
    );

    let tag: &'static str = if boss_mode { "on" } else { "off" };
    let url2 = url.clone();
    let began = Instant::now();
    let answers = {
        let o2 = Opts {
            rate: o.rate,
            seconds: o.seconds,
            chats: o.chats,
            modes: vec![],
        };
        tokio::task::spawn_blocking(move || paced(url2, &o2, tag))
            .await
            .unwrap()
    };
    let wall = began.elapsed();

    // Every answer was an acceptance, and every message's dedupe row is committed.
    let refused = answers.iter().filter(|a| !a.ok).count();
    let missing = collab
        .store()
        .read(|tx| {
            let mut m = 0;
            for i in 0..answers.len() {
                if tx
                    .channel_message(ACCOUNT, &format!("{tag}-{i}"))?
                    .is_none()
                {
                    m += 1;
                }
            }
            Ok(m)
        })
        .unwrap();
    let sessions: std::collections::BTreeSet<i64> = collab
        .store()
        .read(|tx| {
            let mut s = std::collections::BTreeSet::new();
            for i in 0..answers.len() {
                if let Some(m) = tx.channel_message(ACCOUNT, &format!("{tag}-{i}"))? {
                    s.insert(m.session_id.0);
                }
            }
            Ok(s)
        })
        .unwrap();

    let mut from_schedule: Vec<Duration> = answers.iter().map(|a| a.scheduled).collect();
    let mut from_send: Vec<Duration> = answers.iter().map(|a| a.sent).collect();
    from_schedule.sort();
    from_send.sort();
    let mut behind: Vec<Duration> = answers.iter().map(|a| a.behind).collect();
    behind.sort();
    let late = answers.iter().filter(|a| a.scheduled > GOAL).count();
    let sent_late = answers
        .iter()
        .filter(|a| a.behind > Duration::from_millis(2))
        .count();
    let p99 = q(&from_schedule, 0.99);
    println!(
        "result bench=channel_inbound boss_mode={mode} messages={} rate={} chats={} sessions={} p50_ms={:.2} p90_ms={:.2} p99_ms={:.2} max_ms={:.2} send_p50_ms={:.2} send_p99_ms={:.2} late_over_20ms={late} sent_late_over_2ms={sent_late} behind_p99_ms={:.2} refused={refused} uncommitted={missing} outbound_sends={} wall_s={:.1} load1={}",
        answers.len(),
        o.rate,
        o.chats,
        sessions.len(),
        q(&from_schedule, 0.5),
        q(&from_schedule, 0.9),
        p99,
        from_schedule.last().unwrap().as_secs_f64() * 1e3,
        q(&from_send, 0.5),
        q(&from_send, 0.99),
        q(&behind, 0.99),
        sends.load(Ordering::SeqCst),
        wall.as_secs_f64(),
        load1()
    );
    assert_eq!(refused, 0, "every message was accepted once");
    assert_eq!(missing, 0, "every accepted message is committed");
    assert_eq!(
        sessions.len(),
        if boss_mode { 1 } else { o.chats },
        "boss mode on: one runtime boss session; off: one conversation per chat"
    );
    state.shutdown.cancel();
    let _ = collab.engine().shutdown(Duration::from_secs(5)).await;
    p99 < GOAL.as_secs_f64() * 1e3
}

fn main() {
    let o = opts();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut met = Vec::new();
    for &boss_mode in &o.modes {
        met.push((boss_mode, rt.block_on(run(&o, boss_mode))));
    }
    if std::env::args().any(|a| a == "--bench") {
        for (boss_mode, ok) in met {
            println!(
                "goal p99 < 20 ms at {}/s, boss_mode={}: {}",
                o.rate,
                if boss_mode { "on" } else { "off" },
                if ok { "met" } else { "NOT met" }
            );
        }
    }
}
