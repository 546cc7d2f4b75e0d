//! Lifting holds, only ever by the person (HOLD-1): a line (in the write that routes it) or a
//! button. One write lifts them, gives parked jobs their status back (or hands the restore to
//! a hold that still parks them), returns set-aside check-backs to pending, and reopens the
//! stopped work the lift should reopen on a note only that Bot's turn sees (HOLD-N1/N2).
//! After the commit every thread the holds kept back is driven: its queued lines run.

use super::facts::{check_back_facts, thread_facts};
use super::log;
use troupe_core::check_back::CheckBackState;
use troupe_core::hold::parking::{Restore, parking_holds, restore};
use troupe_core::hold::reopen::{LiftTrigger, Reopen, reopen_after_lift};
use troupe_core::hold::{HeldOver, Hold, LiftedBy, StoppedTurn, TurnFacts};
use troupe_core::inbox::Delivery;
use troupe_core::message::Origin;
use troupe_core::plan::{RevisionCause, SpecPatch};
use troupe_core::work_item::{PRIORITY_USER, WorkMode, WorkState};
use troupe_core::{HoldId, SessionMessageId, ThreadId};
use troupe_store::{StoreError, Tx};

/// Threads to drive once the lift has committed.
#[derive(Default, Debug)]
pub(crate) struct AfterLift {
    pub lifted: Vec<Hold>,
    /// Threads whose queued work the holds kept back.
    pub drive: Vec<ThreadId>,
    /// Threads reopened on a note: the person's act starts them (see `drive_reopened`).
    pub reopened: Vec<ThreadId>,
}

fn push_unique(v: &mut Vec<ThreadId>, t: ThreadId) {
    if !v.contains(&t) {
        v.push(t);
    }
}

/// Lift `ids` (those in force; the rest are left as they are) inside `tx`.
pub(crate) fn lift_in(
    tx: &mut Tx<'_>,
    ids: &[HoldId],
    by: LiftedBy,
    message: Option<SessionMessageId>,
    trigger: LiftTrigger<'_>,
) -> Result<AfterLift, StoreError> {
    let mut out = AfterLift::default();
    for id in ids {
        let (hold, changed) = tx.lift_hold(*id, by, message)?;
        if changed {
            out.lifted.push(hold);
        }
    }
    if out.lifted.is_empty() {
        return Ok(out);
    }
    let mut still = tx.holds_in_force()?;
    restore_plans(tx, &out.lifted, &mut still)?;
    return_check_backs(tx, &out.lifted, &mut still, &mut out.drive)?;
    // Facts of each stopped turn, read once: the pure rule asks for them by turn.
    let mut facts: Vec<(troupe_core::RunId, TurnFacts)> = Vec::new();
    for h in &out.lifted {
        let turns = h
            .effect
            .stopped_turns
            .iter()
            .chain(h.effect.held_over.iter().map(|o| &o.turn));
        for t in turns {
            if let Some(f) = thread_facts(tx, t.thread_id)? {
                facts.push((t.run_id, f));
            }
            push_unique(&mut out.drive, t.thread_id);
        }
    }
    let fallback = |t: &StoppedTurn| TurnFacts {
        bot_id: t.bot_id,
        session_id: t.session_id,
        thread_id: t.thread_id,
        plan_id: t.plan_id,
        plan_home: None,
        ticket_id: None,
    };
    let decided = reopen_after_lift(&out.lifted, &still, trigger, &|t| {
        facts
            .iter()
            .find(|(r, _)| *r == t.run_id)
            .map(|(_, f)| f.clone())
            .unwrap_or_else(|| fallback(t))
    });
    let line_text = match (trigger, message) {
        (LiftTrigger::Line { .. }, Some(m)) => Some(tx.line(m)?.body),
        _ => None,
    };
    for r in decided {
        match r {
            Reopen::Note { turn, with_line } => {
                let from = out
                    .lifted
                    .iter()
                    .find(|h| {
                        h.effect
                            .stopped_turns
                            .iter()
                            .any(|t| t.run_id == turn.run_id)
                    })
                    .map_or(out.lifted[0].id, |h| h.id);
                reopen_on_note(tx, &turn, from, line_text.as_deref().filter(|_| with_line))?;
                push_unique(&mut out.reopened, turn.thread_id);
            }
            Reopen::HeldOver { turn, to } => {
                let from = out.lifted[0].id;
                let mut h = tx.hold(to)?;
                if !h
                    .effect
                    .held_over
                    .iter()
                    .any(|o| o.turn.run_id == turn.run_id)
                {
                    h.effect.held_over.push(HeldOver { turn, from });
                    tx.set_hold_effect(to, &h.effect)?;
                }
            }
            Reopen::Leave { .. } => {}
        }
    }
    // Wakes the holds refused while they stood (a check-back, a Bot's line, a routine):
    // their threads run what waited.
    let since = out.lifted.iter().map(|h| h.created_at).min().unwrap_or(0);
    hand_back_answered(tx, &out.lifted, &mut still, &mut out.drive)?;
    out.drive.retain(|t| !out.reopened.contains(t));
    // The person let this work go on: a latch a boot put on held work (found unfinished)
    // goes with the hold, or what waited could not run.
    for t in &out.drive {
        let interrupted = tx
            .thread(*t)?
            .paused
            .is_some_and(|p| p.reason == troupe_core::pause::PauseReason::Interrupted);
        let still_held = thread_facts(tx, *t)?
            .is_some_and(|f| !troupe_core::hold::cover::covering(&still, &f).is_empty());
        if interrupted && !still_held {
            tx.clear_pause(*t)?;
        }
    }
    for e in tx.events_of_kinds_since(&["wake_suppressed"], since, 10_000)? {
        if out.lifted.iter().any(|h| log::names_hold(&e.payload, h.id))
            && let Some(t) = e.thread_id
        {
            push_unique(&mut out.drive, t);
        }
    }
    for h in &out.lifted {
        log::entry(
            tx,
            "hold_lifted",
            &[h.id],
            serde_json::json!({"lifted_by": by, "message_id": message}),
        )?;
        let mut sessions: Vec<_> = h
            .effect
            .stopped_turns
            .iter()
            .map(|t| t.session_id)
            .collect();
        sessions.extend(h.session_id);
        sessions.sort();
        sessions.dedup();
        log::upsert(tx, h, &sessions)?;
    }
    Ok(out)
}

