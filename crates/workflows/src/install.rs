//! Plugging the workflow layer into the kernel at build time.

use crate::agenda;
use crate::blueprint_loop::policy::BlueprintLoopPolicy;
use crate::blueprint_loop::tools::{self as bl_tools, AuditRecoveryGuard};
use crate::cortex;
use crate::lightloop::host::LoopHost;
use crate::lightloop::policy::LightLoopPolicy;
use crate::lightloop::tools::{self as loop_tools, RecoveryGuard};
use crate::notes;
use crate::projection::WorkflowProjection;
use std::sync::Arc;
use troupe_engine::{Engine, EngineBuilder, EngineError};

/// Add the workflow layer's extensions: the instruction projection, the note tools, the Light
/// Loop and the BlueprintLoop (their continuation policies, tools and recovery-turn guards), the
/// Agenda (its tools, its one-shot watches as continuation waits and the wake guard), and child
/// tasks (the `task` tools, queued and running tasks as continuation waits, and the check that a
/// child runs only inside its task). The returned host must be attached to the engine once it is
/// built; [`build_engine`] does both.
pub fn install(builder: EngineBuilder) -> Result<(EngineBuilder, Arc<LoopHost>), EngineError> {
    let host = LoopHost::new();
    let mut b = builder
        .context(Arc::new(WorkflowProjection))
        .policy(Arc::new(LightLoopPolicy { host: host.clone() }))
        .policy(Arc::new(BlueprintLoopPolicy { host: host.clone() }))
        .policy(Arc::new(crate::lattice::policy::LatticePolicy {
            host: host.clone(),
        }))
        .policy(Arc::new(crate::boss::policy::BossWorkerPolicy {
            host: host.clone(),
        }))
        .guard(Arc::new(RecoveryGuard { host: host.clone() }))
        .tool_scope(Arc::new(RecoveryGuard { host: host.clone() }))
        .tool_scope(Arc::new(AuditRecoveryGuard))
        .tool_scope(Arc::new(agenda::wake::WakeGuard))
        .guard(Arc::new(AuditRecoveryGuard))
        .guard(Arc::new(agenda::wake::WakeGuard))
        .tool_scope(Arc::new(crate::runtime_boss::toolset::BossSynergy))
        .guard(Arc::new(crate::runtime_boss::toolset::BossSynergy))
        .wait_provider(Arc::new(agenda::wait::AgendaWaits))
        .wait_provider(Arc::new(cortex::wait::CortexWaits))
        .admission(Arc::new(cortex::admission::ChildAdmission {
            host: host.clone(),
        }))
        .context(Arc::new(
            crate::runtime_boss::persona_context::RuntimeBossPersona,
        ))
        .context(Arc::new(crate::runtime_boss::reply_target::ReplyTarget))
        .run_observer(Arc::new(crate::runtime_boss::reactions::BossReactions));
    for t in notes::tools::registrations() {
        b = b.tool(t)?;
    }
    for t in loop_tools::registrations(&host) {
        b = b.tool(t)?;
    }
    for t in bl_tools::registrations(&host) {
        b = b.tool(t)?;
    }
    for t in crate::boss::tools::registrations(&host) {
        b = b.tool(t)?;
    }
    for t in crate::lattice::tools::registrations() {
        b = b.tool(t)?;
    }
    for t in agenda::tools::registrations(&host) {
        b = b.tool(t)?;
    }
    for t in cortex::tools::registrations(&host) {
        b = b.tool(t)?;
    }
    b = b.tool(crate::runtime_boss::push::channel_push_tool())?;
    b = b.tool(crate::runtime_boss::project::boss_project_tool())?;
    b = b.tool(crate::runtime_boss::session_send::session_send_tool(&host))?;
    for t in crate::runtime_boss::session_tools::session_tools() {
        b = b.tool(t)?;
    }
    for t in crate::runtime_boss::memory_tools::memory_tools() {
        b = b.tool(t)?;
    }
    Ok((b, host))
}

/// Install the workflow layer, build the engine, and attach the Light Loop's host to it.
pub fn build_engine(builder: EngineBuilder) -> Result<Engine, EngineError> {
    let (b, host) = install(builder)?;
    let engine = b.build();
    host.attach(&engine);
    Ok(engine)
}
