//! Waits and reads on Bots' work: their work items, how their runs ended, what they said.

use super::World;
use std::time::Duration;
use troupe_core::conversation::{Author, SessionMessage};
use troupe_core::inbox::InboxItem;
use troupe_core::message::Message;
use troupe_core::thread::Interaction;
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, PlanId, RunId, SessionId, ThreadId, WorkItemId};
use troupe_store::{
    Event, NewLine, NewThread, NewWorkItem, RunRecord, SegmentWork, ToolCallRecord, WorkItemRecord,
};

/// Wait (at most 20 s, then fail) until `done` holds, looking again at each stored event.
pub async fn until(
    events: &mut tokio::sync::broadcast::Receiver<Event>,
    what: &str,
    mut done: impl FnMut() -> bool,
) {
    tokio::time::timeout(Duration::from_secs(20), async {
        while !done() {
            events.recv().await.unwrap();
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: not within 20 s"));
}

pub fn items(w: &World, b: BotId) -> Vec<WorkItemRecord> {
    w.collab.store().read(|tx| tx.work_items_of_bot(b)).unwrap()
}

/// The Bot's work on jobs (not its desks), oldest first.
pub fn jobs(w: &World, b: BotId) -> Vec<WorkItemRecord> {
    items(w, b)
        .into_iter()
        .filter(|i| i.mode == WorkMode::Work)
        .collect()
}

/// Its first work on a job.
pub fn job(w: &World, b: BotId) -> Option<WorkItemRecord> {
    jobs(w, b).into_iter().next()
}

/// How each run of the thread ended, oldest first.
pub fn ends(w: &World, t: ThreadId) -> Vec<String> {
    let mut runs = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(t, 100))
        .unwrap();
    runs.reverse();
    runs.into_iter()
        .filter_map(|r| r.end_reason.map(|e| e.code().to_string()))
        .collect()
}

/// How the thread's newest run ended.
pub fn last_end(w: &World, t: ThreadId) -> String {
    ends(w, t).pop().unwrap_or_default()
}

/// Every line's words in the conversation, in order.
pub fn lines_said(w: &World, s: SessionId) -> Vec<String> {
    w.collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .map(|l| l.body)
        .collect()
}

pub fn said(w: &World, s: SessionId, words: &str) -> bool {
    lines_said(w, s).iter().any(|b| b == words)
}

/// A shell call that waits until the test opens its gate (a file `go` in the folder it runs
/// in): a job's turn holds there, live, for as long as the test needs, and takes its next step
/// once the gate is opened. The loop's short pauses are the Bot's command, not the test's wait.
pub const GATE: &str = r#"{"name":"shell","arguments":{"command":"until [ -e go ]; do sleep 0.05; done; echo gate opened"}}"#;

/// Whether a gate call of the thread is running now (started, not settled).
pub fn at_gate(w: &World, t: ThreadId) -> bool {
    w.collab
        .store()
        .read(|tx| tx.effects_for_thread(t))
        .unwrap()
        .iter()
        .any(|e| e.tool == "shell" && e.settled_at.is_none())
}

/// Let the job's gate call finish.
pub fn open_gate(w: &World, plan: PlanId) {
    let folder = w.collab.plan(plan).unwrap().folder;
    std::fs::write(std::path::Path::new(&folder).join("go"), "").unwrap();
}

/// The work item's live segment.
pub fn live_run(w: &World, item: &WorkItemRecord) -> Option<RunId> {
    w.collab
        .store()
        .read(|tx| tx.live_segment_of(item.id))
        .unwrap()
}

/// The thread's runs, oldest first.
pub fn runs_of(w: &World, t: ThreadId) -> Vec<RunRecord> {
    let mut runs = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(t, 100))
        .unwrap();
    runs.reverse();
    runs
}

/// The tool calls of a run, in order.
pub fn calls_of(w: &World, run: RunId) -> Vec<ToolCallRecord> {
    w.collab.store().read(|tx| tx.tool_calls(run)).unwrap()
}

/// The segment's work: its work item, mode, frozen candidates and spent budget.
pub fn segment_of(w: &World, run: RunId) -> SegmentWork {
    w.collab
        .store()
        .read(|tx| tx.segment_work(run))
        .unwrap()
        .expect("the run is a segment")
}

/// The message of the thread that came from the delivery with this key.
pub fn delivered(w: &World, t: ThreadId, key: &str) -> Option<Message> {
    w.collab
        .store()
        .read(|tx| tx.messages(t, None, u32::MAX))
        .unwrap()
        .into_iter()
        .find(|m| m.delivery_key.as_deref() == Some(key))
}

/// The thread's unread inbox item delivered with this key.
pub fn unread(w: &World, t: ThreadId, key: &str) -> Option<InboxItem> {
    w.collab
        .store()
        .read(|tx| tx.inbox(t))
        .unwrap()
        .into_iter()
        .find(|i| i.delivery_key.as_deref() == Some(key))
}

/// The conversation's line with these words.
pub fn line_saying(w: &World, s: SessionId, words: &str) -> Option<SessionMessage> {
    w.collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .find(|l| l.body == words)
}

/// Whom a line reached, and how.
pub fn deliveries(
    w: &World,
    line: troupe_core::SessionMessageId,
) -> Vec<troupe_store::LineDelivery> {
    w.collab
        .store()
        .read(|tx| tx.line_deliveries(line))
        .unwrap()
}

/// A person's line written straight into the conversation (routed to nobody).
pub fn person_line(w: &World, s: SessionId, words: &str) -> SessionMessage {
    w.collab
        .store()
        .write(|tx| tx.insert_line(&NewLine::plain(s, Author::User, words.into())))
        .unwrap()
}

/// A job the person opened in the conversation, named from a line of theirs.
pub fn open_job(w: &World, s: SessionId, words: &str) -> troupe_collab::PlanView {
    let line = person_line(w, s, words);
    w.collab
        .open_plan(troupe_collab::OpenPlan {
            home_session_id: s,
            opening_line_id: Some(line.id),
            title: None,
            cause: troupe_core::plan::RevisionCause::User,
        })
        .unwrap()
}

/// What the segment holding the thread reads about its work with its next model call.
pub fn segment_situation(w: &World, t: ThreadId) -> String {
    use troupe_engine::extension::{ContextContributor, ContextParts};
    let thread = w.collab.store().read(|tx| tx.thread(t)).unwrap();
    let mut parts = ContextParts::default();
    troupe_collab::SegmentSituation.contribute(&thread, w.collab.store(), &mut parts);
    parts.situation.join("\n")
}

/// The states the work item was set to, oldest first, from the stored events.
pub fn states_of(w: &World, item: &WorkItemRecord) -> Vec<String> {
    w.collab
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100_000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "work_item_changed")
        .filter(|e| e.payload["work_item_id"] == serde_json::json!(item.id))
        .map(|e| e.payload["state"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A Bot's job-level work: the job, the work item and its own thread in the job's folder.
pub struct JobWork {
    pub plan: PlanId,
    pub item: WorkItemId,
    pub thread: ThreadId,
}

/// A new job of `s` (named `title`) and `bot`'s job-level work on it.
pub fn open_job_work(w: &World, s: SessionId, bot: BotId, title: &str) -> JobWork {
    let plan = w
        .collab
        .open_plan(troupe_collab::OpenPlan {
            home_session_id: s,
            opening_line_id: None,
            title: Some(title.into()),
            cause: troupe_core::plan::RevisionCause::User,
        })
        .unwrap();
    work_on_job(w, plan.id, s, bot, title)
}

/// Give the job's work a task of the person's and wait for the turn it starts to end.
pub async fn task_on_job(w: &World, job: &JobWork, text: &str) {
    let mut events = w.collab.store().subscribe();
    w.collab
        .engine()
        .deliver(job.thread, troupe_core::inbox::Delivery::user_task(text))
        .await
        .unwrap();
    super::runs_ended(&mut events, job.thread, 1).await;
    w.collab.engine().wait_idle(job.thread).await;
}

/// `bot`'s job-level work on `plan`, speaking in `s`.
pub fn work_on_job(w: &World, plan: PlanId, s: SessionId, bot: BotId, title: &str) -> JobWork {
    w.collab
        .store()
        .write(|tx| {
            let folder = tx.plan(plan)?.folder;
            std::fs::create_dir_all(&folder).unwrap();
            let thread = tx.create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: title.into(),
                agent: troupe_collab::bot_binding(&tx.bot(bot)?),
                workspace: folder,
                interaction: Interaction::Interactive,
            })?;
            let item = tx.create_work_item(&NewWorkItem {
                bot_id: bot,
                mode: WorkMode::Work,
                plan_id: Some(plan),
                session_id: None,
                thread_id: thread.id,
                speaks_in: Some(s),
            })?;
            Ok(JobWork {
                plan,
                item: item.id,
                thread: thread.id,
            })
        })
        .unwrap()
}
