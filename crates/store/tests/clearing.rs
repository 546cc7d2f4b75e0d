//! Clearing and deleting as rows, on both backends (see `troupe_store::testing`): lines are
//! blanked in place, a deleted group is marked and archived, and a plan is deleted with what
//! is only its own once nothing else refers to it.

use std::sync::Arc;
use troupe_core::conversation::{Author, SessionKind};
use troupe_core::plan::{PlanSpec, RevisionCause};
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::work_item::WorkMode;
use troupe_core::{ManualClock, PlanId, SessionId, SessionMessageId};
use troupe_store::{
    FilingSource, NewBot, NewFiling, NewLine, NewPlan, NewThread, NewWorkItem, Store,
};

fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

/// Two conversations of one Bot, a line in each, and a job at home in the first.
fn world(
    s: &Store,
) -> (
    SessionId,
    SessionId,
    SessionMessageId,
    SessionMessageId,
    PlanId,
) {
    s.write(|tx| {
        let bot = tx.create_bot(&NewBot {
            name: "Alpha".into(),
            persona: String::new(),
            endpoint: None,
            scripted: true,
        })?;
        let home = tx.create_session(SessionKind::Group, "team", &[bot.id])?;
        let other = tx.create_session(SessionKind::Direct, "alpha", &[bot.id])?;
        let here = tx.insert_line(&NewLine::plain(home.id, Author::User, "make a logo".into()))?;
        let there = tx.insert_line(&NewLine::plain(other.id, Author::User, "bluer".into()))?;
        let plan = tx.create_plan(
            &NewPlan {
                name: "make a logo".into(),
                original_request: "make a logo".into(),
                home_session_id: home.id,
                opening_line_id: Some(here.id),
                spec: PlanSpec::default(),
                cause: RevisionCause::Message(here.id),
            },
            |id| format!("/work/jobs/{}", id.0),
        )?;
        let thread = tx.create_thread(&NewThread {
            workspace_root: None,
            parent_id: None,
            title: "job".into(),
            agent: AgentBinding::new("Alpha", ""),
            workspace: "/work/jobs".into(),
            interaction: Interaction::Interactive,
        })?;
        tx.create_work_item(&NewWorkItem {
            bot_id: bot.id,
            mode: WorkMode::Work,
            plan_id: Some(plan.id),
            session_id: None,
            thread_id: thread.id,
            speaks_in: None,
        })?;
        Ok((home.id, other.id, here.id, there.id, plan.id))
    })
    .unwrap()
}

fn file(s: &Store, line: SessionMessageId, plan: PlanId) {
    s.write(|tx| {
        tx.file_line(&NewFiling {
            message_id: line,
            plan_id: plan,
            ticket_id: None,
            part_id: None,
            source: FilingSource::Reader,
            filed_by: "test".into(),
            locked: false,
            primary: true,
        })
    })
    .unwrap();
}

