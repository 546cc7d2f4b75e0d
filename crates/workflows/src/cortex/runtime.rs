//! Running child tasks: admission under the caps, a watcher per started task that drives the
//! child and settles the task when the child goes idle (output contract, repair turns, a
//! failed model), the result delivered to the parent as a steer item, cancel, and startup
//! reconciliation. Every status change is one store transaction with its event.

use crate::WorkflowError;
use crate::cortex::contract::{OutputContract, repair_text};
use crate::cortex::machine::{self, Settlement, Slot, TaskEvent};
use crate::cortex::texts;
use troupe_core::ThreadId;
use troupe_core::drive::RootState;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_engine::{DriveOutcome, Engine, StopMode};
use troupe_store::{StoreError, TaskEdit, TaskId, TaskRecord, TaskRole, TaskStatus, Tx};

/// Start every queued task the caps admit, oldest first; each gets a watcher. Safe to call
/// at any time and from anywhere: admission is decided inside one write transaction.
pub fn start_admitted(engine: &Engine) {
    // A draining engine starts nothing; what is still queued is interrupted at the next start.
    if engine.is_draining() {
        return;
    }
    let boot = engine.config().boot_id.clone();
    let started = engine.store().write(|tx| {
        let active = tx.active_tasks()?;
        let slots: Vec<Slot<'_>> = active
            .iter()
            .map(|t| Slot {
                id: t.id,
                agent: &t.agent,
                role: t.role,
                status: t.status,
            })
            .collect();
        let mut out = Vec::new();
        for id in machine::admit(&slots) {
            out.push(tx.edit_task(
                id,
                &TaskEdit {
                    status: Some(TaskStatus::Running),
                    started_boot: Some(boot.clone()),
                    ..TaskEdit::default()
                },
            )?);
        }
        Ok(out)
    });
    let started = match started {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "task admission failed");
            return;
        }
    };
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    for t in started {
        rt.spawn(watch(engine.clone(), t.id));
    }
}

/// What a settle pass left to do.
enum Next {
    /// A repair turn was queued: run the child again.
    Again,
    /// The task ended (its parent is to be driven) or is no longer this watcher's.
    Done(Option<ThreadId>),
}

/// Drive the child and settle its task each time it goes idle, until the task ends.
async fn watch(engine: Engine, id: TaskId) {
    loop {
        let task = match engine.store().read(|tx| tx.task(id)) {
            Ok(t) if t.status == TaskStatus::Running => t,
            Ok(_) => break,
            Err(e) => {
                tracing::warn!(task = %id, error = %e, "reading a task failed");
                break;
            }
        };
        let child = task.child_thread_id;
        // A forced drive: it starts the prompt, a repair turn, or resumes a cut-off turn.
        let stuck = match engine.continue_thread(child).await {
            Ok(DriveOutcome::Started { .. }) => None,
            Ok(DriveOutcome::Draining) => return,
            Ok(other) if !engine.is_running(child) => {
                Some(format!("the child could not start ({other:?})"))
            }
            Ok(_) => None,
            Err(e) => Some(format!("the child could not start: {e}")),
        };
        engine.wait_idle(child).await;
        match settle_now(&engine, id, stuck) {
            Ok(Next::Again) => continue,
            Ok(Next::Done(parent)) => {
                if let Some(p) = parent
                    && let Err(e) = engine.request_drive(p, "cortex", false).await
                {
                    tracing::warn!(thread = %p, error = %e, "driving a task's parent failed");
                }
                break;
            }
            Err(e) => {
                tracing::warn!(task = %id, error = %e, "settling a task failed");
                break;
            }
        }
    }
    // A slot may have freed.
    start_admitted(&engine);
}

/// The latest terminal reply of the child's latest task root.
fn final_reply(tx: &Tx<'_>, child: ThreadId) -> Result<Option<String>, StoreError> {
    let RootState::Done(root) = tx.root_state(child)? else {
        return Ok(None);
    };
    let Some((reply, terminal, _)) = tx.latest_reply(root)? else {
        return Ok(None);
    };
    terminal
        .then(|| tx.message(reply).map(|m| m.text()))
        .transpose()
}

