//! The agent loop of one run: take inbox work, call the model, run the tools it asks for,
//! and go on until the model ends the task and no task is left. Every write checks the lease
//! generation first, so a stopped loop can never write after its stop.

use crate::Engine;
use crate::extension::{EndingContext, EndingVerdict, MAX_ENDING_BOUNCES};
use crate::live::{LiveRun, StreamNotice};
use std::sync::Arc;
use std::time::Instant;
use troupe_core::drive::plan_inbox_take;
use troupe_core::effect::unknown_effect_note;
use troupe_core::message::{Finish, Message, Origin, Part, Role};
use troupe_core::pause::PauseReason;
use troupe_core::run::{EndReason, FailureStreaks};
use troupe_core::thread::Thread;
use troupe_core::{MessageId, ThreadId};
use troupe_llm::{LlmError, complete_with_retry};
use troupe_store::{ModelCallRecord, NewMessage, StoreError, Tx};

/// The drive reason Continue uses.
pub(crate) const CONTINUE: &str = "continue";

/// Why the loop stopped writing.
#[derive(Debug)]
pub(crate) enum LoopExit {
    /// The lease is gone (an abort ended the run); nothing more may be written.
    Stale,
    Store(StoreError),
}

impl From<StoreError> for LoopExit {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::StaleLease { .. } => LoopExit::Stale,
            other => LoopExit::Store(other),
        }
    }
}

/// A write on behalf of the run: refused unless the run still holds the thread's lease.
pub(crate) fn owned_write<T>(
    engine: &Engine,
    live: &LiveRun,
    f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>,
) -> Result<T, LoopExit> {
    Ok(engine.inner.store.write(|tx| {
        tx.check_lease(live.thread_id, live.generation)?;
        f(tx)
    })?)
}

/// The same, queued to the store's writer thread so it shares a commit with other runs' writes
/// and the task yields its worker while waiting; resolves once the write is committed.
pub(crate) async fn owned_write_async<T: Send + 'static>(
    engine: &Engine,
    live: &LiveRun,
    mut f: impl FnMut(&mut Tx<'_>) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, LoopExit> {
    let (thread, generation) = (live.thread_id, live.generation);
    Ok(engine
        .inner
        .store
        .write_async(move |tx| {
            tx.check_lease(thread, generation)?;
            f(tx)
        })
        .await?)
}

pub(crate) async fn run(engine: Engine, live: Arc<LiveRun>) {
    let ending = match drive_loop(&engine, &live).await {
        Ok(reason) => Some(reason),
        Err(LoopExit::Stale) => None,
        Err(LoopExit::Store(e)) => Some(EndReason::Internal(e.to_string())),
    };
    if let Some(reason) = ending {
        let failed = reason.status() == troupe_core::run::RunStatus::Failed;
        let thread = live.thread_id;
        let (run_id, generation) = (live.run_id, live.generation);
        let observer = engine.clone();
        let res = owned_write_async(&engine, &live, move |tx| {
            let ended = tx.end_run(run_id, generation, &reason)?;
            observer.inner.ext.run_ended(tx, &ended)?;
            if failed {
                tx.pause(thread, PauseReason::Failed, Some(reason.to_string()))?;
            } else if reason == EndReason::Interrupted {
                tx.pause(
                    thread,
                    PauseReason::Interrupted,
                    Some("interrupted by shutdown".into()),
                )?;
            }
            Ok(())
        })
        .await;
        if let Err(LoopExit::Store(e)) = res {
            tracing::error!(thread = %thread, error = %e, "could not record the end of a run");
        }
    }
    // Hand over: the thread no longer counts as running, but waiters keep waiting until the
    // release drive has decided whether another run follows.
    live.mark_ended();
    if !engine.is_draining()
        && let Err(e) = engine
            .request_drive_boxed(live.thread_id, crate::drive::RELEASE, false)
            .await
    {
        tracing::warn!(thread = %live.thread_id, error = %e, "release drive failed");
    }
    engine.inner.live.remove(live.thread_id, live.run_id);
    live.mark_done();
    if !engine.is_draining() {
        engine.retry_queued_wakes().await;
    }
}

pub(crate) struct InboxStep {
    thread: Thread,
    call_model: bool,
    root: Option<MessageId>,
    /// Messages the inbox items became, in order.
    materialized: Vec<Message>,
}

