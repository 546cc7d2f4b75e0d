//! One run of one job: a fresh data dir and workspace, a real daemon, the person's lines over
//! HTTP, the limits, then the checks and what it cost.

use super::checks::{self, Verdict};
use super::daemon::{Daemon, SseReader};
use super::job::{After, Job};
use super::progress::Live;
use super::proxy::PromptReuse;
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use troupe_store::UsageTotals;

/// Where the model calls of a job go.
#[derive(Clone, Debug)]
pub enum Model {
    /// The user's endpoint (through the bench's proxy).
    Endpoint {
        base_url: String,
        model: String,
        api_key_env: Option<String>,
        kind: String,
        max_output_tokens: Option<u32>,
    },
    /// The user's own config file, used as it is.
    Config(PathBuf),
    /// Scripted answers: `<job>/scripts/<set>[.<role>].json`.
    Scripts(String),
}

/// How one run ended.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunResult {
    pub job: String,
    pub title: String,
    pub run: u32,
    pub passed: bool,
    /// Why the run failed: the first failing check, a limit, or the harness's own error.
    pub failure: Option<String>,
    pub checks: Vec<Verdict>,
    pub wall_ms: u64,
    #[serde(flatten)]
    pub usage: UsageTotals,
    pub prompt_reuse: Option<PromptReuse>,
    /// Cost in the currency of `--price-in`/`--price-out`, when both were given.
    pub cost: Option<f64>,
}

/// Counters the event reader keeps while a job runs.
#[derive(Default)]
pub struct Seen {
    pub model_calls: AtomicU64,
    pub tokens: AtomicU64,
    pub effects_started: AtomicU64,
    /// Milliseconds since the job started, at the last event.
    pub last_event_ms: AtomicU64,
}

const ROLES: &[&str] = &["default", "reading", "scribe", "judgement", "review"];

pub fn write_config(job: &Job, model: &Model, proxy_url: Option<&str>, path: &Path) -> Result<()> {
    let text = match model {
        Model::Config(file) => std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the config file {}", file.display()))?,
        Model::Endpoint {
            model,
            api_key_env,
            kind,
            max_output_tokens,
            ..
        } => {
            let base = proxy_url.context("the proxy is not running")?;
            let mut t = format!(
                "[endpoints.bench]\nkind = {}\nbase_url = {}\nmodel = {}\n",
                toml_str(kind),
                toml_str(base),
                toml_str(model)
            );
            if let Some(n) = max_output_tokens {
                t.push_str(&format!("max_output_tokens = {n}\n"));
            }
            if let Some(var) = api_key_env {
                t.push_str(&format!(
                    "api_key_env = {}\n\n[keys]\nenv_patterns = [{}]\n",
                    toml_str(var),
                    toml_str(var)
                ));
            }
            t.push_str("\n[roles]\n");
            for r in ROLES {
                t.push_str(&format!("{r} = \"bench\"\n"));
            }
            t
        }
        // A pipeline's scripted operators are named on its command line.
        Model::Scripts(_) if job.file.pipeline.is_some() => String::new(),
        Model::Scripts(set) => {
            let mut t = String::new();
            let mut roles = String::from("\n[roles]\n");
            for r in ROLES {
                let Some(script) = job.script(set, r) else {
                    if *r == "default" {
                        bail!(
                            "job {} has no script {set}.json (nor bench/golden/scripts/{set}.json)",
                            job.id
                        );
                    }
                    continue;
                };
                let script = std::fs::canonicalize(&script)?;
                t.push_str(&format!(
                    "[endpoints.{r}]\nkind = \"scripted\"\nmodel = \"scripted\"\nscript = {}\n\n",
                    toml_str(&script.display().to_string())
                ));
                roles.push_str(&format!("{r} = \"{r}\"\n"));
            }
            // Roles without a script of their own answer with the default one.
            for r in ROLES {
                if job.script(set, r).is_none() {
                    roles.push_str(&format!("{r} = \"default\"\n"));
                }
            }
            t + &roles
        }
    };
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Run the job once in `dir` (created fresh); `live` shows its progress.
pub async fn run_job(
    job: &Job,
    model: &Model,
    proxy_url: Option<&str>,
    dir: &Path,
    live: &Live,
) -> Result<(Vec<Verdict>, Option<String>, u64, UsageTotals)> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    let (data, config) = (dir.join("data"), dir.join("config.toml"));
    write_config(job, model, proxy_url, &config)?;
    let started = Instant::now();
    if let Some(p) = &job.file.pipeline {
        let ws = dir.join("source");
        let limit_hit =
            super::pipeline_job::run(job, p, model, proxy_url, dir, &ws, &data, &config, live)
                .await?;
        let wall_ms = started.elapsed().as_millis() as u64;
        let verdicts = checks::run_all(job, &ws).await;
        let usage = usage_of(&data)?;
        return Ok((verdicts, limit_hit, wall_ms, usage));
    }
    let daemon = Daemon::start(&data, &config, &dir.join("daemon.log")).await?;
    let outcome = drive(job, &daemon, started, live).await;
    // Stopped before the checks, so nothing the Bot runs can change the workspace meanwhile.
    daemon.stop().await?;
    let wall_ms = started.elapsed().as_millis() as u64;
    let (ws, limit_hit) = outcome?;
    let verdicts = checks::run_all(job, &ws).await;
    Ok((verdicts, limit_hit, wall_ms, usage_of(&data)?))
}