#[test]
fn lines_are_blanked_in_place_and_a_deleted_group_is_marked_and_archived() {
    let s = store();
    let (home, other, here, there, _) = world(&s);
    let n = s.write(|tx| tx.blank_session_lines(home)).unwrap();
    assert_eq!(n, 1);
    assert_eq!(s.write(|tx| tx.blank_session_lines(home)).unwrap(), 0);
    s.read(|tx| {
        assert_eq!(tx.line(here)?.body, "");
        assert_eq!(tx.line(there)?.body, "bluer");
        Ok(())
    })
    .unwrap();

    s.write(|tx| tx.mark_session_cleared(home)).unwrap();
    assert_eq!(
        s.read(|tx| tx.session_cleared_at(home)).unwrap(),
        Some(1_000)
    );
    s.write(|tx| tx.mark_session_deleted(home)).unwrap();
    s.read(|tx| {
        assert!(tx.session_deleted(home)?);
        assert!(!tx.session_deleted(other)?);
        assert!(tx.session(home)?.archived);
        assert!(tx.sessions(50)?.iter().all(|x| x.id != home));
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_plan_belongs_elsewhere_by_a_line_filed_there_and_is_deleted_with_its_own_rows() {
    let s = store();
    let (home, _, here, there, plan) = world(&s);
    file(&s, here, plan);
    // Its own conversation's line, its work item and its revisions are only its own.
    assert!(!s.read(|tx| tx.plan_belongs_elsewhere(plan, home)).unwrap());
    assert!(!s.read(|tx| tx.hold_rows_name_plan(plan)).unwrap());
    file(&s, there, plan);
    assert!(s.read(|tx| tx.plan_belongs_elsewhere(plan, home)).unwrap());

    let thread = s
        .read(|tx| Ok(tx.work_items_of_plan(plan)?[0].thread_id))
        .unwrap();
    s.write(|tx| tx.delete_plan(plan)).unwrap();
    s.read(|tx| {
        assert!(tx.find_plan(plan)?.is_none());
        assert!(tx.work_items_of_plan(plan)?.is_empty());
        assert!(tx.filings_of_line(here)?.is_empty());
        assert!(tx.filings_of_line(there)?.is_empty());
        assert!(tx.plan_revisions(plan)?.is_empty());
        // The lines stay; the job's thread is archived.
        assert_eq!(tx.line(there)?.body, "bluer");
        assert!(tx.thread(thread)?.archived_at.is_some());
        assert!(tx.plans_homed_in(home)?.is_empty());
        Ok(())
    })
    .unwrap();
}

/// Buttons set on a line after it was posted (a card) are announced with the line, so a page
/// showing the conversation redraws it without a reload.
#[test]
fn setting_a_line_control_is_an_event_of_its_conversation() {
    let s = store();
    let (home, _, line, _, _) = world(&s);
    let control = serde_json::json!({"kind": "ceiling", "offer": ["carry_on"]});
    s.write(|tx| tx.set_line_control(line, &control)).unwrap();
    let events = s
        .read(|tx| tx.session_events_after(troupe_core::EventId(0), home, 1000))
        .unwrap();
    let last = events
        .iter()
        .rfind(|e| e.kind == "session_message_control")
        .expect("the control's event");
    assert_eq!(last.payload["message"]["id"], line.0);
    assert_eq!(last.payload["message"]["control"], control);
}

#[test]
fn a_lines_dispositions_are_kept_once_per_turn_and_clearing_blanks_their_why() {
    use troupe_core::ending::Disposition;
    use troupe_store::{NewLineDisposition, NewRun};
    let s = store();
    let (home, _, here, _, _) = world(&s);
    let (bot, run) = s
        .write(|tx| {
            let thread = tx.create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: "t".into(),
                agent: AgentBinding::new("a", "be brief"),
                workspace: "/tmp".into(),
                interaction: Interaction::Interactive,
            })?;
            let run = tx.start_run(&NewRun {
                thread_id: thread.id,
                trigger: "test".into(),
                owner_pid: std::process::id(),
                owner_boot: "boot".into(),
            })?;
            Ok((tx.bots(false)?[0].id, run.id))
        })
        .unwrap();
    let declined = NewLineDisposition {
        message_id: here,
        run_id: run,
        bot_id: bot,
        disposition: Disposition::Declined,
        why: Some("not for this job".into()),
        by_prose: false,
    };
    s.write(|tx| {
        tx.record_line_disposition(&declined)?;
        // The same turn again keeps the first.
        tx.record_line_disposition(&NewLineDisposition {
            disposition: Disposition::Adopted,
            ..declined.clone()
        })
    })
    .unwrap();
    let kept = s.read(|tx| tx.line_dispositions(here)).unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].disposition, "declined");
    assert_eq!(kept[0].why.as_deref(), Some("not for this job"));
    assert_eq!(
        s.write(|tx| tx.blank_session_dispositions(home)).unwrap(),
        1
    );
    let kept = s.read(|tx| tx.line_dispositions(here)).unwrap();
    assert_eq!(
        (kept[0].disposition.as_str(), kept[0].why.as_deref()),
        ("declined", None)
    );
    // A prose ending only ever answers (the database says so too).
    let refused = s.write(|tx| {
        tx.raw_execute(&format!(
            "INSERT INTO line_dispositions (message_id, run_id, bot_id, disposition, by_prose, at)
             VALUES ({}, {}, {}, 'declined', 1, 1)",
            here.0, run.0, bot.0
        ))
    });
    assert!(refused.is_err());
}
