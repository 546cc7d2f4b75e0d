//! What the engine holds in memory about runs in progress: their cancel tokens, the process
//! groups their commands started, and the text streaming in. None of it is state of record.

use serde::Serialize;
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Instant;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use troupe_core::{RunId, ThreadId};

pub struct LiveRun {
    pub run_id: RunId,
    pub thread_id: ThreadId,
    pub generation: i64,
    /// Why the drive started this run (`inbox`, `continue`, `release`, …).
    pub trigger: String,
    pub cancel: CancellationToken,
    pgids: Mutex<HashSet<i32>>,
    /// Text of the model call in flight; an abort keeps it as the interrupted reply.
    partial: Mutex<String>,
    /// Set when the loop has ended its run but has not yet handed over (release drive).
    ended: std::sync::atomic::AtomicBool,
    done_tx: watch::Sender<bool>,
    /// The token of the model call in flight, so it alone can be cut (`Engine::cut_step`).
    call: Mutex<Option<CancellationToken>>,
    /// Set while a hop's tool calls are being run.
    in_calls: std::sync::atomic::AtomicBool,
    /// Set by a cut between calls: the hop's calls not yet run are not run.
    postponed: std::sync::atomic::AtomicBool,
    /// The model of the current call takes pictures (`read_file` results then carry them).
    takes_pictures: std::sync::atomic::AtomicBool,
}