/// HOLD-P6: each job a lifted hold parked gets its status back, unless another hold still
/// parks it (that one inherits the restore) or it changed meanwhile.
fn restore_plans(tx: &mut Tx<'_>, lifted: &[Hold], still: &mut [Hold]) -> Result<(), StoreError> {
    for h in lifted {
        for parked in &h.effect.plans_parked {
            let plan = tx.plan(parked.plan_id)?;
            let others = parking_holds(still, plan.id, plan.home_session_id, h.id);
            match restore(parked, plan.status, &others) {
                Restore::To(status) => {
                    tx.patch_plan(
                        plan.id,
                        plan.version,
                        &SpecPatch {
                            status: Some(status),
                            ..Default::default()
                        },
                        RevisionCause::Hold(h.id),
                    )?;
                }
                Restore::Inherit(to) => {
                    if let Some(other) = still.iter_mut().find(|o| o.id == to) {
                        other.effect.plans_parked.push(parked.clone());
                        tx.set_hold_effect(to, &other.effect)?;
                    }
                }
                Restore::Leave => {}
            }
        }
    }
    Ok(())
}

/// HOLD-C2: set-aside check-backs go back to pending (the check-back tick fires an overdue
/// one once); one another hold still covers moves to that hold's list.
fn return_check_backs(
    tx: &mut Tx<'_>,
    lifted: &[Hold],
    still: &mut [Hold],
    drive: &mut Vec<ThreadId>,
) -> Result<(), StoreError> {
    for h in lifted {
        for id in &h.effect.check_backs_set_aside {
            let cb = tx.check_back(*id)?;
            if cb.state != CheckBackState::SetAside {
                continue;
            }
            let Some(f) = check_back_facts(tx, &cb)? else {
                continue;
            };
            match still
                .iter_mut()
                .find(|o| troupe_core::hold::cover::covers(o, &f))
            {
                Some(other) => {
                    if !other.effect.check_backs_set_aside.contains(id) {
                        other.effect.check_backs_set_aside.push(*id);
                        tx.set_hold_effect(other.id, &other.effect)?;
                    }
                }
                None => {
                    tx.set_check_back_state(*id, CheckBackState::Pending)?;
                    push_unique(drive, f.thread_id);
                }
            }
        }
    }
    Ok(())
}

