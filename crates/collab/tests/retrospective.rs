//! The retrospective (digest 003-B §11) on a clock only the test moves: a delivered job quiet
//! for 30 minutes gets one look back from each Bot that handed over — skipped with no model
//! call for a Bot nothing went wrong for (S-RS1), its changes checked one by one (S-RS2), none
//! while the job is reopened and, delivered again, only what went wrong since (S-RS4, RS5); it
//! waits out a stop and the engine step switched off. And the memories a Bot keeps with its
//! `remember` tool reach its situation.

mod support;

use serde_json::json;
use support::holds::bot_stop;
use support::supervise::*;
use support::*;
use troupe_collab::memories::KeptSituation;
use troupe_core::submission::{ApprovedBy, SubmissionOrigin, SubmissionState};
use troupe_core::{BotId, ManualClock, PlanId, TicketId};
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{
    NewQualityEvent, NewSubmission, QualityType, RetrospectiveRecord, quality_cause,
};

const MIN: i64 = 60_000;
const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;

/// A Bot whose every model call answers `answer` (the retrospective's one call).
fn answering(w: &World, name: &str, answer: serde_json::Value) -> BotId {
    let text = answer.to_string();
    bot(
        w,
        name,
        &json!({"steps": [{"text": text}], "on_exhausted": "repeat_last"}).to_string(),
    )
}

fn lesson() -> serde_json::Value {
    json!({
        "summary": "I handed the draft over before reading the brief's length.",
        "tripped_up": ["handed over without counting words"],
        "sent_back_because": ["too long"],
        "do_again": ["short sections"],
        "verdicts": [
            {"conclusion": "Too long", "verdict": "happened_again"},
            {"conclusion": "never concluded", "verdict": "still_holds"}
        ],
        "memories": [
            {"subject": "Length first", "body": "Count the words against the brief before handing over."},
            {"subject": "Everything", "body": "x".repeat(200)}
        ],
        "forget": []
    })
}

fn hand_over(w: &World, ticket: TicketId, bot: BotId, state: SubmissionState) {
    w.collab
        .store()
        .write(|tx| {
            let s = tx.create_submission(&NewSubmission {
                ticket_id: ticket,
                origin: SubmissionOrigin::Answer,
                producer_bot_id: Some(bot),
                run_id: None,
                work_item_id: None,
                content: Some("The draft.".into()),
                note: "first draft".into(),
                claims: Vec::new(),
                files: Vec::new(),
                parts: Vec::new(),
            })?;
            if state == SubmissionState::Approved {
                tx.approve_submission(s.id, ApprovedBy::NoReviewer, None, None)?;
            } else {
                tx.set_submission_state(s.id, state)?;
            }
            Ok(())
        })
        .unwrap();
}

fn went_wrong(w: &World, plan: PlanId, ticket: TicketId, bot: BotId, cause: &str) {
    w.collab
        .store()
        .write(|tx| {
            tx.quality_event(
                NewQualityEvent::new(QualityType::Execution, cause)
                    .bot(Some(bot))
                    .plan(plan)
                    .ticket(ticket),
            )
        })
        .unwrap();
}

fn deliver(w: &World, plan: PlanId, delivered: bool) {
    w.collab
        .store()
        .write(|tx| tx.set_plan_delivered(plan, delivered))
        .unwrap();
}

fn looked_back(w: &World, plan: PlanId) -> Vec<RetrospectiveRecord> {
    w.collab.retrospectives(plan).unwrap()
}

/// Ada's retrospective of the job (her first, when there are more).
fn adas_look_back(j: &Job) -> RetrospectiveRecord {
    let mut all = looked_back(&j.w, j.plan);
    all.retain(|r| r.bot_id == j.ada);
    all.pop().expect("Ada looked back")
}

/// Ada (sent back once, handed over twice) and Ben (clean) on one job in their group.
struct Job {
    w: World,
    clock: ManualClock,
    ada: BotId,
    ben: BotId,
    plan: PlanId,
    ada_ticket: TicketId,
}

