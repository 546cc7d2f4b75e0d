//! The ball holder over a real store (digest C §13): the facts read from tickets, requests,
//! hand-overs, holds and conversations; who can take work (BH-2); where a holder with no
//! work item is woken (BH-3) and where notices go (BH-4); the ball on the ticket views.
//! Records are written straight to the store, except where a real turn is the fact read.

mod support;

use serde_json::json;
use support::*;
use troupe_collab::tickets::ball::{able_bots, ball_of, notice_place, wake_place};
use troupe_core::ball::{Ball, BallWhy, Holder};
use troupe_core::delegation::Expects;
use troupe_core::hold::{HoldEffect, HoldScope, HoldSource};
use troupe_core::submission::{CheckSource, SubmissionOrigin, SubmissionState};
use troupe_core::thread::Interaction;
use troupe_core::{BotId, CheckId, PlanId, SessionId, TicketId, WorkItemId};
use troupe_store::{
    CheckKind, FilingSource, Layout, LayoutItem, NewCheck, NewCheckRun, NewDelegation, NewFiling,
    NewHold, NewSubmission, NewThread, RunOutcome, TicketRecord, TicketRef,
};

const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;

/// A ticket to lay out: title, owner, reviewer, the items (by index) it depends on.
type Item<'a> = (&'a str, Option<BotId>, Option<BotId>, &'a [usize]);

/// Lay out tickets on the job in one go.
fn lay_out(w: &World, plan: PlanId, items: &[Item<'_>]) -> Vec<TicketRecord> {
    w.collab
        .store()
        .write(|tx| {
            let folder = tx.plan(plan)?.folder;
            let items = items
                .iter()
                .map(|(title, owner, reviewer, deps)| LayoutItem {
                    title: (*title).into(),
                    owner_bot_id: *owner,
                    reviewer_bot_id: *reviewer,
                    depends_on: deps.iter().map(|n| TicketRef::Item(*n)).collect(),
                    ..Default::default()
                })
                .collect();
            let laid = tx.lay_out(
                plan,
                &Layout {
                    items,
                    drops: Vec::new(),
                },
                |n, t| format!("{folder}/{n:02}-{t}"),
            )?;
            Ok(laid.tickets)
        })
        .unwrap()
}

/// A person's line in `s`, filed under the job: the user spoke about it there.
fn said_about(w: &World, s: SessionId, plan: PlanId, words: &str) {
    let line = person_line(w, s, words);
    w.collab
        .store()
        .write(|tx| {
            tx.file_line(&NewFiling {
                message_id: line.id,
                plan_id: plan,
                ticket_id: None,
                part_id: None,
                source: FilingSource::Reader,
                filed_by: "reader".into(),
                locked: false,
                primary: true,
            })
        })
        .unwrap();
}

/// The Bot's work item on the ticket, speaking in `s`.
fn ticket_work(w: &World, b: BotId, t: &TicketRecord, s: SessionId) -> WorkItemId {
    let bot = w.collab.bot(b).unwrap();
    w.collab
        .store()
        .write(|tx| {
            let thread = tx.create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: format!("#{:02}", t.number),
                agent: troupe_collab::bot_binding(&bot),
                workspace: w.dir.path().display().to_string(),
                interaction: Interaction::Interactive,
            })?;
            Ok(tx
                .create_ticket_item(b, t.plan_id, t.id, thread.id, Some(s))?
                .id)
        })
        .unwrap()
}

fn ball(w: &World, id: TicketId) -> Option<Ball> {
    w.collab
        .store()
        .read(|tx| ball_of(tx, &tx.ticket(id)?))
        .unwrap()
}

fn holder(w: &World, id: TicketId) -> (Holder, Option<BotId>, BallWhy) {
    let b = ball(w, id).expect("an open ticket of an active job has a ball");
    (b.holder, b.bot_id, b.why)
}

struct Team {
    w: World,
    g: SessionId,
    lead: BotId,
    maker: BotId,
    rita: BotId,
    plan: PlanId,
}

