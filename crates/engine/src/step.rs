//! Committing one model step: its call record, the reply, the tool calls it asked for and their
//! results, in as few commits as the rules allow. The ledger's start of an effect must be
//! durable before the effect acts, and its outcome after; nothing else forces a commit. So a
//! step whose calls are all read-only runs them first and commits once; otherwise the reply
//! commits with the first effect's start, and each result commits with the next effect's start
//! (one commit per effectful call after the reply's). The step's last commit also takes the
//! inbox for the next call, on the writer's connection, so the next call needs no read first.

use crate::Engine;
use crate::dispatch::{self, Checked, Dispatched, clip};
use crate::live::LiveRun;
use crate::run_loop::{InboxStep, LoopExit, owned_write_async, take_in};
use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe_core::effect::EffectOutcome;
use troupe_core::message::{Finish, Message, Origin, Part, PartBody, Role};
use troupe_core::run::{EndReason, FailureStreaks};
use troupe_core::thread::Thread;
use troupe_core::{MessageId, RunId, ThreadId};
use troupe_llm::{FinishReason, ModelResponse, ToolCall};
use troupe_store::{
    CommandRecord, EffectBegin, ModelCallRecord, NewMessage, StoreError, ToolCallRecord, Tx,
};

/// What the step left: the reply as stored (with its results), and whether a tool ended the turn.
pub(crate) struct Committed {
    pub reply: Message,
    pub ends_turn: bool,
    /// A call ended the run this way.
    pub ends_run: Option<EndReason>,
    /// The inbox step for the next call, taken in the step's last commit; none when a call
    /// ended the run (mail that came meanwhile stays unread, to start the next run).
    pub next: Option<InboxStep>,
}

/// A call that ran, with what its records need.
struct Ran {
    call: ToolCall,
    d: Dispatched,
    took: Duration,
    streak_note: Option<String>,
    /// Told to the model with the result (a call repeated unchanged); not the tool's outcome,
    /// so the effect ledger's record of what happened leaves it out.
    repeat_note: Option<String>,
}

impl Ran {
    /// The call's outcome, counted in the run's failure streaks; a call the model repeats
    /// unchanged with the same answer gets a note in the result it reads.
    fn new(
        call: &ToolCall,
        d: Dispatched,
        started: Instant,
        streaks: &mut FailureStreaks,
        streak_report: u32,
    ) -> Ran {
        let (streak_note, repeat_note) = streaks.observe_call(
            &call.name,
            &call.arguments,
            d.is_error,
            &d.content,
            d.effect.is_some(),
            streak_report,
        );
        Ran {
            call: call.clone(),
            d,
            took: started.elapsed(),
            streak_note,
            repeat_note,
        }
    }

    /// The result as the model reads it.
    fn read(&self) -> String {
        match &self.repeat_note {
            Some(note) => format!("{}\n\n{note}", self.d.content),
            None => self.d.content.clone(),
        }
    }

    fn result_part(&self) -> Part {
        Part {
            body: PartBody::ToolResult {
                call_id: self.call.id.clone(),
                name: self.call.name.clone(),
                content: self.read(),
                is_error: self.d.is_error,
            },
            visible: true,
            in_context: true,
        }
    }

