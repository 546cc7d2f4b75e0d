//! Holds (issue 14): what a person's stop costs.
//!
//! * `make`: an in-process daemon (`bootstrap::build_state`, a SQLite file at `full`
//!   durability, as `troupe serve` opens it) with `--live` scripted Bots, each in a direct of
//!   its own and each turn live mid tool call (a shell command that writes its process group
//!   id, then `exec sleep 60`). `POST /v1/holds {scope: {kind: "everything"}}` over real HTTP on
//!   loopback, timed from sending the request to reading the whole response: the one write that
//!   makes the hold and ends and records every covered turn has committed by then. After the
//!   response every turn's run must be `stopped` and the hold must name all of them. Also
//!   timed: until the commit is visible to a reader (a plain thread polling the store every
//!   0.5 ms, off the runtime's workers), so the write and the wait for the answer show apart.
//!   Reported apart: the time from sending the request until every process group is gone
//!   (SIGTERM, then SIGKILL after the 3 s grace, both after the response). Each sample has fresh live turns
//!   (new directs); the hold is then lifted with the Lift route and the reopened turns finish
//!   before the next. One warm-up sample is not counted; `--term-ignored` samples at the end run
//!   a command that ignores SIGTERM, so their groups last the grace.
//! * `kernel`: the kernel's step in a Bot's direct (the hold admission check at every run start,
//!   the hold guard on every effectful call) with no holds in the store, against a store with
//!   `--holds` holds made and lifted through the Collab API (scopes everything, the Bot, a
//!   direct, in turn). The kernel bench's measure: a zero-latency model that times, per thread,
//!   the gap from one model call returning to the next beginning (one whole step: records,
//!   the guards, the tool, the inbox, the history). Each turn is `--steps` calls of an
//!   effectful no-op tool, then a text answer, one turn at a time. Also: from posting the line to
//!   the first model call (reading, routing, admission, run start), and `Tx::covering_holds`
//!   alone. The two stores are measured in alternating rounds.
//!
//! cargo bench -p troupe-server --bench holds -- [--part make|kernel|both] [--live 100]
//!     [--samples 30] [--term-ignored 1] [--holds 1000] [--threads 30] [--steps 10] [--rounds 3]
//!
//! Run without `--bench` (as `cargo test --benches` does) it does a tiny smoke run.