fn job(ada_answer: serde_json::Value) -> Job {
    let (clock, w) = start();
    let ada = answering(&w, "Ada", ada_answer);
    let ben = bot(&w, "Ben", QUIET);
    let s = group(&w, &[ada, ben]);
    let j = open_job_work(&w, s, ada, "The report");
    let ada_ticket = add_ticket(&w, &j, "Draft", ada, Some(ben));
    let ben_ticket = add_ticket(&w, &j, "Figures", ben, Some(ada));
    hand_over(&w, ada_ticket, ada, SubmissionState::Rework);
    went_wrong(&w, j.plan, ada_ticket, ada, quality_cause::REVIEW_REJECTED);
    hand_over(&w, ada_ticket, ada, SubmissionState::Approved);
    hand_over(&w, ben_ticket, ben, SubmissionState::Approved);
    // A stall is the app's, not Ben's conduct (RS4 does not count it).
    w.collab
        .store()
        .write(|tx| {
            tx.quality_event(
                NewQualityEvent::new(QualityType::Orchestration, quality_cause::STALL)
                    .bot(Some(ben))
                    .plan(j.plan),
            )
        })
        .unwrap();
    deliver(&w, j.plan, true);
    Job {
        w,
        clock,
        ada,
        ben,
        plan: j.plan,
        ada_ticket,
    }
}

