//! Clearing a conversation's history (`POST /v1/sessions/:id/clear`) and deleting a group
//! (`DELETE /v1/sessions/:id`). Both end the conversation's live turns as its own doing,
//! not a hold (STOP-9); blank its lines in place, so the holds that point at a line still
//! do (HOLD-2), and take the Bots' own transcript of it out of their later model calls
//! (UQ-1); cancel the open delegations tied to it, waking nobody (DEL-33, DEL-35); void
//! the check-backs booked there for good (HOLD-C3); and drop its command records (TURN-17).
//! The plans it is home to go dormant, or, with nothing left referring to them, are deleted
//! (PLAN-D2, D12; HOLD-X1). A deleted group's surviving plans leave it, and one its hold kept
//! parked gets a plan hold of its own first (PLAN-D10, HOLD-X2). Nothing here wakes anyone.

use crate::{Collab, CollabError};
use serde::Serialize;
use serde_json::json;
use troupe_core::check_back::CheckBackState;
use troupe_core::conversation::{Session, SessionKind};
use troupe_core::delegation::DelegationState;
use troupe_core::hold::lifetime::{
    Ending, PlanFacts, PlanFate, forget_plan, group_parking, has_own_plan_hold, named_by_holds,
    plan_fate,
};
use troupe_core::hold::{Hold, HoldEffect, HoldScope, HoldSource, ParkedPlan};
use troupe_core::inbox::InboxMode;
use troupe_core::work_item::{WaitingOn, WorkState};
use troupe_core::{CheckBackId, CheckId, DelegationId, HoldId, PlanId, RunId, SessionId};
use troupe_engine::StopMode;
use troupe_store::{NewHold, StoreError, Tx, WordsStatus};

/// What a clear or a group's deletion did.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct ClearOutcome {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// Lines whose words this blanked (a second clear finds none).
    pub lines_blanked: usize,
    /// Messages of its Bots' own threads here taken out of every later model call (the Bots'
    /// transcript of the conversation; a second clear finds none).
    pub transcript_messages_hidden: usize,
    /// Turns it ended (stopped, not by a hold).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub turns_ended: Vec<RunId>,
    /// Open delegations it cancelled, waking nobody.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub delegations_cancelled: Vec<DelegationId>,
    /// Check-backs booked here, voided for good.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub check_backs_voided: Vec<CheckBackId>,
    /// Plans it was home to that stay, now dormant (a deleted group's, session-less).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub plans_kept: Vec<PlanId>,
    /// Plans it was home to that nothing referred to any more: deleted.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub plans_deleted: Vec<PlanId>,
    /// Plan holds (source `migration`) made for plans the deleted group's hold kept parked.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub holds_made: Vec<HoldId>,
    /// With `erase_quotes`: offers from the person's words said here, withdrawn at once.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub offers_withdrawn: Vec<CheckId>,
    /// With `erase_quotes`: checks the person confirmed on words said here, an offer again
    /// standing on no words (CW-20: never quietly gone).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub checks_reverted: Vec<CheckId>,
    /// With `erase_quotes`: the person's quotes said here, emptied (UQ-2).
    pub quotes_erased: usize,
}

impl ClearOutcome {
    fn new(session_id: SessionId) -> Self {
        ClearOutcome {
            session_id,
            lines_blanked: 0,
            transcript_messages_hidden: 0,
            turns_ended: Vec::new(),
            delegations_cancelled: Vec::new(),
            check_backs_voided: Vec::new(),
            plans_kept: Vec::new(),
            plans_deleted: Vec::new(),
            holds_made: Vec::new(),
            offers_withdrawn: Vec::new(),
            checks_reverted: Vec::new(),
            quotes_erased: 0,
        }
    }
}

impl Collab {
    /// Clear a conversation's history. Clearing again finds nothing more to do. With
    /// `erase_quotes` the person's words said here are erased too (UQ-2).
    pub async fn clear_session(
        &self,
        id: SessionId,
        erase_quotes: bool,
    ) -> Result<ClearOutcome, CollabError> {
        self.live_conversation(id)?;
        self.end_history(id, Ending::Clear, erase_quotes).await
    }

    /// Delete a group; a direct is `409 not_a_group`. `erase_quotes` as for a clear.
    pub async fn delete_group(
        &self,
        id: SessionId,
        erase_quotes: bool,
    ) -> Result<ClearOutcome, CollabError> {
        let session = self.live_conversation(id)?;
        if session.kind != SessionKind::Group {
            return Err(CollabError::conflict(
                "not_a_group",
                format!(
                    "conversation {id} is a {} conversation; only a group is deleted (clear a \
                     direct's history instead)",
                    session.kind.as_str()
                ),
            ));
        }
        self.end_history(id, Ending::DeleteGroup, erase_quotes)
            .await
    }

