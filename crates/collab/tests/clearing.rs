//! Clearing a conversation's history and deleting a group (digest A HOLD-X1, X2, HOLD-2,
//! HOLD-C3, STOP-9, DEL-33/35, PLAN-D2, D10, D12, TURN-17).

mod support;

use std::time::Duration;
use support::*;
use troupe_collab::holds::{HoldRequest, ScopeRequest};
use troupe_core::check_back::CheckBackState;
use troupe_core::delegation::{DelegationState, Expects};
use troupe_core::hold::{HoldEffect, HoldScope, HoldSource, HoldStatus, LiftedBy};
use troupe_core::inbox::Delivery;
use troupe_core::message::Origin;
use troupe_core::plan::PlanStatus;
use troupe_core::run::RunStatus;
use troupe_core::thread::Interaction;
use troupe_core::work_item::{WaitingOn, WorkMode, WorkState};
use troupe_core::{BotId, PlanId, ThreadId};
use troupe_store::{
    FilingSource, NewCheckBack, NewDelegation, NewFiling, NewHold, NewThread, NewWorkItem,
};

const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;

fn scope(kind: &str) -> ScopeRequest {
    ScopeRequest {
        kind: kind.into(),
        bot_id: None,
        session_id: None,
        task_id: None,
        ticket_id: None,
        turn_id: None,
    }
}

fn hold_request(scope: ScopeRequest) -> HoldRequest {
    HoldRequest {
        scope,
        session_id: None,
        action: None,
    }
}

fn plan_exists(w: &World, p: PlanId) -> bool {
    w.collab
        .store()
        .read(|tx| tx.find_plan(p))
        .unwrap()
        .is_some()
}

/// A thread of the Bot's own, as a job's work item has.
fn job_thread(w: &World, b: BotId) -> ThreadId {
    let bot = w.collab.bot(b).unwrap();
    let dir = w.dir.path().join(format!("job-{b}"));
    std::fs::create_dir_all(&dir).unwrap();
    w.collab
        .store()
        .write(|tx| {
            tx.create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: "job".into(),
                agent: troupe_collab::bot_binding(&bot),
                workspace: dir.display().to_string(),
                interaction: Interaction::Interactive,
            })
        })
        .unwrap()
        .id
}