/// What the job's model calls and tools cost, from the data dir's store.
fn usage_of(data: &Path) -> Result<UsageTotals> {
    let db = data.join("troupe.db");
    if !db.exists() {
        return Ok(UsageTotals::default());
    }
    let store = troupe_store::Store::open(db, Arc::new(troupe_core::SystemClock))?;
    Ok(store.read(|tx| tx.usage_totals())?)
}

/// Open the conversation, lay the fixture in, send the lines; answers the workspace and which
/// limit ended the job early, if one did.
async fn drive(
    job: &Job,
    daemon: &Daemon,
    started: Instant,
    live: &Live,
) -> Result<(PathBuf, Option<String>)> {
    let (session, ws) = daemon.open_conversation(&job.file.title).await?;
    copy_dir(&job.fixture(), &ws)?;
    if let Some(w) = &job.file.workflow {
        let mut body = json!({"kind": w.kind});
        if let Some(i) = &w.instructions {
            body["instructions"] = json!(i);
        }
        if let Some(m) = w.max_iterations {
            body["max_iterations"] = json!(m);
        }
        daemon
            .post(&format!("/v1/sessions/{session}/workflow"), body)
            .await?;
    }
    let seen = Arc::new(Seen::default());
    let blueprint = job.file.blueprint.as_ref();
    let reader = {
        let (seen, events) = (seen.clone(), daemon.events(session).await?);
        let live = live.clone();
        tokio::spawn(async move {
            let mut sse = SseReader::new(events);
            while let Ok(Some(e)) = sse.next().await {
                seen.last_event_ms
                    .store(started.elapsed().as_millis() as u64, Ordering::Release);
                match e.kind.as_str() {
                    "model_call" => {
                        let p = &e.data["payload"];
                        let t = p["input_tokens"].as_u64().unwrap_or(0)
                            + p["output_tokens"].as_u64().unwrap_or(0);
                        let calls = seen.model_calls.fetch_add(1, Ordering::AcqRel) + 1;
                        let tokens = seen.tokens.fetch_add(t, Ordering::AcqRel) + t;
                        live.update(calls, tokens);
                    }
                    "effect_started" => {
                        seen.effects_started.fetch_add(1, Ordering::AcqRel);
                    }
                    _ => {}
                }
            }
        })
    };
    let limits = job.file.limits;
    let wall = Duration::from_secs(limits.wall_secs);
    let mut limit_hit = None;
    if let Some(b) = blueprint {
        start_blueprint_loop(daemon, session, b).await?;
        let sent_ms = started.elapsed().as_millis() as u64;
        limit_hit = wait_idle(daemon, session, &seen, started, sent_ms, limits).await?;
    }
    for line in &job.file.lines {
        if limit_hit.is_some() {
            break;
        }
        let effects_before = seen.effects_started.load(Ordering::Acquire);
        let posted = daemon
            .post(
                &format!("/v1/sessions/{session}/messages"),
                json!({"body": line.body}),
            )
            .await?;
        wait_routed(daemon, &posted).await?;
        let sent_ms = started.elapsed().as_millis() as u64;
        if line.after == After::EffectStarted {
            limit_hit = wait_effect(
                daemon,
                session,
                &seen,
                effects_before,
                started,
                sent_ms,
                wall,
            )
            .await?;
            if limit_hit.is_some() {
                break;
            }
        }
        limit_hit = wait_idle(daemon, session, &seen, started, sent_ms, limits).await?;
    }
    reader.abort();
    Ok((ws, limit_hit))
}