    /// The call's records, its effect's outcome and its result, in `tx`.
    fn write(
        &self,
        tx: &mut Tx<'_>,
        thread: ThreadId,
        run: RunId,
        reply: MessageId,
    ) -> Result<(), StoreError> {
        if let Some((effect, outcome, detail)) = self.d.settlement() {
            tx.settle_effect(effect, outcome, Some(&detail))?;
            if outcome == EffectOutcome::Unknown {
                // The model reads this call's result now; no later turn needs telling again.
                tx.mark_effects_named(&[effect])?;
            }
        }
        tx.record_tool_call(
            thread,
            &ToolCallRecord {
                run_id: run,
                message_id: reply,
                call_id: self.call.id.clone(),
                name: self.call.name.clone(),
                arguments: clip(&self.call.arguments, 2000),
                status: self.d.status.to_string(),
                result: clip(&self.read(), 2000),
                duration_ms: self.took.as_millis() as u64,
            },
        )?;
        if let Some(shell) = &self.d.shell {
            tx.record_command(
                thread,
                &CommandRecord {
                    run_id: run,
                    call_id: self.call.id.clone(),
                    command: shell.command.clone(),
                    exit_code: shell.exit_code,
                    signal: shell.signal,
                    timed_out: shell.timed_out,
                    cancelled: shell.cancelled,
                    duration_ms: shell.duration_ms,
                    output_tail: shell.output_tail.clone(),
                    // Derived when read; the store keeps the facts it comes from.
                    success: false,
                },
            )?;
        }
        if let Some(note) = &self.streak_note {
            tx.add_failure_note(run, note)?;
        }
        Ok(())
    }
}

/// The reply as the model gave it: its text and its tool calls.
fn reply_parts(response: &ModelResponse) -> Vec<Part> {
    let mut parts = Vec::new();
    if !response.text.is_empty() {
        parts.push(Part::text(&response.text));
    }
    for c in &response.tool_calls {
        parts.push(Part {
            body: PartBody::ToolCall {
                call_id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            },
            visible: true,
            in_context: true,
        });
    }
    parts
}

fn finish_of(response: &ModelResponse) -> Finish {
    if !response.tool_calls.is_empty() {
        Finish::ToolCalls
    } else if response.finish == FinishReason::Length {
        Finish::Length
    } else {
        Finish::Stop
    }
}

/// A number the model sent as a string where the tool's schema takes only a number is read as
/// the number (`troupe_tools::numbers_as_schema_says`): the call stored, shown again and run is
/// the mended one, so the model's next request also shows the shape the tool takes.
pub(crate) fn mend_numbers(calls: &mut [ToolCall], tools: &[troupe_llm::ToolSpec]) {
    for c in calls {
        if let Some(spec) = tools.iter().find(|t| t.name == c.name)
            && let Some(mended) =
                troupe_tools::numbers_as_schema_says(&c.arguments, &spec.parameters)
        {
            c.arguments = mended;
        }
    }
}

/// How the reply was cut before its last call ended, for a call it left unfinished.
#[derive(Clone, Copy)]
enum ReplyCut {
    /// At its output cap (the cap it went out with, when known): [`dispatch::cut_at_cap`].
    Cap(Option<u32>),
    /// By a server that could not read the call: [`dispatch::cut_unreadable`].
    Unreadable,
}

impl ReplyCut {
    fn of(response: &ModelResponse, output_cap: Option<u32>) -> Option<ReplyCut> {
        match response.finish {
            FinishReason::Length => Some(ReplyCut::Cap(output_cap)),
            FinishReason::Unreadable => Some(ReplyCut::Unreadable),
            _ => None,
        }
    }
}

/// Check a call as dispatch does, unless the reply was cut inside it.
fn check_call(
    engine: &Engine,
    live: &LiveRun,
    thread: &Thread,
    call: &ToolCall,
    cut: Option<ReplyCut>,
) -> Checked {
    cut.and_then(|cut| match cut {
        ReplyCut::Cap(cap) => dispatch::cut_at_cap(call, cap),
        ReplyCut::Unreadable => dispatch::cut_unreadable(call),
    })
    .unwrap_or_else(|| dispatch::check(engine, live, thread, call))
}