/// A group of Lead (its confirmed lead), Maker and Rita with a job the person opened there.
fn team() -> Team {
    let w = world();
    let lead = bot(&w, "Lead", QUIET);
    let maker = bot(&w, "Maker", QUIET);
    let rita = bot(&w, "Rita", QUIET);
    let g = group(&w, &[lead, maker, rita]);
    w.collab
        .store()
        .write(|tx| tx.set_lead(g, Some(lead)))
        .unwrap();
    let plan = open_job(&w, g, "make a launch kit").id;
    Team {
        w,
        g,
        lead,
        maker,
        rita,
        plan,
    }
}

// S-BH-1 (2026-10-04): a request for a deliverable whose hand-over waits on the user's 放行
// gives the user the ball, not the recipient.
#[tokio::test]
async fn s_bh_1_delegated_deliverable_in_review_is_the_users() {
    let t = team();
    let tk = lay_out(&t.w, t.plan, &[("Trailer", Some(t.lead), None, &[])]);
    let lead_work = ticket_work(&t.w, t.lead, &tk[0], t.g);
    let maker_work = ticket_work(&t.w, t.maker, &tk[0], t.g);
    t.w.collab
        .store()
        .write(|tx| {
            tx.create_delegation(&NewDelegation {
                plan_id: t.plan,
                ticket_id: Some(tk[0].id.0),
                part_ids: vec![],
                requirement_ids: vec![],
                sender_work_item: lead_work,
                recipient_work_item: maker_work,
                originating_run_id: None,
                pair_session_id: t.g,
                ask: "cut the trailer".into(),
                expects: Expects::Deliverable,
                continue_working: false,
            })
        })
        .unwrap();
    // While the request is open and nothing is handed over, the recipient has it.
    assert_eq!(
        holder(&t.w, tk[0].id),
        (Holder::Bot, Some(t.maker), BallWhy::Request)
    );
    assert_eq!(ball(&t.w, tk[0].id).unwrap().work_item_id, Some(maker_work));
    let sub =
        t.w.collab
            .store()
            .write(|tx| {
                let s = tx.create_submission(&NewSubmission {
                    ticket_id: tk[0].id,
                    origin: SubmissionOrigin::Answer,
                    producer_bot_id: Some(t.maker),
                    run_id: None,
                    work_item_id: Some(maker_work),
                    content: Some("the trailer is cut".into()),
                    note: String::new(),
                    claims: Vec::new(),
                    files: Vec::new(),
                    parts: Vec::new(),
                })?;
                Ok(s.id)
            })
            .unwrap();
    // In checks: the app has it; the recipient is not the one to call back.
    assert_eq!(holder(&t.w, tk[0].id).0, Holder::App);
    t.w.collab
        .store()
        .write(|tx| tx.set_submission_state(sub, SubmissionState::AwaitingUser))
        .unwrap();
    let b = ball(&t.w, tk[0].id).unwrap();
    assert_eq!(
        (b.holder, b.bot_id, b.why),
        (Holder::User, None, BallWhy::AwaitingWord)
    );
    assert_eq!(
        b.text,
        "Waiting on your word: say it is fine, or what to fix"
    );
}

// S-BH-2 (2026-10-03): a job opened in the user's direct with a Bot later archived and
// continued in a group: the group's Bots can take work, the archived one cannot.
#[tokio::test]
async fn s_bh_2_group_bots_where_the_user_spoke_can_take_work() {
    let w = world();
    let judge = bot(&w, "审片员", QUIET);
    let director = bot(&w, "Director", QUIET);
    let editor = bot(&w, "Editor", QUIET);
    let d = direct(&w, judge);
    let plan = open_job(&w, d, "做《一拳超人》的预告片").id;
    let g = group(&w, &[director, editor]);
    w.collab
        .store()
        .write(|tx| tx.set_lead(g, Some(editor)))
        .unwrap();
    let tk = lay_out(
        &w,
        plan,
        &[
            ("Storyboard", Some(director), None, &[]),
            ("Review cut", Some(judge), None, &[]),
        ],
    );
    let able = |w: &World| {
        w.collab
            .store()
            .read(|tx| able_bots(tx, &tx.plan(plan)?))
            .unwrap()
    };
    // Before the user speaks about it in the group, only the direct's Bot can.
    assert_eq!(able(&w).into_iter().collect::<Vec<_>>(), vec![judge]);
    assert_eq!(
        holder(&w, tk[0].id).1,
        None,
        "Director cannot take work yet"
    );
    said_about(&w, g, plan, "继续做预告片");
    w.collab.archive_bot(judge).unwrap();
    assert_eq!(
        able(&w).into_iter().collect::<Vec<_>>(),
        vec![director, editor]
    );
    assert_eq!(
        holder(&w, tk[0].id),
        (Holder::Bot, Some(director), BallWhy::Owner)
    );
    // The archived owner's ticket goes to the group's confirmed lead to hand out.
    let b = ball(&w, tk[1].id).unwrap();
    assert_eq!((b.bot_id, b.why), (Some(editor), BallWhy::Lead));
    assert_eq!(b.text, "Waiting on Editor to hand it out");
    // BH-4: notices go where the user last spoke about it, never the archived Bot's direct.
    said_about(&w, d, plan, "还有一件事");
    let place = w.collab.store().read(|tx| notice_place(tx, plan)).unwrap();
    assert_eq!(place, Some(g));
}

