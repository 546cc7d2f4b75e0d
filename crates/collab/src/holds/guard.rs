//! A turn a hold covers makes no effectful call (HOLD-T1/T2): shell, file writes and
//! effectful registered tools answer `held` without running, as do the conversation tools
//! with an effect (send_message, create_direct, delegate, check_back, ask_user, work_on).
//! Reads, listings and end_turn pass. The kernel's guard sees the built-in effectful tools;
//! the conversation tools are wrapped, since they write records rather than effects.

use super::log;
use async_trait::async_trait;
use std::sync::Arc;
use troupe_core::HoldId;
use troupe_core::RunId;
use troupe_engine::extension::{
    EffectGuard, GuardContext, Refusal, ToolCallContext, ToolHandler, ToolReply,
};
use troupe_store::{Store, StoreError};

/// The holds in force over a live turn.
fn holds_over_run(store: &Store, run: RunId) -> Result<Vec<HoldId>, StoreError> {
    store.read(|tx| match tx.turn_facts(run)? {
        Some(facts) => tx.covering_holds(&facts),
        None => Ok(Vec::new()),
    })
}

fn held_text(tool: &str, holds: &[HoldId]) -> String {
    format!(
        "held: the person stopped this work ({}); {tool} did not run. Only reading and \
         end_turn are open until they lift the stop.",
        log::ids(holds)
    )
}

pub struct HoldGuard;

impl EffectGuard for HoldGuard {
    fn name(&self) -> &str {
        "hold"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        if !crate::tools::in_conversation(ctx.thread) {
            return Ok(());
        }
        match holds_over_run(ctx.store, ctx.run_id) {
            Ok(h) if h.is_empty() => Ok(()),
            Ok(h) => Err(held_text(ctx.tool, &h).into()),
            // An unreadable cover refuses: an effect under a stop cannot be taken back.
            Err(e) => Err(format!("held: holds could not be read ({e}); nothing ran").into()),
        }
    }
}

/// A conversation tool with an effect, refused under a hold before its handler runs.
pub(crate) struct Held {
    pub(crate) tool: String,
    pub(crate) inner: Arc<dyn ToolHandler>,
}

#[async_trait]
impl ToolHandler for Held {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        match holds_over_run(&ctx.store, ctx.run_id) {
            Ok(h) if h.is_empty() => self.inner.call(ctx, arguments).await,
            Ok(h) => ToolReply::error(held_text(&self.tool, &h)),
            Err(e) => ToolReply::error(format!("held: holds could not be read ({e}); nothing ran")),
        }
    }
}
