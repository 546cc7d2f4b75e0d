//! `troupe exec`: run one task in a workspace to its end, or resume a thread.

use anyhow::{Context, anyhow, bail};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use troupe_core::ThreadId;
use troupe_core::drive::DriveRefusal;
use troupe_core::inbox::Delivery;
use troupe_core::run::RunLimits;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_engine::{DriveOutcome, Engine, EngineConfig, RoleTable, StopMode};
use troupe_store::{NewThread, OpenOptions, Store};

use crate::args::ExecArgs;
use crate::config::Config;
use crate::ending::{Ending, read_ending};
use crate::feed::{Feed, Item};
use crate::paths;
use crate::progress::{Progress, Style, json_line};

/// The agent's instructions. Kept short and true to what the runtime gives it.
pub const SYSTEM_PROMPT: &str = "You are a coding agent working in a workspace directory. \
You act on it only through your tools: read_file, write_file, edit_file, list_dir, delete_file \
and shell (commands run with the workspace as their working directory). Paths are relative to \
the workspace. To change part of a file, use edit_file. Work step by step, check what you \
change, and do not ask questions you can answer by looking. When the task is done, finish \
with a concise summary of what you did and found.";

/// Exit code for a stop by Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// A command-line mistake: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Run `troupe exec`; returns the exit code. Errors are one-line reasons.
pub async fn exec(args: ExecArgs) -> anyhow::Result<u8> {
    let task = match &args.task {
        Some(t) if t.trim().is_empty() => {
            return Err(
                UsageError("the task is empty: say what the agent should do".into()).into(),
            );
        }
        Some(t) => Some(t.clone()),
        None if args.resume.is_none() => {
            return Err(UsageError(
                "give a TASK to run, or --resume THREAD_ID to continue a thread \
                 (see troupe exec --help)"
                    .into(),
            )
            .into());
        }
        None => None,
    };
    let resume = match &args.resume {
        Some(r) => Some(r.parse::<ThreadId>().map_err(UsageError)?),
        None => None,
    };
    let workspace = workspace_dir(args.workspace.as_deref())?;
    let mcp_defs = crate::mcp::exec_servers(&args.mcp)?;
    let (engine, mcp) = build(&args, &mcp_defs, &workspace)?;
    let style = if args.json {
        Style::Json
    } else if std::io::stderr().is_terminal() {
        Style::Spinner
    } else {
        Style::Lines
    };
    let mut progress = Progress::new(style);
    let result = match &mcp {
        Some(mcp) => match start_mcp(mcp, &mcp_defs, &mut progress).await {
            Ok(()) => drive(args, task, resume, workspace, &engine, progress).await,
            Err(e) => Err(e),
        },
        None => drive(args, task, resume, workspace, &engine, progress).await,
    };
    if let Some(mcp) = mcp {
        end_mcp(&engine, &mcp).await;
    }
    result
}

/// Start the run's MCP servers and wait until each is ready or has failed (a failed one's
/// tools are absent and the turn's context says why).
async fn start_mcp(
    mcp: &troupe_mcp::Mcp,
    defs: &[troupe_mcp::ServerDef],
    progress: &mut Progress,
) -> anyhow::Result<()> {
    mcp.start_unstored(defs)
        .context("starting the --mcp servers")?;
    for def in defs {
        let waited = mcp
            .wait_for(&def.name, MCP_START_LIMIT, |s| {
                s.state != troupe_mcp::State::Starting
            })
            .await;
        let status = match waited {
            Ok(status) => status,
            Err(why) => {
                // Still starting: the run begins without it (its tools come when it is ready).
                progress.line(&format!("mcp {}: not ready yet ({why})", def.name));
                continue;
            }
        };
        let line = match status.state {
            troupe_mcp::State::Ready => format!(
                "mcp {}: ready, {} tool{}",
                def.name,
                status.tool_count,
                if status.tool_count == 1 { "" } else { "s" }
            ),
            _ => format!(
                "mcp {}: {}: {}; its tools are not offered",
                def.name,
                serde_json::to_value(status.state)?
                    .as_str()
                    .unwrap_or("not ready"),
                status
                    .last_error
                    .as_deref()
                    .and_then(|e| e.lines().next())
                    .unwrap_or("no reason given")
            ),
        };
        progress.line(&line);
    }
    Ok(())
}

/// A one-off run's servers end with it (they were never stored).
async fn end_mcp(engine: &Engine, mcp: &troupe_mcp::Mcp) {
    // The runs are over (or were shut down) before their servers go.
    engine.shutdown(Duration::from_secs(2)).await;
    mcp.shutdown().await;
}

/// How long `--mcp` servers may take to start before the run begins without them.
const MCP_START_LIMIT: Duration = Duration::from_secs(30);

