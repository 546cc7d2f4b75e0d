//! The reflection lesson (digest 003-B §10.2) on a clock only the test moves: an approval the
//! person overturned has the reviewer propose a checklist item, which, adopted on its card, is
//! read in that Bot's situation; a capability ceiling has the producer propose a check on a
//! file, adopted as an organizer's check on the ticket; a proposal that would run a command is
//! never a card (LS3); once a day per Bot and ticket; off in the general engine by default.

mod support;

use serde_json::json;
use support::supervise::*;
use support::*;
use troupe_collab::engines::EngineSteps;
use troupe_collab::memories::KeptSituation;
use troupe_core::submission::CheckSource;
use troupe_core::{BotId, ManualClock, PlanId, SessionId, TicketId};
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{NewQualityEvent, QualityType, quality_cause};

fn proposing(w: &World, name: &str, answer: serde_json::Value) -> BotId {
    let text = answer.to_string();
    bot(
        w,
        name,
        &json!({"steps": [{"text": text}], "on_exhausted": "repeat_last"}).to_string(),
    )
}

struct Job {
    w: World,
    clock: ManualClock,
    ada: BotId,
    ben: BotId,
    s: SessionId,
    plan: PlanId,
    ticket: TicketId,
}

/// Ada makes the ticket, Ben reviews it; Ben's and Ada's model calls answer as given.
fn job(ada: serde_json::Value, ben: serde_json::Value, reflection_on: bool) -> Job {
    let (clock, w) = start();
    let (ada, ben) = (proposing(&w, "Ada", ada), proposing(&w, "Ben", ben));
    let s = group(&w, &[ada, ben]);
    let j = open_job_work(&w, s, ada, "The report");
    let ticket = add_ticket(&w, &j, "Draft", ada, Some(ben));
    let mut steps = EngineSteps::new();
    steps
        .entry("general".into())
        .or_default()
        .insert("reflection".into(), reflection_on);
    w.collab.set_engine_steps(&steps).unwrap();
    Job {
        w,
        clock,
        ada,
        ben,
        s,
        plan: j.plan,
        ticket,
    }
}

fn happened(j: &Job, cause: &str, bot: BotId) {
    let kind = if cause == quality_cause::REVIEW_MISS {
        QualityType::ReviewMiss
    } else {
        QualityType::Pipeline
    };
    j.w.collab
        .store()
        .write(|tx| {
            tx.quality_event(
                NewQualityEvent::new(kind, cause)
                    .bot(Some(bot))
                    .plan(j.plan)
                    .ticket(j.ticket),
            )
        })
        .unwrap();
}

fn cards(j: &Job) -> Vec<serde_json::Value> {
    j.w.collab
        .store()
        .read(|tx| tx.lines(j.s, None, 500))
        .unwrap()
        .into_iter()
        .filter_map(|l| {
            l.control
                .filter(|c| c["kind"] == "reflection")
                .map(|c| json!({"body": l.body, "control": c}))
        })
        .collect()
}

fn situation_of(w: &World, s: SessionId, b: BotId) -> String {
    let t = thread_of(w, s, b);
    let thread = w.collab.store().read(|tx| tx.thread(t)).unwrap();
    let mut parts = ContextParts::default();
    KeptSituation.contribute(&thread, w.collab.store(), &mut parts);
    parts.situation.join("\n")
}

