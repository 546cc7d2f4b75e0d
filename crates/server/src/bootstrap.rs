//! Building the daemon's state from a data directory and the configured roles: open the store,
//! build the engine with the conversation layer plugged in, interrupt child tasks the last
//! process left unfinished, recover, seed the demo Bot,
//! and start the Agenda's timer.

use crate::AppState;
use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use troupe_collab::{Collab, SessionProjector, SharedRoles};
use troupe_core::run::RunLimits;
use troupe_engine::models::SecretSource;
use troupe_engine::{Engine, EngineConfig, RecoveryReport, RoleTable};
use troupe_store::{Durability, OpenOptions, Store};

pub struct Bootstrap {
    pub state: AppState,
    pub recovery: RecoveryReport,
}

/// The daemon's store, `DATA_DIR/troupe.db`, opened with `durability`.
pub fn open_store(data_dir: &Path, durability: Durability) -> anyhow::Result<Store> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create data dir {}", data_dir.display()))?;
    Ok(Store::open_with(
        data_dir.join("troupe.db"),
        Arc::new(troupe_core::SystemClock),
        OpenOptions { durability },
    )?)
}

/// [`build_state_on`] a store opened with the default durability.
pub async fn build_state(
    data_dir: &Path,
    roles: RoleTable,
    secrets: SecretSource,
    limits: RunLimits,
    token: Option<Arc<str>>,
) -> anyhow::Result<Bootstrap> {
    let store = open_store(data_dir, Durability::default())?;
    build_state_on(store, data_dir, roles, secrets, limits, token).await
}

/// The daemon's state on an open store of `data_dir`.
pub async fn build_state_on(
    store: Store,
    data_dir: &Path,
    roles: RoleTable,
    secrets: SecretSource,
    limits: RunLimits,
    token: Option<Arc<str>>,
) -> anyhow::Result<Bootstrap> {
    let shared = Arc::new(SharedRoles::new(roles, secrets));
    let builder = Engine::builder(store, shared.clone())
        .config(EngineConfig {
            limits,
            ..EngineConfig::default()
        })
        .message_observer(Arc::new(SessionProjector));
    let engine = troupe_workflows::build_engine(builder)?;
    let collab = Collab::new(engine.clone(), shared, data_dir.join("workspaces"));
    collab.load_stored_roles()?;
    let workflows = troupe_workflows::Workflows::new(collab.clone());
    // Child tasks a stopped process left queued or running become interrupted, their parents
    // told once; before the kernel's recovery, so its latch sees that notice and its boot
    // wakes never restart a cut-off child.
    let tasks = workflows.reconcile_tasks()?;
    if !tasks.interrupted.is_empty() {
        tracing::info!(tasks = ?tasks.interrupted, "child tasks interrupted by the last stop");
    }
    let recovery = engine.recover().await?;
    // Light Loop claims that survived are re-driven (an interrupted reviewer is replaced).
    workflows.recover_light_loops().await?;
    workflows.recover_blueprint_loops().await?;
    collab.ensure_demo_bot(data_dir)?;
    let shutdown = tokio_util::sync::CancellationToken::new();
    spawn_agenda_timer(workflows, shutdown.clone());
    Ok(Bootstrap {
        state: AppState {
            collab,
            data_dir: data_dir.to_path_buf(),
            token,
            shutdown,
        },
        recovery,
    })
}

/// The Agenda's timer: every second, deliver what is due by the store's clock. The deadlines
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
                }
            }
        }
    });
}