// S-BH-3 (2026-10-14): the job was worked in the user's direct; one question about it in a
// group does not move where its holder is woken.
#[tokio::test]
async fn s_bh_3_holder_is_woken_where_it_last_worked() {
    let w = world();
    let ada = bot(
        &w,
        "Ada",
        &json!({
            "steps": [{"text": "unused"},
                      {"tool_calls": [{"name": "end_turn", "arguments": {"reason": "done"}}]}],
            "on_exhausted": "repeat_last",
            "rules": [{"when_user_contains": "ZQX", "reply": {"tool_calls": [
                {"name": "work_on", "arguments": {"plan": "plan_1"}}]}}]
        })
        .to_string(),
    );
    let bo = bot(&w, "Bo", QUIET);
    let d = direct(&w, ada);
    let plan = open_job(&w, d, "write the release notes").id;
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(d, "ZQX go on".into(), None)
        .await
        .unwrap();
    let worked = || {
        w.collab
            .store()
            .read(|tx| tx.last_visible_session_on(plan, ada))
            .unwrap()
            .is_some()
    };
    until(&mut events, "Ada worked on the job", worked).await;
    let g = group(&w, &[ada, bo]);
    said_about(&w, g, plan, "is the changelog part of it?");
    let wake = |b: BotId| w.collab.store().read(|tx| wake_place(tx, plan, b)).unwrap();
    assert_eq!(wake(ada), Some(d), "where it last worked, not the group");
    // A Bot that never worked on it is woken where the user last spoke about the job.
    assert_eq!(wake(bo), Some(g));
    assert_eq!(
        w.collab.store().read(|tx| notice_place(tx, plan)).unwrap(),
        Some(g)
    );
}

// Rule 4: a hold over a ticket it depends on gives the user the ball; a dependency already
// through does not.
#[tokio::test]
async fn bh_rule_4_held_dependency_is_the_users() {
    let t = team();
    let tk = lay_out(
        &t.w,
        t.plan,
        &[
            ("Poster", Some(t.maker), None, &[]),
            ("Slogans", Some(t.rita), None, &[0]),
        ],
    );
    assert_eq!(holder(&t.w, tk[1].id).1, Some(t.rita));
    t.w.collab
        .store()
        .write(|tx| {
            tx.insert_hold(&NewHold {
                scope: HoldScope::Ticket {
                    ticket_id: tk[0].id,
                },
                targets: vec![],
                source: HoldSource::UserButton,
                source_message_id: None,
                session_id: Some(t.g),
                lift_on_next_user_message: false,
                cancel: false,
                composer_stop: false,
                effect: HoldEffect::default(),
            })
        })
        .unwrap();
    assert_eq!(holder(&t.w, tk[0].id).2, BallWhy::Held);
    let b = ball(&t.w, tk[1].id).unwrap();
    assert_eq!((b.holder, b.why), (Holder::User, BallWhy::DependencyHeld));
    assert_eq!(
        b.text,
        "Waiting on you: #01, which it depends on, is stopped"
    );
}

