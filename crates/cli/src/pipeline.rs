//! `troupe pipeline`: run, resume, stop and inspect pipeline sessions, and validate
//! definitions folders.

use anyhow::{Context, anyhow, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use troupe_core::SystemClock;
use troupe_core::run::RunLimits;
use troupe_core::thread::EndpointSpec;
use troupe_engine::{Engine, EngineConfig, RoleTable};
use troupe_pipeline::defs::Definitions;
use troupe_pipeline::runner::{self, Outcome, RunOptions, Runner};
use troupe_pipeline::session::{Budget, SESSIONS_DIR, Session, SessionState, SessionStatus};
use troupe_store::{OpenOptions, Store};

use crate::config::Config;
use crate::exec::{EXIT_INTERRUPTED, UsageError};
use crate::paths;
use crate::pipeline_args::{
    PipelineArgs, PipelineCommand, ResumeArgs, RunArgs, RunnerFlags, StatusArgs, StopArgs,
    ValidateArgs,
};
use crate::pipeline_record::Recorded;

/// Exit code for a session that blocked or was stopped (it stays on disk).
pub const EXIT_BLOCKED: u8 = 3;

pub async fn pipeline(args: PipelineArgs) -> anyhow::Result<u8> {
    match args.command {
        PipelineCommand::Run(a) => run(a).await,
        PipelineCommand::Resume(a) => resume(a).await,
        PipelineCommand::Status(a) => status(a),
        PipelineCommand::Stop(a) => stop(a),
        PipelineCommand::Validate(a) => Ok(validate(&a)),
    }
}

fn validate(args: &ValidateArgs) -> u8 {
    match Definitions::load(&args.defs) {
        Ok(defs) => {
            println!(
                "ok: {} operators, {} workflows ({})",
                defs.operators.len(),
                defs.workflows.len(),
                defs.workflows
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            0
        }
        Err(problems) => {
            print!("{problems}");
            1
        }
    }
}

fn source_dir(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match explicit {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    dir.canonicalize()
        .with_context(|| format!("source {}", dir.display()))
}

/// `KEY=VALUE` pairs; a value that parses as JSON is taken as JSON.
pub fn parse_sets(sets: &[String]) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    let mut out = serde_json::Map::new();
    for s in sets {
        let (k, v) = s
            .split_once('=')
            .filter(|(k, _)| !k.trim().is_empty())
            .ok_or_else(|| UsageError(format!("--set {s}: expected KEY=VALUE")))?;
        let value = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.into()));
        out.insert(k.trim().to_string(), value);
    }
    Ok(out)
}

async fn run(args: RunArgs) -> anyhow::Result<u8> {
    let requirements = parse_sets(&args.set)?;
    if args.common.defs.is_none() {
        return Err(UsageError("run needs --defs DIR: the definitions folder".into()).into());
    }
    let source = source_dir(args.common.source.as_deref())?;
    let mut options = RunOptions {
        budget: Budget {
            max_steps: args.max_steps,
            max_same_operator: args.max_same_operator,
        },
        project: args.project.clone(),
        record: Some(Recorded::of(&args.common)?.to_json()),
        ..RunOptions::default()
    };
    let runner = build_runner(&args.common, &mut options)?;
    runner.engine().recover().await?;
    let work = runner.start(&source, &args.workflow, requirements);
    finish(&source, interruptible(work).await?)
}

async fn resume(args: ResumeArgs) -> anyhow::Result<u8> {
    let source = source_dir(args.common.source.as_deref())?;
    let recorded = Recorded::read(&Session::open(&source, &args.session)?)?;
    let (flags, reused) = recorded.under(args.common)?;
    if flags.defs.is_none() {
        return Err(UsageError(format!(
            "session {} recorded no definitions folder: give --defs DIR",
            args.session
        ))
        .into());
    }
    if !reused.is_empty() {
        eprintln!("as recorded at run: {}", reused.join(" "));
    }
    let mut options = RunOptions::default();
    let runner = build_runner(&flags, &mut options)?;
    // A crashed pipeline process may have left runs marked live and command groups running:
    // end them (no model is called) before picking the session up again.
    runner.engine().recover().await?;
    let work = runner.resume(&source, &args.session);
    finish(&source, interruptible(work).await?)
}

/// Runs until done or Ctrl-C (the session stays `running` on disk; `resume` continues it).
async fn interruptible<F>(work: F) -> anyhow::Result<Option<Outcome>>
where
    F: std::future::Future<Output = Result<Outcome, runner::RunnerError>>,
{
    tokio::select! {
        out = work => Ok(Some(out?)),
        _ = tokio::signal::ctrl_c() => Ok(None),
    }
}

