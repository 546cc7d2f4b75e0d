//! The soak's workload: twenty direct conversations with scripted Bots whose answers write a
//! file, run a shell command that appends markers to `effects.log` (`a PID` before its sleep,
//! `b PID` after; the command's pid is its process group, which the effect ledger records, so
//! every marker names its effect key), and — in every fourth conversation — hand a child task
//! to the Worker Bot. The driver acts as the person: it sends task lines and presses Continue.

use crate::daemon::Daemon;
use crate::rng::Rng;
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

pub const CONVERSATIONS: usize = 20;

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// What the person did to a conversation, and when (the daemon's clock is the same machine's).
#[derive(Clone, Debug)]
pub struct Action {
    pub session: i64,
    pub at_ms: i64,
}

pub struct Workload {
    pub sessions: Vec<i64>,
    pub actions: Vec<Action>,
    pub lines_sent: u64,
    pub children_cancelled: u64,
    /// The conversation that runs Light Loops to approval (its lines are answered by verdicts,
    /// so it is checked by its loops' ends, not by answers).
    pub loop_session: i64,
    pub loops_started: u64,
}

/// The script of conversation `i`'s Bot; its delays come from `rng` so every run varies them.
fn bot_script(i: usize, rng: &mut Rng) -> Value {
    let sleep_ms = rng.range(50, 400);
    let mut calls = Vec::new();
    if i.is_multiple_of(4) {
        calls.push(json!({"name": "task", "arguments": {"agent": "worker",
            "prompt": format!("summarise conversation {i}"), "description": "summary",
            "output": {"kind": "final"}}}));
    }
    calls.extend([
        json!({"name": "write_file", "arguments": {"path": format!("notes/c{i}.txt"), "content": format!("conversation {i}\n")}}),
        json!({"name": "shell", "arguments": {"command": format!(
            "echo \"a $$\" >> effects.log; sleep {}.{:03}; echo \"b $$\" >> effects.log",
            sleep_ms / 1000, sleep_ms % 1000)}}),
    ]);
    json!({
        "name": format!("soak-c{i}"),
        "steps": [
            {"text": "ready"},
            {"text": format!("done c{i}"), "chunks": 3, "chunk_delay_ms": rng.range(10, 60)}
        ],
        "on_exhausted": "repeat_last",
        "rules": [{"when_user_contains": "soakwork", "reply": {
            "text": format!("working on c{i}"),
            "delay_ms": rng.range(20, 300),
            "chunks": 4,
            "chunk_delay_ms": rng.range(10, 80),
            "tool_calls": calls
        }}]
    })
}

/// The Light Loop executor: on the loop's task it writes loop.txt and claims completion.
fn looper_script(rng: &mut Rng) -> Value {
    json!({
        "name": "soak-looper",
        "steps": [{"text": "ready"}, {"text": "claimed"}],
        "on_exhausted": "repeat_last",
        "rules": [{"when_user_contains": "soakloop", "reply": {
            "text": "writing loop.txt",
            "delay_ms": rng.range(20, 300),
            "chunks": 3,
            "chunk_delay_ms": rng.range(10, 80),
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "loop.txt", "content": "looped\n"}},
                {"name": "loop_stop", "arguments": {"summary": "loop.txt written",
                    "completed": ["loop.txt"], "evidence": ["wrote loop.txt"], "limitations": []}}
            ]
        }}]
    })
}

/// The reviewer (the `review` role): approves at once.
pub fn reviewer_script() -> Value {
    json!({
        "name": "soak-reviewer",
        "steps": [
            {"tool_calls": [{"name": "light_loop_approve", "arguments": {"summary": "loop.txt is there"}}]},
            {"text": "approved"}
        ],
        "on_exhausted": "repeat_last"
    })
}

impl Workload {
    /// Turn a Light Loop on in the loop conversation when none runs there, and give it its task.
    pub async fn maybe_start_loop(&mut self, d: &Daemon) -> Result<bool> {
        let s = self.loop_session;
        let wf = d.get(&format!("/v1/sessions/{s}/workflow")).await?;
        let session = d.get(&format!("/v1/sessions/{s}")).await?;
        if wf["kind"] == "lightloop" || session["running"] == true || !session["paused"].is_null() {
            return Ok(false);
        }
        let n = self.loops_started + 1;
        if d.post(
            &format!("/v1/sessions/{s}/workflow"),
            json!({"kind": "lightloop", "instructions": format!("soakloop {n}: write loop.txt"), "max_iterations": 3}),
        )
        .await
        .is_err()
        {
            return Ok(false);
        }
        self.loops_started += 1;
        self.actions.push(Action {
            session: s,
            at_ms: now_ms(),
        });
        d.post(
            &format!("/v1/sessions/{s}/messages"),
            json!({"body": format!("soakloop {n} go")}),
        )
        .await?;
        Ok(true)
    }