/// Write the step: the model call's record and the reply, the tool calls run and settled.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn commit(
    engine: &Engine,
    live: &Arc<LiveRun>,
    thread: &Thread,
    root: Option<MessageId>,
    record: ModelCallRecord,
    response: &ModelResponse,
    output_cap: Option<u32>,
    streaks: &mut FailureStreaks,
    streak_report: u32,
) -> Result<Committed, LoopExit> {
    let calls = &response.tool_calls;
    live.set_in_calls(!calls.is_empty());
    let committed = commit_calls(
        engine,
        live,
        thread,
        root,
        record,
        response,
        output_cap,
        streaks,
        streak_report,
    )
    .await;
    live.set_in_calls(false);
    committed
}

#[allow(clippy::too_many_arguments)]
async fn commit_calls(
    engine: &Engine,
    live: &Arc<LiveRun>,
    thread: &Thread,
    root: Option<MessageId>,
    record: ModelCallRecord,
    response: &ModelResponse,
    output_cap: Option<u32>,
    streaks: &mut FailureStreaks,
    streak_report: u32,
) -> Result<Committed, LoopExit> {
    let calls = &response.tool_calls;
    let cut = ReplyCut::of(response, output_cap);
    let checked: Vec<Checked> = calls
        .iter()
        .map(|c| check_call(engine, live, thread, c, cut))
        .collect();
    let message = NewMessage {
        thread_id: live.thread_id,
        role: Role::Assistant,
        origin: Origin::Agent,
        is_root: false,
        root_id: root,
        run_id: Some(live.run_id),
        parts: reply_parts(response),
        finish: Some(finish_of(response)),
        error: None,
        delivery_key: None,
        metadata: None,
    };
    if checked.iter().all(Checked::runs_before_reply) {
        return commit_once(
            engine,
            live,
            thread,
            record,
            message,
            calls,
            checked,
            streaks,
            streak_report,
        )
        .await;
    }
    commit_per_effect(
        engine,
        live,
        thread,
        record,
        message,
        calls,
        checked,
        cut,
        streaks,
        streak_report,
    )
    .await
}

/// Every call is read-only (or refused): run them, then write the whole step in one commit.
#[allow(clippy::too_many_arguments)]
async fn commit_once(
    engine: &Engine,
    live: &Arc<LiveRun>,
    thread: &Thread,
    record: ModelCallRecord,
    mut message: NewMessage,
    calls: &[ToolCall],
    checked: Vec<Checked>,
    streaks: &mut FailureStreaks,
    streak_report: u32,
) -> Result<Committed, LoopExit> {
    let mut ran = Vec::with_capacity(calls.len());
    let mut ends_run: Option<EndReason> = None;
    for (call, c) in calls.iter().zip(checked) {
        if live.cancel.is_cancelled() {
            return Err(LoopExit::Stale);
        }
        let started = Instant::now();
        let d = match &ends_run {
            Some(r) => Dispatched::skipped(r),
            None => dispatch::run(engine, live, thread, None, call, c, None).await?,
        };
        if ends_run.is_none() {
            ends_run = d.ends_run.clone();
        }
        ran.push(Ran::new(call, d, started, streaks, streak_report));
    }
    let ends_turn = ran.iter().any(|r| r.d.ends_turn);
    message.parts.extend(ran.iter().map(Ran::result_part));
    if ends_turn {
        message.finish = Some(Finish::Stop);
    }
    let (thread_id, run_id) = (live.thread_id, live.run_id);
    let (observer, run) = (engine.clone(), live.clone());
    let continues = ends_run.is_none();
    let (reply, next) = owned_write_async(engine, live, move |tx| {
        tx.record_model_call(thread_id, &record)?;
        tx.bump_run_hops(run_id)?;
        let m = tx.insert_message(&message)?;
        observer.inner.ext.observe(tx, &m)?;
        for r in &ran {
            r.write(tx, thread_id, run_id, m.id)?;
        }
        let next = if continues {
            Some(take_in(tx, &observer, &run, false)?)
        } else {
            None
        };
        Ok((m, next))
    })
    .await?;
    Ok(Committed {
        reply,
        ends_turn,
        ends_run,
        next,
    })
}