#[tokio::test]
async fn an_overturned_approval_has_the_reviewer_propose_a_checklist_item_read_in_its_situation() {
    let item = json!({"proposal": "checklist", "when": "before_reviewing",
                      "text": "Open every file handed over before approving."});
    let j = job(json!({"proposal": "nothing"}), item, true);
    happened(&j, quality_cause::REVIEW_MISS, j.ben);
    let tick = j.w.collab.scheduler_tick().await;
    assert_eq!(
        tick.supervisor.as_ref().unwrap()["reflections"][0]["state"],
        "proposed",
        "{tick:?}"
    );

    let card = &cards(&j)[0];
    assert!(
        card["body"]
            .as_str()
            .unwrap()
            .contains("Ben proposes a checklist item for itself, read before reviewing"),
        "{card}"
    );
    assert_eq!(card["control"]["offer"], json!(["adopt", "no"]));
    assert!(
        situation_of(&j.w, j.s, j.ben).is_empty(),
        "nothing until adopted"
    );

    let id = card["control"]["reflection_id"].as_i64().unwrap();
    let r = j.w.collab.answer_reflection(id, true).unwrap();
    assert_eq!(r.state, "adopted");
    assert!(
        situation_of(&j.w, j.s, j.ben)
            .contains("- before reviewing: Open every file handed over before approving."),
        "the adopted item is read in the reviewer's situation"
    );
    assert!(situation_of(&j.w, j.s, j.ada).is_empty(), "only that Bot's");
    assert_eq!(
        cards(&j)[0]["control"]["offer"],
        json!([]),
        "the card keeps no buttons"
    );
    let again = j.w.collab.answer_reflection(id, false);
    assert!(format!("{again:?}").contains("answered"), "{again:?}");

    // Retired on the Lessons page, it leaves the situation.
    let items = j.w.collab.checklist_items(Some(j.ben)).unwrap();
    j.w.collab.set_checklist_item(items[0].id, false).unwrap();
    assert!(situation_of(&j.w, j.s, j.ben).is_empty());
}

#[tokio::test]
async fn a_ceiling_has_the_producer_propose_a_file_check_adopted_as_an_organizers_check() {
    let check = json!({"proposal": "check", "kind": "contains", "path": "out/report.md",
                       "pattern": "Sources"});
    let j = job(check, json!({"proposal": "nothing"}), true);
    happened(&j, quality_cause::CEILING, j.ada);
    let runs = j.w.collab.run_due_reflections().await.unwrap();
    assert_eq!(runs[0].bot_id, j.ada);
    let card = &cards(&j)[0];
    assert!(
        card["body"]
            .as_str()
            .unwrap()
            .contains("the file out/report.md must contain “Sources”"),
        "the card spells out what it checks: {card}"
    );
    let r = j.w.collab.answer_reflection(runs[0].id, true).unwrap();
    let checks =
        j.w.collab
            .store()
            .read(|tx| tx.checks_of_plan(j.plan, false))
            .unwrap();
    let c = checks
        .iter()
        .find(|c| Some(c.id) == r.check_id)
        .expect("the adopted check");
    assert_eq!(
        (c.ticket_id, c.source, c.gate),
        (Some(j.ticket), CheckSource::Organizer, true)
    );
    assert_eq!(c.pattern.as_deref(), Some("Sources"));
}

#[tokio::test]
async fn off_in_the_general_engine_then_once_a_day_per_bot_and_ticket_and_never_a_command() {
    let command = json!({"proposal": "check", "kind": "command", "path": "x"});
    let j = job(command, json!({"proposal": "nothing"}), false);
    happened(&j, quality_cause::CEILING, j.ada);
    assert!(
        j.w.collab.run_due_reflections().await.unwrap().is_empty(),
        "off by default"
    );

    let mut on = EngineSteps::new();
    on.entry("general".into())
        .or_default()
        .insert("reflection".into(), true);
    j.w.collab.set_engine_steps(&on).unwrap();
    let runs = j.w.collab.run_due_reflections().await.unwrap();
    assert_eq!(runs[0].state, "failed");
    assert!(
        runs[0]
            .error
            .as_deref()
            .unwrap()
            .contains("never runs a command"),
        "{runs:?}"
    );
    assert!(
        cards(&j).is_empty(),
        "LS3: no card for a detector that runs something"
    );

    // The same Bot and ticket again within the day: skipped, no call; a day later it runs.
    happened(&j, quality_cause::CEILING, j.ada);
    let runs = j.w.collab.run_due_reflections().await.unwrap();
    assert_eq!(
        (runs[0].state.as_str(), runs[0].model.as_deref()),
        ("skipped", None)
    );
    j.clock.advance(24 * 3_600_000 + 1);
    happened(&j, quality_cause::CEILING, j.ada);
    let runs = j.w.collab.run_due_reflections().await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].state, "failed", "asked again: {runs:?}");
}