#[tokio::test]
async fn stop_9_clear_ends_turns_without_a_hold() {
    let w = world();
    let b = bot(
        &w,
        "Worker",
        r#"{"steps":[
            {"tool_calls":[{"name":"shell","arguments":{"command":"touch started; sleep 30"}}]},
            {"text":"finished"}],"on_exhausted":"repeat_last"}"#,
    );
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    let line = w
        .collab
        .post_line(s, "run the build".into(), None)
        .await
        .unwrap();
    let dir = std::path::PathBuf::from(w.collab.store().read(|tx| tx.thread(t)).unwrap().workspace);
    tokio::time::timeout(Duration::from_secs(20), async {
        while !dir.join("started").exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the command started");
    let run = w
        .collab
        .store()
        .read(|tx| tx.thread(t))
        .unwrap()
        .lease
        .holder
        .unwrap();

    let out = w.collab.clear_session(s, false).await.unwrap();
    assert_eq!(out.turns_ended, vec![run]);
    assert_eq!(
        w.collab.store().read(|tx| tx.run(run)).unwrap().status,
        RunStatus::Stopped
    );
    // Not a hold, and no pause latch either: the conversation simply goes on.
    assert!(w.collab.holds(true).unwrap().is_empty());
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .expect("the loop ended");
    assert!(
        w.collab
            .store()
            .read(|tx| tx.thread(t))
            .unwrap()
            .paused
            .is_none()
    );
    // Every line is blanked in place; ids stay.
    let lines = w.collab.lines(s, None, 100).unwrap();
    assert!(lines.iter().any(|l| l.id == line.id));
    assert!(lines.iter().all(|l| l.body.is_empty()), "{lines:?}");
    // TURN-17: the turn's command records went with the history.
    let commands = w.collab.store().read(|tx| tx.commands(run)).unwrap();
    assert!(commands.is_empty(), "{commands:?}");

    // Clearing again finds nothing more to do.
    let again = w.collab.clear_session(s, false).await.unwrap();
    assert_eq!(again.lines_blanked, 0);
    assert!(again.turns_ended.is_empty());

    // The next line is heard as usual. (The cleared transcript is out of the Bot's context,
    // so its script would start over with the long command: it answers plainly now.)
    rescript(&w, b, QUIET);
    w.collab.post_line(s, "hello".into(), None).await.unwrap();
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .expect("the next turn ended");
    assert_eq!(runs_of(&w, t).len(), 2);
}

#[tokio::test]
async fn hold_x1_plan_named_by_hold_survives_clear() {
    let w = world();
    let b = bot(&w, "Maker", QUIET);
    let s = direct(&w, b);
    let named = open_job(&w, s, "make the poster").id;
    let lone = open_job(&w, s, "a one-off question").id;
    let filed_elsewhere = open_job(&w, s, "the shared brochure").id;
    // Another conversation's line is filed under the brochure: it belongs there too.
    let other = direct(&w, bot(&w, "Helper", QUIET));
    let there = person_line(&w, other, "the brochure needs a map");
    w.collab
        .store()
        .write(|tx| {
            tx.file_line(&NewFiling {
                message_id: there.id,
                plan_id: filed_elsewhere,
                ticket_id: None,
                part_id: None,
                source: FilingSource::Reader,
                filed_by: "test".into(),
                locked: false,
                primary: true,
            })
        })
        .unwrap();
    // A stop said in a line named the poster job; it was lifted since (HOLD-X1: lifted or not).
    let said = person_line(&w, s, "stop the poster");
    let hold = w
        .collab
        .store()
        .write(|tx| {
            let h = tx.insert_hold(&NewHold {
                scope: HoldScope::Plan { plan_id: named },
                targets: vec![],
                source: HoldSource::UserText,
                source_message_id: Some(said.id),
                session_id: Some(s),
                lift_on_next_user_message: true,
                cancel: false,
                composer_stop: false,
                effect: HoldEffect::default(),
            })?;
            tx.lift_hold(h.id, LiftedBy::UserButton, None)?;
            Ok(h.id)
        })
        .unwrap();

    let out = w.collab.clear_session(s, false).await.unwrap();
    assert_eq!(out.plans_deleted, vec![lone]);
    assert_eq!(out.plans_kept, vec![named, filed_elsewhere]);
    assert!(!plan_exists(&w, lone));
    for p in [named, filed_elsewhere] {
        let plan = w.collab.plan(p).unwrap();
        // PLAN-D2: still home here, dormant.
        assert!(plan.dormant, "{plan:?}");
        assert_eq!(plan.dormant_cause.as_deref(), Some("cleared"));
        assert_eq!(plan.home_session_id, Some(s));
    }
    // HOLD-2: the hold stays, and so does the line it points at, blanked.
    let h = w.collab.hold(hold).unwrap().hold;
    assert_eq!(h.source_message_id, Some(said.id));
    assert_eq!(w.collab.line(said.id).unwrap().body, "");
    // The other conversation's words are not touched.
    assert_eq!(
        w.collab.line(there.id).unwrap().body,
        "the brochure needs a map"
    );
}

#[tokio::test]
async fn hold_c3_clear_voids_set_aside_check_backs_for_good() {
    let w = world();
    let b = bot(&w, "Maker", QUIET);
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    let cb = w
        .collab
        .store()
        .write(|tx| {
            let desk = tx.create_work_item(&NewWorkItem {
                bot_id: b,
                mode: WorkMode::Desk,
                plan_id: None,
                session_id: Some(s),
                thread_id: t,
                speaks_in: None,
            })?;
            tx.book_check_back(&NewCheckBack {
                bot_id: b,
                work_item_id: desk.id,
                session_id: s,
                plan_id: None,
                dedupe_key: "desk:check".into(),
                due_at: tx.now() + 3_600_000,
                note: "look again".into(),
                booked_by_run_id: None,
            })
        })
        .unwrap();
    let mut bot_scope = scope("bot");
    bot_scope.bot_id = Some(b);
    let (hold, _) = w.collab.post_hold(hold_request(bot_scope)).await.unwrap();
    assert_eq!(hold.hold.effect.check_backs_set_aside, vec![cb.id]);

    let out = w.collab.clear_session(s, false).await.unwrap();
    assert_eq!(out.check_backs_voided, vec![cb.id]);
    // The lift does not bring it back.
    w.collab.lift_hold(hold.hold.id).await.unwrap();
    assert_eq!(
        w.collab
            .store()
            .read(|tx| tx.check_back(cb.id))
            .unwrap()
            .state,
        CheckBackState::Voided
    );
}

#[tokio::test]
async fn del_35_clear_cancels_delegations_waking_nobody() {
    let w = world();
    let lead = bot(&w, "Lead", QUIET);
    let helper = bot(&w, "Helper", QUIET);
    let g = group(&w, &[lead, helper]);
    let p = open_job(&w, g, "the launch video").id;
    let (lead_thread, helper_thread) = (job_thread(&w, lead), job_thread(&w, helper));
    let (d, sender, recipient) = w
        .collab
        .store()
        .write(|tx| {
            let item = |tx: &mut troupe_store::Tx<'_>, b: BotId, t: ThreadId| {
                tx.create_work_item(&NewWorkItem {
                    bot_id: b,
                    mode: WorkMode::Work,
                    plan_id: Some(p),
                    session_id: None,
                    thread_id: t,
                    speaks_in: Some(g),
                })
            };
            let sender = item(tx, lead, lead_thread)?;
            let recipient = item(tx, helper, helper_thread)?;
            let d = tx.create_delegation(&NewDelegation {
                plan_id: p,
                ticket_id: None,
                part_ids: vec![],
                requirement_ids: vec![],
                sender_work_item: sender.id,
                recipient_work_item: recipient.id,
                originating_run_id: None,
                pair_session_id: g,
                ask: "cut the trailer".into(),
                expects: Expects::Answer,
                continue_working: false,
            })?;
            tx.set_work_state(
                sender.id,
                WorkState::Waiting,
                Some(&WaitingOn::Delegation {
                    delegation_id: d.id,
                }),
            )?;
            // The request waits unread in the helper's inbox.
            let key = format!("delegation:{}", d.id.0);
            tx.deliver(
                helper_thread,
                &Delivery {
                    origin: Origin::Delegation(key.clone()),
                    ..Delivery::user_task("cut the trailer").with_key(key)
                },
            )?;
            tx.set_work_state(recipient.id, WorkState::Queued, None)?;
            Ok((d.id, sender.id, recipient.id))
        })
        .unwrap();

    let out = w.collab.clear_session(g, false).await.unwrap();
    assert_eq!(out.delegations_cancelled, vec![d]);
    let rec = w.collab.store().read(|tx| tx.delegation(d)).unwrap();
    assert_eq!(rec.state, DelegationState::Cancelled);
    assert_eq!(rec.result.as_ref().unwrap()["wakes"], 0, "{rec:?}");
    // The sender's wait is gone and it is not woken; the helper's unread request is taken
    // back and nobody runs.
    let (s_item, r_item) = w
        .collab
        .store()
        .read(|tx| Ok((tx.work_item(sender)?, tx.work_item(recipient)?)))
        .unwrap();
    assert_eq!((s_item.state, s_item.waiting_on), (WorkState::Idle, None));
    assert_eq!(r_item.state, WorkState::Idle);
    assert!(
        w.collab
            .store()
            .read(|tx| tx.inbox(helper_thread))
            .unwrap()
            .is_empty()
    );
    for t in [lead_thread, helper_thread] {
        w.collab.engine().wait_idle(t).await;
        assert!(runs_of(&w, t).is_empty());
    }
    // The job had a turn-less delegation in its own group only, but delegation records stay
    // recorded: it is kept (dormant), not deleted.
    assert!(plan_exists(&w, p));
}

