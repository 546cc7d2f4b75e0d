//! The `kernel` part: a Bot's step (the hold admission check at run start, the hold guard on
//! every effectful call) with no holds in the store against one with many lifted holds, on a
//! zero-latency model that times the gap between a thread's model calls.

use crate::args::Opts;
use crate::{load1, quantile};
use async_trait::async_trait;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use troupe_collab::holds::{HoldRequest, ScopeRequest};
use troupe_collab::{Collab, NewBotRequest, NewSessionRequest, SharedRoles};
use troupe_core::thread::EndpointSpec;
use troupe_core::{BotId, SessionId, ThreadId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_engine::models::{FixedModel, SecretSource};
use troupe_engine::{Engine, RoleTable};
use troupe_llm::{
    ChatMessage, FinishReason, LlmError, ModelRequest, ModelResponse, Provider, RetryPolicy,
    StreamEvent, ToolCall, ToolSpec, Usage,
};

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
        ChatMessage::User { text, .. } => {
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
                takes_pictures: false,
                thinking_levels: Vec::new(),
                max_output_tokens: None,
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
            workspace: None,
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

pub async fn kernel_part(o: &Opts) {
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
