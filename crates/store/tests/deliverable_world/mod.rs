//! What the store's deliverables tests share: a store on a clock the test moves, a job in a
//! group of three Bots, raw SQL with its refusals, and tickets made by raw insert (for the
//! rule tests) or through the API.
#![allow(dead_code, unused_imports)]

pub use std::sync::Arc;
pub use troupe_core::conversation::SessionKind;
pub use troupe_core::plan::{PlanSpec, RevisionCause};
pub use troupe_core::thread::{AgentBinding, Interaction};
pub use troupe_core::{BotId, ManualClock, PlanId, RunId, SessionId, ThreadId, TicketId};
pub use troupe_store::{NewBot, NewPlan, NewRun, NewThread, SqlErrorKind, Store, StoreError, Tx};

pub fn store() -> (Store, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000));
    (troupe_store::testing::open(clock.clone()), clock)
}

/// Bots Ada, Bo and Cy in a group that is home to the job "launch" (and to a second job,
/// "ad").
pub struct World {
    pub ada: BotId,
    pub bo: BotId,
    pub cy: BotId,
    pub group: SessionId,
    pub launch: PlanId,
    pub ad: PlanId,
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
        let cy = bot(tx, "Cy")?;
        let group = tx
            .create_session(SessionKind::Group, "team", &[ada, bo, cy])?
            .id;
        let plan = |tx: &mut Tx<'_>, name: &str| {
            tx.create_plan(
                &NewPlan {
                    name: name.into(),
                    original_request: format!("do the {name}"),
                    home_session_id: group,
                    opening_line_id: None,
                    spec: PlanSpec::default(),
                    cause: RevisionCause::User,
                },
                |id| format!("/tmp/jobs/{}", id.0),
            )
            .map(|p| p.id)
        };
        let launch = plan(tx, "launch")?;
        let ad = plan(tx, "ad")?;
        Ok(World {
            ada,
            bo,
            cy,
            group,
            launch,
            ad,
        })
    })
    .unwrap()
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

/// A running run on a new thread.
pub fn live_run(s: &Store) -> RunId {
    s.write(|tx| {
        let t = thread(tx);
        tx.start_run(&NewRun {
            thread_id: t,
            trigger: "test".into(),
            owner_pid: 1,
            owner_boot: "b".into(),
        })
        .map(|r| r.id)
    })
    .unwrap()
}

pub fn raw(s: &Store, sql: &str) -> Result<usize, StoreError> {
    s.write(|tx| tx.raw_execute(sql))
}

/// How many rows of `table` meet `cond`: raw SQL has no query here, so an update that
/// writes `column` as it is counts them (no trigger of these tables acts on such a write).
pub fn count(s: &Store, table: &str, column: &str, cond: &str) -> usize {
    raw(
        s,
        &format!("UPDATE {table} SET {column} = {column} WHERE {cond}"),
    )
    .unwrap()
}

/// A constraint's refusal whose message names one of `rules`.
pub fn assert_refused(r: Result<usize, StoreError>, rules: &[&str], what: &str) {
    match r {
        Err(StoreError::Sql(e)) if e.kind == SqlErrorKind::Constraint => assert!(
            rules.iter().any(|rule| e.message.contains(rule)),
            "{what}: refused, but not by {rules:?}: {}",
            e.message
        ),
        other => panic!("{what}: expected a refusal by {rules:?}, got {other:?}"),
    }
}

/// The raw insert of ticket `number` of `plan` at `stage`/`status`, with the id
/// [`raw_id`] gives it (raw rule tests make no ticket through the API, so ids never meet).
pub fn ticket_sql(plan: PlanId, number: i64, stage: &str, status: &str) -> String {
    format!(
        "INSERT INTO tickets (id, plan_id, number, title, stage, status, folder, created_at,
                              updated_at)
         VALUES ({}, {}, {number}, 'ticket {number}', '{stage}', '{status}',
                 '/tmp/jobs/{}/{number:02}-ticket', 1, 1)",
        raw_id(plan, number),
        plan.0,
        plan.0
    )
}

pub fn raw_id(plan: PlanId, number: i64) -> i64 {
    plan.0 * 1000 + number
}

/// A ticket made by raw insert, at to_do; answers its id.
pub fn raw_ticket(s: &Store, plan: PlanId, number: i64) -> i64 {
    raw(s, &ticket_sql(plan, number, "to_do", "to_do")).unwrap();
    raw_id(plan, number)
}

pub use troupe_core::ticket::{PartStage, StageSource, TicketStage, TicketStatus};
pub use troupe_core::{CheckId, EventId, PartId, SubmissionId};
pub use troupe_store::{BoardPatch, Layout, LayoutItem, TicketRecord, TicketRef};

/// A layout item titled `title`, owned by `owner`.
pub fn item(title: &str, owner: BotId) -> LayoutItem {
    LayoutItem {
        title: title.into(),
        owner_bot_id: Some(owner),
        ..LayoutItem::default()
    }
}

/// The folder a test gives ticket `n`.
pub fn folder(plan: PlanId) -> impl Fn(i64, &str) -> String {
    move |n, title| format!("/tmp/jobs/{}/{n:02}-{title}", plan.0)
}

/// Lay a job out through the API.
pub fn lay_out(s: &Store, plan: PlanId, items: Vec<LayoutItem>) -> Vec<TicketRecord> {
    s.write(|tx| {
        tx.lay_out(
            plan,
            &Layout {
                items,
                drops: vec![],
            },
            folder(plan),
        )
    })
    .unwrap()
    .tickets
}

/// The events of the job's home conversation of `kind`, their payloads in order.
pub fn events(s: &Store, home: SessionId, kind: &str) -> Vec<serde_json::Value> {
    s.read(|tx| tx.session_events_after(EventId(0), home, 10_000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == kind)
        .map(|e| e.payload)
        .collect()
}