#[tokio::test]
async fn hold_x2_deleted_group_gives_parked_plan_its_own_hold() {
    let w = world();
    let lead = bot(&w, "Lead", QUIET);
    let other = bot(&w, "Other", QUIET);
    let g = group(&w, &[lead, other]);
    let kept = open_job(&w, g, "the annual report").id;
    let gone = open_job(&w, g, "a quick sum").id;
    // The person's direct with the lead has a line filed under the report.
    let d = direct(&w, lead);
    let there = person_line(&w, d, "add the charts to the report");
    w.collab
        .store()
        .write(|tx| {
            tx.file_line(&NewFiling {
                message_id: there.id,
                plan_id: kept,
                ticket_id: None,
                part_id: None,
                source: FilingSource::Reader,
                filed_by: "test".into(),
                locked: false,
                primary: true,
            })
        })
        .unwrap();
    // The group is stopped: its hold parks both jobs.
    let mut group_scope = scope("session");
    group_scope.session_id = Some(g);
    let (group_hold, _) = w.collab.post_hold(hold_request(group_scope)).await.unwrap();
    assert_eq!(w.collab.plan(kept).unwrap().status, PlanStatus::Parked);
    // A lifted hold on the quick sum would name it; this one is a Bot hold (names no job).
    let mut bot_scope = scope("bot");
    bot_scope.bot_id = Some(other);
    w.collab.post_hold(hold_request(bot_scope)).await.unwrap();

    // A direct is not deleted.
    let refused = w.collab.delete_group(d, false).await.unwrap_err();
    assert!(
        matches!(
            refused,
            troupe_collab::CollabError::Conflict {
                code: "not_a_group",
                ..
            }
        ),
        "{refused:?}"
    );

    let out = w.collab.delete_group(g, false).await.unwrap();
    assert_eq!(out.plans_kept, vec![kept]);
    assert_eq!(out.plans_deleted, vec![gone]);
    assert!(!plan_exists(&w, gone));
    assert_eq!(out.holds_made.len(), 1);
    let own = w.collab.hold(out.holds_made[0]).unwrap().hold;
    assert_eq!(own.scope, HoldScope::Plan { plan_id: kept });
    assert_eq!(own.source, HoldSource::Migration);
    assert!(!own.lift_on_next_user_message);
    assert_eq!(own.effect.plans_parked.len(), 1);
    assert_eq!(own.effect.plans_parked[0].prior, PlanStatus::Active);
    // The group's hold handed the restore over.
    let from = w.collab.hold(group_hold.hold.id).unwrap().hold;
    assert!(from.effect.plans_parked.iter().all(|p| p.plan_id != kept));

    // PLAN-D10: the kept job left the group, dormant and still parked.
    let plan = w.collab.plan(kept).unwrap();
    assert_eq!(plan.home_session_id, None);
    assert!(plan.dormant);
    assert_eq!(plan.status, PlanStatus::Parked);
    assert_eq!(plan.held_by, vec![own.id]);
    // The group is gone from the list and every read.
    assert!(matches!(
        w.collab.session_view(g),
        Err(troupe_collab::CollabError::NotFound { .. })
    ));
    assert!(
        w.collab
            .sessions(50)
            .unwrap()
            .iter()
            .all(|v| v.session.id != g)
    );
    assert!(matches!(
        w.collab.delete_group(g, false).await,
        Err(troupe_collab::CollabError::NotFound { .. })
    ));

    // Lifting the group's hold leaves the job parked; lifting its own gives it back.
    w.collab.lift_hold(group_hold.hold.id).await.unwrap();
    assert_eq!(w.collab.plan(kept).unwrap().status, PlanStatus::Parked);
    let lifted = w.collab.lift_hold(own.id).await.unwrap().hold;
    assert_eq!(lifted.status, HoldStatus::Lifted);
    assert_eq!(w.collab.plan(kept).unwrap().status, PlanStatus::Active);
}

