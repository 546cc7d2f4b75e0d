//! Waits and reads on Bots' work: their work items, how their runs ended, what they said.

use super::World;
use std::time::Duration;
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, SessionId, ThreadId};
use troupe_store::{Event, WorkItemRecord};

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