fn finish(source: &Path, outcome: Option<Outcome>) -> anyhow::Result<u8> {
    let Some(out) = outcome else {
        eprintln!(
            "interrupted; the session is on disk: troupe pipeline status --source {}",
            source.display()
        );
        return Ok(EXIT_INTERRUPTED);
    };
    let resume_hint = format!(
        "troupe pipeline resume {} --source {}",
        out.session_id,
        source.display()
    );
    match out.status {
        SessionStatus::Done => {
            println!("session {} done", out.session_id);
            Ok(0)
        }
        SessionStatus::Blocked => {
            let s = out
                .stopped
                .unwrap_or_else(|| unreachable_stop(&out.session_id));
            let at = s.branch.map(|b| format!(" at {b}")).unwrap_or_default();
            println!(
                "session {} blocked{at} with {} (route {}): {}",
                out.session_id,
                s.stop.as_deref().unwrap_or("-"),
                s.route,
                s.why
            );
            eprintln!("after the cause is dealt with: {resume_hint}");
            Ok(EXIT_BLOCKED)
        }
        SessionStatus::Stopped => {
            println!("session {} stopped", out.session_id);
            Ok(EXIT_BLOCKED)
        }
        SessionStatus::Running => {
            println!("session {} is still running", out.session_id);
            eprintln!("continue it with: {resume_hint}");
            Ok(EXIT_BLOCKED)
        }
    }
}

fn unreachable_stop(id: &str) -> troupe_pipeline::session::StoppedAt {
    troupe_pipeline::session::StoppedAt {
        at: None,
        branch: None,
        operator: None,
        stop: None,
        domain: None,
        route: "user".into(),
        why: format!("session {id} blocked without a recorded stop"),
    }
}

