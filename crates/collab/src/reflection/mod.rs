//! The reflection lesson on the scheduler tick (digest 003-B §10.2, ADR 0051): an approval the
//! person overturned (the reviewer's `review_miss`) or a capability ceiling (the producer's)
//! has the Bot involved read the ticket's record — done when, the person's requirements, the
//! review verdicts, the work log — and propose one checklist item, one check on a file, or
//! nothing. A proposal is a card, placed as the ceiling card is (where the person last spoke
//! about the job), with Adopt / No. Once a day per Bot and ticket, at most 20 calls and $2 a
//! day; it waits out a stop on the job or the Bot, and runs only where the engine step is on.

mod situation;

use crate::oneshot::{ask_as_bot, role_or_own};
use crate::{Collab, CollabError};
use serde_json::json;
use std::time::Duration;
use troupe_core::acceptance_check::Kind;
use troupe_core::conversation::{Author, LineKind};
use troupe_core::reflection::{self as rf, Proposal, When};
use troupe_core::submission::CheckSource;
use troupe_core::{BotId, PlanId, TicketId};
use troupe_store::{
    CallRecord, CheckKind, NewCheck, NewLine, NewReflection, ReflectionRecord, StoreError, Tx,
};

pub(crate) use situation::checklist_block;

const CALL_LIMIT: Duration = Duration::from_secs(180);
const DAY_MS: i64 = 24 * 3_600_000;

/// One cause waiting for its reflection.
struct Due {
    event: i64,
    cause: &'static str,
    bot: BotId,
    plan: PlanId,
    ticket: TicketId,
    /// None: recorded as skipped with this reason, no call.
    input: Result<rf::Input, String>,
}

fn input(
    tx: &Tx<'_>,
    bot: BotId,
    plan: PlanId,
    ticket: TicketId,
    cause: &str,
) -> Result<rf::Input, StoreError> {
    let t = tx.ticket(ticket)?;
    let requirements = tx
        .requirements_of_plan(plan)?
        .into_iter()
        .filter(|r| r.ticket_id.is_none() || r.ticket_id == Some(ticket))
        .map(|r| {
            if r.restatement.trim().is_empty() {
                r.quote
            } else {
                r.restatement
            }
        })
        .collect();
    let mut verdicts = Vec::new();
    for s in tx.submissions_of_ticket(ticket)? {
        for r in &s.reviews {
            verdicts.push(format!("{}: {}", r.outcome.as_str(), r.note.trim()));
        }
    }
    let work_log = tx
        .work_log_of_plan(plan, 0, 500)?
        .into_iter()
        .filter(|e| e.ticket_id == Some(ticket))
        .rev()
        .take(20)
        .map(|e| format!("{}: {}", e.kind, e.payload))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let checklist = tx
        .checklist_items(Some(bot))?
        .into_iter()
        .filter(|i| i.enabled)
        .map(|i| format!("{}: {}", i.when.replace('_', " "), i.text))
        .collect();
    Ok(rf::Input {
        bot_name: tx.bot(bot)?.name,
        what_happened: match cause {
            "review_miss" => "an approval you gave was overturned by the person".into(),
            _ => "the work reached the capability ceiling: it kept failing the same way".into(),
        },
        ticket: format!("ticket #{:02} \"{}\"", t.number, t.title),
        done_when: t.done_when,
        requirements,
        verdicts,
        work_log,
        checklist,
    })
}

/// When stops over `bot`'s work on `plan` stood: `(made, lifted)`, none while in force.
fn spans_over(
    stops: &[troupe_core::hold::Hold],
    plan: &troupe_store::PlanRecord,
    bot: BotId,
) -> Vec<(i64, Option<i64>)> {
    stops
        .iter()
        .filter(|h| crate::retrospective::covers(&h.scope, plan, bot))
        .map(|h| (h.created_at, h.lifted_at))
        .collect()
}

