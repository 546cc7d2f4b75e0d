//! The continuation guard applied (`troupe_core::continuation_guard`): every loop that continues
//! its session by itself asks [`admit_continuation`] before it proposes a continuation. A spent
//! model-call budget or a no-progress streak latches the session (`workflow`, with a description
//! naming which); a continuation too soon after the last one is held back, and the workflow tick
//! ([`Workflows::continuation_tick`]) drives the session once it is due. Continue grants one more.

use crate::Workflows;
use crate::error::WorkflowError;
use serde::Serialize;
use troupe_core::ThreadId;
use troupe_core::continuation_guard::{
    GuardLimits, GuardPause, GuardVerdict, decide, observe_turn, resume,
};
use troupe_core::pause::PauseReason;
use troupe_store::{LoopGuard, Store, StoreError, Tx};

pub const LIGHTLOOP_REF: &str = "lightloop";

/// The drive reason of a continuation that the spacing held back and the tick now lets go.
pub const DUE: &str = "continuation_due";

/// The limits a new loop starts with: the engine's defaults, with the request's budget if given.
pub fn limits_for(defaults: GuardLimits, max_model_calls: Option<u32>) -> GuardLimits {
    GuardLimits {
        max_model_calls: max_model_calls.unwrap_or(defaults.max_model_calls),
        ..defaults
    }
}

/// Decide, and record, whether the loop `loop_ref` may continue `thread` now. A loop found
/// without a guard (started before guards existed) gets one with `defaults`.
pub fn admit_continuation(
    store: &Store,
    thread: ThreadId,
    loop_ref: &str,
    defaults: GuardLimits,
) -> Result<GuardVerdict, StoreError> {
    store.write(|tx| {
        let guard = match tx.active_loop_guard(thread)? {
            Some(g) if g.loop_ref == loop_ref => g,
            _ => tx.start_loop_guard(thread, loop_ref, defaults)?,
        };
        let seen = observe_turn(&guard.state, tx.latest_turn_facts(thread)?);
        let spent = tx.model_calls_since(thread, seen.counted_since)?;
        let (next, verdict) = decide(&seen, spent, tx.now());
        if next != guard.state {
            tx.save_loop_guard(guard.id, &next)?;
        }
        if let GuardVerdict::Pause { description, .. } = &verdict {
            tx.pause(thread, PauseReason::Workflow, Some(description.clone()))?;
        }
        Ok(verdict)
    })
}

/// Continue on a session whose loop the guard paused: one more call (or continuation without
/// progress) is allowed. Returns whether a guard was paused.
pub(crate) fn resume_guard(tx: &mut Tx<'_>, thread: ThreadId) -> Result<bool, StoreError> {
    let Some(g) = tx.active_loop_guard(thread)? else {
        return Ok(false);
    };
    if g.state.paused.is_none() {
        return Ok(false);
    }
    let spent = tx.model_calls_since(thread, g.state.counted_since)?;
    tx.save_loop_guard(g.id, &resume(&g.state, spent))?;
    Ok(true)
}

/// A new budget for the Light Loop already continuing `thread` (its instructions were updated).
pub(crate) fn set_budget(tx: &mut Tx<'_>, thread: ThreadId, max: u32) -> Result<(), StoreError> {
    if let Some(g) = tx.active_loop_guard(thread)?
        && g.loop_ref == LIGHTLOOP_REF
    {
        let mut state = g.state.clone();
        state.limits.max_model_calls = max;
        tx.save_loop_guard(g.id, &state)?;
    }
    Ok(())
}

/// The Light Loop of `thread` ended: so does its guard (a BlueprintLoop's ends with its record).
pub(crate) fn end_light_loop_guard(tx: &mut Tx<'_>, thread: ThreadId) -> Result<(), StoreError> {
    tx.end_loop_guard(thread, LIGHTLOOP_REF)
}

/// The guard as the workflow view shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct GuardView {
    /// `lightloop` or `blueprint_loop:<id>`.
    pub loop_ref: String,
    /// The budget: model calls of this session since the loop started; 0 means unlimited.
    pub max_model_calls: u32,
    pub model_calls: u32,
    pub no_progress_limit: u32,
    pub no_progress_streak: u32,
    pub spacing_ms: i64,
    /// A continuation held back by the spacing is due then (epoch ms).
    pub next_continuation_at: Option<i64>,
    /// Why the guard paused the loop, if it did.
    pub paused: Option<GuardPause>,
}

pub(crate) fn view(tx: &Tx<'_>, thread: ThreadId) -> Result<Option<GuardView>, StoreError> {
    let Some(LoopGuard {
        loop_ref, state, ..
    }) = tx.active_loop_guard(thread)?
    else {
        return Ok(None);
    };
    Ok(Some(GuardView {
        model_calls: tx.model_calls_since(thread, state.counted_since)?,
        loop_ref,
        max_model_calls: state.limits.max_model_calls,
        no_progress_limit: state.limits.no_progress_limit,
        no_progress_streak: state.no_progress_streak,
        spacing_ms: state.limits.spacing_ms,
        next_continuation_at: state.due_at,
        paused: state.paused,
    }))
}

impl Workflows {
    /// Drive every session whose held-back continuation is due by `now`; its due time is
    /// cleared first, so a repeat tick does nothing. Returns the threads driven.
    pub async fn continuation_tick(&self, now: i64) -> Result<Vec<ThreadId>, WorkflowError> {
        // The tick runs every second and almost always finds nothing: a read answers that
        // without taking the write lock.
        if self.store().read(|tx| tx.due_loop_guards(now))?.is_empty() {
            return Ok(Vec::new());
        }
        let due = self.store().write(|tx| {
            let due = tx.due_loop_guards(now)?;
            for g in &due {
                let mut state = g.state.clone();
                state.due_at = None;
                tx.save_loop_guard(g.id, &state)?;
            }
            Ok(due)
        })?;
        let mut driven = Vec::new();
        for g in due {
            if let Err(e) = self.engine().request_drive(g.thread_id, DUE, false).await {
                tracing::warn!(thread = %g.thread_id, error = %e, "due continuation drive failed");
            }
            driven.push(g.thread_id);
        }
        Ok(driven)
    }
}