// Rule 5: in review with a reviewer → the reviewer; approved → nothing shown; the views
// carry the ball, the job's view its first open ticket's; a parked job shows none.
#[tokio::test]
async fn bh_rule_5_reviewer_and_the_views_carry_the_ball() {
    let t = team();
    let tk = lay_out(
        &t.w,
        t.plan,
        &[
            ("Poster", Some(t.maker), Some(t.rita), &[]),
            ("Slogans", None, None, &[]),
        ],
    );
    let maker_work = ticket_work(&t.w, t.maker, &tk[0], t.g);
    t.w.collab
        .store()
        .write(|tx| {
            let s = tx.create_submission(&NewSubmission {
                ticket_id: tk[0].id,
                origin: SubmissionOrigin::Explicit,
                producer_bot_id: Some(t.maker),
                run_id: None,
                work_item_id: Some(maker_work),
                content: None,
                note: String::new(),
                claims: Vec::new(),
                files: Vec::new(),
                parts: Vec::new(),
            })?;
            tx.set_submission_state(s.id, SubmissionState::InReview)
        })
        .unwrap();
    let b = ball(&t.w, tk[0].id).unwrap();
    assert_eq!((b.holder, b.bot_id), (Holder::Reviewer, Some(t.rita)));
    assert_eq!(b.text, "Waiting on Rita's review");
    // Nobody owns #02: the group's lead hands it out.
    assert_eq!(
        holder(&t.w, tk[1].id),
        (Holder::Bot, Some(t.lead), BallWhy::Lead)
    );
    let list = t.w.collab.tickets(t.plan).unwrap();
    assert_eq!(list.tickets[0].ball, Some(b.clone()));
    let v = serde_json::to_value(&list.tickets[1]).unwrap();
    assert_eq!(v["ball"]["holder"], "bot");
    assert_eq!(v["ball"]["why"], "lead");
    assert_eq!(t.w.collab.plan(t.plan).unwrap().ball, Some(b));
    t.w.collab
        .store()
        .write(|tx| tx.set_plan_dormant(t.plan, "quiet"))
        .unwrap();
    assert_eq!(ball(&t.w, tk[0].id), None);
    let v = serde_json::to_value(t.w.collab.plan(t.plan).unwrap()).unwrap();
    assert_eq!(v["ball"], serde_json::Value::Null);
}

// Rule 5's exception: awaiting the user's word, but a check bound to the ticket (a path in
// its folder) failed on its last run → back to the owner; a later pass gives it back.
#[tokio::test]
async fn bh_rule_5_a_failed_bound_check_sends_it_to_the_owner() {
    let t = team();
    let tk = lay_out(
        &t.w,
        t.plan,
        &[
            ("Poster", Some(t.maker), None, &[]),
            ("Slogans", Some(t.rita), None, &[]),
        ],
    );
    for id in [tk[0].id, tk[1].id] {
        let review = serde_json::from_value(json!({"status": "in_review"})).unwrap();
        t.w.collab.patch_ticket(id, review).unwrap();
    }
    assert_eq!(
        holder(&t.w, tk[0].id),
        (Holder::User, None, BallWhy::InReviewUnsubmitted)
    );
    let run = |check: CheckId, outcome: RunOutcome| {
        t.w.collab
            .store()
            .write(|tx| {
                tx.record_check_run(&NewCheckRun {
                    check_id: check,
                    submission_id: None,
                    outcome,
                    detail: String::new(),
                    output_tail: String::new(),
                    measured: None,
                    for_reference: false,
                    started_at: tx.now(),
                })
            })
            .unwrap();
    };
    let check =
        t.w.collab
            .store()
            .write(|tx| {
                let mut c = NewCheck::new(t.plan, CheckKind::FileExists, CheckSource::User);
                c.path = Some(format!("{}/poster.md", tk[0].folder));
                Ok(tx.create_check(&c)?.id)
            })
            .unwrap();
    run(check, RunOutcome::Failed);
    let b = ball(&t.w, tk[0].id).unwrap();
    assert_eq!(
        (b.holder, b.bot_id, b.why),
        (Holder::Bot, Some(t.maker), BallWhy::FailedCheck)
    );
    assert_eq!(b.text, "With Maker: a check failed on its last run");
    // Not bound to #02, whose folder it does not reach.
    assert_eq!(holder(&t.w, tk[1].id).0, Holder::User);
    run(check, RunOutcome::Passed);
    assert_eq!(holder(&t.w, tk[0].id).0, Holder::User);
}
