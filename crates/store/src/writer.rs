//! Group commit: writes queued with `Store::write_async` are committed by one writer thread,
//! many callers to one SQLite transaction. Each caller's closure runs in its own SAVEPOINT, so
//! an `Err` (or a panic) undoes only that caller's changes; every caller hears back only after
//! the batch's COMMIT succeeded, and a failed COMMIT fails every caller in the batch. A commit
//! appends every page it touched to the WAL, so sharing one commit among many small writes
//! (which touch the same table and index tail pages) is most of the saving. With nothing queued
//! and the lock free, a write commits on the caller's thread, as `Store::write` would.

use crate::db::Conn;
use crate::events::{Event, EventSink};
use crate::stats::Counters;
use crate::{Result, Store, StoreError, Tx};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, TryLockError};
use std::thread::{JoinHandle, ThreadId};
use troupe_core::Clock;

/// Most jobs one transaction takes; bounds how long the first caller of a batch waits.
const MAX_BATCH: usize = 128;

/// What a job tells its caller once the batch's fate is known.
type Reply = Box<dyn FnOnce(Result<(), &StoreError>) + Send>;

/// One queued write. Given the batch's transaction (or why it has none), it runs and answers
/// whether its changes stand (so its savepoint is kept or undone) and how to reply after COMMIT.
type Job = Box<dyn FnOnce(Result<&mut Tx<'_>>) -> (bool, Reply) + Send>;

/// What the caller of a queued write receives.
enum Outcome<T> {
    Done(Result<T>),
    Panicked(Box<dyn Any + Send>),
}

/// The writer thread and the queue feeding it. Dropping it closes the queue and waits for the
/// thread to finish what was queued.
pub(crate) struct Writer {
    queue: Option<Sender<Job>>,
    /// Jobs submitted whose batch has not yet taken the writer lock.
    queued: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
    thread_id: ThreadId,
}

/// What the writer thread shares with the synchronous `Store::write` path.
pub(crate) struct Shared {
    pub conn: Arc<Mutex<Conn>>,
    pub clock: Arc<dyn Clock>,
    pub sink: Arc<EventSink>,
    pub counters: Arc<Counters>,
}

impl Writer {
    pub(crate) fn start(shared: Shared) -> std::io::Result<Writer> {
        let (queue, jobs) = std::sync::mpsc::channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let taken = queued.clone();
        let thread = std::thread::Builder::new()
            .name("troupe-store-writer".into())
            .spawn(move || run(shared, jobs, &taken))?;
        Ok(Writer {
            queue: Some(queue),
            queued,
            thread_id: thread.thread().id(),
            thread: Some(thread),
        })
    }
}

impl Writer {
    /// Jobs submitted whose batch has not yet taken the writer lock.
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.queue.take();
        // A job can hold the last handle on the store, so the writer itself may be dropping it.
        if std::thread::current().id() != self.thread_id
            && let Some(t) = self.thread.take()
        {
            let _ = t.join();
        }
    }
}

impl Store {
    /// Writes queued with [`Store::write_async`] that wait for the writer (a batch not yet
    /// begun): what a caller can wait on to know its writes will share a commit.
    pub fn pending_writes(&self) -> usize {
        self.inner.writer.get().map_or(0, Writer::queued)
    }