impl Collab {
    /// §10.2 at one tick: every reflection due now, one after another.
    pub async fn run_due_reflections(&self) -> Result<Vec<ReflectionRecord>, CollabError> {
        let due = self.store().read(|tx| {
            let now = tx.now();
            let mut due = Vec::new();
            // Read only when a cause is older than a day: the stops it may have waited out.
            let mut stops: Option<Vec<troupe_core::hold::Hold>> = None;
            for (event, at, cause, bot, plan, ticket) in
                tx.reflection_causes_since(now - rf::LOOK_BACK_MS)?
            {
                let p = tx.plan(plan)?;
                let on = crate::engines::step_on(tx, &p, "reflection")?;
                if !on || crate::retrospective::stopped(tx, &p, bot)? {
                    continue;
                }
                if now - at > rf::DUE_FOR_MS {
                    if stops.is_none() {
                        stops = Some(tx.holds(true)?);
                    }
                    let spans = spans_over(stops.as_deref().unwrap_or_default(), &p, bot);
                    if !rf::still_due(at, now, &spans) {
                        continue;
                    }
                }
                let cause = if cause == "review_miss" {
                    "review_miss"
                } else {
                    "ceiling"
                };
                let input = if tx.reflected_since(bot, ticket, now - rf::PER_TICKET_MS)? {
                    Err("once a day per Bot and ticket".to_string())
                } else {
                    Ok(input(tx, bot, plan, ticket, cause)?)
                };
                due.push(Due {
                    event,
                    cause,
                    bot,
                    plan,
                    ticket,
                    input,
                });
            }
            Ok(due)
        })?;
        let mut out = Vec::new();
        for d in due {
            if let Some(r) = self.reflect(d).await? {
                out.push(r);
            }
        }
        Ok(out)
    }

    async fn reflect(&self, d: Due) -> Result<Option<ReflectionRecord>, CollabError> {
        let mut rec = NewReflection {
            bot_id: d.bot,
            plan_id: d.plan,
            ticket_id: d.ticket,
            quality_event_id: d.event,
            cause: d.cause,
            state: "skipped",
            proposal: None,
            call: CallRecord::default(),
            error: None,
        };
        let input = match d.input {
            Ok(i) => i,
            Err(why) => {
                rec.error = Some(why);
                return Ok(self.store().write(|tx| tx.record_reflection(&rec))?);
            }
        };
        let (calls, spent) = self.store().read(|tx| {
            let now = tx.now();
            tx.reflection_spend_since(now - now.rem_euclid(DAY_MS))
        })?;
        if calls >= rf::DAY_LIMIT || spent >= rf::DAY_BUDGET_USD {
            return Ok(None);
        }
        let agent = role_or_own(self.roles(), "reflection", &self.bot(d.bot)?);
        let (call, answer) = ask_as_bot(
            self.roles(),
            &agent,
            "You look back on one ticket that went wrong and answer with JSON only.",
            rf::prompt(&input),
            600,
            CALL_LIMIT,
        )
        .await;
        rec.state = "failed";
        rec.call = call;
        let proposal = match answer.and_then(|text| rf::parse(&text)) {
            Err(e) => {
                rec.error = Some(format!("nothing proposed: {e}"));
                None
            }
            Ok(p) => Some(p),
        };
        if let Some(p) = &proposal {
            rec.state = if *p == Proposal::Nothing {
                "nothing"
            } else {
                "proposed"
            };
            if *p != Proposal::Nothing {
                rec.proposal = Some(p.to_json());
            }
        }
        Ok(self.store().write(|tx| {
            let Some(r) = tx.record_reflection(&rec)? else {
                return Ok(None);
            };
            if let Some(p) = proposal.filter(|p| *p != Proposal::Nothing) {
                post_card(tx, &r, &input.bot_name, &input.ticket, &p)?;
            }
            tx.reflection(r.id).map(Some)
        })?)
    }