use async_trait::async_trait;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use troupe_collab::holds::{HoldRequest, ScopeRequest};
use troupe_collab::{Collab, NewBotRequest, NewSessionRequest, SharedRoles};
use troupe_core::run::RunStatus;
use troupe_core::thread::EndpointSpec;
use troupe_core::{BotId, SessionId, ThreadId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_engine::models::{FixedModel, SecretSource};
use troupe_engine::{Engine, RoleTable};
use troupe_llm::{
    ChatMessage, FinishReason, LlmError, ModelRequest, ModelResponse, Provider, RetryPolicy,
    StreamEvent, ToolCall, ToolSpec, Usage,
};

struct Opts {
    part: String,
    live: usize,
    samples: usize,
    term_ignored: usize,
    holds: usize,
    threads: usize,
    steps: usize,
    rounds: usize,
}

fn opts() -> Opts {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes --bench; without it (`cargo test --benches`) a smoke run.
    let mut o = if args.iter().any(|a| a == "--bench") {
        Opts {
            part: "both".into(),
            live: 100,
            samples: 30,
            term_ignored: 1,
            holds: 1000,
            threads: 30,
            steps: 10,
            rounds: 3,
        }
    } else {
        Opts {
            part: "both".into(),
            live: 3,
            samples: 2,
            term_ignored: 0,
            holds: 6,
            threads: 2,
            steps: 2,
            rounds: 1,
        }
    };
    let mut i = 0;
    while i < args.len() {
        let val = || -> usize {
            args.get(i + 1)
                .and_then(|v| v.parse().ok())
                .expect("a number after the flag")
        };
        match args[i].as_str() {
            "--part" => o.part = args.get(i + 1).expect("make, kernel or both").clone(),
            "--live" => o.live = val().max(1),
            "--samples" => o.samples = val().max(1),
            "--term-ignored" => o.term_ignored = val(),
            "--holds" => o.holds = val(),
            "--threads" => o.threads = val().max(1),
            "--steps" => o.steps = val().max(1),
            "--rounds" => o.rounds = val().max(1),
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    assert!(
        matches!(o.part.as_str(), "make" | "kernel" | "both"),
        "--part is make, kernel or both"
    );
    o
}

/// The value at quantile `q` of sorted values (nearest rank, as the other benches do).
fn quantile<T: Copy>(sorted: &[T], q: f64) -> T {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

/// The machine's 1-minute load average, for the result lines (other work shares the cores).
fn load1() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let o = opts();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if o.part != "kernel" {
        rt.block_on(make_part(&o));
    }
    if o.part != "make" {
        rt.block_on(kernel_part(&o));
    }
}

// ---------------------------------------------------------------------------------------------
// make: POST /v1/holds with live turns

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

async fn make_part(o: &Opts) {
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

// ---------------------------------------------------------------------------------------------
// kernel: a step with lifted holds in the store

const TASK: &str = "bench task ";
const NOOP: &str = "bench_noop";

#[derive(Default)]
struct Slot {
    posted: Option<Instant>,
    first_call: Option<Instant>,
    last_end: Option<Instant>,
    gaps_ns: Vec<u64>,
}

/// Zero latency: asks for the no-op tool until `steps` calls are done, then answers. Finds its
/// thread by the "bench task N" in the person's line and keeps that thread's step gaps.
struct Timed {
    steps: usize,
    slots: Mutex<HashMap<usize, Slot>>,
}

impl Timed {
    fn posted(&self, index: usize, at: Instant) {
        self.slots.lock().unwrap().entry(index).or_default().posted = Some(at);
    }

    /// Every step gap and every line-to-first-call time of `indices`, in nanoseconds.
    fn take(&self, indices: std::ops::Range<usize>) -> (Vec<u64>, Vec<u64>) {
        let slots = self.slots.lock().unwrap();
        let (mut gaps, mut starts) = (Vec::new(), Vec::new());
        for i in indices {
            let s = &slots[&i];
            gaps.extend_from_slice(&s.gaps_ns);
            if let (Some(p), Some(f)) = (s.posted, s.first_call) {
                starts.push(f.duration_since(p).as_nanos() as u64);
            }
        }
        (gaps, starts)
    }
}

fn task_index(req: &ModelRequest) -> Option<usize> {
    req.messages.iter().find_map(|m| match m {
        ChatMessage::User { text } => {
            let at = text.find(TASK)?;
            let digits: String = text[at + TASK.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        }
        _ => None,
    })
}

#[async_trait]
impl Provider for Timed {
    fn endpoint(&self) -> &str {
        "bench:zero-latency"
    }
    fn model(&self) -> &str {
        "bench"
    }
    async fn complete_once(
        &self,
        req: &ModelRequest,
        _events: &UnboundedSender<StreamEvent>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, LlmError> {
        let start = Instant::now();
        let done = req
            .messages
            .iter()
            .filter(|m| matches!(m, ChatMessage::Assistant { .. }))
            .count();
        let usage = Usage {
            input_tokens: 100,
            cached_input_tokens: 0,
            output_tokens: 10,
        };
        let response = if done < self.steps {
            ModelResponse {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: format!("call-{done}"),
                    name: NOOP.into(),
                    arguments: "{}".into(),
                }],
                usage,
                finish: FinishReason::ToolCalls,
            }
        } else {
            ModelResponse {
                text: "done".into(),
                tool_calls: Vec::new(),
                usage,
                finish: FinishReason::Stop,
            }
        };
        if let Some(i) = task_index(req) {
            let mut slots = self.slots.lock().unwrap();
            let s = slots.entry(i).or_default();
            match s.last_end {
                Some(prev) => s.gaps_ns.push(start.duration_since(prev).as_nanos() as u64),
                None => s.first_call = Some(start),
            }
            s.last_end = Some(Instant::now());
        }
        Ok(response)
    }
}

struct Noop;

#[async_trait]
impl ToolHandler for Noop {
    async fn call(&self, _ctx: &ToolCallContext, _arguments: &str) -> ToolReply {
        ToolReply::ok("ok")
    }
}

/// An effectful tool: every call passes the guards (the hold guard among them) and the ledger.
fn noop_tool() -> ToolRegistration {
    ToolRegistration {
        owner: "bench".into(),
        spec: ToolSpec {
            name: NOOP.into(),
            description: "Does nothing and answers ok.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
        effectful: true,
        read_only: false,
        available: Arc::new(|_| true),
        handler: Arc::new(Noop),
    }
}

struct World {
    collab: Collab,
    model: Arc<Timed>,
    bot: BotId,
    next: usize,
    last: Option<ThreadId>,
    _dir: tempfile::TempDir,
}

fn world(steps: usize) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::Store::open(
        dir.path().join("troupe.db"),
        Arc::new(troupe_core::SystemClock),
    )
    .unwrap();
    let model = Arc::new(Timed {
        steps,
        slots: Mutex::default(),
    });
    let secrets: SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = troupe_collab::tools::ToolHost::new();
    let fixed = Arc::new(FixedModel {
        provider: model.clone(),
        retry: RetryPolicy::none(),
    });
    let engine = troupe_collab::extend(Engine::builder(store, fixed), &host)
        .and_then(|b| b.tool(noop_tool()))
        .unwrap()
        .build();
    let collab = Collab::new(engine, roles, dir.path().join("workspaces"));
    host.attach(&collab);
    let script = dir.path().join("unused.json");
    std::fs::write(&script, r#"{"steps":[{"text":"unused"}]}"#).unwrap();
    let bot = collab
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
        .unwrap()
        .id;
    World {
        collab,
        model,
        bot,
        next: 0,
        last: None,
        _dir: dir,
    }
}

fn direct(w: &World) -> SessionId {
    w.collab
        .create_session(NewSessionRequest {
            kind: "direct".into(),
            bot_ids: vec![w.bot],
            title: None,
        })
        .unwrap()
        .session
        .id
}

fn scope(kind: &str) -> ScopeRequest {
    ScopeRequest {
        kind: kind.into(),
        bot_id: None,
        session_id: None,
        task_id: None,
        ticket_id: None,
        turn_id: None,
    }
}

/// `n` holds made and lifted through the Collab API: everything, the Bot, a direct, in turn.
async fn lifted_holds(w: &World, n: usize) {
    let s = direct(w);
    for i in 0..n {
        let scope = match i % 3 {
            0 => scope("everything"),
            1 => ScopeRequest {
                bot_id: Some(w.bot),
                ..scope("bot")
            },
            _ => ScopeRequest {
                session_id: Some(s),
                ..scope("session")
            },
        };
        let (h, created) = w
            .collab
            .post_hold(HoldRequest {
                scope,
                session_id: Some(s),
                action: None,
            })
            .await
            .unwrap();
        assert!(created);
        w.collab.lift_hold(h.hold.id).await.unwrap();
    }
    let left = w.collab.store().read(|tx| tx.holds_in_force()).unwrap();
    assert!(left.is_empty(), "every hold lifted");
}

/// `threads` turns one after another, each in a direct of its own. Returns the step gaps and
/// the line-to-first-call times (ns).
async fn round(w: &mut World, threads: usize, steps: usize) -> (Vec<u64>, Vec<u64>) {
    let first = w.next;
    for _ in 0..threads {
        let i = w.next;
        w.next += 1;
        let s = direct(w);
        let t = w.collab.direct_thread(s).unwrap();
        w.model.posted(i, Instant::now());
        w.collab
            .post_line(s, format!("{TASK}{i}"), None)
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(60), w.collab.engine().wait_idle(t))
            .await
            .expect("the turn finished");
        let effects = w
            .collab
            .store()
            .read(|tx| tx.effects_for_thread(t))
            .unwrap();
        assert_eq!(
            effects.len(),
            steps,
            "every step's call passed the guards and ran"
        );
        w.last = Some(t);
    }
    w.model.take(first..w.next)
}

/// `Tx::covering_holds` alone, for the facts of the world's last turn (p50, ns).
fn covering_p50(w: &World) -> u64 {
    let store = w.collab.store();
    let thread = w.last.expect("a turn ran");
    let facts = store
        .read(|tx| {
            let run = tx.runs_for_thread(thread, 1)?[0].id;
            tx.turn_facts(run)
        })
        .unwrap()
        .expect("the last turn has facts");
    let mut v: Vec<u64> = (0..500)
        .map(|_| {
            let t0 = Instant::now();
            let ids = store.read(|tx| tx.covering_holds(&facts)).unwrap();
            assert!(ids.is_empty());
            t0.elapsed().as_nanos() as u64
        })
        .collect();
    v.sort();
    quantile(&v, 0.5)
}

async fn kernel_part(o: &Opts) {
    eprintln!(
        "holds kernel: {} rounds of {} turns × {} effectful steps; none vs {} lifted holds",
        o.rounds, o.threads, o.steps, o.holds
    );
    let mut plain = world(o.steps);
    let mut held = world(o.steps);
    let t0 = Instant::now();
    lifted_holds(&held, o.holds).await;
    eprintln!(
        "{} holds made and lifted in {:.1} s",
        o.holds,
        t0.elapsed().as_secs_f64()
    );
    let (mut gaps, mut starts) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    let mut round_p50 = [Vec::new(), Vec::new()];
    for r in 0..o.rounds {
        for (k, w) in [&mut plain, &mut held].into_iter().enumerate() {
            let (mut g, s) = round(w, o.threads, o.steps).await;
            g.sort();
            round_p50[k].push(quantile(&g, 0.5));
            gaps[k].extend(g);
            starts[k].extend(s);
        }
        eprintln!(
            "round {}: step p50 {} (none) / {} ({} lifted)",
            r + 1,
            us(*round_p50[0].last().unwrap()),
            us(*round_p50[1].last().unwrap()),
            o.holds
        );
    }
    let cover = [covering_p50(&plain), covering_p50(&held)];
    let mut line = format!(
        "result bench=holds part=kernel holds={} threads={} steps={} rounds={} load1={}",
        o.holds,
        o.threads * o.rounds,
        o.steps,
        o.rounds,
        load1()
    );
    for (k, name) in ["none", "lifted"].iter().enumerate() {
        gaps[k].sort();
        starts[k].sort();
        line.push_str(&format!(
            " {name}_step_p50_us={:.0} {name}_step_p99_us={:.0} {name}_start_p50_us={:.0} {name}_covering_holds_p50_us={:.0}",
            quantile(&gaps[k], 0.5) as f64 / 1000.0,
            quantile(&gaps[k], 0.99) as f64 / 1000.0,
            quantile(&starts[k], 0.5) as f64 / 1000.0,
            cover[k] as f64 / 1000.0,
        ));
    }
    println!("{line}");
    for w in [&plain, &held] {
        let _ = w.collab.engine().shutdown(Duration::from_secs(5)).await;
    }
}

fn us(ns: u64) -> String {
    format!("{:.0} µs", ns as f64 / 1000.0)
}