/// PLAN-D12 with tickets: a job nothing else refers to goes with its tickets, parts and checks;
/// one whose work was handed over is kept (a hand-over is never thrown away by a clear).
#[tokio::test]
async fn plan_d12_clear_deletes_a_lone_job_with_its_tickets_and_keeps_one_handed_over() {
    use troupe_core::submission::SubmissionOrigin;
    use troupe_core::submission::approval::CheckSource;
    use troupe_store::{
        CheckKind, Layout, LayoutItem, NewCheck, NewSubmission, SubmittedFile, TicketRef,
    };
    let w = world();
    let b = bot(&w, "Maker", QUIET);
    let s = direct(&w, b);
    let lone = open_job(&w, s, "a poster nobody handed over").id;
    let handed = open_job(&w, s, "a flyer that was handed over").id;
    let item = |title: &str| LayoutItem {
        ticket: None,
        key: None,
        title: title.into(),
        description: String::new(),
        done_when: String::new(),
        owner_bot_id: Some(b),
        reviewer_bot_id: None,
        depends_on: vec![],
        parts: vec!["P1".into()],
        sample: false,
    };
    let lay = |plan: PlanId| {
        w.collab
            .store()
            .write(|tx| {
                let out = tx.lay_out(
                    plan,
                    &Layout {
                        items: vec![
                            item("first"),
                            LayoutItem {
                                depends_on: vec![TicketRef::Item(0)],
                                ..item("second")
                            },
                        ],
                        drops: vec![],
                    },
                    |n, t| format!("{n:02}-{t}"),
                )?;
                let mut check = NewCheck::new(plan, CheckKind::FileExists, CheckSource::User);
                check.path = Some("out.txt".into());
                check.ticket_id = Some(out.tickets[0].id);
                tx.create_check(&check)?;
                Ok(out.tickets)
            })
            .unwrap()
    };
    lay(lone);
    let flyer = lay(handed);
    w.collab
        .store()
        .write(|tx| {
            tx.create_submission(&NewSubmission {
                ticket_id: flyer[0].id,
                origin: SubmissionOrigin::Explicit,
                producer_bot_id: Some(b),
                run_id: None,
                work_item_id: None,
                content: None,
                note: String::new(),
                claims: vec![],
                files: vec![SubmittedFile {
                    path: "01-first/flyer.pdf".into(),
                    sha256: "b".repeat(64),
                    size: 3,
                }],
                parts: vec![],
            })
        })
        .unwrap();

    let out = w.collab.clear_session(s, false).await.unwrap();
    assert_eq!(out.plans_deleted, vec![lone]);
    assert_eq!(out.plans_kept, vec![handed]);
    assert!(!plan_exists(&w, lone));
    let (lone_tickets, lone_checks, kept) = w
        .collab
        .store()
        .read(|tx| {
            Ok((
                tx.tickets_of_plan(lone)?.len(),
                tx.checks_of_plan(lone, true)?.len(),
                tx.tickets_of_plan(handed)?.len(),
            ))
        })
        .unwrap();
    assert_eq!((lone_tickets, lone_checks), (0, 0));
    assert_eq!(kept, 2, "the handed-over job keeps its tickets");
}

