//! The retrospective on the scheduler's tick (digest 003-B §11, RS1–RS5): a job delivered in
//! the last week and quiet for 30 minutes gets one look back from each of the (at most three)
//! Bots that handed over most in it. A Bot nothing went wrong for is recorded as skipped with
//! no model call; the others are asked once, on the `retrospective` role if one is set, else
//! on their own endpoint, and the changes their answer asks for are checked one by one and
//! written with what each replaced. Nothing is posted: the job's view lists it.
//!
//! It waits while a stop covers the job or the Bot, while the engine step is off for the
//! job's engine, and while the day's 12 calls or $2 are spent. Its one side effect is the
//! Bot's own memories, written in the transaction that records it, so a crash mid-call only
//! means it is asked again at the next tick.

mod record;

use crate::oneshot::{ask_as_bot, role_or_own};
use crate::{Collab, CollabError};
use serde::Serialize;
use serde_json::json;
use std::time::Duration;
use troupe_core::hold::HoldScope;
use troupe_core::retrospective::{self as rs, answer, changes, prompt, skill_changes};
use troupe_core::{BotId, PlanId};
use troupe_store::{CallRecord, NewRetrospective, PlanRecord, SkillText, Tx};

/// A retrospective's answer may take this long (a high-thinking call on the Bot's model).
const CALL_LIMIT: Duration = Duration::from_secs(180);
const DAY_MS: i64 = 24 * 3_600_000;

/// What one tick did for one Bot and job.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RetrospectiveRun {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub task_id: PlanId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub bot_id: BotId,
    /// skipped | done | failed
    pub state: String,
}

/// Whether a stop in force covers the job or the Bot's work on it.
pub(crate) fn stopped(
    tx: &Tx<'_>,
    plan: &PlanRecord,
    bot: BotId,
) -> Result<bool, troupe_store::StoreError> {
    Ok(tx
        .holds_in_force()?
        .iter()
        .any(|h| covers(&h.scope, plan, bot)))
}

/// Whether a stop of this scope holds `bot`'s work on `plan` back.
pub(crate) fn covers(scope: &HoldScope, plan: &PlanRecord, bot: BotId) -> bool {
    match scope {
        HoldScope::Everything => true,
        HoldScope::Plan { plan_id } => *plan_id == plan.id,
        HoldScope::Session { session_id } => plan.home_session_id == Some(*session_id),
        HoldScope::Bot { bot_id } => *bot_id == bot,
        HoldScope::BotPlan { bot_id, plan_id } => *bot_id == bot && *plan_id == plan.id,
        _ => false,
    }
}

/// A verdict is on a conclusion an earlier look back drew, or it is dropped.
fn keep_tested_verdicts(a: &mut answer::Answer, input: &prompt::Input) {
    let earlier: Vec<String> = input
        .earlier
        .iter()
        .flat_map(|e| e.conclusions.iter().map(|c| c.to_lowercase()))
        .collect();
    a.verdicts
        .retain(|v| earlier.contains(&v.conclusion.trim().to_lowercase()));
}

/// One Bot's look back, ready to ask or to record as skipped.
struct Due {
    plan: PlanRecord,
    delivered_at: i64,
    bot: BotId,
    since: Option<i64>,
    went_wrong: Vec<String>,
    input: Option<prompt::Input>,
}

impl Collab {
    /// RS1–RS5 at one tick: every retrospective due now, one after another.
    pub async fn run_due_retrospectives(&self) -> Result<Vec<RetrospectiveRun>, CollabError> {
        let due = self.store().read(|tx| {
            let now = tx.now();
            let mut due = Vec::new();
            for (id, delivered_at) in
                tx.plans_delivered_between(now - rs::RECENT_MS, now - rs::QUIET_MS)?
            {
                let plan = tx.plan(id)?;
                let on = crate::engines::step_on(tx, &plan, "retrospective")?;
                let last = crate::last_change::last_change(tx, &plan)?
                    .at
                    .max(plan.last_user_activity_at.unwrap_or(0));
                if !on || !rs::due(delivered_at, last, now) {
                    continue;
                }
                // A delivery whose Bots all looked back costs the tick these counts only; the
                // hand-overs themselves are read for a Bot still to look back.
                let mut by_bot = None;
                for bot in rs::pick_bots(&tx.handover_counts(id)?) {
                    if tx.retrospective_recorded(id, bot, delivered_at)? || stopped(tx, &plan, bot)?
                    {
                        continue;
                    }
                    let by_bot = match &mut by_bot {
                        Some(b) => b,
                        None => by_bot.insert(record::handovers_by_bot(tx, id)?),
                    };
                    let since = tx.last_retrospective_at(id, bot)?;
                    let subs = by_bot.get(&bot).map(Vec::as_slice).unwrap_or_default();
                    let causes = tx.quality_causes_of(id, bot, since.unwrap_or(0))?;
                    let again = record::times_per_ticket(tx, subs, since.unwrap_or(0))?;
                    let went_wrong = rs::went_wrong(&causes, &again);
                    let input = if went_wrong.is_empty() {
                        None
                    } else {
                        Some(record::input(
                            tx,
                            &plan,
                            bot,
                            subs,
                            went_wrong.clone(),
                            since,
                        )?)
                    };
                    due.push(Due {
                        plan: plan.clone(),
                        delivered_at,
                        bot,
                        since,
                        went_wrong,
                        input,
                    });
                }
            }
            Ok(due)
        })?;
        let mut out = Vec::new();
        for d in due {
            if let Some(run) = self.look_back(d).await? {
                out.push(run);
            }
        }
        Ok(out)
    }

