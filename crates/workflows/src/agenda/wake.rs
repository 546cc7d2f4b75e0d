//! Wake guidance: when an Agenda delivery wakes a loop that is still executing (a Light Loop
//! with no stop claim, or the execution session of a running BlueprintLoop with no stop
//! intent), the delivery carries a block saying which one-shot waits remain, with one
//! `agenda_cancel` call each, and that the turn is for clearing them and asking for review.
//! During that turn effectful tools are refused ([`WakeGuard`]): only the Agenda tools and the
//! stop tool act. A pending stop suppresses the guidance — a review is already on its way.

use crate::agenda::cancel_commands;
use crate::slot::WorkflowSlot;
use troupe_core::ThreadId;
use troupe_core::blueprint_loop::LoopStatus;
use troupe_core::drive::RootState;
use troupe_core::message::Origin;
use troupe_core::thread::Thread;
use troupe_engine::extension::{EffectGuard, GuardContext, Narrowed, ToolScope};
use troupe_store::{StoreError, Tx};

pub const LIGHT_LOOP_TAG: &str = "light-loop-agenda-wakeup";
pub const BLUEPRINT_LOOP_TAG: &str = "blueprint-loop-agenda-wakeup";

/// The guidance block for a waking delivery into `thread`, if a loop there is still executing.
pub fn guidance(tx: &Tx<'_>, thread: ThreadId) -> Result<Option<String>, StoreError> {
    let t = tx.thread(thread)?;
    let (tag, stop_tool) = if let Some(l) = tx.active_loop_of_thread(thread)? {
        if l.status != LoopStatus::Running || l.stop_request.is_some() {
            return Ok(None);
        }
        (BLUEPRINT_LOOP_TAG, "blueprint_loop_stop")
    } else {
        match WorkflowSlot::of(t.workflow.as_ref()) {
            Some(WorkflowSlot::LightLoop(ll)) if ll.stop_request.is_none() => {
                (LIGHT_LOOP_TAG, "loop_stop")
            }
            _ => return Ok(None),
        }
    };
    let waits = cancel_commands(&tx.agenda_blockers(thread)?);
    let listed = if waits.is_empty() {
        "No one-shot waits remain.".to_string()
    } else {
        format!(
            "One-shot waits still hold the review:\n{}",
            waits
                .iter()
                .map(|w| format!("- {w}"))
                .collect::<Vec<_>>()
                .join("\n")
        )
    };
    Ok(Some(format!(
        "<{tag}>\nAn Agenda delivery woke this loop while it is still executing. {listed}\nIn this turn: cancel every remaining wait (agenda_cancel; agenda_list shows them), then request the review with {stop_tool} and end the turn. Only agenda_cancel, agenda_list and {stop_tool} act in this turn; other effectful tools are refused.\n</{tag}>"
    )))
}

/// Whether `root` is a guided Agenda wake: a delivery from the Agenda carrying the block.
fn is_guided(m: &troupe_core::message::Message) -> bool {
    let from_agenda = matches!(&m.origin, Origin::Timer(d) if d.starts_with("agenda:"));
    let text = m.text();
    from_agenda
        && (text.contains(&format!("<{LIGHT_LOOP_TAG}>"))
            || text.contains(&format!("<{BLUEPRINT_LOOP_TAG}>")))
}

const REFUSED: &str = "an Agenda delivery woke the loop to clear its waits and request review";

/// Refuses effectful tool calls in a run whose task is a guided Agenda wake, and narrows that
/// turn's tools to the Agenda's and the loop's stop tool.
pub struct WakeGuard;

impl EffectGuard for WakeGuard {
    fn name(&self) -> &str {
        "agenda_wake"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), troupe_engine::extension::Refusal> {
        let guided = ctx
            .store
            .read(|tx| {
                let Some(root) = tx.run(ctx.run_id)?.root_id else {
                    return Ok(false);
                };
                Ok(is_guided(&tx.message(root)?))
            })
            .map_err(|e| e.to_string())?;
        if guided {
            return Err(format!(
                "{} is refused in this turn: {REFUSED}; use agenda_cancel, agenda_list and the stop tool only",
                ctx.tool
            )
            .into());
        }
        Ok(())
    }
}

impl ToolScope for WakeGuard {
    fn name(&self) -> &str {
        "agenda_wake"
    }

    fn narrow(
        &self,
        thread: &Thread,
        store: &troupe_store::Store,
    ) -> Result<Option<Narrowed>, String> {
        // Asked on every model and tool call: the loop (a slot on the thread, or one binding
        // row) is checked before the turn's root is read.
        let light_loop = matches!(
            WorkflowSlot::of(thread.workflow.as_ref()),
            Some(WorkflowSlot::LightLoop(_))
        );
        let stop = store
            .read(|tx| {
                let stop = if light_loop {
                    "loop_stop"
                } else if tx
                    .loop_binding(thread.id)?
                    .is_some_and(|b| b.role == "execution")
                {
                    "blueprint_loop_stop"
                } else {
                    return Ok(None);
                };
                let RootState::Open(root) = tx.root_state(thread.id)? else {
                    return Ok(None);
                };
                Ok(is_guided(&tx.message(root)?).then_some(stop))
            })
            .map_err(|e| e.to_string())?;
        Ok(stop.map(|stop| Narrowed {
            only: vec![
                crate::agenda::tools::CANCEL.into(),
                crate::agenda::tools::LIST.into(),
                stop.into(),
            ],
            reason: format!("in this turn {REFUSED}"),
            keep_sourced_read_only: false,
        }))
    }
}