    /// Run `f` in a write transaction shared with other queued writes, committed by the store's
    /// writer thread; resolves only once that transaction has committed (an `Err` from `f`
    /// undoes only `f`'s changes). Events `f` appends are published after commit, in id order.
    /// A panic in `f` is resumed in the caller. Dropping the future does not withdraw a write
    /// already queued: it may still commit, unobserved.
    pub async fn write_async<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let writer = self.writer()?;
        // Nothing queued and nobody writing: a batch would hold this write alone, so commit it
        // here and spare the two thread switches (a lone run's step would pay them twice).
        if writer.queued.load(Ordering::Acquire) == 0 {
            match self.inner.conn.try_lock() {
                Ok(conn) => return self.write_locked(conn, f),
                Err(TryLockError::Poisoned(p)) => return self.write_locked(p.into_inner(), f),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        let (job, answered) = job(f);
        writer.submit(job)?;
        match answered.await {
            Ok(Outcome::Done(result)) => result,
            Ok(Outcome::Panicked(panic)) => resume_unwind(panic),
            Err(_) => Err(StoreError::Conflict(
                "the store's writer stopped before this write was answered".into(),
            )),
        }
    }
}

/// Wrap a caller's closure as a job, and the receiver its outcome arrives on.
fn job<T: Send + 'static>(
    f: impl FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
) -> (Job, tokio::sync::oneshot::Receiver<Outcome<T>>) {
    let (answer, answered) = tokio::sync::oneshot::channel::<Outcome<T>>();
    let job: Job = Box::new(move |tx| {
        let ran = match tx {
            Err(e) => Ok(Err(e)),
            Ok(tx) => catch_unwind(AssertUnwindSafe(|| f(tx))),
        };
        let kept = matches!(ran, Ok(Ok(_)));
        let reply: Reply = Box::new(move |committed| {
            let outcome = match (ran, committed) {
                (Err(panic), _) => Outcome::Panicked(panic),
                (Ok(Ok(v)), Ok(())) => Outcome::Done(Ok(v)),
                (Ok(Ok(_)), Err(e)) => Outcome::Done(Err(copy_error(e))),
                (Ok(Err(e)), _) => Outcome::Done(Err(e)),
            };
            let _ = answer.send(outcome);
        });
        (kept, reply)
    });
    (job, answered)
}

impl Writer {
    fn submit(&self, job: Job) -> Result<()> {
        self.queued.fetch_add(1, Ordering::AcqRel);
        match &self.queue {
            Some(q) if q.send(job).is_ok() => Ok(()),
            _ => {
                self.queued.fetch_sub(1, Ordering::AcqRel);
                Err(StoreError::Conflict(
                    "the store's writer has stopped".into(),
                ))
            }
        }
    }
}

fn run(shared: Shared, jobs: Receiver<Job>, queued: &AtomicUsize) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        // Whatever queued while the previous batch committed joins this one.
        while batch.len() < MAX_BATCH
            && let Ok(job) = jobs.try_recv()
        {
            batch.push(job);
        }
        commit_batch(&shared, batch, queued);
    }
}

fn commit_batch(shared: &Shared, batch: Vec<Job>, queued: &AtomicUsize) {
    // A panic while holding the lock leaves SQLite consistent (see `Store::lock`).
    let conn = shared.conn.lock().unwrap_or_else(|p| p.into_inner());
    // Counted as queued until now, so no caller commits inline ahead of a batch that waits.
    queued.fetch_sub(batch.len(), Ordering::AcqRel);
    let mut replies = Vec::with_capacity(batch.len());
    let mut kept = Kept::default();
    let changes = conn.changes();
    // Set once the transaction cannot be trusted: later jobs are refused, nothing commits.
    let mut failed = conn.begin_write().err();
    for job in batch {
        let reply = match &failed {
            Some(e) => job(Err(copy_error(e))).1,
            None => {
                let (reply, broken) = run_job(&conn, shared, job, &mut kept);
                failed = broken;
                reply
            }
        };
        replies.push(reply);
    }
    if failed.is_none() {
        failed = crate::events::flush_pending(&conn, &mut kept.events).err();
    }
    let changed = conn.changes() != changes;
    let outcome = match failed {
        Some(e) => Err(e),
        None => conn.step("COMMIT"),
    };
    if outcome.is_err() && conn.in_transaction() {
        let _ = conn.step("ROLLBACK");
    }
    if outcome.is_ok() {
        shared.counters.committed(kept.jobs, changed);
        // Published while the writer lock is still held, so subscribers see ids in order.
        shared.sink.publish(kept.events);
        shared.sink.publish_control(kept.controls);
    }
    drop(conn);
    for reply in replies {
        reply(outcome.as_ref().map(|_| ()));
    }
}

/// What the jobs whose changes stand leave for after the commit.
#[derive(Default)]
struct Kept {
    jobs: usize,
    events: Vec<Event>,
    controls: Vec<String>,
}

