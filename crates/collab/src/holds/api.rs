//! Holds as the API shows and takes them: `POST /v1/holds` (a menu's stop), the Lift button,
//! the composer Stop in a direct, the list and the work log.

use super::facts::thread_facts;
use super::lift::lift_in;
use super::log::{WORK_LOG_KINDS, names_hold};
use super::make::HoldSpec;
use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use troupe_core::conversation::SessionKind;
use troupe_core::hold::reopen::LiftTrigger;
use troupe_core::hold::{Hold, HoldScope, HoldSource, LiftedBy};
use troupe_core::{BotId, EventId, HoldId, PlanId, RunId, SessionId, TicketId};
use troupe_store::{Event, RunRecord, StoreError};

/// A hold's scope as a request names it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeRequest {
    /// everything | bot | session | plan | ticket | bot_plan | turn
    pub kind: String,
    pub bot_id: Option<BotId>,
    pub session_id: Option<SessionId>,
    /// The job (the seed's task).
    pub task_id: Option<PlanId>,
    pub ticket_id: Option<TicketId>,
    pub turn_id: Option<RunId>,
}

/// `POST /v1/holds`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldRequest {
    pub scope: ScopeRequest,
    /// The conversation whose menu made it.
    pub session_id: Option<SessionId>,
    /// `cancel`: the job is dropped, not stopped for now; only Lift ends it.
    pub action: Option<String>,
}

/// A hold, with the name of the job it names.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct HoldView {
    #[serde(flatten)]
    pub hold: Hold,
    pub plan_title: Option<String>,
}

/// What the composer Stop ended, and the hold it made.
#[derive(Clone, Debug)]
pub struct ComposerStop {
    pub run: RunRecord,
    pub hold_id: HoldId,
}

fn need<T>(v: Option<T>, kind: &str, field: &str) -> Result<T, CollabError> {
    v.ok_or_else(|| CollabError::invalid(format!("scope.{field}: required for a {kind} hold")))
}

impl Collab {
    fn view(&self, hold: Hold) -> Result<HoldView, CollabError> {
        let plan = match &hold.scope {
            HoldScope::Plan { plan_id } | HoldScope::BotPlan { plan_id, .. } => Some(*plan_id),
            HoldScope::Turn { plan_id, .. } => *plan_id,
            _ => None,
        };
        let plan_title = match plan {
            Some(p) => self.store().read(|tx| tx.find_plan(p))?.map(|p| p.name),
            None => None,
        };
        Ok(HoldView { hold, plan_title })
    }

    /// Resolve and check a requested scope: every ref must name something that exists.
    fn scope_of(&self, s: &ScopeRequest) -> Result<HoldScope, CollabError> {
        let found = |r: Result<(), StoreError>, field: &str, id: String| match r {
            Err(StoreError::NotFound { .. }) => Err(CollabError::invalid(format!(
                "scope.{field}: {id} does not exist"
            ))),
            other => other.map_err(CollabError::from),
        };
        let kind = s.kind.as_str();
        Ok(match kind {
            "everything" => HoldScope::Everything,
            "bot" => {
                let b = need(s.bot_id, kind, "bot_id")?;
                found(
                    self.store().read(|tx| tx.bot(b).map(|_| ())),
                    "bot_id",
                    b.to_string(),
                )?;
                HoldScope::Bot { bot_id: b }
            }
            "session" => {
                let id = need(s.session_id, kind, "session_id")?;
                found(
                    self.store().read(|tx| tx.session(id).map(|_| ())),
                    "session_id",
                    id.to_string(),
                )?;
                HoldScope::Session { session_id: id }
            }
            "plan" => {
                let p = need(s.task_id, kind, "task_id")?;
                found(
                    self.store().read(|tx| tx.plan(p).map(|_| ())),
                    "task_id",
                    p.to_string(),
                )?;
                HoldScope::Plan { plan_id: p }
            }
            "ticket" => {
                let t = need(s.ticket_id, kind, "ticket_id")?;
                return Err(CollabError::invalid(format!(
                    "scope.ticket_id: {t} does not exist (tickets arrive with deliverables)"
                )));
            }
            "bot_plan" => {
                let b = need(s.bot_id, kind, "bot_id")?;
                let p = need(s.task_id, kind, "task_id")?;
                found(
                    self.store().read(|tx| tx.bot(b).map(|_| ())),
                    "bot_id",
                    b.to_string(),
                )?;
                found(
                    self.store().read(|tx| tx.plan(p).map(|_| ())),
                    "task_id",
                    p.to_string(),
                )?;
                HoldScope::BotPlan {
                    bot_id: b,
                    plan_id: p,
                }
            }
            "turn" => {
                let r = need(s.turn_id, kind, "turn_id")?;
                let scope = self.store().read(|tx| {
                    let run = tx.run(r)?;
                    let facts = match tx.turn_facts(r)? {
                        Some(f) => Some(f),
                        None => thread_facts(tx, run.thread_id)?,
                    };
                    Ok(facts.map(|f| HoldScope::Turn {
                        run_id: r,
                        thread_id: run.thread_id,
                        bot_id: f.bot_id,
                        session_id: f.session_id,
                        plan_id: f.plan_id,
                    }))
                });
                match scope {
                    Err(StoreError::NotFound { .. }) => {
                        return Err(CollabError::invalid(format!(
                            "scope.turn_id: {r} does not exist"
                        )));
                    }
                    Ok(None) => {
                        return Err(CollabError::invalid(format!(
                            "scope.turn_id: {r} is not a Bot's turn in a conversation"
                        )));
                    }
                    other => other?.expect("checked above"),
                }
            }
            other => {
                return Err(CollabError::invalid(format!(
                    "scope.kind: '{other}' is not one of everything, bot, session, plan, ticket, bot_plan, turn"
                )));
            }
        })
    }