/// Wait until a tool call with an effect starts after the line, then press Stop; if the turn ends
/// first there is nothing to stop. Answers a limit reached meanwhile.
async fn wait_effect(
    daemon: &Daemon,
    session: i64,
    seen: &Seen,
    before: u64,
    started: Instant,
    sent_ms: u64,
    wall: Duration,
) -> Result<Option<String>> {
    while seen.effects_started.load(Ordering::Acquire) <= before {
        if started.elapsed() > wall {
            return Ok(Some(
                "wall-clock limit reached before a tool call with an effect started".into(),
            ));
        }
        // Nothing to stop: the next line goes as it would after the Bot's answer.
        if !running(daemon, session).await? && quiet(seen, started, sent_ms) {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop_turn(daemon, session).await?;
    wait_not_running(daemon, session, started, wall).await?;
    Ok(None)
}

/// Plan on, the Blueprint written in the conversation, then a BlueprintLoop on it, as a person
/// would from the page.
async fn start_blueprint_loop(
    daemon: &Daemon,
    session: i64,
    b: &super::job::Blueprint,
) -> Result<()> {
    daemon
        .post(
            &format!("/v1/sessions/{session}/workflow"),
            json!({"kind": "plan"}),
        )
        .await?;
    let note = daemon
        .post(
            "/v1/notes",
            json!({"kind": "blueprint", "title": b.title, "body": b.body, "session_id": session}),
        )
        .await?;
    let mut body = json!({"session_id": session, "note_id": note["id"]});
    if let Some(m) = b.max_iterations {
        body["max_iterations"] = json!(m);
    }
    daemon.post("/v1/blueprint-loops", body).await?;
    Ok(())
}

/// Wait until the Bot is idle, or a limit is reached (the turn is then stopped).
async fn wait_idle(
    daemon: &Daemon,
    session: i64,
    seen: &Seen,
    started: Instant,
    sent_ms: u64,
    limits: super::job::Limits,
) -> Result<Option<String>> {
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        // One look at the daemon per tick, for both the limits and idleness.
        let busy = running(daemon, session).await?;
        let calls = seen.model_calls.load(Ordering::Acquire);
        let hit = if started.elapsed() > Duration::from_secs(limits.wall_secs) {
            Some(format!("wall-clock limit of {}s reached", limits.wall_secs))
        } else if calls > limits.model_calls || (busy && calls == limits.model_calls) {
            // Over the limit counts even when the turn ended between two ticks.
            Some(format!(
                "model-call limit of {} reached",
                limits.model_calls
            ))
        } else {
            None
        };
        if hit.is_some() {
            stop_turn(daemon, session).await?;
            return Ok(hit);
        }
        if !busy && quiet(seen, started, sent_ms) {
            return Ok(None);
        }
    }
}

/// The POST answers once the line is stored; its reading (a model call of its own) and its
/// routing come after, and only then does the session's quiet mean the Bot is done. The daemon
/// bounds both (20 s of reading, 45 s behind a line ahead); a line still unrouted after two
/// minutes is a failure of the run, not a wait.
async fn wait_routed(daemon: &Daemon, line: &serde_json::Value) -> Result<()> {
    let id = line["id"].as_i64().context("the posted line has no id")?;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let now = daemon.get(&format!("/v1/messages/{id}")).await?;
        if matches!(now["routing"].as_str(), Some("routed" | "withdrawn")) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("line {id} was not routed within 2 minutes: {now}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// No event for a moment: a workflow's next turn, if any, would have started by now.
fn quiet(seen: &Seen, started: Instant, sent_ms: u64) -> bool {
    let last = seen.last_event_ms.load(Ordering::Acquire).max(sent_ms);
    started.elapsed().as_millis() as u64 > last + 1500
}

/// The Bot is working, a child task it started is queued or running (its result will wake the
/// Bot), or a Light Loop is still on (between its turns, or while its reviewer runs) and not
/// paused.
async fn running(daemon: &Daemon, session: i64) -> Result<bool> {
    let s = daemon.get(&format!("/v1/sessions/{session}")).await?;
    let loop_on = s["workflow"]["kind"].as_str() == Some("lightloop") && s["paused"].is_null();
    if s["running"].as_bool().unwrap_or(false) || loop_on {
        return Ok(true);
    }
    if s["paused"].is_null() {
        let loops = daemon.get("/v1/blueprint-loops?active=true").await?;
        if loops
            .as_array()
            .is_some_and(|ls| ls.iter().any(|l| l["session_id"].as_i64() == Some(session)))
        {
            return Ok(true);
        }
    }
    let tasks = daemon
        .get(&format!("/v1/child-tasks?parent_session={session}"))
        .await?;
    Ok(tasks.as_array().is_some_and(|ts| {
        ts.iter()
            .any(|t| matches!(t["status"].as_str(), Some("queued" | "running")))
    }))
}

async fn stop_turn(daemon: &Daemon, session: i64) -> Result<()> {
    match daemon
        .post("/v1/turns/stop", json!({"session_id": session}))
        .await
    {
        Ok(_) => Ok(()),
        // Already over: nothing to stop.
        Err(e) if e.to_string().contains("409") => Ok(()),
        Err(e) => Err(e),
    }
}

async fn wait_not_running(
    daemon: &Daemon,
    session: i64,
    started: Instant,
    wall: Duration,
) -> Result<()> {
    while daemon.get(&format!("/v1/sessions/{session}")).await?["running"]
        .as_bool()
        .unwrap_or(false)
    {
        if started.elapsed() > wall {
            bail!("the turn did not stop");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// Copy the fixture into the workspace (before the first line; the harness writes nothing
/// there afterwards).
pub fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type()?.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .with_context(|| format!("cannot copy {} into the workspace", src.display()))?;
        }
    }
    Ok(())
}
