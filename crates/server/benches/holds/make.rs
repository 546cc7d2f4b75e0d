//! The `make` part: `POST /v1/holds` on everything over real HTTP against an in-process daemon
//! with live turns mid tool call, timed to the commit, the response and the groups gone.

use crate::args::Opts;
use crate::{load1, quantile};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe_collab::{Collab, NewBotRequest, NewSessionRequest};
use troupe_core::run::RunStatus;
use troupe_core::thread::EndpointSpec;
use troupe_core::{BotId, ThreadId};
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;

/// The Bots' model: the first call runs the long command; a reopened turn answers. A line
/// with "stubborn" runs one that ignores SIGTERM.
fn live_script() -> Value {
    let shell = |command: &str| json!({"tool_calls": [{"name": "shell", "arguments": {"command": command}}]});
    json!({
        "name": "holds-bench",
        "steps": [shell("echo $$ > pgid; exec sleep 60"), {"text": "done"}],
        "rules": [{"when_user_contains": "stubborn",
                   "reply": shell("trap '' TERM; echo $$ > pgid; exec sleep 60")}],
        "on_exhausted": "repeat_last"
    })
}

struct Live {
    thread: ThreadId,
    pgid: i32,
}

/// Open a direct per Bot, post a line to each, and wait until every turn is in its command.
async fn start_live(collab: &Collab, bots: &[BotId], line: &str) -> Vec<Live> {
    let mut threads = Vec::with_capacity(bots.len());
    for b in bots {
        let s = collab
            .create_session(NewSessionRequest {
                workspace: None,
                kind: "direct".into(),
                bot_ids: vec![*b],
                title: None,
            })
            .unwrap()
            .session
            .id;
        collab.post_line(s, line.into(), None).await.unwrap();
        let t = collab.direct_thread(s).unwrap();
        let ws = collab.store().read(|tx| tx.thread(t)).unwrap().workspace;
        threads.push((t, PathBuf::from(ws).join("pgid")));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut live = Vec::with_capacity(threads.len());
    for (thread, file) in threads {
        let pgid = loop {
            if let Some(p) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
            {
                break p;
            }
            assert!(
                Instant::now() < deadline,
                "a turn never started its command"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        live.push(Live { thread, pgid });
    }
    live
}

/// The process groups with a live (not zombie) member, from one pass over /proc: the engine's
/// idea of a group being gone, read once for all the groups rather than once per group.
fn live_groups() -> std::collections::HashSet<i32> {
    let mut out = std::collections::HashSet::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if !entry
            .file_name()
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command name (in parentheses): state, ppid, pgrp.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let pgrp = fields.nth(1).and_then(|p| p.parse().ok());
        if let Some(pgrp) = pgrp
            && !matches!(state, "Z" | "X" | "x")
        {
            out.insert(pgrp);
        }
    }
    out
}

struct Sample {
    /// From sending the request until the hold's write is visible to a reader.
    committed: Duration,
    response: Duration,
    groups_gone: Duration,
    /// The hold as JSON (the response's body); each `hold_upsert` event carries it too.
    hold_bytes: usize,
}

/// One hold over the live turns: time the POST, check what it recorded, wait for the groups.
async fn hold_everything(
    collab: &Collab,
    client: &reqwest::Client,
    base: &str,
    live: &[Live],
) -> (Sample, i64) {
    // A plain thread (not a runtime worker) watching for the commit, every 0.5 ms.
    let store = collab.store().clone();
    let t0 = Instant::now();
    let watch = std::thread::spawn(move || {
        loop {
            if !store.read(|tx| tx.holds_in_force()).unwrap().is_empty() {
                return t0.elapsed();
            }
            std::thread::sleep(Duration::from_micros(500));
        }
    });
    let resp = client
        .post(format!("{base}/v1/holds"))
        .json(&json!({"scope": {"kind": "everything"}}))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let bytes = resp.bytes().await.unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    let response = t0.elapsed();
    let committed = watch.join().unwrap();
    assert_eq!(status, 201, "{body}");
    let stopped = body["effect"]["stopped_turns"].as_array().unwrap().len();
    assert_eq!(
        stopped,
        live.len(),
        "the hold names every live turn it ended"
    );
    // Ended and recorded by the time the response came.
    collab
        .store()
        .read(|tx| {
            for l in live {
                let run = &tx.runs_for_thread(l.thread, 1)?[0];
                assert_eq!(run.status, RunStatus::Stopped, "thread {}", l.thread);
            }
            Ok(())
        })
        .unwrap();
    let mut left: Vec<i32> = live.iter().map(|l| l.pgid).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !left.is_empty() {
        let alive = live_groups();
        left.retain(|p| alive.contains(p));
        assert!(
            Instant::now() < deadline,
            "process groups outlived the kill"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let groups_gone = t0.elapsed();
    (
        Sample {
            committed,
            response,
            groups_gone,
            hold_bytes: bytes.len(),
        },
        body["id"].as_i64().unwrap(),
    )
}

pub async fn make_part(o: &Opts) {
    let dir = tempfile::tempdir().unwrap();
    let secrets: SecretSource = Arc::new(|_| None);
    let boot = troupe_server::bootstrap::build_state(
        dir.path(),
        troupe_server::bootstrap::BootOptions::new(RoleTable::new(secrets.clone()), secrets),
    )
    .await
    .unwrap();
    let state = boot.state;
    let collab = state.collab.clone();
    let script = dir.path().join("live-script.json");
    std::fs::write(&script, live_script().to_string()).unwrap();
    let bots: Vec<BotId> = (0..o.live)
        .map(|i| {
            collab
                .create_bot(NewBotRequest {
                    name: format!("Worker{i:03}"),
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
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}");
    let host_rule = troupe_server::hosts::HostRule::new(addr, &[]).unwrap();
    let app = troupe_server::app(state.clone(), host_rule);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let client = reqwest::Client::new();
    eprintln!(
        "holds make: {} live turns, 1 warm-up + {} samples + {} ignoring SIGTERM, against {base}",
        o.live, o.samples, o.term_ignored
    );

    let began = Instant::now();
    let mut samples = Vec::new();
    let mut warmup = None;
    let mut stubborn = Vec::new();
    for i in 0..1 + o.samples + o.term_ignored {
        let ignoring = i > o.samples;
        let line = if ignoring {
            "stubborn: please begin the job"
        } else {
            "please begin the job"
        };
        let live = start_live(&collab, &bots, line).await;
        let (sample, hold) = hold_everything(&collab, &client, &base, &live).await;
        if i == 0 {
            warmup = Some(sample);
        } else if ignoring {
            stubborn.push(sample);
        } else {
            samples.push(sample);
        }
        if ignoring && i == o.samples + o.term_ignored {
            break;
        }
        // Let the work go on, and let the reopened turns finish before the next sample.
        let r = client
            .post(format!("{base}/v1/holds/{hold}/lift"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        for l in &live {
            tokio::time::timeout(Duration::from_secs(60), collab.engine().wait_idle(l.thread))
                .await
                .expect("a reopened turn finished");
        }
    }
    let wall = began.elapsed();
    let mut resp: Vec<Duration> = samples.iter().map(|s| s.response).collect();
    let mut gone: Vec<Duration> = samples.iter().map(|s| s.groups_gone).collect();
    let mut committed: Vec<Duration> = samples.iter().map(|s| s.committed).collect();
    committed.sort();
    let each: Vec<String> = resp.iter().map(|d| format!("{:.1}", ms(*d))).collect();
    let each_commit: Vec<String> = samples
        .iter()
        .map(|s| format!("{:.1}", ms(s.committed)))
        .collect();
    resp.sort();
    gone.sort();
    let warm = warmup.expect("a warm-up sample");
    println!(
        "committed per sample (ms, in order): {}",
        each_commit.join(" ")
    );
    println!("response per sample (ms, in order): {}", each.join(" "));
    println!(
        "warm-up (not counted): committed {:.1} ms, response {:.1} ms, groups gone {:.1} ms",
        ms(warm.committed),
        ms(warm.response),
        ms(warm.groups_gone)
    );
    for s in &stubborn {
        println!(
            "SIGTERM ignored: committed {:.1} ms, response {:.1} ms, groups gone {:.1} ms",
            ms(s.committed),
            ms(s.response),
            ms(s.groups_gone)
        );
    }
    println!(
        "result bench=holds part=make live={} samples={} committed_p50_ms={:.1} committed_p99_ms={:.1} response_p50_ms={:.1} response_p99_ms={:.1} response_max_ms={:.1} groups_gone_p50_ms={:.1} groups_gone_max_ms={:.1} wall_s={:.1} hold_json_kb={:.0} load1={}",
        o.live,
        resp.len(),
        ms(quantile(&committed, 0.5)),
        ms(quantile(&committed, 0.99)),
        ms(quantile(&resp, 0.5)),
        ms(quantile(&resp, 0.99)),
        ms(*resp.last().unwrap()),
        ms(quantile(&gone, 0.5)),
        ms(*gone.last().unwrap()),
        wall.as_secs_f64(),
        samples[0].hold_bytes as f64 / 1024.0,
        load1()
    );
    let _ = collab.engine().shutdown(Duration::from_secs(5)).await;
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
