//! Building the daemon's state from a data directory and the configured roles: open the store,
//! build the engine with the conversation layer plugged in, interrupt child tasks the last
//! process left unfinished, recover, seed the demo Bot,
//! and start the workflow timer (Agenda items, spaced loop continuations) and the scheduler tick.

use crate::AppState;
use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use troupe_collab::{Collab, KeyEnvRule, SharedRoles};
use troupe_core::continuation_guard::GuardLimits;
use troupe_core::run::RunLimits;
use troupe_engine::models::SecretSource;
use troupe_engine::{Engine, EngineConfig, RecoveryReport, RoleTable};
use troupe_store::{Durability, OpenOptions, Store};

pub struct Bootstrap {
    pub state: AppState,
    pub recovery: RecoveryReport,
}

/// The daemon's store: the database `database` names, else `DATA_DIR/troupe.db`, opened with
/// `durability`.
pub fn open_store(
    data_dir: &Path,
    database: Option<&str>,
    durability: Durability,
) -> anyhow::Result<Store> {
    open_store_on(
        data_dir,
        database,
        durability,
        Arc::new(troupe_core::SystemClock),
    )
}

/// [`open_store`] with the store's clock given.
pub fn open_store_on(
    data_dir: &Path,
    database: Option<&str>,
    durability: Durability,
    clock: Arc<dyn troupe_core::Clock>,
) -> anyhow::Result<Store> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create data dir {}", data_dir.display()))?;
    let options = OpenOptions { durability };
    Ok(match database {
        Some(url) => Store::open_url(url, clock, options)?,
        None => Store::open_with(data_dir.join("troupe.db"), clock, options)?,
    })
}

/// What the daemon's state is built from, besides its data directory.
pub struct BootOptions {
    pub roles: RoleTable,
    pub secrets: SecretSource,
    pub limits: RunLimits,
    /// The continuation guard every new loop starts with.
    pub loops: GuardLimits,
    /// Required as a bearer token when set.
    pub token: Option<Arc<str>>,
    /// Which variables an endpoint set through the API may name as its key.
    pub key_env: KeyEnvRule,
    /// How the store syncs its commits.
    pub durability: Durability,
    /// The database's URL; `None`: `DATA_DIR/troupe.db`.
    pub database: Option<String>,
    /// Where this node's API listens, recorded with the node.
    pub addr: Option<String>,
    /// How long one line reading may take, the wait for a reading slot included.
    pub reading_timeout: std::time::Duration,
    /// The config file's MCP servers, written into the database at boot (the file wins).
    pub mcp_servers: Vec<troupe_mcp::ServerDef>,
    /// The config file's chat channel accounts (`[channels.NAME]`).
    pub channels: Vec<troupe_channels::ChannelDef>,
    /// `--manual-clock`: the store reads this clock, which only `POST /v1/debug/clock`
    /// moves, and the scheduler ticks only on `POST /v1/debug/tick`.
    pub manual_clock: Option<troupe_core::ManualClock>,
    /// The config file's `[experimental]` Runtime Boss settings: seeds, a stored value wins.
    pub runtime_boss: troupe_core::runtime_boss::RuntimeSettingsPatch,
}

impl BootOptions {
    /// The defaults for everything but the model roles and where secrets are read from.
    pub fn new(roles: RoleTable, secrets: SecretSource) -> Self {
        BootOptions {
            roles,
            secrets,
            limits: RunLimits::default(),
            loops: GuardLimits::default(),
            token: None,
            key_env: KeyEnvRule::default(),
            durability: Durability::default(),
            database: None,
            addr: None,
            reading_timeout: troupe_collab::DEFAULT_READING_TIMEOUT,
            mcp_servers: Vec::new(),
            channels: Vec::new(),
            manual_clock: None,
            runtime_boss: Default::default(),
        }
    }
}

