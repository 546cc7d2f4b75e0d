//! Building the daemon's state from a data directory and the configured roles: open the store,
//! build the engine with the conversation layer plugged in, recover, and seed the demo Bot.

use crate::AppState;
use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use troupe_collab::{Collab, SessionProjector, SharedRoles};
use troupe_core::run::RunLimits;
use troupe_engine::models::SecretSource;
use troupe_engine::{Engine, EngineConfig, RecoveryReport, RoleTable};
use troupe_store::Store;

pub struct Bootstrap {
    pub state: AppState,
    pub recovery: RecoveryReport,
}

pub async fn build_state(
    data_dir: &Path,
    roles: RoleTable,
    secrets: SecretSource,
    limits: RunLimits,
    token: Option<Arc<str>>,
) -> anyhow::Result<Bootstrap> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create data dir {}", data_dir.display()))?;
    let store = Store::open(
        data_dir.join("troupe.db"),
        Arc::new(troupe_core::SystemClock),
    )?;
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
    let recovery = engine.recover().await?;
    // Light Loop claims that survived are re-driven (an interrupted reviewer is replaced).
    troupe_workflows::Workflows::new(collab.clone())
        .recover_light_loops()
        .await?;
    collab.ensure_demo_bot(data_dir)?;
    Ok(Bootstrap {
        state: AppState {
            collab,
            data_dir: data_dir.to_path_buf(),
            token,
            shutdown: tokio_util::sync::CancellationToken::new(),
        },
        recovery,
    })
}