async fn take_inbox(
    engine: &Engine,
    live: &Arc<LiveRun>,
    first: bool,
) -> Result<InboxStep, LoopExit> {
    // Most steps find the inbox empty: decide that from a read before taking the write lock.
    if !first {
        let quick = engine.inner.store.read(|tx| {
            tx.check_lease(live.thread_id, live.generation)?;
            let items = tx.inbox(live.thread_id)?;
            if !items.is_empty() {
                return Ok(None);
            }
            let root = tx.root_state(live.thread_id)?;
            let take = plan_inbox_take(root, &items);
            Ok(Some(InboxStep {
                thread: tx.thread(live.thread_id)?,
                call_model: take.call_model,
                root: root.root(),
                materialized: Vec::new(),
            }))
        })?;
        if let Some(step) = quick {
            return Ok(step);
        }
    }
    let (owner, run) = (engine.clone(), live.clone());
    owned_write_async(engine, live, move |tx| take_in(tx, &owner, &run, first)).await
}

/// The loop's inbox step inside a write: what the thread takes next, materialized. A step's
/// last commit calls it too, so the next call needs no read of its own.
pub(crate) fn take_in(
    tx: &mut Tx<'_>,
    engine: &Engine,
    live: &LiveRun,
    first: bool,
) -> Result<InboxStep, StoreError> {
    let thread = tx.thread(live.thread_id)?;
    let items = tx.inbox(live.thread_id)?;
    let mut root = tx.root_state(live.thread_id)?;
    // A root left open by an earlier run is a breakpoint a person's new task takes over
    // from; Continue instead resumes it first, and queued tasks follow once it is done.
    if first && live.trigger != CONTINUE {
        root = root.at_run_start();
    }
    let take = plan_inbox_take(root, &items);
    let mut current = root.root();
    let mut materialized = Vec::new();
    if let Some(task) = take.task {
        let m = tx.materialize(task, None, Some(live.run_id), engine.root_stamps(&thread))?;
        engine.inner.ext.observe(tx, &m)?;
        current = Some(m.id);
        tx.set_run_root(live.run_id, m.id)?;
        materialized.push(m);
    } else if first && let Some(r) = current {
        tx.set_run_root(live.run_id, r)?;
    }
    for id in take.steers.iter().chain(take.contexts.iter()) {
        let m = tx.materialize(*id, current, Some(live.run_id), None)?;
        engine.inner.ext.observe(tx, &m)?;
        materialized.push(m);
    }
    if first && take.call_model {
        materialized.extend(name_unknown_effects(engine, tx, live, current)?);
    }
    Ok(InboxStep {
        thread,
        call_model: take.call_model,
        root: current,
        materialized,
    })
}

