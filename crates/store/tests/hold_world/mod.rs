//! What the store's hold tests share: a store on a clock the test moves, a small world of
//! Bots, conversations, jobs and work items, live runs, and raw SQL with its refusals.
#![allow(dead_code, unused_imports)]

pub use std::sync::Arc;
pub use troupe_core::conversation::{Author, SessionKind};
pub use troupe_core::hold::{
    HoldEffect, HoldScope, HoldSource, HoldStatus, HoldTarget, LiftedBy, StoppedTurn, TurnFacts,
};
pub use troupe_core::plan::{PlanSpec, RevisionCause};
pub use troupe_core::thread::{AgentBinding, Interaction};
pub use troupe_core::work_item::WorkMode;
pub use troupe_core::{
    BotId, HoldId, ManualClock, PlanId, RunId, SessionId, SessionMessageId, ThreadId, TicketId,
};
pub use troupe_store::{
    CoveredTurn, NewBot, NewHold, NewLine, NewPlan, NewRun, NewSegment, NewThread, NewWorkItem,
    SqlErrorKind, Store, StoreError, Tx, WorkItemRecord,
};

pub fn store() -> (Store, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000));
    (troupe_store::testing::open(clock.clone()), clock)
}

pub fn thread(tx: &mut Tx<'_>) -> ThreadId {
    tx.create_thread(&NewThread {
        workspace_root: None,
        parent_id: None,
        title: "t".into(),
        agent: AgentBinding::new("a", "be brief"),
        workspace: "/tmp".into(),
        interaction: Interaction::Interactive,
    })
    .unwrap()
    .id
}

/// Bots Ada and Bo; a group (the launch job's home) and Ada's direct (the ad job's home); each
/// Bot's item on the launch job, Ada's on the ad job and on launch ticket 5, Ada's desk in the
/// group.
pub struct World {
    pub ada: BotId,
    pub bo: BotId,
    pub group: SessionId,
    pub direct: SessionId,
    pub launch: PlanId,
    pub ad: PlanId,
    pub ada_launch: WorkItemRecord,
    pub bo_launch: WorkItemRecord,
    pub ada_ad: WorkItemRecord,
    pub ada_ticket: WorkItemRecord,
    pub ada_desk: WorkItemRecord,
}

pub fn world(s: &Store) -> World {
    s.write(|tx| {
        let bot = |tx: &mut Tx<'_>, name: &str| {
            tx.create_bot(&NewBot {
                name: name.into(),
                persona: String::new(),
                endpoint: None,
                scripted: true,
            })
            .map(|b| b.id)
        };
        let ada = bot(tx, "Ada")?;
        let bo = bot(tx, "Bo")?;
        let group = tx
            .create_session(SessionKind::Group, "team", &[ada, bo])?
            .id;
        let direct = tx.create_session(SessionKind::Direct, "ada", &[ada])?.id;
        let plan = |tx: &mut Tx<'_>, name: &str, home: SessionId| {
            tx.create_plan(
                &NewPlan {
                    name: name.into(),
                    original_request: format!("do the {name}"),
                    home_session_id: home,
                    opening_line_id: None,
                    spec: PlanSpec::default(),
                    cause: RevisionCause::User,
                },
                |id| format!("/tmp/jobs/{}", id.0),
            )
            .map(|p| p.id)
        };
        let launch = plan(tx, "launch", group)?;
        let ad = plan(tx, "ad", direct)?;
        let item = |tx: &mut Tx<'_>, bot: BotId, mode: WorkMode, plan: Option<PlanId>| {
            let t = thread(tx);
            tx.create_work_item(&NewWorkItem {
                bot_id: bot,
                mode,
                plan_id: plan,
                session_id: (mode == WorkMode::Desk).then_some(group),
                thread_id: t,
                speaks_in: Some(group),
            })
        };
        let ada_launch = item(tx, ada, WorkMode::Work, Some(launch))?;
        let bo_launch = item(tx, bo, WorkMode::Work, Some(launch))?;
        let ada_ad = item(tx, ada, WorkMode::Work, Some(ad))?;
        let ada_desk = item(tx, ada, WorkMode::Desk, None)?;
        // Ada's item on the launch job's ticket 5 (no API makes tickets yet).
        let t = thread(tx);
        tx.raw_execute(&format!(
            "INSERT INTO work_items (bot_id, mode, plan_id, ticket_id, thread_id, created_at,
                 updated_at) VALUES ({}, 'work', {}, 5, {}, 1, 1)",
            ada.0, launch.0, t.0
        ))?;
        let ada_ticket = tx.work_item_of_thread(t)?.unwrap();
        Ok(World {
            ada,
            bo,
            group,
            direct,
            launch,
            ad,
            ada_launch,
            bo_launch,
            ada_ad,
            ada_ticket,
            ada_desk,
        })
    })
    .unwrap()
}

/// A running run on the item's thread (or a new thread), with no segment yet.
pub fn live_run(s: &Store, item: Option<&WorkItemRecord>) -> RunId {
    s.write(|tx| {
        let thread = match item {
            Some(i) => i.thread_id,
            None => thread(tx),
        };
        tx.start_run(&NewRun {
            thread_id: thread,
            trigger: "test".into(),
            owner_pid: 1,
            owner_boot: "b".into(),
        })
        .map(|r| r.id)
    })
    .unwrap()
}

/// The raw insert of a segment: `mode` is SQL (`'work'`, `NULL`, ...).
pub fn segment_sql(
    run: RunId,
    bot: BotId,
    session: SessionId,
    item: Option<&WorkItemRecord>,
    mode: &str,
) -> String {
    let item = item.map_or("NULL".to_string(), |i| i.id.0.to_string());
    format!(
        "INSERT INTO segments (run_id, bot_id, session_id, work_item_id, mode, created_at)
         VALUES ({}, {}, {}, {item}, {mode}, 1)",
        run.0, bot.0, session.0
    )
}

pub fn raw(s: &Store, sql: &str) -> Result<usize, StoreError> {
    s.write(|tx| tx.raw_execute(sql))
}

pub fn assert_held(r: Result<usize, StoreError>, what: &str) {
    match r {
        Err(StoreError::Held) => {}
        other => panic!("{what}: expected the held refusal, got {other:?}"),
    }
}

/// A constraint's refusal naming `rule`.
pub fn assert_refused(r: Result<usize, StoreError>, rule: &str, what: &str) {
    match r {
        Err(StoreError::Sql(e)) if e.kind == SqlErrorKind::Constraint => {
            assert!(e.message.contains(rule), "{what}: {}", e.message)
        }
        other => panic!("{what}: expected {rule}, got {other:?}"),
    }
}

pub fn new_hold(scope: HoldScope) -> NewHold {
    NewHold {
        scope,
        targets: vec![],
        source: HoldSource::UserButton,
        source_message_id: None,
        session_id: None,
        lift_on_next_user_message: true,
        cancel: false,
        composer_stop: false,
        effect: HoldEffect::default(),
    }
}

pub fn make(s: &Store, h: NewHold) -> HoldId {
    s.write(|tx| tx.insert_hold(&h)).unwrap().id
}

pub fn lift(s: &Store, id: HoldId) {
    s.write(|tx| tx.lift_hold(id, LiftedBy::UserButton, None))
        .unwrap();
}

pub fn end(s: &Store, run: RunId) {
    raw(
        s,
        &format!(
            "UPDATE runs SET status = 'stopped', end_reason = 'stopped', ended_at = 9 WHERE id = {}",
            run.0
        ),
    )
    .unwrap();
}