    /// `POST /v1/holds`: a menu's or button's stop. Returns the hold and whether it is new.
    pub async fn post_hold(&self, req: HoldRequest) -> Result<(HoldView, bool), CollabError> {
        let scope = self.scope_of(&req.scope)?;
        let cancel = match req.action.as_deref() {
            None => false,
            Some("cancel") => true,
            Some(other) => {
                return Err(CollabError::invalid(format!(
                    "action: '{other}' is not cancel (leave it out to stop for now)"
                )));
            }
        };
        if let Some(s) = req.session_id {
            match self.store().read(|tx| tx.session(s)) {
                Err(StoreError::NotFound { .. }) => {
                    return Err(CollabError::invalid(format!(
                        "session_id: {s} does not exist"
                    )));
                }
                other => {
                    other?;
                }
            }
        }
        let made = self
            .make_hold(HoldSpec {
                scope,
                source: HoldSource::UserButton,
                source_message_id: None,
                session_id: req.session_id,
                lift_on_next_user_message: !cancel,
                cancel,
                composer_stop: false,
            })
            .await?;
        Ok((self.view(made.hold)?, made.created))
    }

    /// The Lift button (`POST /v1/holds/:id/lift`): going on; a lifted hold comes back as it is.
    pub async fn lift_hold(&self, id: HoldId) -> Result<HoldView, CollabError> {
        let after = self.store().write(|tx| {
            tx.hold(id)?;
            lift_in(tx, &[id], LiftedBy::UserButton, None, LiftTrigger::Button)
        })?;
        self.drive_lifted(&after).await;
        self.hold(id)
    }

    /// After a lift commits: the work the holds kept back runs, reopened work first.
    pub(crate) async fn drive_lifted(&self, after: &super::lift::AfterLift) {
        self.drive_reopened(&after.reopened).await;
        for t in &after.drive {
            if let Err(e) = self.engine().request_drive(*t, "hold_lifted", false).await {
                tracing::warn!(thread = %t, error = %e, "drive after a lift failed");
            }
        }
    }

    /// Stopped work reopened on a note runs because the person let it go on: a forced drive,
    /// as their Continue is, so a call the stop cut off (its outcome unknown) does not keep it
    /// waiting; the note names what was cut off.
    pub(crate) async fn drive_reopened(&self, threads: &[troupe_core::ThreadId]) {
        for t in threads {
            if let Err(e) = self.engine().request_drive(*t, "hold_lifted", true).await {
                tracing::warn!(thread = %t, error = %e, "drive of reopened work failed");
            }
        }
    }

    pub fn hold(&self, id: HoldId) -> Result<HoldView, CollabError> {
        let h = self.store().read(|tx| tx.hold(id))?;
        self.view(h)
    }

    /// Holds in force (or all), newest first.
    pub fn holds(&self, include_lifted: bool) -> Result<Vec<HoldView>, CollabError> {
        let all = self.store().read(|tx| tx.holds(include_lifted))?;
        all.into_iter().map(|h| self.view(h)).collect()
    }