pub async fn build_state(data_dir: &Path, opts: BootOptions) -> anyhow::Result<Bootstrap> {
    let BootOptions {
        roles,
        secrets,
        limits,
        loops,
        token,
        key_env,
        durability,
        database,
        addr,
        reading_timeout,
        mcp_servers,
        channels: channels_defs,
        manual_clock,
        runtime_boss,
    } = opts;
    let clock: Arc<dyn troupe_core::Clock> = match &manual_clock {
        Some(c) => Arc::new(c.clone()),
        None => Arc::new(troupe_core::SystemClock),
    };
    let store = open_store_on(data_dir, database.as_deref(), durability, clock)?;
    let mcp = mcp_servers_of(data_dir, &store, &roles)?;
    let channel_secrets = secrets.clone();
    let shared = Arc::new(SharedRoles::new(roles, secrets).with_key_env_rule(key_env));
    // The checks' runner: the hand-over's bound checks, the routes and the timers share it.
    let checks = troupe_collab::checks::Checks::with_ffprobe(store.clone());
    let builder = Engine::builder(store, shared.clone())
        .config(EngineConfig {
            limits,
            loops,
            ..EngineConfig::default()
        })
        .tool_source(mcp.tool_source())
        .context(mcp.context());
    let tool_host = troupe_collab::tools::ToolHost::new();
    let hooks = troupe_collab::submissions::Hooks {
        checks: Arc::new(checks.clone()),
        required: Arc::new(troupe_collab::ledger::LedgerItems),
        ..Default::default()
    };
    let builder = troupe_collab::extend_with(builder, &tool_host, hooks)?;
    // After the conversation layer's projector: a chat's Bot reply is a line by then.
    let builder = builder.message_observer(Arc::new(troupe_channels::ReplyRecorder));
    let engine = troupe_workflows::build_engine(builder)?;
    // The enabled servers start now; a turn before one is ready is told it is unavailable.
    mcp.boot(&mcp_servers)
        .context("the config file's MCP servers")?;
    let collab = Collab::new(engine.clone(), shared, data_dir.join("workspaces"))
        .with_reading_timeout(reading_timeout);
    tool_host.attach(&collab);
    collab.use_checks(checks.clone());
    collab.load_stored_roles()?;
    let workflows = troupe_workflows::Workflows::new(collab.clone());
    // Child tasks a stopped process left queued or running become interrupted, their parents
    // told once; before the kernel's recovery, so its latch sees that notice and its boot
    // wakes never restart a cut-off child.
    let tasks = workflows.reconcile_tasks()?;
    if !tasks.interrupted.is_empty() {
        tracing::info!(tasks = ?tasks.interrupted, "child tasks interrupted by the last stop");
    }
    // This process is a node of the database before it judges anyone else's runs.
    engine.register_node(addr)?;
    let recovery = engine.recover().await?;
    // Cancelled when the daemon stops: the timers, the node tasks and the followers end with it.
    let shutdown = tokio_util::sync::CancellationToken::new();
    // Light Loop claims that survived are re-driven (an interrupted reviewer is replaced).
    workflows.recover_light_loops().await?;
    workflows.recover_blueprint_loops().await?;
    // Lattice follows loop and note events from before its recovery reads anything, so an
    // event between the two is not missed (the follower re-reads the Runs it concerns).
    workflows.spawn_lattice_follower(shutdown.clone());
    workflows.recover_lattice_runs().await?;
    collab.ensure_demo_bot(data_dir)?;
    // What the holds in force cover is made consistent before anything is routed or fires.
    collab.repair_holds().await?;
    // Nods the word lists cannot decide are read after commit (MEN-8).
    collab.listen_for_nods();
    // Filed lines and board edits reach the requirements ledger (and the scribe's queue).
    collab.listen_for_ledger_lines();
    // RL-15: the jobs' Rules and Done when lines from before the ledger enter it, once.
    collab.import_old_rules()?;
    // Lines a stop left unread or unrouted are read (or their stored reading reused) and
    // routed now, in order; delivery keys make each reach its Bots once.
    let resumed = collab.clone();
    tokio::spawn(async move {
        match resumed.resume_lines().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(lines = n, "routed the lines the last stop left unrouted"),
            Err(e) => tracing::warn!(error = %e, "routing the lines the last stop left failed"),
        }
    });
    spawn_agenda_timer(workflows, shutdown.clone());
    // With a manual clock only the debug route ticks: a test moves time, then ticks.
    if manual_clock.is_none() {
        spawn_scheduler_timer(collab.clone(), shutdown.clone());
    }
    // AC-5's quiet tick every 5 s, and checks from words read as lines are filed.
    checks.start(std::time::Duration::from_secs(5));
    engine.spawn_node_tasks(shutdown.clone());
    spawn_role_follower(collab.clone(), shutdown.clone());
    // Channel accounts; sends a stop left pending are made now, new ones as they are recorded.
    let channels = troupe_channels::Channels::new(collab.clone());
    channels
        .configure(&channels_defs, &|name| channel_secrets(name))
        .map_err(anyhow::Error::msg)?;
    channels.spawn_sender(shutdown.clone());
    // Runtime Boss Mode: an account's messages go to its boss session while the mode is on;
    // a push the bridge could not make is told to the session that made it.
    channels.set_boss_ingress(Arc::new(
        troupe_workflows::runtime_boss::ingress::RuntimeBossIngress::new(collab.clone()),
    ));
    troupe_workflows::runtime_boss::push_failures::spawn(collab.clone(), shutdown.clone());
    // Runtime Boss settings: the config file's `[experimental]` seeds what is not stored yet
    // (a stored value wins); then one boss session per enabled account while the mode is on.
    let seeded = collab
        .store()
        .write(|tx| tx.seed_runtime_settings(&runtime_boss))?;
    if !seeded.is_empty() {
        tracing::info!(keys = ?seeded, "runtime settings seeded from [experimental]");
    }
    if let Err(e) = troupe_workflows::Workflows::new(collab.clone())
        .ensure_runtime_boss(data_dir, &channels.accounts())
    {
        tracing::error!(error = %e, "runtime boss provisioning failed; PATCH /v1/settings/runtime retries it");
    }
    Ok(Bootstrap {
        state: AppState {
            collab,
            data_dir: data_dir.to_path_buf(),
            token,
            login: crate::access::LoginDesk::default(),
            shutdown,
            mcp,
            channels,
            manual_clock,
        },
        recovery,
    })
}