    async fn look_back(&self, d: Due) -> Result<Option<RetrospectiveRun>, CollabError> {
        let base = NewRetrospective {
            plan_id: d.plan.id,
            bot_id: d.bot,
            delivered_at: d.delivered_at,
            since_at: d.since,
            state: "skipped",
            went_wrong: d.went_wrong.clone(),
            summary: None,
            lists: json!({}),
            call: CallRecord::default(),
            error: None,
        };
        let run = |state: &str| RetrospectiveRun {
            task_id: d.plan.id,
            bot_id: d.bot,
            state: state.into(),
        };
        // RS4: nothing went wrong for this Bot — recorded, no model call.
        let Some(input) = d.input else {
            let kept = self.store().write(|tx| tx.record_retrospective(&base))?;
            return Ok(kept.map(|_| run("skipped")));
        };
        // §11.5: the day's calls and dollars; over either, it waits for tomorrow.
        let (calls, spent) = self.store().read(|tx| {
            let now = tx.now();
            tx.retrospective_spend_since(now - now.rem_euclid(DAY_MS))
        })?;
        if calls >= rs::DAY_LIMIT || spent >= rs::DAY_BUDGET_USD {
            return Ok(None);
        }
        let agent = role_or_own(self.roles(), "retrospective", &self.bot(d.bot)?);
        let (call, answer) = ask_as_bot(
            self.roles(),
            &agent,
            "You look back on your own work on a delivered job and answer with JSON only.",
            prompt::prompt(&input),
            1_500,
            CALL_LIMIT,
        )
        .await;
        let mut rec = NewRetrospective {
            state: "failed",
            call,
            ..base
        };
        // §11.3: an answer cut off, or not one whole JSON object, writes nothing.
        let planned = match answer.and_then(|text| answer::parse(&text)) {
            Err(e) => {
                rec.error = Some(format!("nothing written: {e}"));
                None
            }
            Ok(mut a) => {
                keep_tested_verdicts(&mut a, &input);
                rec.state = "done";
                rec.summary = Some(a.summary.clone());
                rec.lists = json!({
                    "tripped_up": a.tripped_up,
                    "sent_back_because": a.sent_back_because,
                    "do_again": a.do_again,
                    "verdicts": a.verdicts,
                });
                Some(a)
            }
        };
        let state = rec.state;
        let kept = self.store().write(|tx| {
            let Some(id) = tx.record_retrospective(&rec)? else {
                return Ok(false);
            };
            if let Some(a) = &planned {
                // Checked against the memories as they are in this write.
                let held: Vec<changes::Held> = tx
                    .bot_memories(d.bot)?
                    .into_iter()
                    .map(|m| changes::Held {
                        subject: m.subject,
                        body: m.body,
                        enabled: m.enabled,
                    })
                    .collect();
                for c in changes::plan(a, &held) {
                    tx.apply_retrospective_change(
                        id,
                        d.bot,
                        c.kind.as_str(),
                        &c.subject,
                        c.after.as_deref(),
                        c.refused.as_deref(),
                    )?;
                }
                // Skills likewise, against the skills as they are in this write.
                let skills: Vec<skill_changes::HeldSkill> = record::skills_as_shown(tx, d.bot)?
                    .into_iter()
                    .map(|(s, shown)| skill_changes::HeldSkill {
                        name: s.name,
                        body: s.body,
                        shown,
                    })
                    .collect();
                let shared: Vec<String> =
                    tx.project_skills()?.into_iter().map(|p| p.name).collect();
                for c in skill_changes::plan(a, &skills, &shared) {
                    let text = SkillText {
                        name: &c.name,
                        description: c.description.as_deref(),
                        body: &c.after,
                    };
                    tx.apply_retrospective_skill_change(id, d.bot, &text, c.refused.as_deref())?;
                }
            }
            Ok(true)
        })?;
        Ok(kept.then(|| run(state)))
    }

    /// A job's retrospectives, newest first (404 for an unknown job).
    pub fn retrospectives(
        &self,
        plan: PlanId,
    ) -> Result<Vec<troupe_store::RetrospectiveRecord>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.plan(plan)?;
            tx.retrospectives_of_plan(plan)
        })?)
    }

    /// Undo one change of a retrospective, while it stands as written (409 once changed).
    pub fn undo_retrospective_change(
        &self,
        change: i64,
    ) -> Result<troupe_store::RetrospectiveChange, CollabError> {
        self.store()
            .write(|tx| tx.undo_retrospective_change(change))
            .map_err(|e| crate::memories::coded(e, "not_undoable"))
    }
}