    /// The work log of holds (`GET /v1/audit`), oldest first after `after`.
    pub fn audit(
        &self,
        kind: Option<&str>,
        hold: Option<HoldId>,
        after: EventId,
        limit: u32,
    ) -> Result<Vec<Event>, CollabError> {
        if limit == 0 || limit > 1000 {
            return Err(CollabError::invalid("limit must be between 1 and 1000"));
        }
        let kinds: Vec<&str> = match kind {
            Some(k) if WORK_LOG_KINDS.contains(&k) => vec![k],
            Some(k) => {
                return Err(CollabError::invalid(format!(
                    "kind: '{k}' is not one of {}",
                    WORK_LOG_KINDS.join(", ")
                )));
            }
            None => WORK_LOG_KINDS.to_vec(),
        };
        let mut out = Vec::new();
        let mut from = after;
        // Filtering by hold reads on until `limit` rows match or the log ends.
        loop {
            let page = self
                .store()
                .read(|tx| tx.events_of_kinds(&kinds, from, 500))?;
            let done = page.len() < 500;
            for e in page {
                from = e.id;
                if hold.is_none_or(|h| names_hold(&e.payload, h)) {
                    out.push(e);
                    if out.len() == limit as usize {
                        return Ok(out);
                    }
                }
            }
            if done {
                return Ok(out);
            }
        }
    }

    /// The composer Stop in a person's direct (STOP-5): a hold on the Bot's work in the
    /// turn's job (`bot_plan`), or on the turn when it has no job; the next line there lifts
    /// it and reopens nothing (STOP-6).
    pub async fn composer_stop(
        &self,
        session: SessionId,
        turn: Option<RunId>,
    ) -> Result<ComposerStop, CollabError> {
        let found = self.store().read(|tx| {
            let s = tx.session(session)?;
            if s.kind != SessionKind::Direct {
                return Ok(Err(CollabError::conflict(
                    "not_direct",
                    format!(
                        "conversation {session} is not a direct: stop a group's work from its stop menu (POST /v1/holds)"
                    ),
                )));
            }
            let mut live = None;
            for t in tx.session_threads(session)? {
                if let Some(run) = tx.thread(t)?.lease.holder
                    && turn.is_none_or(|want| want == run)
                {
                    live = Some((t, run));
                }
            }
            for t in tx.live_segment_threads_in(session)? {
                if live.is_none()
                    && let Some(run) = tx.thread(t)?.lease.holder
                    && turn.is_none_or(|want| want == run)
                {
                    live = Some((t, run));
                }
            }
            let Some((thread, run)) = live else {
                return Ok(Err(CollabError::conflict(
                    "not_running",
                    format!("conversation {session} has no running turn"),
                )));
            };
            let facts = match tx.turn_facts(run)? {
                Some(f) => Some(f),
                None => thread_facts(tx, thread)?,
            };
            let Some(f) = facts else {
                return Ok(Err(CollabError::conflict(
                    "not_running",
                    format!("turn {run} is not a Bot's turn in {session}"),
                )));
            };
            Ok(Ok((thread, run, f)))
        })??;
        let (thread, run, f) = found;
        let scope = match f.plan_id {
            Some(p) => HoldScope::BotPlan {
                bot_id: f.bot_id,
                plan_id: p,
            },
            None => HoldScope::Turn {
                run_id: run,
                thread_id: thread,
                bot_id: f.bot_id,
                session_id: session,
                plan_id: None,
            },
        };
        let made = self
            .make_hold(HoldSpec {
                scope,
                source: HoldSource::UserButton,
                source_message_id: None,
                session_id: Some(session),
                lift_on_next_user_message: true,
                cancel: false,
                composer_stop: true,
            })
            .await?;
        let run = self.store().read(|tx| tx.run(run))?;
        Ok(ComposerStop {
            run,
            hold_id: made.hold.id,
        })
    }
}

impl Collab {
    /// The spec route's go-on (HOLD-P9): lift the holds on this job itself, by the person's
    /// button; a hold over its conversation or everything still stands.
    pub(crate) async fn lift_plan_holds(&self, plan: PlanId) -> Result<(), CollabError> {
        let after = self.store().write(|tx| {
            let ids: Vec<HoldId> = tx
                .holds_in_force()?
                .into_iter()
                .filter(|h| h.scope == HoldScope::Plan { plan_id: plan })
                .map(|h| h.id)
                .collect();
            lift_in(tx, &ids, LiftedBy::UserButton, None, LiftTrigger::Button)
        })?;
        self.drive_lifted(&after).await;
        Ok(())
    }
}

impl Collab {
    /// A person's Continue on a thread's work (HOLD-L2): lifts what a line to its Bot about
    /// that work would; `409 held` when another hold still covers it.
    pub async fn go_on_by_person(&self, thread: troupe_core::ThreadId) -> Result<(), CollabError> {
        let (after, still) = self
            .store()
            .write(|tx| super::lines::lift_by_person_act(tx, thread))?;
        self.drive_lifted(&after).await;
        if !still.is_empty() {
            return Err(super::lines::held(&format!("thread {thread}"), &still));
        }
        Ok(())
    }
}