async fn drive(
    args: ExecArgs,
    task: Option<String>,
    resume: Option<ThreadId>,
    workspace: PathBuf,
    engine: &Engine,
    mut progress: Progress,
) -> anyhow::Result<u8> {
    let style = progress.style();
    engine
        .recover()
        .await
        .context("recovering runs a previous process left unfinished")?;
    // Subscribed before anything is written, so no event of this invocation is missed.
    let events = engine.store().subscribe();
    let stream = engine.subscribe_stream();

    let thread = match resume {
        None => {
            let task = task.unwrap_or_default();
            let t = engine.create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: task.chars().take(60).collect(),
                agent: AgentBinding::new("troupe", SYSTEM_PROMPT),
                workspace: workspace_str(&workspace)?,
                interaction: Interaction::Interactive,
            })?;
            eprintln!("thread {}", t.id);
            engine.deliver(t.id, Delivery::user_task(task)).await?;
            if !engine.is_running(t.id) && !has_run(engine.store(), t.id)? {
                bail!("the task was stored in thread {} but no run started", t.id);
            }
            t.id
        }
        Some(id) => {
            let t = engine
                .store()
                .read(|tx| tx.find_thread(id))?
                .ok_or_else(|| anyhow!("there is no thread {id} in {}", db_hint(engine)))?;
            eprintln!("thread {id}");
            if args.workspace.is_some() && workspace_str(&workspace)? != t.workspace {
                progress.line(&format!(
                    "note: thread {id} works in {}; --workspace is ignored",
                    t.workspace
                ));
            }
            let started = match task {
                Some(task) => {
                    engine.deliver(id, Delivery::user_task(task)).await?;
                    // The person asked for this explicitly: a refusal left by an unknown
                    // effect is lifted as `continue` would.
                    engine.is_running(id) || started(id, &engine.continue_thread(id).await?)?
                }
                None => started(id, &engine.continue_thread(id).await?)?,
            };
            if !started {
                finish(&mut progress, Feed::start(id, events, stream)).await;
                return nothing_to_resume(engine, id, progress.style());
            }
            id
        }
    };

    let mut feed = Feed::start(thread, events, stream);
    let ctrl_c = follow(engine, thread, &mut progress, &mut feed).await;
    if ctrl_c {
        let _ = engine.stop(thread, StopMode::User).await;
        finish(&mut progress, feed).await;
        if style == Style::Json {
            let ending = Ending::stopped(thread);
            json_line("result", &ending.json(thread));
        }
        eprintln!("stopped; resume with: troupe exec --resume {thread}");
        engine.shutdown(Duration::from_secs(2)).await;
        return Ok(EXIT_INTERRUPTED);
    }
    finish(&mut progress, feed).await;
    // Runs of other threads that recovery may have woken are not this command's business.
    engine.shutdown(Duration::from_secs(2)).await;
    let ending = read_ending(engine.store(), thread)?;
    Ok(report(&ending, thread, style))
}

/// Whether the drive started a run; a thread another process is running is an error.
fn started(thread: ThreadId, outcome: &DriveOutcome) -> anyhow::Result<bool> {
    match outcome {
        DriveOutcome::Started { .. } => Ok(true),
        DriveOutcome::NotHandled {
            refusal: DriveRefusal::Running,
        } => bail!("thread {thread} is running in another troupe process"),
        DriveOutcome::NotHandled {
            refusal: DriveRefusal::Archived,
        } => bail!("thread {thread} is archived"),
        _ => Ok(false),
    }
}

fn has_run(store: &Store, thread: ThreadId) -> anyhow::Result<bool> {
    Ok(!store.read(|tx| tx.runs_for_thread(thread, 1))?.is_empty())
}

fn db_hint(engine: &Engine) -> String {
    engine.store().path().display().to_string()
}

/// Print the ending the way the mode asks, and pick the exit code.
fn report(ending: &Ending, thread: ThreadId, style: Style) -> u8 {
    if style == Style::Json {
        json_line("result", &ending.json(thread));
    } else if let Some(text) = &ending.text
        && ending.code == 0
    {
        println!("{}", text.trim_end());
    }
    if let Some(err) = &ending.error {
        eprintln!("troupe: {err}");
    }
    ending.code
}

fn nothing_to_resume(engine: &Engine, thread: ThreadId, style: Style) -> anyhow::Result<u8> {
    let mut ending = read_ending(engine.store(), thread)?;
    ending.code = 0;
    ending.error = None;
    ending.status = "nothing_to_resume".into();
    eprintln!("thread {thread}: there was nothing to resume");
    Ok(report(&ending, thread, style))
}