/// The definitions, the engine (with the lease guard) and the models per operator.
pub(crate) fn build_runner(
    flags: &RunnerFlags,
    options: &mut RunOptions,
) -> anyhow::Result<Runner> {
    let defs_dir = flags
        .defs
        .as_deref()
        .ok_or_else(|| UsageError("--defs DIR is needed".into()))?;
    let defs = Definitions::load(defs_dir).map_err(|p| anyhow!("{}", p.to_string().trim_end()))?;
    options.max_agents = flags.max_agents.unwrap_or(options.max_agents).max(1);
    options.keep_audit = flags.keep_audit.clone();
    if let Some(dir) = &flags.script_dir {
        options.endpoints = scripts_in(dir, &defs)?;
    }
    let data_dir = match &flags.data_dir {
        Some(d) => d.clone(),
        None => paths::data_dir(&paths::process_env)?,
    };
    let mut config = Config::locate(flags.config.as_deref(), &paths::process_env)?;
    config.apply_flags(&flags.endpoint_flags())?;
    if config.default_endpoint().is_none() {
        let missing: Vec<&String> = defs
            .operators
            .keys()
            .filter(|id| !options.endpoints.contains_key(*id))
            .collect();
        if !missing.is_empty() {
            bail!(
                "no model for operator(s) {}: pass --script-dir DIR (DIR/<operator>.json), \
                 --script FILE, or --base-url URL --model NAME (or set roles.default in the \
                 config file, see docs/CONFIG.md)",
                missing
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let mut roles = RoleTable::from_env();
    for (role, spec) in config.role_endpoints() {
        roles
            .set_role(role.as_str(), spec)
            .map_err(|e| anyhow!("role {role}: {e}"))?;
    }
    roles.timeout = Duration::from_secs(config.limits.request_timeout_secs);
    roles.retry.max_attempts = config.limits.max_attempts;
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    let store = Store::open_with(
        data_dir.join("troupe.db"),
        Arc::new(SystemClock),
        OpenOptions {
            durability: config.durability(flags.durability),
        },
    )?;
    let engine_config = EngineConfig {
        limits: RunLimits {
            max_hops: config.limits.max_hops,
            ..RunLimits::default()
        },
        ..EngineConfig::default()
    };
    let builder = Engine::builder(store, Arc::new(roles)).config(engine_config);
    let (builder, leases) = runner::install(builder);
    Ok(Runner::new(
        defs,
        builder.build(),
        leases,
        Arc::new(SystemClock),
        options.clone(),
    )
    .with_observer(Arc::new(|e| eprintln!("{e}"))))
}

/// `DIR/<operator>.json` for every operator that has one.
fn scripts_in(dir: &Path, defs: &Definitions) -> anyhow::Result<BTreeMap<String, EndpointSpec>> {
    if !dir.is_dir() {
        bail!("--script-dir {} is not a folder", dir.display());
    }
    let mut out = BTreeMap::new();
    for id in defs.operators.keys() {
        let path = dir.join(format!("{id}.json"));
        if path.is_file() {
            let path = path.canonicalize()?;
            out.insert(
                id.clone(),
                EndpointSpec {
                    kind: "scripted".into(),
                    base_url: None,
                    model: format!("script:{id}"),
                    api_key_env: None,
                    script: Some(path.to_string_lossy().into_owned()),
                    takes_pictures: false,
                    thinking_levels: Vec::new(),
                    max_output_tokens: None,
                },
            );
        }
    }
    Ok(out)
}

fn stop(args: StopArgs) -> anyhow::Result<u8> {
    let source = source_dir(args.source.as_deref())?;
    let s = runner::stop_session(&source, &args.session, &args.why, &SystemClock)?;
    println!(
        "session {} stopped{}",
        args.session,
        s.at.map(|a| format!(" at {a}")).unwrap_or_default()
    );
    Ok(0)
}

fn status(args: StatusArgs) -> anyhow::Result<u8> {
    let source = source_dir(args.source.as_deref())?;
    match &args.session {
        Some(id) => {
            let session = Session::open(&source, id)?;
            print!("{}", describe(session.state()));
        }
        None => {
            let dir = source.join(SESSIONS_DIR);
            let mut ids: Vec<String> = std::fs::read_dir(&dir)
                .map(|rd| {
                    rd.flatten()
                        .filter(|e| e.path().join("state.json").is_file())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            ids.sort();
            if ids.is_empty() {
                // A session that ends done is removed (its work is on the branch it
                // published), so a finished run leaves nothing here: say so.
                println!(
                    "no sessions in {}: none running or stopped (a session that ends done is \
                     removed once it has published; `run --keep-audit DIR` keeps a copy)",
                    source.display()
                );
            }
            for id in ids {
                match Session::open(&source, &id) {
                    Ok(s) => {
                        let st = s.state();
                        let current: Vec<String> =
                            st.current.iter().map(ToString::to_string).collect();
                        println!(
                            "{id}  {}  workflow {}  {} branches  current [{}]",
                            status_word(st.status),
                            st.workflow,
                            st.chain.len(),
                            current.join(", ")
                        );
                    }
                    Err(e) => println!("{id}  unreadable: {e}"),
                }
            }
        }
    }
    Ok(0)
}

fn status_word(s: SessionStatus) -> &'static str {
    match s {
        SessionStatus::Running => "running",
        SessionStatus::Blocked => "blocked",
        SessionStatus::Done => "done",
        SessionStatus::Stopped => "stopped",
    }
}

/// The chain, each branch's status and stop, leases, budget and source of one manifest.
pub fn describe(st: &SessionState) -> String {
    let mut out = format!(
        "session {}  ({} of project {}, started {})\nstatus: {}\n",
        st.id,
        st.workflow,
        st.project,
        st.started_at,
        status_word(st.status)
    );
    if let Some(s) = &st.stopped_at {
        let at = s.branch.map(|b| format!(" at {b}")).unwrap_or_default();
        out.push_str(&format!(
            "stopped{at}: {} (route {}): {}\n",
            s.stop.as_deref().unwrap_or("-"),
            s.route,
            s.why
        ));
    }
    out.push_str("chain:\n");
    for key in &st.chain {
        let Some(rec) = st.branches.get(key) else {
            continue;
        };
        let status = format!("{:?}", rec.status).to_lowercase();
        let mut line = format!("  {key}  {:<12} {status}", rec.operator);
        if let Some(stop) = &rec.stop {
            line.push_str(&format!(" {stop}"));
        }
        if let Some(r) = st.resumes.get(key) {
            line.push_str(&format!("  (resumes {} after {})", r.resumes, r.stop));
        }
        if let Some(r) = rec.return_to {
            line.push_str(&format!("  (detour for {r})"));
        }
        for f in st.fallbacks.get(key).into_iter().flatten() {
            line.push_str(&format!("  fallback {}", f.code));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("leases:");
    if st.leases.is_empty() {
        out.push_str(" none\n");
    } else {
        out.push('\n');
        for (agent, lease) in &st.leases {
            out.push_str(&format!(
                "  {agent} ({}): {}\n",
                lease.agent,
                lease.holds.join(", ")
            ));
        }
    }
    let mut runs: BTreeMap<&str, u32> = BTreeMap::new();
    for op in st.steps.values() {
        *runs.entry(op.as_str()).or_default() += 1;
    }
    let runs: Vec<String> = runs
        .iter()
        .map(|(op, n)| format!("{op} {n}/{}", st.budget.max_same_operator))
        .collect();
    out.push_str(&format!(
        "budget: {} of {} steps; runs: {}\n",
        st.last_step(),
        st.budget.max_steps,
        runs.join(", ")
    ));
    if let Some(src) = &st.source {
        out.push_str(&format!(
            "source: {} from {} (target {}), head {}, {} commit(s)\n",
            src.session_branch,
            short(&src.frozen_head),
            src.target,
            short(&src.head),
            src.commits.len()
        ));
    }
    out
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