/// What the note says: the stop, what the turn was doing, and that it may carry on. It asks
/// nothing (HOLD-N1) and is seen only by this Bot's turn.
pub(crate) fn note_text(turn: &StoppedTurn, line: Option<&str>) -> String {
    let mut out =
        String::from("The person had stopped this work and has now let it go on. It stopped here");
    if !turn.last_step.is_empty() {
        out.push_str(&format!(" (last step: {})", turn.last_step));
    }
    out.push('.');
    if !turn.files.is_empty() {
        out.push_str(&format!(
            " Files it had written: {}.",
            turn.files.join(", ")
        ));
    }
    if turn.last_calls.len() > 1 {
        out.push_str(&format!(" Its last calls: {}.", turn.last_calls.join("; ")));
    }
    match line {
        Some(l) => out.push_str(&format!(
            " The person's words when letting it go on: \"{l}\" — answer for them in your work."
        )),
        None => out.push_str(" Carry on from where it stopped."),
    }
    out
}

fn reopen_on_note(
    tx: &mut Tx<'_>,
    turn: &StoppedTurn,
    hold: HoldId,
    line: Option<&str>,
) -> Result<(), StoreError> {
    // The person let it go on, as their Continue does: a latch a boot put on the held work
    // (recovery found it unfinished) goes with the hold, or the reopened work could not run.
    tx.clear_pause(turn.thread_id)?;
    tx.deliver(
        turn.thread_id,
        &Delivery::user_task(note_text(turn, line))
            .with_origin(Origin::System("hold_lifted".into()))
            .with_key(format!("hold:{}:reopen:{}", hold.0, turn.run_id.0)),
    )?;
    if let Some(item) = tx.work_item_of_thread(turn.thread_id)?
        && item.mode == WorkMode::Work
        && item.state != WorkState::Closed
    {
        tx.set_work_mail(item.id, turn.session_id, PRIORITY_USER)?;
        let waiting = item.waiting_on.clone();
        tx.set_work_state(item.id, WorkState::Queued, waiting.as_ref())?;
    }
    log::entry(
        tx,
        "hold_reopened",
        &[hold],
        serde_json::json!({"run_id": turn.run_id, "thread_id": turn.thread_id}),
    )
}

/// HOLD-N5: lines that got only a read-only answer under a lifted hold are handed back — per
/// thread the last one becomes the Bot's work as if nothing had been stopped (the turn reads
/// the others above it in its history); a hold that still covers the thread keeps them.
fn hand_back_answered(
    tx: &mut Tx<'_>,
    lifted: &[Hold],
    still: &mut [Hold],
    drive: &mut Vec<ThreadId>,
) -> Result<(), StoreError> {
    for h in lifted {
        let mut last: Vec<(ThreadId, SessionMessageId)> = Vec::new();
        for line in &h.effect.answered_lines {
            for d in tx.line_deliveries(*line)? {
                match last.iter_mut().find(|(t, _)| *t == d.thread_id) {
                    Some(entry) => entry.1 = entry.1.max(*line),
                    None => last.push((d.thread_id, *line)),
                }
            }
        }
        for (thread, line) in last {
            let covering = match thread_facts(tx, thread)? {
                Some(f) => still
                    .iter_mut()
                    .find(|o| troupe_core::hold::cover::covers(o, &f)),
                None => None,
            };
            if let Some(other) = covering {
                for l in &h.effect.answered_lines {
                    if !other.effect.answered_lines.contains(l) {
                        other.effect.answered_lines.push(*l);
                    }
                }
                tx.set_hold_effect(other.id, &other.effect)?;
                continue;
            }
            let body = tx.line(line)?.body;
            tx.deliver(
                thread,
                &Delivery::user_task(format!(
                    "While the work was stopped the person said (you could only answer then; \
                     the stop is lifted now): {body}"
                ))
                .with_key(format!("hold:{}:answered:{}", h.id.0, line.0)),
            )?;
            push_unique(drive, thread);
        }
    }
    Ok(())
}