#[tokio::test]
async fn s_rs1_after_thirty_quiet_minutes_the_bot_sent_back_looks_back_and_the_clean_one_is_skipped()
 {
    let j = job(lesson());
    j.clock.advance(29 * MIN);
    assert!(
        j.w.collab
            .run_due_retrospectives()
            .await
            .unwrap()
            .is_empty(),
        "not quiet long enough"
    );
    j.clock.advance(2 * MIN);
    let tick = j.w.collab.scheduler_tick().await;
    assert_eq!(
        tick.supervisor.as_ref().unwrap()["retrospectives"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let all = looked_back(&j.w, j.plan);
    let ada = all.iter().find(|r| r.bot_id == j.ada).unwrap();
    let ben = all.iter().find(|r| r.bot_id == j.ben).unwrap();
    assert_eq!(
        (ben.state.as_str(), ben.model.as_deref()),
        ("skipped", None),
        "no model call"
    );
    assert!(ben.changes.is_empty());
    assert_eq!(ada.state, "done", "{ada:?}");
    assert_eq!(
        ada.went_wrong,
        [
            "a review rejected a hand-over",
            "ticket 01 was handed over 2 times"
        ]
    );
    assert_eq!(ada.sent_back_because, ["too long"]);
    assert_eq!(ada.verdicts, json!([]), "no earlier conclusion to judge");
    // S-RS2: the over-long memory is refused with its reason; the other is written.
    let refused: Vec<_> = ada.changes.iter().map(|c| c.refused.is_some()).collect();
    assert_eq!(refused, [false, true], "{:?}", ada.changes);
    assert!(
        ada.changes[1]
            .refused
            .as_deref()
            .unwrap()
            .contains("at most 160")
    );
    let memories = j.w.collab.bot_memories(j.ada).unwrap();
    assert_eq!(memories.len(), 1);
    assert_eq!(memories[0].subject, "Length first");
    assert_eq!(
        memories[0].retrospective_id,
        Some(ada.id),
        "marked as the retrospective's"
    );
    assert!(j.w.collab.bot_memories(j.ben).unwrap().is_empty());

    // Once per delivery: the next tick asks nobody again.
    j.clock.advance(10 * MIN);
    assert!(
        j.w.collab
            .run_due_retrospectives()
            .await
            .unwrap()
            .is_empty()
    );
    let _ = j.ada_ticket;
}

#[tokio::test]
async fn s_rs4_a_reopened_job_waits_for_its_next_delivery_which_covers_only_what_went_wrong_since()
{
    let j = job(lesson());
    j.clock.advance(31 * MIN);
    j.w.collab.run_due_retrospectives().await.unwrap();
    let first = adas_look_back(&j);

    // A complaint 5 min later reopens the job: nothing runs while it is open.
    j.clock.advance(5 * MIN);
    deliver(&j.w, j.plan, false);
    went_wrong(&j.w, j.plan, j.ada_ticket, j.ada, quality_cause::COMPLAINT);
    j.clock.advance(40 * MIN);
    assert!(
        j.w.collab
            .run_due_retrospectives()
            .await
            .unwrap()
            .is_empty()
    );

    deliver(&j.w, j.plan, true);
    j.clock.advance(31 * MIN);
    let runs = j.w.collab.run_due_retrospectives().await.unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let all = looked_back(&j.w, j.plan);
    let second = all
        .iter()
        .find(|r| r.bot_id == j.ada && r.id != first.id)
        .unwrap();
    assert_eq!(second.since_at, Some(first.at));
    assert_eq!(
        second.verdicts,
        json!([{"conclusion": "Too long", "verdict": "happened_again"}]),
        "a verdict only on what an earlier look back concluded"
    );
    assert_eq!(
        second.went_wrong,
        ["a complaint sent approved work back for rework"],
        "only what went wrong since the last retrospective"
    );
}

#[tokio::test]
async fn it_waits_out_a_stop_and_the_engine_step_switched_off() {
    let j = job(lesson());
    let (stop, _) = j.w.collab.post_hold(bot_stop(j.ada)).await.unwrap();
    let mut off = troupe_collab::engines::EngineSteps::new();
    off.entry("general".into())
        .or_default()
        .insert("retrospective".into(), false);
    j.w.collab.set_engine_steps(&off).unwrap();
    j.clock.advance(31 * MIN);
    assert!(
        j.w.collab
            .run_due_retrospectives()
            .await
            .unwrap()
            .is_empty(),
        "switched off"
    );

    let mut on = off.clone();
    on.get_mut("general")
        .unwrap()
        .insert("retrospective".into(), true);
    j.w.collab.set_engine_steps(&on).unwrap();
    let runs = j.w.collab.run_due_retrospectives().await.unwrap();
    assert_eq!(
        runs.len(),
        1,
        "Ben looks back; Ada waits out her stop: {runs:?}"
    );
    assert_eq!(runs[0].bot_id, j.ben);

    j.w.collab.lift_hold(stop.hold.id).await.unwrap();
    let runs = j.w.collab.run_due_retrospectives().await.unwrap();
    assert_eq!((runs.len(), runs[0].bot_id), (1, j.ada));
}

#[tokio::test]
async fn an_answer_that_is_not_one_whole_json_object_writes_nothing() {
    let j = job(json!("I learned a lot. {\"summary\": \"x\"}"));
    j.clock.advance(31 * MIN);
    j.w.collab.run_due_retrospectives().await.unwrap();
    let ada = adas_look_back(&j);
    assert_eq!(ada.state, "failed");
    assert!(
        ada.error.as_deref().unwrap().starts_with("nothing written"),
        "{ada:?}"
    );
    assert!(ada.changes.is_empty());
    assert!(j.w.collab.bot_memories(j.ada).unwrap().is_empty());
}

#[tokio::test]
async fn a_memory_the_bot_keeps_with_remember_is_in_its_situation_at_its_next_call() {
    let w = world();
    let script = json!({
        "steps": [
            {"tool_calls": [{"name": "remember", "arguments": {"subject": "Units", "body": "Give every number its unit."}}]},
            {"text": "Noted."}
        ]
    });
    let b = bot(&w, "Ada", &script.to_string());
    let s = direct(&w, b);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "remember to give units".into(), None)
        .await
        .unwrap();
    let t = thread_of(&w, s, b);
    runs_ended(&mut events, t, 1).await;
    w.collab.engine().wait_idle(t).await;
    let kept = w.collab.bot_memories(b).unwrap();
    assert_eq!(
        (kept[0].subject.as_str(), kept[0].retrospective_id),
        ("Units", None)
    );
    let thread = w.collab.store().read(|tx| tx.thread(t)).unwrap();
    let mut parts = ContextParts::default();
    KeptSituation.contribute(&thread, w.collab.store(), &mut parts);
    assert!(
        parts
            .situation
            .iter()
            .any(|p| p.contains("- Units: Give every number its unit.")),
        "{parts:?}"
    );
    // Turned off by the person, it leaves the situation.
    w.collab
        .edit_bot_memory(kept[0].id, None, None, Some(false))
        .unwrap();
    let mut parts = ContextParts::default();
    KeptSituation.contribute(&thread, w.collab.store(), &mut parts);
    assert!(parts.situation.is_empty());
}

#[tokio::test]
async fn the_days_twelve_calls_spent_a_look_back_waits_for_tomorrow_and_a_skip_does_not() {
    let j = job(lesson());
    j.clock.advance(31 * MIN);
    // Twelve calls already made today (Ben's, on deliveries long past).
    let (now, ada, ben) = (j.w.collab.store().now(), j.ada, j.ben);
    j.w.collab
        .store()
        .write(|tx| {
            for n in 0..12 {
                tx.raw_execute(&format!(
                    "INSERT INTO retrospectives (plan_id, bot_id, delivered_at, state, model, at)
                     VALUES ({}, {}, {n}, 'done', 'm', {now})",
                    j.plan.0, ben.0
                ))?;
            }
            Ok(())
        })
        .unwrap();
    let runs = j.w.collab.run_due_retrospectives().await.unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!((runs[0].bot_id, runs[0].state.as_str()), (j.ben, "skipped"));
    j.clock.advance(24 * 60 * MIN);
    let runs = j.w.collab.run_due_retrospectives().await.unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!((runs[0].bot_id, runs[0].state.as_str()), (ada, "done"));
}

#[tokio::test]
async fn s_rs2_a_skill_rewritten_whole_is_refused_and_the_other_changes_are_written() {
    let mut answer = lesson();
    answer["skills"] = json!([
        {"skill": "Drafts", "body": "Write whatever the brief seems to want."},
        {"new_skill": "Length", "description": "Keeping to a length",
         "body": "Count the words before handing over."},
        {"skill": "Drafts", "append": "Count the words."}
    ]);
    let j = job(answer);
    let drafts =
        j.w.collab
            .add_bot_skill(
                j.ada,
                "Drafts",
                "How I draft",
                "Outline in `outline.md` first.\n\nWrite short sections.",
            )
            .unwrap();
    j.clock.advance(31 * MIN);
    j.w.collab.run_due_retrospectives().await.unwrap();
    let ada = adas_look_back(&j);
    let skills: Vec<_> = ada.changes.iter().filter(|c| c.target == "skill").collect();
    assert_eq!(skills.len(), 3, "{skills:?}");
    assert!(
        skills[0]
            .refused
            .as_deref()
            .unwrap()
            .contains("rewritten whole"),
        "{skills:?}"
    );
    assert_eq!(
        skills[0].after.as_deref(),
        Some("Write whatever the brief seems to want.")
    );
    assert_eq!(skills[1].refused, None, "{skills:?}");
    assert!(skills[1].undoable);
    assert!(
        skills[2]
            .refused
            .as_deref()
            .unwrap()
            .contains("more than 2"),
        "{skills:?}"
    );
    // The memory the answer asked for is written beside them.
    assert_eq!(
        j.w.collab.bot_memories(j.ada).unwrap()[0].subject,
        "Length first"
    );
    let kept = j.w.collab.bot_skills(j.ada).unwrap();
    let draft = kept.iter().find(|s| s.id == drafts.id).unwrap();
    assert_eq!(draft.body, drafts.body, "the rewrite was not written");
    let length = kept.iter().find(|s| s.name == "Length").unwrap();
    assert_eq!(length.retrospective_id, Some(ada.id));
}
