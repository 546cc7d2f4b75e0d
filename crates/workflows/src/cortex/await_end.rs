//! `task_output`'s wait: up to [`WAIT_SECS`] for a task to end, so a Bot that wants a child's
//! result gets it in one call instead of asking again and again (each ask a model call; the
//! local Qwen polled a running task four times, competing with the child for the model).
//!
//! The wait ends when the task ends (its `task_updated` event on the parent's thread), when
//! something is delivered to the parent or already waits for it (a person's line, another
//! task's result: the Bot should read it), when the turn is stopped, or at the deadline. The
//! deadline is read from the store's clock, which tests move by hand, every [`TICK`].

use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use troupe_core::ThreadId;
use troupe_store::{Store, StoreError, TaskId, TaskRecord};

/// How long `task_output` waits for a task still working: long enough for a short task, short
/// enough that a Bot waiting on a long one hears from it again within the minute. Not the
/// model's to choose: a small model filled an optional wait with 0 on every call.
pub const WAIT_SECS: i64 = 60;
const TICK: Duration = Duration::from_millis(250);

/// Why the wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// The task is no longer queued or running.
    Ended,
    /// The wait's time passed with the task still working.
    TimeUp,
    /// Something was delivered to the waiting thread, or already waited for it.
    Message,
    /// The turn was stopped.
    Stopped,
}

/// Wait for task `id` of thread `parent` to end, at most `wait_ms` by the store's clock.
pub async fn until_ended(
    store: &Store,
    parent: ThreadId,
    id: TaskId,
    wait_ms: i64,
    cancel: &CancellationToken,
) -> Result<(TaskRecord, Waited), StoreError> {
    // Subscribed before the first read, so an end committed between the two is not missed.
    let mut events = store.subscribe();
    let clock = store.clock();
    let deadline = clock.now_ms().saturating_add(wait_ms);
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Something already waiting for the Bot (it came during the model call that asked): read it
    // first. Context items (lines it only heard) wake nobody and do not end a wait either.
    let (mut t, unread) = store.read(|tx| Ok((tx.task(id)?, tx.has_waking_item(parent)?)))?;
    if unread && t.status.is_active() {
        return Ok((t, Waited::Message));
    }
    loop {
        if !t.status.is_active() {
            return Ok((t, Waited::Ended));
        }
        if clock.now_ms() >= deadline {
            return Ok((t, Waited::TimeUp));
        }
        tokio::select! {
            _ = cancel.cancelled() => return Ok((t, Waited::Stopped)),
            ev = events.recv() => match ev {
                Ok(e) if e.thread_id == Some(parent) => {
                    t = store.read(|tx| tx.task(id))?;
                    if e.kind == "inbox_delivered" && t.status.is_active() {
                        return Ok((t, Waited::Message));
                    }
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => t = store.read(|tx| tx.task(id))?,
                // The store is closing: nothing more will come.
                Err(RecvError::Closed) => return Ok((t, Waited::Stopped)),
            },
            _ = tick.tick() => {}
        }
    }
}
