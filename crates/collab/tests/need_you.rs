//! "N need you" in a job's title row (digest B §1.6, ADR 0086): it adds up the job's checks
//! whose latest run failed, its blocked progress (checks whose latest run was blocked or
//! errored) and the requirements waiting for the person's word — and nothing a check's older
//! run, an offer, a reference-only run or a set-aside ticket's check says.

mod support;

use support::*;
use troupe_collab::tickets::{NeedYou, TicketPatchRequest};
use troupe_core::conversation::Author;
use troupe_core::requirement::{Polarity, Scope, SourceKind, State};
use troupe_core::submission::CheckSource;
use troupe_core::ticket::TicketStatus;
use troupe_core::words_check::LinePlace;
use troupe_core::words_check::numbers::read_numbers;
use troupe_core::{CheckId, PlanId, SessionId, TicketId};
use troupe_store::{
    CheckKind, NewCheck, NewCheckRun, NewLine, NewRequirement, RunOutcome, WordsStatus,
};

const REPLY: &str = r#"{"steps":[{"text":"done"}]}"#;

fn check(w: &World, plan: PlanId, ticket: Option<TicketId>) -> CheckId {
    w.collab
        .store()
        .write(|tx| {
            let mut c = NewCheck::new(plan, CheckKind::FileExists, CheckSource::User);
            c.path = Some("out.md".into());
            c.ticket_id = ticket;
            Ok(tx.create_check(&c)?.id)
        })
        .unwrap()
}

/// An offer from the person's words (measured and shown, never a gate).
fn offer(w: &World, plan: PlanId, s: SessionId) -> CheckId {
    let words = "make the video about 2 minutes long";
    w.collab
        .store()
        .write(|tx| {
            let line = tx.insert_line(&NewLine::plain(s, Author::User, words.into()))?;
            let reading = read_numbers(words, LinePlace::Job).remove(0);
            let c = tx.create_check(&NewCheck {
                dimension: Some(reading.dimension),
                value: Some(reading.number.value),
                bound: Some(reading.number.bound),
                min: reading.number.min,
                max: reading.number.max,
                quote_id: Some(line.id.0),
                status: Some(WordsStatus::Offer),
                said_count: 1,
                ..NewCheck::new(plan, CheckKind::Words, CheckSource::Words)
            })?;
            Ok(c.id)
        })
        .unwrap()
}

fn ran(w: &World, id: CheckId, outcome: RunOutcome, for_reference: bool) {
    w.collab
        .store()
        .write(|tx| {
            tx.record_check_run(&NewCheckRun {
                check_id: id,
                submission_id: None,
                outcome,
                detail: outcome.as_str().into(),
                output_tail: String::new(),
                measured: None,
                for_reference,
                started_at: 1,
            })
        })
        .unwrap();
}

fn need_you(w: &World, plan: PlanId) -> NeedYou {
    w.collab.tickets(plan).unwrap().need_you
}

#[tokio::test]
async fn need_you_adds_up_failed_checks_blocked_progress_and_requirements_waiting_for_a_word() {
    let w = world();
    let maker = bot(&w, "Maker", REPLY);
    let s = direct(&w, maker);
    let job = open_job_work(&w, s, maker, "Poster");
    let plan = job.plan;
    assert_eq!(need_you(&w, plan), NeedYou::new(0, 0, 0));
    assert_eq!(need_you(&w, plan).text, None);

    // A check failing now, one that failed and passes since, one blocked, one errored.
    let failing = check(&w, plan, None);
    ran(&w, failing, RunOutcome::Failed, false);
    let mended = check(&w, plan, None);
    ran(&w, mended, RunOutcome::Failed, false);
    ran(&w, mended, RunOutcome::Passed, false);
    let blocked = check(&w, plan, None);
    ran(&w, blocked, RunOutcome::Blocked, false);
    let errored = check(&w, plan, None);
    ran(&w, errored, RunOutcome::Error, false);
    // Neither an offer from the person's words nor a run for reference holds anything.
    let offer = offer(&w, plan, s);
    ran(&w, offer, RunOutcome::Failed, false);
    let reference = check(&w, plan, None);
    ran(&w, reference, RunOutcome::Passed, false);
    ran(&w, reference, RunOutcome::Failed, true);
    // A requirement to confirm.
    w.collab
        .store()
        .write(|tx| {
            let line = tx.insert_line(&NewLine::plain(s, Author::User, "no red, please".into()))?;
            tx.add_requirement(&NewRequirement {
                plan_id: plan,
                ticket_id: None,
                session_id: Some(s),
                scope: Scope::Job,
                quote: "no red".into(),
                source_kind: SourceKind::ComplaintWhole,
                source_message_id: Some(line.id),
                source_quote_id: None,
                restatement: String::new(),
                category: None,
                nature: None,
                polarity: Polarity::MustNot,
                number: None,
                state: State::ToConfirm,
                replaces_id: None,
                said_at: 1,
            })
        })
        .unwrap();

    let n = need_you(&w, plan);
    assert_eq!(n, NeedYou::new(1, 2, 1));
    assert_eq!((n.count, n.text.as_deref()), (4, Some("4 need you")));
}

#[tokio::test]
async fn a_set_aside_tickets_failing_check_needs_nobody() {
    let w = world();
    let maker = bot(&w, "Maker", REPLY);
    let s = direct(&w, maker);
    let job = open_job_work(&w, s, maker, "Poster");
    let t = supervise::add_ticket(&w, &job, "Poster", maker, None);
    let c = check(&w, job.plan, Some(t));
    ran(&w, c, RunOutcome::Failed, false);
    assert_eq!(need_you(&w, job.plan).failed_checks, 1);

    w.collab
        .patch_ticket(
            t,
            TicketPatchRequest {
                status: Some(TicketStatus::Parked),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(need_you(&w, job.plan), NeedYou::new(0, 0, 0));
}