fn settle_now(engine: &Engine, id: TaskId, stuck: Option<String>) -> Result<Next, StoreError> {
    if engine.is_running(engine.store().read(|tx| tx.task(id))?.child_thread_id) {
        // Someone else drove the child on; it is settled when that run ends.
        return Ok(Next::Again);
    }
    engine.store().write(|tx| {
        let task = tx.task(id)?;
        if task.status != TaskStatus::Running {
            return Ok(Next::Done(None));
        }
        let child = task.child_thread_id;
        let last = tx.runs_for_thread(child, 1)?.into_iter().next();
        let reply = final_reply(tx, child)?;
        let contract = match OutputContract::parse(Some(&task.output_contract)) {
            Ok(c) => c,
            Err(e) => {
                end(tx, &task, TaskEvent::Fail, None, None, Some(e))?;
                return Ok(Next::Done(Some(task.parent_thread_id)));
            }
        };
        let decided = machine::settle(
            task.role,
            &contract,
            task.repair_attempts,
            last.as_ref().and_then(|r| r.end_reason.as_ref()),
            reply.as_deref(),
        );
        let ended = match decided {
            Settlement::Nothing => match stuck {
                Some(cause) => end(tx, &task, TaskEvent::Fail, None, None, Some(cause))?,
                None => return Ok(Next::Done(None)),
            },
            Settlement::Repair { problem, attempt } => {
                tx.deliver(
                    child,
                    &Delivery {
                        mode: InboxMode::Steer,
                        priority: Priority::SUPERVISOR,
                        origin: Origin::Delegation(format!("cortex:{id}:repair")),
                        text: repair_text(&problem, attempt, &contract),
                        visible: true,
                        delivery_key: Some(format!("cortex:{id}:repair:{attempt}")),
                        order_key: None,
                        defers_calls: false,
                    },
                )?;
                tx.edit_task(
                    id,
                    &TaskEdit {
                        repair_attempts: Some(attempt),
                        error: Some(Some(problem)),
                        ..TaskEdit::default()
                    },
                )?;
                return Ok(Next::Again);
            }
            Settlement::Complete { text, json } => {
                end(tx, &task, TaskEvent::Complete, Some(text), json, None)?
            }
            // A child that never ran: why it could not start says more than that it did not.
            Settlement::Fail(_) if last.is_none() && stuck.is_some() => {
                end(tx, &task, TaskEvent::Fail, None, None, stuck)?
            }
            Settlement::Fail(e) => end(tx, &task, TaskEvent::Fail, None, None, Some(e))?,
            Settlement::Cancel(e) => end(tx, &task, TaskEvent::Cancel, None, None, Some(e))?,
        };
        if ended.role == TaskRole::Reviewer {
            // The loop that bound the reviewer learns of the ending in this transaction; a
            // recovery turn re-queues the task, started by `start_admitted` after the watch.
            crate::reviewer_task::settle_ended(tx, &ended)?;
        }
        Ok(Next::Done(Some(task.parent_thread_id)))
    })
}

/// End a task and tell its parent, in the caller's transaction.
fn end(
    tx: &mut Tx<'_>,
    task: &TaskRecord,
    event: TaskEvent,
    text: Option<String>,
    json: Option<serde_json::Value>,
    error: Option<String>,
) -> Result<TaskRecord, StoreError> {
    let to = machine::step(task.status, &event)
        .map_err(|m| StoreError::Conflict(format!("task {}: {m}", task.id)))?;
    let done = tx.edit_task(
        task.id,
        &TaskEdit {
            status: to,
            output_text: Some(text),
            output_json: Some(json),
            error: Some(error),
            ..TaskEdit::default()
        },
    )?;
    if done.notify_parent {
        // One result per round: a resumed or followed-up task reports again.
        let what = format!("result:{}", done.resumes);
        notify(tx, &done, texts::result_notice(&done), what)?;
    }
    Ok(done)
}