impl LiveRun {
    pub fn new(run_id: RunId, thread_id: ThreadId, generation: i64, trigger: &str) -> Self {
        LiveRun {
            run_id,
            thread_id,
            generation,
            trigger: trigger.to_string(),
            cancel: CancellationToken::new(),
            pgids: Mutex::new(HashSet::new()),
            partial: Mutex::new(String::new()),
            ended: std::sync::atomic::AtomicBool::new(false),
            done_tx: watch::channel(false).0,
            call: Mutex::new(None),
            in_calls: std::sync::atomic::AtomicBool::new(false),
            postponed: std::sync::atomic::AtomicBool::new(false),
            takes_pictures: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A token for the next model call: cancelled with the run, or alone by a cut.
    pub(crate) fn begin_call(&self) -> CancellationToken {
        let token = self.cancel.child_token();
        *self.call.lock().unwrap_or_else(|p| p.into_inner()) = Some(token.clone());
        self.postponed
            .store(false, std::sync::atomic::Ordering::SeqCst);
        token
    }
    pub(crate) fn end_call(&self) {
        *self.call.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    pub(crate) fn set_in_calls(&self, on: bool) {
        self.in_calls.store(on, std::sync::atomic::Ordering::SeqCst);
    }
    pub(crate) fn set_takes_pictures(&self, on: bool) {
        self.takes_pictures
            .store(on, std::sync::atomic::Ordering::SeqCst);
    }
    pub(crate) fn takes_pictures(&self) -> bool {
        self.takes_pictures
            .load(std::sync::atomic::Ordering::SeqCst)
    }
    pub(crate) fn postponed(&self) -> bool {
        self.postponed.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Cut the step in progress so what waits in the inbox is read now: the model call in
    /// flight is cancelled (the run goes on with a new call), or, between a hop's tool calls,
    /// the calls not yet run are postponed (a command running now finishes). False when there
    /// is nothing to cut.
    pub(crate) fn cut(&self) -> bool {
        if let Some(t) = self.call.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            t.cancel();
            return true;
        }
        if self.in_calls.load(std::sync::atomic::Ordering::SeqCst) {
            self.postponed
                .store(true, std::sync::atomic::Ordering::SeqCst);
            return true;
        }
        false
    }

    pub fn add_pgid(&self, pgid: i32) {
        self.pgids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(pgid);
    }
    pub fn remove_pgid(&self, pgid: i32) {
        self.pgids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&pgid);
    }
    pub fn pgids(&self) -> Vec<i32> {
        self.pgids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .copied()
            .collect()
    }
    pub fn push_partial(&self, text: &str) {
        self.partial
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_str(text);
    }
    /// The reply streamed so far, left in place (a write that records it may be retried).
    pub fn partial(&self) -> String {
        self.partial
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
    pub fn take_partial(&self) -> String {
        std::mem::take(&mut *self.partial.lock().unwrap_or_else(|p| p.into_inner()))
    }
    pub fn mark_ended(&self) {
        self.ended.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    pub fn is_ended(&self) -> bool {
        self.ended.load(std::sync::atomic::Ordering::SeqCst)
    }
    pub fn mark_done(&self) {
        self.done_tx.send_replace(true);
    }
    /// Resolves once the loop task has exited.
    pub async fn wait_done(&self) {
        let mut rx = self.done_tx.subscribe();
        let _ = rx.wait_for(|d| *d).await;
    }
}

/// Live, not stored: what streams while a model writes. Clients that miss these lose nothing;
/// the finished message arrives as a stored event.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StreamNotice {
    TextDelta {
        thread_id: ThreadId,
        run_id: RunId,
        text: String,
    },
    ToolCallStarted {
        thread_id: ThreadId,
        run_id: RunId,
        call_id: String,
        name: String,
    },
    /// A tool call's arguments still streaming in: how many characters so far. Sent on the
    /// first piece, then at most every [`WRITING_EVERY`] — a model can write one call for
    /// minutes (a long file, or the same line over and over), and "working" alone hides that.
    ToolCallWriting {
        thread_id: ThreadId,
        run_id: RunId,
        call_id: String,
        name: String,
        chars: usize,
    },
    ModelCallStarted {
        thread_id: ThreadId,
        run_id: RunId,
        model: String,
    },
    CommandStarted {
        thread_id: ThreadId,
        run_id: RunId,
        command: String,
    },
}

/// How often a tool call still being written is reported.
pub const WRITING_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Turns what a model call streams into notices for whoever watches the run, until the call's
/// stream ends.
pub(crate) async fn forward_stream(
    live: std::sync::Arc<LiveRun>,
    stream: tokio::sync::broadcast::Sender<StreamNotice>,
    mut events: tokio::sync::mpsc::UnboundedReceiver<troupe_llm::StreamEvent>,
) {
    use troupe_llm::StreamEvent;
    // Per call index: id, name, characters so far, when last reported.
    let mut writing: std::collections::HashMap<usize, (String, String, usize, Option<Instant>)> =
        std::collections::HashMap::new();
    let (thread_id, run_id) = (live.thread_id, live.run_id);
    while let Some(ev) = events.recv().await {
        match ev {
            StreamEvent::TextDelta(text) => {
                live.push_partial(&text);
                let _ = stream.send(StreamNotice::TextDelta {
                    thread_id,
                    run_id,
                    text,
                });
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                writing.insert(index, (id.clone(), name.clone(), 0, None));
                let _ = stream.send(StreamNotice::ToolCallStarted {
                    thread_id,
                    run_id,
                    call_id: id,
                    name,
                });
            }
            StreamEvent::ToolCallArgsDelta { index, delta } => {
                let Some((id, name, chars, last)) = writing.get_mut(&index) else {
                    continue;
                };
                *chars += delta.chars().count();
                if last.is_some_and(|at| at.elapsed() < WRITING_EVERY) {
                    continue;
                }
                *last = Some(Instant::now());
                let _ = stream.send(StreamNotice::ToolCallWriting {
                    thread_id,
                    run_id,
                    call_id: id.clone(),
                    name: name.clone(),
                    chars: *chars,
                });
            }
        }
    }
}

/// Threads with a live loop in this engine.
#[derive(Default)]
pub struct LiveSet {
    runs: Mutex<std::collections::HashMap<ThreadId, std::sync::Arc<LiveRun>>>,
}

impl LiveSet {
    fn map(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<ThreadId, std::sync::Arc<LiveRun>>>
    {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// The thread's run, if one is live (not merely handing over after its end).
    pub fn get(&self, t: ThreadId) -> Option<std::sync::Arc<LiveRun>> {
        self.get_any(t).filter(|r| !r.is_ended())
    }
    /// The thread's run, live or handing over; waiting on it covers the release drive too.
    pub fn get_any(&self, t: ThreadId) -> Option<std::sync::Arc<LiveRun>> {
        self.map().get(&t).cloned()
    }
    /// Any run still in the set, live or handing over.
    pub fn any(&self) -> Option<std::sync::Arc<LiveRun>> {
        self.map().values().next().cloned()
    }
    pub fn insert(&self, run: std::sync::Arc<LiveRun>) {
        self.map().insert(run.thread_id, run);
    }
    /// Remove only if the entry is still this run (a newer run may have replaced it).
    pub fn remove(&self, t: ThreadId, run: RunId) {
        let mut m = self.map();
        if m.get(&t).is_some_and(|r| r.run_id == run) {
            m.remove(&t);
        }
    }
    /// Live runs (those handing over are not counted).
    pub fn len(&self) -> usize {
        self.map().values().filter(|r| !r.is_ended()).count()
    }
    pub fn all(&self) -> Vec<std::sync::Arc<LiveRun>> {
        self.map()
            .values()
            .filter(|r| !r.is_ended())
            .cloned()
            .collect()
    }
}