async fn drive_loop(engine: &Engine, live: &Arc<LiveRun>) -> Result<EndReason, LoopExit> {
    let limits = engine.inner.config.limits.clone();
    let thread_id = live.thread_id;
    let mut hops: u32 = 0;
    let mut streaks = FailureStreaks::default();
    let mut bounced: Vec<String> = Vec::new();
    let mut first = true;
    // The last model call's answer was unreadable and the model was told (at most once in a row).
    let mut told_unreadable = false;
    let mut pending: Option<InboxStep> = None;
    // The loop owns the thread while it runs, so it keeps the history in memory and appends what
    // it writes, instead of reloading it for every model call.
    let mut history = engine
        .inner
        .store
        .read(|tx| tx.messages(thread_id, None, u32::MAX))?;
    loop {
        if live.cancel.is_cancelled() {
            return Err(LoopExit::Stale);
        }
        // A step boundary: a draining engine ends the run here; the thread resumes after restart.
        if engine.is_draining() {
            return Ok(EndReason::Interrupted);
        }
        // A step's last commit already took the inbox for the call after it.
        let mut step = match pending.take() {
            Some(next) => next,
            None => take_inbox(engine, live, first).await?,
        };
        history.append(&mut step.materialized);
        first = false;
        if !step.call_model {
            return Ok(if hops == 0 {
                EndReason::NoWork
            } else {
                EndReason::Completed
            });
        }
        if hops >= limits.max_hops {
            return Ok(EndReason::HopLimit(hops));
        }
        hops += 1;
        let thread = step.thread;
        let model = match engine.inner.models.resolve(&thread.agent) {
            Ok(m) => m,
            Err(e) => {
                write_failure(engine, live, step.root, &e)?;
                return Ok(EndReason::ModelError(e));
            }
        };
        // Pictures go to a model that takes them: in the context, and from this step's tools.
        let takes_pictures = model.provider.takes_pictures();
        live.set_takes_pictures(takes_pictures);
        let request = engine.assemble(&thread, &history, hops, takes_pictures);
        let _ = engine.inner.stream.send(StreamNotice::ModelCallStarted {
            thread_id,
            run_id: live.run_id,
            model: model.provider.model().to_string(),
        });
        let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
        let forward = tokio::spawn(crate::live::forward_stream(
            live.clone(),
            engine.inner.stream.clone(),
            events_rx,
        ));
        let started_at = engine.inner.store.now();
        let clock = Instant::now();
        let call_cancel = live.begin_call();
        let outcome = complete_with_retry(
            &*model.provider,
            &model.retry,
            &request,
            &events_tx,
            &call_cancel,
        )
        .await;
        live.end_call();
        drop(events_tx);
        let _ = forward.await;
        let latency_ms = clock.elapsed().as_millis() as u64;

        if matches!(outcome.result, Err(LlmError::Cancelled)) {
            if live.cancel.is_cancelled() {
                return Err(LoopExit::Stale);
            }
            // Only this call was cut (`Engine::cut_step`): what it streamed is dropped and the
            // run calls again with what waits in the inbox.
            live.take_partial();
            hops -= 1;
            continue;
        }
        let usage = outcome.result.as_ref().map(|r| r.usage).unwrap_or_default();
        let record = ModelCallRecord {
            run_id: live.run_id,
            role: model.role.clone(),
            endpoint: model.provider.endpoint().to_string(),
            model: model.provider.model().to_string(),
            input_tokens: usage.input_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            output_tokens: usage.output_tokens,
            latency_ms,
            attempts: outcome.attempts,
            error: outcome.result.as_ref().err().map(|e| e.to_string()),
            attempt_errors: outcome.errors.clone(),
            started_at,
            finish: outcome
                .result
                .as_ref()
                .ok()
                .map(|r| r.finish.as_str().to_string()),
        };
        let mut response = match outcome.result {
            Ok(r) => r,
            // The server could not read what the model wrote, and asking again got the same:
            // the model is told so once and asked again, with that in front of it.
            Err(e) if e.is_unreadable_answer() && !told_unreadable => {
                live.take_partial();
                let note = owned_write(engine, live, |tx| {
                    tx.record_model_call(thread_id, &record)?;
                    tx.bump_run_hops(live.run_id)?;
                    note_unreadable(engine, tx, live, step.root, &e)
                })?;
                history.push(note);
                told_unreadable = true;
                continue;
            }
            Err(e) => {
                owned_write(engine, live, |tx| {
                    tx.record_model_call(thread_id, &record)?;
                    tx.bump_run_hops(live.run_id)?;
                    Ok(())
                })?;
                let text = e.to_string();
                write_failure(engine, live, step.root, &text)?;
                return Ok(EndReason::ModelError(text));
            }
        };
        told_unreadable = false;
        live.take_partial();
        crate::step::mend_numbers(&mut response.tool_calls, &request.tools);

        let committed = crate::step::commit(
            engine,
            live,
            &thread,
            step.root,
            record,
            &response,
            troupe_llm::output_cap(request.max_tokens, model.provider.output_cap()),
            &mut streaks,
            limits.failure_streak_report,
        )
        .await?;
        history.push(committed.reply);
        pending = committed.next;
        if let Some(reason) = committed.ends_run {
            return Ok(reason);
        }
        if !response.tool_calls.is_empty() && !committed.ends_turn {
            continue;
        }

        // The model ended its turn: the ending hooks may send it back, or end the run their way.
        let verdict = if bounced.len() >= MAX_ENDING_BOUNCES {
            None
        } else {
            check_endings(engine, &thread, live, &response.text, &bounced)
        };
        if let Some((_, EndingVerdict::End(reason))) = verdict {
            return Ok(reason);
        }
        if let Some((hook, EndingVerdict::Bounce(reason))) = verdict {
            let bounce = owned_write(engine, live, |tx| {
                let m = tx.insert_message(&NewMessage {
                    thread_id,
                    role: Role::User,
                    origin: Origin::System(format!("ending_hook:{hook}")),
                    is_root: false,
                    root_id: step.root,
                    run_id: Some(live.run_id),
                    parts: vec![Part::text(&reason).hidden()],
                    finish: None,
                    error: None,
                    delivery_key: None,
                    metadata: None,
                })?;
                engine.inner.ext.observe(tx, &m)?;
                tx.bump_ending_bounces(live.run_id)?;
                Ok(m)
            })?;
            history.push(bounce);
            bounced.push(hook);
            // The bounce reopened the task: take the inbox afresh.
            pending = None;
        }
    }
}