/// Some call has an effect or writes the store: the reply commits first (with the first
/// effect's start), then each result with the start of the effect after it.
#[allow(clippy::too_many_arguments)]
async fn commit_per_effect(
    engine: &Engine,
    live: &Arc<LiveRun>,
    thread: &Thread,
    record: ModelCallRecord,
    message: NewMessage,
    calls: &[ToolCall],
    checked: Vec<Checked>,
    cut: Option<ReplyCut>,
    streaks: &mut FailureStreaks,
    streak_report: u32,
) -> Result<Committed, LoopExit> {
    let (thread_id, run_id) = (live.thread_id, live.run_id);
    // Only the first call's check stands: each later one is checked again once the calls before
    // it have run, so its guards see what they did.
    let mut next = checked.into_iter().next();
    let start = next.as_ref().and_then(Checked::effect).cloned();
    let observer = engine.clone();
    let (mut reply, mut begun) = owned_write_async(engine, live, move |tx| {
        tx.record_model_call(thread_id, &record)?;
        tx.bump_run_hops(run_id)?;
        let m = tx.insert_message(&message)?;
        observer.inner.ext.observe(tx, &m)?;
        let begun = match &start {
            Some(s) => Some(s.begin(tx, thread_id, run_id, m.id)?),
            None => None,
        };
        Ok((m, begun))
    })
    .await?;
    let mut ends_turn = false;
    let mut ends_run: Option<EndReason> = None;
    let mut taken_next = None;
    for (i, call) in calls.iter().enumerate() {
        if live.cancel.is_cancelled() {
            return Err(LoopExit::Stale);
        }
        let this = match next.take() {
            Some(c) => c,
            None => check_call(engine, live, thread, call, cut),
        };
        let started = Instant::now();
        let d = dispatch::run(
            engine,
            live,
            thread,
            Some(reply.id),
            call,
            this,
            begun.take(),
        )
        .await?;
        let ran = Ran::new(call, d, started, streaks, streak_report);
        ends_turn |= ran.d.ends_turn;
        if ends_run.is_none() {
            ends_run = ran.d.ends_run.clone();
        }
        let part = ran.result_part();
        reply.parts.push(part.clone());
        let last = i + 1 == calls.len();
        if !last {
            // After a call that ended the run, the rest are answered without running.
            next = Some(match &ends_run {
                Some(r) => Checked::Done(Dispatched::skipped(r)),
                None => check_call(engine, live, thread, &calls[i + 1], cut),
            });
        }
        let start = next.as_ref().and_then(Checked::effect).cloned();
        let (reply_id, finish_turn) = (reply.id, last && ends_turn);
        let (owner, run) = (engine.clone(), live.clone());
        let continues = ends_run.is_none();
        let (b, taken) = owned_write_async(engine, live, move |tx| {
            ran.write(tx, thread_id, run_id, reply_id)?;
            tx.append_part(reply_id, &part)?;
            if finish_turn {
                tx.set_finish(reply_id, Finish::Stop, None)?;
            }
            let begun = match &start {
                Some(s) => Some(s.begin(tx, thread_id, run_id, reply_id)?),
                None => None::<EffectBegin>,
            };
            // The step's last commit takes the inbox for the next call, unless a call ended
            // the run: then mail that came meanwhile stays unread for the next run.
            let taken = if last && continues {
                Some(take_in(tx, &owner, &run, false)?)
            } else {
                None
            };
            Ok((begun, taken))
        })
        .await?;
        begun = b;
        taken_next = taken;
    }
    if ends_turn {
        reply.finish = Some(Finish::Stop);
    }
    let next = taken_next;
    if next.is_none() && ends_run.is_none() {
        return Err(LoopExit::Store(StoreError::Invalid(
            "a step with tool calls ended without its last commit".into(),
        )));
    }
    Ok(Committed {
        reply,
        ends_turn,
        ends_run,
        next,
    })
}