    /// The conversation, unless there is none or it was deleted (both not found).
    pub fn live_conversation(&self, id: SessionId) -> Result<Session, CollabError> {
        let (session, deleted) = self
            .store()
            .read(|tx| Ok((tx.session(id)?, tx.session_deleted(id)?)))?;
        if deleted {
            return Err(CollabError::NotFound {
                what: "session",
                id: id.to_string(),
            });
        }
        Ok(session)
    }

    async fn end_history(
        &self,
        id: SessionId,
        ending: Ending,
        erase_quotes: bool,
    ) -> Result<ClearOutcome, CollabError> {
        let engine = self.engine().clone();
        let (out, stops) = self.store().write(|tx| {
            let mut out = ClearOutcome::new(id);
            let mut stops = Vec::new();
            // Its Bots' threads here, and work on jobs speaking here from threads of its own.
            let own = tx.session_threads(id)?;
            let mut threads = own.clone();
            for t in tx.live_segment_threads_in(id)? {
                if !threads.contains(&t) {
                    threads.push(t);
                }
            }
            for t in &threads {
                tx.close_asks_of_thread(*t)?;
                // The conversation's own doing (STOP-9): no hold, no latch.
                if let Some(stop) = engine.record_stop(tx, *t, StopMode::Internal)? {
                    if stop.ended {
                        out.turns_ended.push(stop.run.id);
                    }
                    stops.push(stop);
                }
            }
            // Lines still waiting to be read go with the history; nothing resumes (WI-11).
            for t in &own {
                let queued: Vec<_> = tx.inbox(*t)?.into_iter().map(|i| i.id).collect();
                tx.drop_inbox_items(*t, &queued)?;
            }
            out.delegations_cancelled = cancel_delegations(tx, id, ending)?;
            for cb in tx.live_check_backs_in(id)? {
                tx.set_check_back_state(cb, CheckBackState::Voided)?;
                out.check_backs_voided.push(cb);
            }
            settle_plans(tx, id, ending, &mut out)?;
            if erase_quotes {
                erase_words(tx, id, &mut out)?;
                out.quotes_erased = tx.erase_session_quotes(id)?;
                // RL-20: entries standing on those words lose them and no longer apply.
                tx.erase_session_requirement_words(id)?;
            }
            // UQ-1: the quotes stay, untied from the lines (and a deleted group); the lines'
            // edit history goes with the transcript.
            tx.detach_session_quotes(id, ending == Ending::DeleteGroup)?;
            tx.delete_session_line_versions(id)?;
            out.lines_blanked = tx.blank_session_lines(id)?;
            tx.blank_session_dispositions(id)?;
            out.transcript_messages_hidden = tx.hide_session_transcripts(id)?;
            tx.delete_session_commands(id)?;
            match ending {
                Ending::Clear => tx.mark_session_cleared(id)?,
                Ending::DeleteGroup => {
                    for t in &own {
                        tx.archive_thread(*t)?;
                    }
                    tx.mark_session_deleted(id)?;
                }
            }
            Ok((out, stops))
        })?;
        // The runs' model streams and calls are cancelled and their groups ended; nobody
        // waits for that.
        drop(engine.release_stops(stops));
        Ok(out)
    }
}

/// DEL-33, DEL-35: the open delegations tied to the conversation (shown in it, or on a job
/// it is home to) are cancelled with `wakes: 0`. The sender's wait goes; the request the
/// recipient has not read yet is taken back; neither side is woken.
fn cancel_delegations(
    tx: &mut Tx<'_>,
    session: SessionId,
    ending: Ending,
) -> Result<Vec<DelegationId>, StoreError> {
    let reason = match ending {
        Ending::Clear => "its conversation's history was cleared",
        Ending::DeleteGroup => "its group was deleted",
    };
    let mut out = Vec::new();
    for d in tx.delegations_of_session(session)? {
        if d.state != DelegationState::Open
            || !tx.settle_delegation(
                d.id,
                DelegationState::Cancelled,
                &json!({"reason": reason, "wakes": 0}),
            )?
        {
            continue;
        }
        let sender = tx.work_item(d.sender_work_item)?;
        if sender.waiting_on
            == Some(WaitingOn::Delegation {
                delegation_id: d.id,
            })
        {
            let state = match sender.state {
                WorkState::Waiting => WorkState::Idle,
                other => other,
            };
            tx.set_work_state(sender.id, state, None)?;
        }
        let recipient = tx.work_item(d.recipient_work_item)?;
        let key = format!("delegation:{}", d.id.0);
        let inbox = tx.inbox(recipient.thread_id)?;
        let request: Vec<_> = inbox
            .iter()
            .filter(|i| i.delivery_key.as_deref() == Some(key.as_str()))
            .map(|i| i.id)
            .collect();
        tx.drop_inbox_items(recipient.thread_id, &request)?;
        let tasks_left = inbox
            .iter()
            .any(|i| i.mode == InboxMode::Task && !request.contains(&i.id));
        if recipient.state == WorkState::Queued && !tasks_left {
            tx.set_work_state(recipient.id, WorkState::Idle, recipient.waiting_on.as_ref())?;
        }
        out.push(d.id);
    }
    Ok(out)
}