/// The first call of a run after calls were cut off names them once, in a hidden message the
/// model reads, so it can check what happened before repeating one.
fn name_unknown_effects(
    engine: &Engine,
    tx: &mut Tx<'_>,
    live: &LiveRun,
    root: Option<MessageId>,
) -> Result<Option<Message>, StoreError> {
    let calls = tx.unnamed_unknown_effects(live.thread_id)?;
    if calls.is_empty() {
        return Ok(None);
    }
    let m = hidden_note(
        engine,
        tx,
        live,
        root,
        "unknown_effect",
        unknown_effect_note(&calls),
    )?;
    let ids: Vec<_> = calls.iter().map(|c| c.effect_id).collect();
    tx.mark_effects_named(&ids)?;
    Ok(Some(m))
}

/// A hidden note the model reads at its next call: the server could not read its last answer,
/// so nothing of it was kept, and how to write the answer so that it can be read.
fn note_unreadable(
    engine: &Engine,
    tx: &mut Tx<'_>,
    live: &LiveRun,
    root: Option<MessageId>,
    error: &LlmError,
) -> Result<Message, StoreError> {
    let text = troupe_core::run::unreadable_answer_note(&error.to_string());
    hidden_note(engine, tx, live, root, "unreadable_answer", text)
}

/// A runtime note under the task, for the model only (the page does not show it).
fn hidden_note(
    engine: &Engine,
    tx: &mut Tx<'_>,
    live: &LiveRun,
    root: Option<MessageId>,
    origin: &str,
    text: String,
) -> Result<Message, StoreError> {
    let m = tx.insert_message(&NewMessage {
        thread_id: live.thread_id,
        role: Role::User,
        origin: Origin::System(origin.into()),
        is_root: false,
        root_id: root,
        run_id: Some(live.run_id),
        parts: vec![Part::text(text).hidden()],
        finish: None,
        error: None,
        delivery_key: None,
        metadata: None,
    })?;
    engine.inner.ext.observe(tx, &m)?;
    Ok(m)
}

/// The first hook that does not pass, with its verdict.
fn check_endings(
    engine: &Engine,
    thread: &Thread,
    live: &LiveRun,
    final_text: &str,
    bounced: &[String],
) -> Option<(String, EndingVerdict)> {
    let ctx = EndingContext {
        thread,
        run_id: live.run_id,
        final_text,
        store: &engine.inner.store,
        bounced,
    };
    engine
        .inner
        .ext
        .endings
        .iter()
        .find_map(|h| match h.check(&ctx) {
            EndingVerdict::Pass => None,
            verdict => Some((h.name().to_string(), verdict)),
        })
}

/// A failed model call leaves a visible reply saying which endpoint failed and why; it is kept
/// out of the model's context so a later turn does not read it as its own words.
fn write_failure(
    engine: &Engine,
    live: &LiveRun,
    root: Option<MessageId>,
    error: &str,
) -> Result<(), LoopExit> {
    let thread_id: ThreadId = live.thread_id;
    let mut part = Part::text(format!("The model call failed: {error}"));
    part.in_context = false;
    owned_write(engine, live, |tx| {
        let m = tx.insert_message(&NewMessage {
            thread_id,
            role: Role::Assistant,
            origin: Origin::Agent,
            is_root: false,
            root_id: root,
            run_id: Some(live.run_id),
            parts: vec![part],
            finish: Some(Finish::Error),
            error: Some(error.to_string()),
            delivery_key: None,
            metadata: None,
        })?;
        engine.inner.ext.observe(tx, &m)?;
        Ok(())
    })
}
