//! What the supervisor scenarios share: a world on a clock only the test moves, a Bot's job
//! work given a task, one supervisor pass that waits for the run it starts, and reads of the
//! work log, the supervisor's lines and the tickets' verdicts.

use super::{JobWork, World, runs, runs_ended, world_on};
use std::sync::Arc;
use troupe_core::inbox::Delivery;
use troupe_core::work_item::WorkState;
use troupe_core::{BotId, ManualClock, SessionId, ThreadId, TicketId};

/// A world on a `ManualClock` at a fixed start.
pub fn start() -> (ManualClock, World) {
    let clock = ManualClock::new(1_760_000_000_000);
    let w = world_on(Arc::new(clock.clone()));
    (clock, w)
}

/// Give the work a task and wait for the run it starts to end.
pub async fn work_on(w: &World, j: &JobWork, text: &str) {
    let mut events = w.collab.store().subscribe();
    w.collab
        .engine()
        .deliver(j.thread, Delivery::user_task(text.to_string()))
        .await
        .unwrap();
    runs_ended(&mut events, j.thread, 1).await;
    w.collab.engine().wait_idle(j.thread).await;
}

/// One supervisor pass; waits for the one run it may start on `j`.
pub async fn tick(w: &World, j: &JobWork) -> serde_json::Value {
    tick_on(w, j.thread).await
}

/// One supervisor pass; when it picked something up or called someone back, waits for the one
/// run that starts on `thread`.
pub async fn tick_on(w: &World, thread: ThreadId) -> serde_json::Value {
    let mut events = w.collab.store().subscribe();
    let before = runs(w, thread);
    let report = w.collab.supervise().unwrap();
    if report
        .work
        .iter()
        .any(|a| a["pickup"]["verdict"] == "pick_up")
        || report
            .tickets
            .iter()
            .any(|t| t["verdict"]["verdict"] == "call_back")
    {
        runs_ended(&mut events, thread, 1).await;
        w.collab.engine().wait_idle(thread).await;
        assert_eq!(runs(w, thread), before + 1);
    }
    serde_json::to_value(report).unwrap()
}

pub fn state(w: &World, j: &JobWork) -> WorkState {
    w.collab
        .store()
        .read(|tx| tx.work_item(j.item))
        .unwrap()
        .state
}

/// The kinds of the job's work-log rows, oldest first.
pub fn log_kinds(w: &World, j: &JobWork) -> Vec<String> {
    w.collab
        .store()
        .read(|tx| tx.work_log_of_plan(j.plan, 0, 1000))
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect()
}

/// The controls of the supervisor's lines to the person in the conversation.
pub fn supervisor_lines(w: &World, s: SessionId) -> Vec<serde_json::Value> {
    w.collab
        .lines(s, None, 1000)
        .unwrap()
        .into_iter()
        .filter_map(|l| l.control)
        .filter(|c| c["kind"] == "supervisor")
        .collect()
}

/// A ticket of the job owned by `owner` (reviewed by `reviewer`), added as the board adds one.
pub fn add_ticket(
    w: &World,
    j: &JobWork,
    title: &str,
    owner: BotId,
    reviewer: Option<BotId>,
) -> TicketId {
    w.collab
        .add_ticket(
            j.plan,
            troupe_collab::tickets::NewTicketRequest {
                title: title.into(),
                description: None,
                done_when: None,
                owner_bot_id: Some(owner),
                reviewer_bot_id: reviewer,
            },
        )
        .unwrap();
    let tickets = w
        .collab
        .store()
        .read(|tx| tx.tickets_of_plan(j.plan))
        .unwrap();
    tickets.iter().find(|t| t.title == title).unwrap().id
}

/// Each ticket verdict of a supervisor report, in order.
pub fn verdicts(r: &serde_json::Value) -> Vec<String> {
    r["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["verdict"]["verdict"].as_str().unwrap().to_string())
        .collect()
}

/// The pick-up verdict a report gave the work item, if it gave one.
pub fn pickup_of(r: &serde_json::Value, j: &JobWork) -> serde_json::Value {
    r["work"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["work_item_id"] == serde_json::json!(j.item))
        .map(|a| a["pickup"].clone())
        .unwrap_or(serde_json::Value::Null)
}

/// A world whose store lives in `store_dir` (its own folder for scripts): two of them on one
/// directory are one Troupe before and after a restart.
pub fn world_at(store_dir: &std::path::Path, clock: Arc<dyn troupe_core::Clock>) -> World {
    use troupe_collab::{Collab, SharedRoles};
    use troupe_engine::{Engine, RoleTable};
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::testing::open_in(store_dir, clock);
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = troupe_collab::tools::ToolHost::new();
    let builder = troupe_collab::extend(Engine::builder(store, roles.clone()), &host).unwrap();
    let collab = Collab::new(builder.build(), roles, store_dir.join("workspaces"));
    host.attach(&collab);
    collab.listen_for_nods();
    World { collab, dir }
}