/// Each plan the conversation is home to goes dormant or, with nothing left referring to it
/// and no hold naming it, is deleted; a deleted group's plans leave it, and one its hold
/// kept parked gets a plan hold of its own carrying the restore note.
fn settle_plans(
    tx: &mut Tx<'_>,
    session: SessionId,
    ending: Ending,
    out: &mut ClearOutcome,
) -> Result<(), StoreError> {
    let cause = match ending {
        Ending::Clear => "cleared",
        Ending::DeleteGroup => "group_deleted",
    };
    let holds = tx.holds(true)?;
    for plan in tx.plans_homed_in(session)? {
        // PLAN-D11: a clear neither deletes a routine's standing job nor sets it dormant; the
        // routine goes on adding tickets to it. A deleted group takes its routines along.
        if let Some(routine) = tx.routine_of_plan(plan)? {
            if ending == Ending::Clear {
                continue;
            }
            tx.delete_routine(routine.id)?;
        }
        let facts = PlanFacts {
            named_by_hold: tx.hold_rows_name_plan(plan)? || named_by_holds(&holds, plan),
            belongs_elsewhere: tx.plan_belongs_elsewhere(plan, session)?,
            parked_by_group: group_parking(&holds, session, plan),
            own_plan_hold: has_own_plan_hold(&holds, plan),
        };
        match plan_fate(ending, &facts) {
            PlanFate::Delete => {
                // A hold over its conversation parked it without naming it: that hold no
                // longer has it (or its check-backs) to give back.
                let check_backs = tx.check_backs_of_plan(plan)?;
                for h in tx.holds_in_force()? {
                    let mut effect = h.effect.clone();
                    if forget_plan(&mut effect, plan, &check_backs) {
                        tx.set_hold_effect(h.id, &effect)?;
                    }
                }
                tx.delete_plan(plan)?;
                out.plans_deleted.push(plan);
            }
            PlanFate::Keep {
                leaves_home,
                own_hold,
            } => {
                if let Some((group_hold, parked)) = own_hold {
                    out.holds_made
                        .push(migration_hold(tx, group_hold, parked, session)?);
                }
                if leaves_home {
                    tx.unhome_plan(plan)?;
                }
                tx.set_plan_dormant(plan, cause)?;
                out.plans_kept.push(plan);
            }
        }
    }
    Ok(())
}

/// UQ-2, CW-20: the person's words said in the conversation are erased, so what stands on
/// them goes: an offer is withdrawn at once, and a check they confirmed is an offer again,
/// standing on no words (the number stays for them to confirm or remove). Checks of plans
/// this clear deleted went with them already.
fn erase_words(
    tx: &mut Tx<'_>,
    session: SessionId,
    out: &mut ClearOutcome,
) -> Result<(), StoreError> {
    for id in tx.words_checks_quoting(session)? {
        let check = tx.check(id)?;
        match (check.status, crate::checks::words::number_of(&check)) {
            (Some(WordsStatus::InForce), Some(n)) => {
                tx.set_words_reading(
                    id,
                    n.value,
                    n.bound,
                    n.min,
                    n.max,
                    None,
                    check.said_count,
                    WordsStatus::Offer,
                )?;
                out.checks_reverted.push(id);
            }
            _ => {
                if tx.withdraw_words_offer(id)? {
                    out.offers_withdrawn.push(id);
                }
            }
        }
    }
    Ok(())
}

/// HOLD-X2: the plan's own hold, an app hold no line lifts (HOLD-L7), takes the restore note
/// from the group's hold, so lifting it gives the plan its status back and lifting the
/// group's does not touch it.
fn migration_hold(
    tx: &mut Tx<'_>,
    group_hold: HoldId,
    parked: ParkedPlan,
    group: SessionId,
) -> Result<HoldId, StoreError> {
    let plan = parked.plan_id;
    let hold = tx.insert_hold(&NewHold {
        scope: HoldScope::Plan { plan_id: plan },
        targets: Vec::new(),
        source: HoldSource::Migration,
        source_message_id: None,
        session_id: None,
        lift_on_next_user_message: false,
        cancel: false,
        composer_stop: false,
        effect: HoldEffect {
            plans_parked: vec![parked],
            ..HoldEffect::default()
        },
    })?;
    let mut from: Hold = tx.hold(group_hold)?;
    from.effect.plans_parked.retain(|p| p.plan_id != plan);
    tx.set_hold_effect(group_hold, &from.effect)?;
    crate::holds::log::entry(
        tx,
        "control_hold",
        &[hold.id],
        json!({
            "scope": hold.scope,
            "source": hold.source,
            "from_hold_id": group_hold,
            "deleted_session_id": group,
        }),
    )?;
    crate::holds::log::upsert(tx, &hold, &[])?;
    Ok(hold.id)
}