/// A steer item for the parent: it joins the parent's running turn, or wakes it when idle.
fn notify(tx: &mut Tx<'_>, t: &TaskRecord, text: String, what: String) -> Result<(), StoreError> {
    tx.deliver(
        t.parent_thread_id,
        &Delivery {
            mode: InboxMode::Steer,
            priority: Priority::DELEGATION_RESULT,
            origin: Origin::Delegation(format!("cortex:{}", t.id)),
            text,
            visible: true,
            delivery_key: Some(format!("cortex:{}:{what}", t.id)),
            order_key: None,
            defers_calls: false,
        },
    )?;
    Ok(())
}

/// Cancel a task: queued, running or interrupted becomes cancelled (the child's run is
/// aborted, its queued input dropped, the parent told); cancelling again changes nothing; a
/// completed or failed task is a conflict.
pub async fn cancel(engine: &Engine, id: TaskId) -> Result<TaskRecord, WorkflowError> {
    let (task, changed) = engine
        .store()
        .write(|tx| {
            let t = tx.task(id)?;
            match machine::step(t.status, &TaskEvent::Cancel) {
                Err(_) => Err(StoreError::Conflict(format!(
                    "task {id} is {} and cannot be cancelled",
                    t.status.as_str()
                ))),
                Ok(None) => Ok((t, false)),
                Ok(Some(_)) => {
                    let items: Vec<_> = tx
                        .inbox(t.child_thread_id)?
                        .into_iter()
                        .map(|i| i.id)
                        .collect();
                    tx.drop_inbox_items(t.child_thread_id, &items)?;
                    let done = end(
                        tx,
                        &t,
                        TaskEvent::Cancel,
                        None,
                        None,
                        Some("cancelled by request".into()),
                    )?;
                    Ok((done, true))
                }
            }
        })
        .map_err(|e| match e {
            StoreError::Conflict(m) => WorkflowError::conflict("task_finished", m),
            other => other.into(),
        })?;
    if changed {
        if engine.is_running(task.child_thread_id) {
            match engine.stop(task.child_thread_id, StopMode::Internal).await {
                Ok(_) | Err(troupe_engine::EngineError::NotRunning(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        engine
            .request_drive(task.parent_thread_id, "cortex", false)
            .await?;
        start_admitted(engine);
    }
    Ok(task)
}

/// Startup: every queued or running task was cut off by the process that stopped; each
/// becomes `interrupted` and its parent is told once (a keyed steer item). Nothing is driven
/// and no model is called. Run before the kernel's recovery, so its boot wakes find the tasks
/// interrupted and its latch sees the parents' new input.
pub fn reconcile(engine: &Engine) -> Result<Vec<TaskId>, StoreError> {
    engine.store().write(|tx| {
        let mut out = Vec::new();
        for t in tx.active_tasks()? {
            let cut = end_interrupted(tx, &t)?;
            out.push(cut.id);
        }
        Ok(out)
    })
}

fn end_interrupted(tx: &mut Tx<'_>, t: &TaskRecord) -> Result<TaskRecord, StoreError> {
    let to = machine::step(t.status, &TaskEvent::Interrupt)
        .map_err(|m| StoreError::Conflict(format!("task {}: {m}", t.id)))?;
    let cut = tx.edit_task(
        t.id,
        &TaskEdit {
            status: to,
            error: Some(Some(
                "interrupted: the process running it stopped before it finished".into(),
            )),
            ..TaskEdit::default()
        },
    )?;
    if cut.notify_parent {
        // One notice per interruption: a resumed task that is cut off again is told again.
        let what = format!("interrupted:{}", cut.resumes);
        notify(tx, &cut, texts::interrupted_notice(&cut), what)?;
    }
    Ok(cut)
}