/// The MCP servers, started from `DATA_DIR/mcp` when their definition names no directory. No
/// definition may hand a server a variable a model endpoint reads its key from: the config
/// file's roles, the roles set through the API and the Bots' own endpoints, read at each check
/// so a key set while the daemon runs is covered at once.
fn mcp_servers_of(
    data_dir: &Path,
    store: &Store,
    roles: &RoleTable,
) -> anyhow::Result<troupe_mcp::Mcp> {
    let cwd = data_dir.join("mcp");
    std::fs::create_dir_all(&cwd)
        .with_context(|| format!("cannot create the MCP servers' directory {}", cwd.display()))?;
    let configured: Vec<String> = troupe_core::conversation::ROLES
        .iter()
        .filter_map(|r| roles.role(r).and_then(|s| s.api_key_env.clone()))
        .collect();
    let reader = store.clone();
    let protected: troupe_mcp::Protected = Arc::new(move || {
        let mut keys = configured.clone();
        let stored = reader.read(|tx| {
            let mut found: Vec<String> = tx
                .model_roles()?
                .into_iter()
                .filter_map(|(_, s)| s.api_key_env)
                .collect();
            found.extend(
                tx.bots(true)?
                    .into_iter()
                    .filter_map(|b| b.endpoint.and_then(|e| e.api_key_env)),
            );
            Ok(found)
        });
        match stored {
            Ok(found) => keys.extend(found),
            Err(e) => {
                tracing::warn!(error = %e, "could not read the endpoints' key variables; only the configured ones are protected")
            }
        }
        keys.sort();
        keys.dedup();
        keys
    });
    Ok(troupe_mcp::Mcp::new(store.clone(), cwd).with_protected_env_from(protected))
}

/// Roles set through the API on another node (seen as their `role_set` event, which every node
/// hears) are loaded here too, so every node calls the same endpoint for a role.
fn spawn_role_follower(collab: Collab, shutdown: tokio_util::sync::CancellationToken) {
    let mut events = collab.store().subscribe();
    tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                () = shutdown.cancelled() => break,
                e = events.recv() => e,
            };
            match event {
                Ok(e) if e.kind != "role_set" => continue,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    if let Err(e) = collab.load_stored_roles() {
                        tracing::warn!(error = %e, "cannot reload the stored roles");
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    });
}

/// The scheduler tick every 15 s (`Collab::scheduler_tick`: the supervisor, due check-backs,
/// external-job polls). Every deadline it reads is stored, so the first tick (at start)
/// handles, once, whatever fell due while the daemon was down (CB-4).
fn spawn_scheduler_timer(collab: Collab, shutdown: tokio_util::sync::CancellationToken) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(SCHEDULER_PERIOD);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                _ = every.tick() => {
                    let report = collab.scheduler_tick().await;
                    // A failed part was logged by the tick itself.
                    if !report.is_quiet() && report.failed.is_empty() {
                        tracing::info!(report = ?report, "scheduler tick");
                    }
                }
            }
        }
    });
}

/// How often `troupe serve` ticks the scheduler (issue 16 item 1).
pub const SCHEDULER_PERIOD: std::time::Duration = std::time::Duration::from_secs(15);

/// The workflow timer: every second, deliver the Agenda items and drive the loop continuations
/// that are due by the store's clock. The deadlines
/// are stored on the items, so the task holds no schedule of its own; its first tick (at start)
/// delivers, once, whatever fell due while the daemon was down.
fn spawn_agenda_timer(
    workflows: troupe_workflows::Workflows,
    shutdown: tokio_util::sync::CancellationToken,
) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(1));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                _ = every.tick() => {
                    let now = workflows.store().now();
                    if let Err(e) = workflows.agenda_tick(now).await {
                        tracing::warn!(error = %e, "agenda tick failed");
                    }
                    // Loop continuations the guard's spacing held back, now due.
                    if let Err(e) = workflows.continuation_tick(now).await {
                        tracing::warn!(error = %e, "continuation tick failed");
                    }
                }
            }
        }
    });
}