/// UQ-1: clearing a conversation deletes its transcript for the Bots too. The Bot's own thread
/// there keeps its rows (runs and calls point at them) but its next model call reads none of
/// the cleared conversation: the script answers by how many replies of its own the call
/// carries, so a Bot that still read its old reply would answer "second".
#[tokio::test]
async fn uq_1_clear_takes_the_transcript_out_of_the_bots_next_model_call() {
    let w = world();
    let b = bot(
        &w,
        "Scribe",
        r#"{"steps":[{"text":"first"},{"text":"second"}],"on_exhausted":"repeat_last"}"#,
    );
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    w.collab
        .post_line(s, "the password is pelican".into(), None)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .expect("the first turn ended");
    let before = w
        .collab
        .store()
        .read(|tx| tx.messages(t, None, u32::MAX))
        .unwrap();
    assert!(before.len() >= 2, "{before:?}");

    let out = w.collab.clear_session(s, false).await.unwrap();
    assert_eq!(out.transcript_messages_hidden, before.len());
    // The rows stay, out of the context; the words are not deleted from the record.
    let after = w
        .collab
        .store()
        .read(|tx| tx.messages(t, None, u32::MAX))
        .unwrap();
    assert_eq!(after.len(), before.len());
    assert!(
        after.iter().flat_map(|m| &m.parts).all(|p| !p.in_context),
        "{after:?}"
    );
    assert_eq!(
        w.collab
            .clear_session(s, false)
            .await
            .unwrap()
            .transcript_messages_hidden,
        0,
        "a second clear finds nothing more"
    );

    w.collab
        .post_line(s, "what is the password?".into(), None)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .expect("the next turn ended");
    let replies: Vec<String> = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.author == troupe_core::conversation::Author::Bot)
        .map(|l| l.body)
        .collect();
    assert_eq!(replies, vec!["".to_string(), "first".to_string()]);
    // The new exchange is in the context, the cleared one is not.
    let seen: Vec<String> = w
        .collab
        .store()
        .read(|tx| tx.messages(t, None, u32::MAX))
        .unwrap()
        .into_iter()
        .flat_map(|m| m.parts)
        .filter(|p| p.in_context)
        .filter_map(|p| match p.body {
            troupe_core::message::PartBody::Text { text } => Some(text),
            _ => None,
        })
        .collect();
    assert!(seen.iter().all(|t| !t.contains("pelican")), "{seen:?}");
    assert!(
        seen.iter().any(|t| t.contains("what is the password?")),
        "{seen:?}"
    );
}