#[tokio::test]
async fn declined_the_proposal_changes_nothing() {
    let item =
        json!({"proposal": "checklist", "when": "before_handing_over", "text": "Count words."});
    let j = job(item, json!({"proposal": "nothing"}), true);
    happened(&j, quality_cause::CEILING, j.ada);
    let runs = j.w.collab.run_due_reflections().await.unwrap();
    let r = j.w.collab.answer_reflection(runs[0].id, false).unwrap();
    assert_eq!(r.state, "declined");
    assert!(j.w.collab.checklist_items(Some(j.ada)).unwrap().is_empty());
    assert_eq!(cards(&j)[0]["control"]["answer"], "declined");
}

#[tokio::test]
async fn twenty_reflections_a_day_then_the_next_waits_for_tomorrow() {
    let item =
        json!({"proposal": "checklist", "when": "before_handing_over", "text": "Count words."});
    let j = job(item, json!({"proposal": "nothing"}), true);
    let now = j.w.collab.store().now();
    j.w.collab
        .store()
        .write(|tx| {
            for _ in 0..20 {
                let e = tx
                    .quality_event(
                        NewQualityEvent::new(QualityType::Orchestration, quality_cause::STALL)
                            .plan(j.plan),
                    )?
                    .unwrap();
                tx.raw_execute(&format!(
                    "INSERT INTO reflections (bot_id, plan_id, ticket_id, quality_event_id, cause,
                         state, model, at)
                     VALUES ({}, {}, {}, {}, 'ceiling', 'nothing', 'm', {now})",
                    j.ben.0, j.plan.0, j.ticket.0, e.id
                ))?;
            }
            Ok(())
        })
        .unwrap();
    happened(&j, quality_cause::CEILING, j.ada);
    assert!(
        j.w.collab.run_due_reflections().await.unwrap().is_empty(),
        "the day is spent"
    );
    j.clock.advance(3_600_000);
    assert!(j.w.collab.run_due_reflections().await.unwrap().is_empty());
    // The next day (still within a day of its cause) it is asked.
    let to_midnight = 24 * 3_600_000 - (now + 3_600_000).rem_euclid(24 * 3_600_000);
    j.clock.advance(to_midnight);
    let runs = j.w.collab.run_due_reflections().await.unwrap();
    assert_eq!(
        (runs.len(), runs[0].state.as_str()),
        (1, "proposed"),
        "{runs:?}"
    );
}

#[tokio::test]
async fn under_a_stop_it_waits_for_the_lift_however_long_and_unstopped_a_day_is_its_limit() {
    let item =
        json!({"proposal": "checklist", "when": "before_handing_over", "text": "Count words."});
    let j = job(item, json!({"proposal": "nothing"}), true);
    let (stop, _) =
        j.w.collab
            .post_hold(support::holds::bot_stop(j.ada))
            .await
            .unwrap();
    happened(&j, quality_cause::CEILING, j.ada);
    assert!(
        j.w.collab.run_due_reflections().await.unwrap().is_empty(),
        "stopped"
    );
    // Two days under the stop, then lifted: the cause is still answered.
    j.clock.advance(48 * 3_600_000);
    assert!(j.w.collab.run_due_reflections().await.unwrap().is_empty());
    j.w.collab.lift_hold(stop.hold.id).await.unwrap();
    j.clock.advance(3_600_000);
    let runs = j.w.collab.run_due_reflections().await.unwrap();
    assert_eq!((runs.len(), runs[0].bot_id), (1, j.ada), "{runs:?}");

    // Ben's cause with no stop over it: a day and a bit later it is no longer asked for.
    happened(&j, quality_cause::REVIEW_MISS, j.ben);
    j.clock.advance(25 * 3_600_000);
    assert!(j.w.collab.run_due_reflections().await.unwrap().is_empty());
}