    /// A job's reflections, newest first (404 for an unknown job).
    pub fn reflections(&self, plan: PlanId) -> Result<Vec<ReflectionRecord>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.plan(plan)?;
            tx.reflections_of_plan(plan)
        })?)
    }

    /// The person's Adopt / No on a proposal card. Adopted, a checklist item is kept for the
    /// Bot; a check is added to the ticket as an organizer's check (it gates, and backs no
    /// approval until the person edits it on the board).
    pub fn answer_reflection(&self, id: i64, adopt: bool) -> Result<ReflectionRecord, CollabError> {
        self.store()
            .write(|tx| {
                let r = tx.reflection(id)?;
                if r.state != "proposed" {
                    return Err(StoreError::Conflict(format!(
                        "this proposal is {} already",
                        r.state
                    )));
                }
                let p = r.proposal.clone().unwrap_or_default();
                let mut check = None;
                if adopt {
                    match p["proposal"].as_str() {
                        Some("checklist") => {
                            let when = When::parse(p["when"].as_str().unwrap_or_default())
                                .map_err(StoreError::Corrupt)?;
                            tx.add_checklist_item(
                                r.bot_id,
                                when,
                                p["text"].as_str().unwrap_or_default(),
                                id,
                            )?;
                        }
                        Some("check") => {
                            let kind = Kind::parse(p["kind"].as_str().unwrap_or_default())
                                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                            let kind =
                                CheckKind::parse(kind.as_str()).map_err(StoreError::Corrupt)?;
                            let mut c = NewCheck::new(r.task_id, kind, CheckSource::Organizer);
                            c.ticket_id = Some(r.ticket_id);
                            c.path = p["path"].as_str().map(String::from);
                            c.pattern = p["pattern"].as_str().map(String::from);
                            check = Some(tx.create_check(&c)?.id);
                        }
                        _ => {
                            return Err(StoreError::Corrupt(format!(
                                "reflection {id}: no proposal"
                            )));
                        }
                    }
                }
                let r = tx.answer_reflection(id, adopt, check)?;
                if let Some(line) = r.message_id {
                    let mut control = tx.line(line)?.control.unwrap_or_else(|| json!({}));
                    control["offer"] = json!([]);
                    control["answer"] = json!(if adopt { "adopted" } else { "declined" });
                    tx.set_line_control(line, &control)?;
                }
                Ok(r)
            })
            .map_err(|e| crate::memories::coded(e, "answered"))
    }

    /// Every checklist item, or one Bot's.
    pub fn checklist_items(
        &self,
        bot: Option<BotId>,
    ) -> Result<Vec<troupe_store::ChecklistItem>, CollabError> {
        Ok(self.store().read(|tx| {
            if let Some(b) = bot {
                tx.bot(b)?;
            }
            tx.checklist_items(bot)
        })?)
    }

    /// Switch a checklist item on, or retire it.
    pub fn set_checklist_item(
        &self,
        id: i64,
        enabled: bool,
    ) -> Result<troupe_store::ChecklistItem, CollabError> {
        Ok(self
            .store()
            .write(|tx| tx.set_checklist_item_enabled(id, enabled))?)
    }
}

/// The proposal's card, where the person last spoke about the job.
fn post_card(
    tx: &mut Tx<'_>,
    r: &ReflectionRecord,
    bot_name: &str,
    ticket: &str,
    p: &Proposal,
) -> Result<(), StoreError> {
    let Some(session) = crate::ceiling::card::place(tx, r.task_id, Some(r.bot_id))? else {
        return Ok(());
    };
    let mut line = NewLine::plain(session, Author::System, rf::card_text(bot_name, ticket, p));
    line.kind = LineKind::System;
    line.bot_id = Some(r.bot_id);
    let line = tx.insert_line(&line)?;
    tx.set_line_control(
        line.id,
        &json!({
            "kind": "reflection",
            "reflection_id": r.id,
            "task_id": r.task_id,
            "ticket_id": r.ticket_id,
            "proposal": p.to_json(),
            "offer": ["adopt", "no"],
        }),
    )?;
    tx.set_reflection_card(r.id, line.id)?;
    // The line's own event carried no buttons: the page reads the card again on this one.
    tx.session_event(
        "reflection_proposed",
        session,
        None,
        json!({"task_id": r.task_id, "reflection_id": r.id, "message_id": line.id}),
    )
}