/// Run one job in its own savepoint, keeping its events and control messages (and counting it)
/// only if its changes stand. The error is set when the savepoint could not be opened or closed, which
/// fails the whole batch.
fn run_job(
    conn: &Conn,
    shared: &Shared,
    job: Job,
    kept_jobs: &mut Kept,
) -> (Reply, Option<StoreError>) {
    let step = |sql: &str| conn.step(sql);
    if let Err(e) = step("SAVEPOINT job") {
        return (job(Err(copy_error(&e))).1, Some(e));
    }
    let mut tx = Tx {
        conn,
        now: shared.clock.now_ms(),
        events: Vec::new(),
        controls: Vec::new(),
        writing: true,
    };
    let (kept, reply) = job(Ok(&mut tx));
    let closed = if kept {
        step("RELEASE job")
    } else {
        step("ROLLBACK TO job").and_then(|_| step("RELEASE job"))
    };
    match closed {
        Ok(_) => {
            if kept {
                kept_jobs.events.append(&mut tx.events);
                kept_jobs.controls.append(&mut tx.controls);
                kept_jobs.jobs += 1;
            }
            (reply, None)
        }
        Err(e) => (reply, Some(e)),
    }
}

/// A copy of a batch's failure for each of its callers.
fn copy_error(e: &StoreError) -> StoreError {
    match e {
        StoreError::Sql(e) => StoreError::Sql(e.clone()),
        other => StoreError::Conflict(format!("the batch this write joined failed: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StoreStats;
    use serde_json::json;
    use troupe_core::{EventId, ManualClock};

    fn store() -> Store {
        Store::open_in_memory(Arc::new(ManualClock::new(1_000))).unwrap()
    }

    fn shared(s: &Store) -> Shared {
        Shared {
            conn: s.inner.conn.clone(),
            clock: s.inner.clock.clone(),
            sink: s.inner.sink.clone(),
            counters: s.inner.counters.clone(),
        }
    }

    fn answer<T>(mut rx: tokio::sync::oneshot::Receiver<Outcome<T>>) -> Outcome<T> {
        rx.try_recv().expect("answered once the batch is done")
    }

    fn done<T>(rx: tokio::sync::oneshot::Receiver<Outcome<T>>) -> Result<T> {
        match answer(rx) {
            Outcome::Done(r) => r,
            Outcome::Panicked(_) => panic!("the job panicked"),
        }
    }

    fn kinds(s: &Store) -> Vec<String> {
        s.read(|tx| tx.events_after(EventId(0), None, 100))
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }

    #[test]
    fn an_err_or_a_panic_undoes_only_that_callers_part_of_the_batch() {
        let s = store();
        let mut heard = s.subscribe();
        let (a, ra) = job(|tx| tx.event("a", None, None, json!({})));
        let (b, rb) = job(|tx| {
            tx.event("b", None, None, json!({}))?;
            Err::<(), _>(StoreError::Invalid("no".into()))
        });
        let (c, rc) = job(|tx| -> Result<()> {
            tx.event("c", None, None, json!({}))?;
            panic!("a bug in a write")
        });
        let (d, rd) = job(|tx| tx.event("d", None, None, json!({})));
        commit_batch(&shared(&s), vec![a, b, c, d], &AtomicUsize::new(4));

        assert!(done(ra).is_ok() && done(rd).is_ok());
        assert!(matches!(done(rb), Err(StoreError::Invalid(_))));
        assert!(matches!(answer(rc), Outcome::Panicked(_)));
        assert_eq!(kinds(&s), ["a", "d"]);
        // Only what committed is published, in id order.
        let stored = s.read(|tx| tx.events_after(EventId(0), None, 10)).unwrap();
        assert_eq!(heard.try_recv().unwrap(), stored[0]);
        assert_eq!(heard.try_recv().unwrap(), stored[1]);
        assert!(heard.try_recv().is_err());
    }

    #[test]
    fn a_batch_is_one_commit_and_counts_only_the_writes_that_stood() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path().join("t.db"), Arc::new(ManualClock::new(1))).unwrap();
        let (a, ra) = job(|tx| tx.event("a", None, None, json!({})));
        let (b, rb) = job(|tx| {
            tx.event("b", None, None, json!({}))?;
            Err::<(), _>(StoreError::Invalid("no".into()))
        });
        let (c, rc) = job(|tx| tx.event("c", None, None, json!({})));
        commit_batch(&shared(&s), vec![a, b, c], &AtomicUsize::new(3));
        assert!(done(ra).is_ok() && done(rb).is_err() && done(rc).is_ok());
        let one_sync = StoreStats {
            commits: 1,
            writes: 2,
            syncs: 1,
        };
        assert_eq!(s.stats(), one_sync);
    }

    #[test]
    fn a_failed_commit_fails_every_caller_and_keeps_nothing() {
        let s = store();
        let mut heard = s.subscribe();
        let (a, ra) = job(|tx| tx.event("a", None, None, json!({})));
        // A deferred foreign key is checked at COMMIT, after every savepoint was released.
        let (b, rb) = job(|tx| {
            tx.exec("PRAGMA defer_foreign_keys = ON", &[])?;
            tx.exec(
                "INSERT INTO queued_wakes (thread_id, cause, created_at) VALUES (999, 'x', 0)",
                &[],
            )?;
            Ok(())
        });
        commit_batch(&shared(&s), vec![a, b], &AtomicUsize::new(2));

        assert!(matches!(done(ra), Err(StoreError::Sql(_))));
        assert!(matches!(done(rb), Err(StoreError::Sql(_))));
        assert!(kinds(&s).is_empty());
        assert_eq!(s.stats(), StoreStats::default(), "nothing committed");
        assert!(heard.try_recv().is_err());
        // The connection is out of the failed transaction and takes the next write.
        s.write(|tx| tx.event("after", None, None, json!({})))
            .unwrap();
        assert_eq!(kinds(&s), ["after"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_queued_writes_are_committed_when_they_return() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path().join("t.db"), Arc::new(ManualClock::new(1))).unwrap();
        let mut heard = s.subscribe();
        let mut tasks = Vec::new();
        for i in 0..200 {
            let s = s.clone();
            tasks.push(tokio::spawn(async move {
                let kind = format!("e{i}");
                let k = kind.clone();
                s.write_async(move |tx| tx.event(&k, None, None, json!({})))
                    .await
                    .unwrap();
                // Committed: a fresh read snapshot sees it.
                let seen = s
                    .read(|tx| tx.events_after(EventId(0), None, 1000))
                    .unwrap();
                assert!(seen.iter().any(|e| e.kind == kind));
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let mut last = 0;
        for _ in 0..200 {
            let e = heard.recv().await.unwrap();
            assert!(e.id.0 > last, "published in id order");
            last = e.id.0;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panic_in_a_queued_write_reaches_its_caller() {
        let s = store();
        // A synchronous write holds the writer lock, so the next write must queue.
        let (started, has_started) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let holder = s.clone();
        let held = std::thread::spawn(move || {
            holder.write(|_| {
                started.send(()).unwrap();
                released.recv().unwrap();
                Ok(())
            })
        });
        has_started.recv().unwrap();
        let writer = s.clone();
        let task = tokio::spawn(async move {
            writer
                .write_async(|_| -> Result<()> {
                    let on = std::thread::current().name().map(str::to_string);
                    panic!("a bug in a queued write, on {on:?}")
                })
                .await
        });
        // Queued, and counted so until its batch gets the lock.
        while s
            .inner
            .writer
            .get()
            .is_none_or(|w| w.queued.load(Ordering::Acquire) == 0)
        {
            tokio::task::yield_now().await;
        }
        release.send(()).unwrap();
        held.join().unwrap().unwrap();
        let panic = task.await.unwrap_err().into_panic();
        assert_eq!(
            panic.downcast_ref::<String>().map(String::as_str),
            Some("a bug in a queued write, on Some(\"troupe-store-writer\")")
        );
        // The writer goes on.
        s.write_async(|tx| tx.event("after", None, None, json!({})))
            .await
            .unwrap();
    }
}
