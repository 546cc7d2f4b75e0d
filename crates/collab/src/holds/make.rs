//! Making a hold is one write (HOLD-4/5): the hold and the targets it gains (handed-on work,
//! open delegations: HOLD-6, DEL-29), every live turn it covers ended `stopped`, its
//! check-backs set aside, its jobs parked, and what it did recorded on it. After the commit
//! the stopped runs' model streams and tool calls are cancelled and their process groups
//! ended; a group that outlives the kill is recorded in `still_running`.

use super::facts::check_back_facts;
use super::log;
use crate::{Collab, CollabError};
use troupe_core::check_back::CheckBackState;
use troupe_core::hold::cascade::{DelegationEdge, Handoff, delegation_targets, handed_on};
use troupe_core::hold::{Hold, HoldEffect, HoldScope, HoldSource, HoldTarget, StoppedTurn};
use troupe_core::plan::{PlanStatus, RevisionCause, SpecPatch};
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, PlanId, RunId, SessionId, SessionMessageId, ThreadId};
use troupe_engine::StopMode;
use troupe_store::{CheckBackFilter, CoveredTurn, NewHold, StoreError, Tx};

/// A hold to make.
#[derive(Clone, Debug)]
pub struct HoldSpec {
    pub scope: HoldScope,
    pub source: HoldSource,
    pub source_message_id: Option<SessionMessageId>,
    /// The conversation whose menu or composer made it.
    pub session_id: Option<SessionId>,
    pub lift_on_next_user_message: bool,
    pub cancel: bool,
    pub composer_stop: bool,
}

/// The hold, and whether this call made it (false: the same scope was in force already).
pub struct Made {
    pub hold: Hold,
    pub created: bool,
}

/// Jobs a hold's scope names as a whole, to park (HOLD-P1).
fn plans_to_park(tx: &Tx<'_>, scope: &HoldScope) -> Result<Vec<PlanId>, StoreError> {
    Ok(match scope {
        HoldScope::Plan { plan_id } => vec![*plan_id],
        HoldScope::Session { session_id } => tx
            .plans_of_session(*session_id, true)?
            .into_iter()
            .filter(|p| p.home_session_id == Some(*session_id))
            .map(|p| p.id)
            .collect(),
        _ => Vec::new(),
    })
}

/// Bot × job pairs the scope covers, for following delegations (DEL-29).
fn covered_work(tx: &Tx<'_>, scope: &HoldScope) -> Result<Vec<(BotId, PlanId)>, StoreError> {
    let of_plan = |tx: &Tx<'_>, p: PlanId| -> Result<Vec<(BotId, PlanId)>, StoreError> {
        Ok(tx
            .work_items_of_plan(p)?
            .into_iter()
            .map(|w| (w.bot_id, p))
            .collect())
    };
    Ok(match scope {
        HoldScope::BotPlan { bot_id, plan_id } => vec![(*bot_id, *plan_id)],
        HoldScope::Turn {
            bot_id,
            plan_id: Some(p),
            ..
        } => vec![(*bot_id, *p)],
        HoldScope::Plan { plan_id } => of_plan(tx, *plan_id)?,
        HoldScope::Session { .. } => {
            let mut out = Vec::new();
            for p in plans_to_park(tx, scope)? {
                out.extend(of_plan(tx, p)?);
            }
            out
        }
        HoldScope::Bot { bot_id } => tx
            .work_items_of_bot(*bot_id)?
            .into_iter()
            .filter(|w| w.mode == WorkMode::Work)
            .filter_map(|w| w.plan_id.map(|p| (*bot_id, p)))
            .collect(),
        // Everything covers every helper already; a ticket's delegations arrive with tickets.
        HoldScope::Everything | HoldScope::Ticket { .. } | HoldScope::Turn { .. } => Vec::new(),
    })
}

/// Open delegation edges between Bot × job pairs, read from the jobs involved.
fn open_edges(tx: &Tx<'_>, covered: &[(BotId, PlanId)]) -> Result<Vec<DelegationEdge>, StoreError> {
    let mut plans: Vec<PlanId> = covered.iter().map(|(_, p)| *p).collect();
    plans.sort();
    plans.dedup();
    let mut edges = Vec::new();
    for p in plans {
        for d in tx.delegations_of_plan(p)? {
            if d.state != troupe_core::delegation::DelegationState::Open {
                continue;
            }
            let s = tx.work_item(d.sender_work_item)?;
            let r = tx.work_item(d.recipient_work_item)?;
            edges.push(DelegationEdge {
                sender: (s.bot_id, p),
                recipient: (r.bot_id, p),
            });
        }
    }
    Ok(edges)
}