    /// Bots, their scripts (under `dir`) and one direct conversation with each.
    pub async fn setup(d: &Daemon, dir: &Path, rng: &mut Rng) -> Result<Workload> {
        std::fs::create_dir_all(dir)?;
        let worker = dir.join("worker.json");
        std::fs::write(
            &worker,
            json!({"steps": [{"text": "summary written", "delay_ms": 150, "chunks": 2, "chunk_delay_ms": 40}],
                "on_exhausted": "repeat_last"})
            .to_string(),
        )?;
        d.post("/v1/bots", json!({"name": "Worker", "endpoint": {"kind": "scripted", "model": "s", "script": worker}}))
            .await?;
        let mut sessions = Vec::new();
        for i in 0..CONVERSATIONS {
            let path = dir.join(format!("c{i}.json"));
            std::fs::write(&path, bot_script(i, rng).to_string())?;
            let bot = d
                .post("/v1/bots", json!({"name": format!("S{i}"), "endpoint": {"kind": "scripted", "model": "s", "script": path}}))
                .await?;
            let bot = bot["id"].as_i64().context("bot id")?;
            let s = d
                .post("/v1/sessions", json!({"kind": "direct", "bot_ids": [bot]}))
                .await?;
            sessions.push(s["id"].as_i64().context("session id")?);
        }
        let looper = dir.join("looper.json");
        std::fs::write(&looper, looper_script(rng).to_string())?;
        let bot = d
            .post("/v1/bots", json!({"name": "Looper", "endpoint": {"kind": "scripted", "model": "s", "script": looper}}))
            .await?;
        let bot = bot["id"].as_i64().context("bot id")?;
        let s = d
            .post("/v1/sessions", json!({"kind": "direct", "bot_ids": [bot]}))
            .await?;
        let loop_session = s["id"].as_i64().context("session id")?;
        Ok(Workload {
            sessions,
            actions: Vec::new(),
            lines_sent: 0,
            children_cancelled: 0,
            loop_session,
            loops_started: 0,
        })
    }

    /// The person presses Continue on some paused conversations (`all`: on every one).
    pub async fn continue_paused(&mut self, d: &Daemon, rng: &mut Rng, all: bool) -> Result<usize> {
        let list = d.get("/v1/sessions").await?;
        let mut pressed = 0;
        for s in list.as_array().into_iter().flatten() {
            let id = s["id"].as_i64().unwrap_or(0);
            if !(self.sessions.contains(&id) || id == self.loop_session) || s["paused"].is_null() {
                continue;
            }
            if !all && !rng.chance(1, 2) {
                continue;
            }
            self.actions.push(Action {
                session: id,
                at_ms: now_ms(),
            });
            d.post(&format!("/v1/sessions/{id}/continue"), json!({}))
                .await?;
            pressed += 1;
        }
        Ok(pressed)
    }

    /// Child tasks a crash interrupted wait for their parent to resume them (it never does
    /// here); at the end the person cancels them, which is their way to finish. A Light Loop's
    /// reviewer is its loop's to resume, and is left alone.
    pub async fn cancel_interrupted_children(&mut self, d: &Daemon, db: &Path) -> Result<usize> {
        let c = crate::checks::open(db)?;
        let ids: Vec<i64> = c
            .prepare("SELECT id FROM tasks WHERE status = 'interrupted' AND role = 'task'")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for id in &ids {
            d.post(&format!("/v1/child-tasks/{id}/cancel"), json!({}))
                .await?;
        }
        self.children_cancelled += ids.len() as u64;
        Ok(ids.len())
    }

    /// The task line the person sends to conversation `idx` in `cycle`.
    pub fn line(&mut self, idx: usize, cycle: u64) -> (i64, Value) {
        let session = self.sessions[idx];
        self.actions.push(Action {
            session,
            at_ms: now_ms(),
        });
        self.lines_sent += 1;
        (
            session,
            json!({"body": format!("soakwork c{idx} cycle {cycle}")}),
        )
    }

    /// Send task lines to `n` conversations picked at random, one after another.
    pub async fn send_lines(
        &mut self,
        d: &Daemon,
        rng: &mut Rng,
        n: usize,
        cycle: u64,
    ) -> Result<()> {
        for _ in 0..n {
            let idx = rng.range(0, CONVERSATIONS as u64) as usize;
            let (session, body) = self.line(idx, cycle);
            d.post(&format!("/v1/sessions/{session}/messages"), body)
                .await?;
        }
        Ok(())
    }
}