/// Show progress until the thread is idle; true if Ctrl-C came first.
async fn follow(
    engine: &Engine,
    thread: ThreadId,
    progress: &mut Progress,
    feed: &mut Feed,
) -> bool {
    let idle = engine.wait_idle(thread);
    tokio::pin!(idle);
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut watch_ctrl_c = true;
    let mut ticker = tokio::time::interval(Duration::from_millis(100));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let spinner = progress.style() == Style::Spinner;
    let mut feed_open = true;
    loop {
        tokio::select! {
            biased;
            r = &mut ctrl_c, if watch_ctrl_c => match r {
                Ok(()) => return true,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for Ctrl-C");
                    watch_ctrl_c = false;
                }
            },
            item = feed.next(), if feed_open => match item {
                Some(item) => show(progress, &item),
                None => feed_open = false,
            },
            _ = ticker.tick(), if spinner => progress.tick(),
            () = &mut idle => return false,
        }
    }
}

/// Show what the feed still holds, then take the spinner down.
async fn finish(progress: &mut Progress, feed: Feed) {
    for item in feed.finish().await {
        show(progress, &item);
    }
    progress.clear();
}

fn show(progress: &mut Progress, item: &Item) {
    match item {
        Item::Event(e) => progress.event(e),
        Item::Notice(n) => progress.notice(n),
    }
}

fn workspace_dir(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match explicit {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let canonical = dir
        .canonicalize()
        .with_context(|| format!("workspace {}", dir.display()))?;
    if !canonical.is_dir() {
        bail!("workspace {} is not a directory", dir.display());
    }
    Ok(canonical)
}

fn workspace_str(dir: &Path) -> anyhow::Result<String> {
    dir.to_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("workspace {} is not valid UTF-8", dir.display()))
}

/// The demo script ships inside the binary; it is written next to the database so the
/// scripted provider can load it like any other script file.
const DEMO_SCRIPT: &str = include_str!("demo.json");

/// The engine without MCP servers (the durability tests build it).
#[cfg(test)]
pub(crate) fn build_engine(args: &ExecArgs) -> anyhow::Result<Engine> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    Ok(build(args, &[], &here)?.0)
}

/// The engine, and with `mcp_defs` the MCP servers (not started yet) its Bot may use; a
/// stdio server without a cwd starts in `workspace`.
fn build(
    args: &ExecArgs,
    mcp_defs: &[troupe_mcp::ServerDef],
    workspace: &Path,
) -> anyhow::Result<(Engine, Option<troupe_mcp::Mcp>)> {
    let data_dir = match &args.data_dir {
        Some(d) => d.clone(),
        None => paths::data_dir(&paths::process_env)?,
    };
    let mut flags = args.endpoint_flags();
    if args.demo {
        std::fs::create_dir_all(&data_dir)
            .with_context(|| format!("cannot create {}", data_dir.display()))?;
        let path = data_dir.join("demo-script.json");
        std::fs::write(&path, DEMO_SCRIPT)
            .with_context(|| format!("cannot write {}", path.display()))?;
        flags.script = Some(path);
    }
    let mut config = Config::locate(args.config.as_deref(), &paths::process_env)?;
    config.apply_flags(&flags)?;
    if config.default_endpoint().is_none() {
        bail!(
            "no model is configured: pass --demo, --script FILE or --base-url URL --model NAME \
             (or set roles.default in the config file, see docs/CONFIG.md)"
        );
    }
    let mut roles = RoleTable::from_env();
    for (role, spec) in config.role_endpoints() {
        roles
            .set_role(role.as_str(), spec)
            .map_err(|e| anyhow!("role {role}: {e}"))?;
    }
    roles.timeout = Duration::from_secs(config.limits.request_timeout_secs);
    roles.retry.max_attempts = config.limits.max_attempts;

    let store = Store::open_with(
        data_dir.join("troupe.db"),
        Arc::new(troupe_core::SystemClock),
        OpenOptions {
            durability: config.durability(args.durability),
        },
    )?;
    let engine_config = EngineConfig {
        limits: RunLimits {
            max_hops: config.limits.max_hops,
            ..RunLimits::default()
        },
        ..EngineConfig::default()
    };
    let mut builder = Engine::builder(store.clone(), Arc::new(roles)).config(engine_config);
    let mut mcp = None;
    if !mcp_defs.is_empty() {
        // The model endpoints' keys never reach a server.
        let keys: Vec<String> = config
            .endpoints
            .values()
            .filter_map(|e| e.api_key_env.clone())
            .collect();
        let m = troupe_mcp::Mcp::new(store, workspace.to_path_buf()).with_protected_env(keys);
        builder = builder.tool_source(m.tool_source()).context(m.context());
        mcp = Some(m);
    }
    Ok((builder.build(), mcp))
}