/// Turns of other Bots opened by lines of the turns a stop covers (HOLD-6): each line a
/// covered live turn wrote, and the threads it was delivered to that run now.
fn handoffs_from(tx: &Tx<'_>, turns: &[(ThreadId, RunId)]) -> Result<Vec<Handoff>, StoreError> {
    let mut out = Vec::new();
    let mut frontier: Vec<(ThreadId, RunId)> = turns.to_vec();
    // Three handoffs down at most; each level reads the next.
    for _ in 0..3 {
        let mut next = Vec::new();
        // Every line of the level's turns in one read (not one read of all lines per turn).
        let runs: Vec<RunId> = frontier.iter().map(|(_, r)| *r).collect();
        let lines = tx.lines_of_turns(&runs)?;
        for (thread, run) in &frontier {
            for (_, line) in lines.iter().filter(|(r, _)| r == run) {
                for d in tx.line_deliveries(*line)? {
                    let Some(live) = tx.thread(d.thread_id)?.lease.holder else {
                        continue;
                    };
                    if d.thread_id == *thread || next.iter().any(|(t, _)| *t == d.thread_id) {
                        continue;
                    }
                    out.push(Handoff {
                        from_thread: *thread,
                        to: HoldTarget::Turn {
                            run_id: live,
                            thread_id: d.thread_id,
                            bot_id: d.bot_id,
                        },
                    });
                    next.push((d.thread_id, live));
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    Ok(out)
}

/// What the turn was doing, for its reopening note: its last calls and the files it wrote,
/// from `calls` (run, tool, summary), the calls of every turn being stopped.
fn stopped_turn(t: &CoveredTurn, calls: &[(RunId, String, String)]) -> StoppedTurn {
    let mine: Vec<(&str, &str)> = calls
        .iter()
        .filter(|(r, _, _)| *r == t.run_id)
        .map(|(_, tool, summary)| (tool.as_str(), summary.as_str()))
        .collect();
    let mut files: Vec<String> = mine
        .iter()
        .filter(|(tool, _)| matches!(*tool, "write_file" | "edit_file" | "delete_file"))
        .map(|(_, summary)| summary.to_string())
        .collect();
    files.dedup();
    let last_calls: Vec<String> = mine[mine.len().saturating_sub(5)..]
        .iter()
        .map(|(_, summary)| summary.to_string())
        .collect();
    StoppedTurn {
        run_id: t.run_id,
        thread_id: t.thread_id,
        bot_id: t.bot_id,
        session_id: t.session_id,
        plan_id: t.plan_id,
        work_item_id: t.work_item_id,
        last_step: last_calls.last().cloned().unwrap_or_default(),
        files,
        last_calls,
    }
}

impl Collab {
    /// Make a hold, ending what it covers now. A scope already held returns that hold.
    pub async fn make_hold(&self, spec: HoldSpec) -> Result<Made, CollabError> {
        let engine = self.engine().clone();
        let (made, stops) = self.store().write(|tx| {
            if let Some(same) = tx
                .holds_in_force()?
                .into_iter()
                .find(|h| h.scope == spec.scope && h.cancel == spec.cancel)
            {
                return Ok((
                    Made {
                        hold: same,
                        created: false,
                    },
                    Vec::new(),
                ));
            }
            let by_person = matches!(spec.source, HoldSource::UserText | HoldSource::UserButton);
            let mut targets = Vec::new();
            if by_person {
                let covered = covered_work(tx, &spec.scope)?;
                targets.extend(delegation_targets(&covered, &open_edges(tx, &covered)?));
            }
            // Handed-on work is snapshotted once, from the live turns the scope covers now
            // (DEL-32: nothing later widens it).
            if by_person {
                let provisional = Hold {
                    id: troupe_core::HoldId(0),
                    created_at: tx.now(),
                    status: troupe_core::hold::HoldStatus::InForce,
                    lifted_at: None,
                    lifted_by: None,
                    lift_message_id: None,
                    scope: spec.scope.clone(),
                    targets: targets.clone(),
                    source: spec.source,
                    source_message_id: None,
                    session_id: None,
                    lift_on_next_user_message: false,
                    cancel: false,
                    composer_stop: false,
                    effect: HoldEffect::default(),
                };
                let live: Vec<(ThreadId, RunId)> = tx
                    .live_turn_facts()?
                    .into_iter()
                    .filter(|(_, _, f)| troupe_core::hold::cover::covers(&provisional, f))
                    .map(|(thread, run, _)| (thread, run))
                    .collect();
                let threads: Vec<ThreadId> = live.iter().map(|(t, _)| *t).collect();
                for t in handed_on(&threads, &handoffs_from(tx, &live)?) {
                    if !targets.contains(&t) {
                        targets.push(t);
                    }
                }
            }
            let hold = tx.insert_hold(&NewHold {
                scope: spec.scope.clone(),
                targets,
                source: spec.source,
                source_message_id: spec.source_message_id,
                session_id: spec.session_id,
                lift_on_next_user_message: spec.lift_on_next_user_message,
                cancel: spec.cancel,
                composer_stop: spec.composer_stop,
                effect: HoldEffect::default(),
            })?;
            let turns = tx.covered_live_turns(hold.id)?;
            let mut effect = HoldEffect::default();
            let mut touched: Vec<SessionId> = spec.session_id.into_iter().collect();
            // What every turn did and which have asks open, each read once for all of them.
            let calls = tx.calls_of_runs(&turns.iter().map(|t| t.run_id).collect::<Vec<_>>())?;
            let asking =
                tx.threads_with_open_asks(&turns.iter().map(|t| t.thread_id).collect::<Vec<_>>())?;
            for t in &turns {
                effect.stopped_turns.push(stopped_turn(t, &calls));
                if asking.contains(&t.thread_id) {
                    tx.close_asks_of_thread(t.thread_id)?;
                }
                touched.push(t.session_id);
            }
            // Every covered turn ended in one set-wise stop: a few statements for all of them.
            let threads: Vec<ThreadId> = turns.iter().map(|t| t.thread_id).collect();
            let stops = engine.record_stops(tx, &threads, StopMode::Hold)?;
            let hold = tx.hold(hold.id)?;
            for cb in tx.check_backs(
                &CheckBackFilter {
                    state: Some(CheckBackState::Pending),
                    ..Default::default()
                },
                10_000,
            )? {
                let Some(facts) = check_back_facts(tx, &cb)? else {
                    continue;
                };
                if troupe_core::hold::cover::covers(&hold, &facts) {
                    tx.set_check_back_state(cb.id, CheckBackState::SetAside)?;
                    effect.check_backs_set_aside.push(cb.id);
                }
            }
            for p in plans_to_park(tx, &spec.scope)? {
                let plan = tx.plan(p)?;
                if let Some(parked) = troupe_core::hold::parking::park(
                    &spec.scope,
                    p,
                    plan.home_session_id,
                    plan.status,
                ) {
                    park_plan(tx, &plan, hold.id)?;
                    effect.plans_parked.push(parked);
                    touched.extend(plan.home_session_id);
                }
            }
            tx.set_hold_effect(hold.id, &effect)?;
            let hold = tx.hold(hold.id)?;
            touched.sort();
            touched.dedup();
            log::entry(
                tx,
                "control_hold",
                &[hold.id],
                serde_json::json!({
                    "scope": hold.scope,
                    "source": hold.source,
                    "session_id": hold.session_id,
                    "stopped_turns": hold.effect.stopped_turns.iter().map(|t| t.run_id).collect::<Vec<_>>(),
                }),
            )?;
            log::upsert(tx, &hold, &touched)?;
            Ok((
                Made {
                    hold,
                    created: true,
                },
                stops,
            ))
        })?;
        if !stops.is_empty() {
            let left = engine.release_stops(stops);
            let store = self.store().clone();
            let hold = made.hold.id;
            tokio::spawn(async move {
                let Ok(left) = left.await else { return };
                if left.is_empty() {
                    return;
                }
                let recorded = store.write(|tx| {
                    let mut h = tx.hold(hold)?;
                    h.effect.still_running.extend(left.iter().copied());
                    tx.set_hold_effect(hold, &h.effect)?;
                    log::entry(
                        tx,
                        "hold_still_running",
                        &[hold],
                        serde_json::json!({"runs": left}),
                    )
                });
                if let Err(e) = recorded {
                    tracing::warn!(hold = %hold, error = %e, "could not record what outlived a hold's kill");
                }
            });
        }
        Ok(made)
    }
}

/// Park a job for a hold: status parked, a spec version caused by the hold (HOLD-P5).
fn park_plan(
    tx: &mut Tx<'_>,
    plan: &troupe_store::PlanRecord,
    hold: troupe_core::HoldId,
) -> Result<(), StoreError> {
    tx.patch_plan(
        plan.id,
        plan.version,
        &SpecPatch {
            status: Some(PlanStatus::Parked),
            ..Default::default()
        },
        RevisionCause::Hold(hold),
    )?;
    Ok(())
}
