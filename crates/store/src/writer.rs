//! Group commit: writes queued with `Store::write_async` are committed by writer threads,
//! many callers to one transaction. Each caller's closure runs in its own SAVEPOINT, so an `Err`
//! (or a panic) undoes only that caller's changes; every caller hears back only after the batch's
//! COMMIT succeeded, and a failed COMMIT fails every caller in the batch. A commit appends every
//! page it touched to the WAL, so sharing one commit among many small writes (which touch the
//! same table and index tail pages) is most of the saving. With nothing queued and the lock free,
//! a write commits on the caller's thread, as `Store::write` would.
//!
//! A caller of `Store::write` waits on the same lock, and is let in first: it is a request
//! or a routing step someone waits on, where a batch is background work that already shares
//! its commit. Without that, the writer thread, having more queued, took the lock back before
//! the woken caller could run, and a caller could wait out several batches in a row. The
//! writer yields to waiting callers only for a bounded number of turns, so batches never
//! starve.
//!
//! SQLite has one writer thread (it has one writer). PostgreSQL has several, each with its own
//! connection, taking batches from the same queue: there a statement is a round trip, and
//! overlapping the round trips of several batches is what buys throughput. Batching unrelated
//! writes into one transaction lets two batches take row locks in opposite orders, which
//! PostgreSQL breaks by cancelling one; a batch cancelled that way (or by a serialization
//! failure) is rolled back and run again, closures and all, which is why queued closures are
//! `FnMut`: they must be able to run more than once, with no effect outside the transaction.

use crate::db::Conn;
use crate::events::{Event, EventSink};
use crate::stats::Counters;
use crate::{Result, SqlErrorKind, Store, StoreError, Tx};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, TryLockError};
use std::thread::{JoinHandle, ThreadId};
use troupe_core::Clock;

/// Most jobs one transaction takes; bounds how long the first caller of a batch waits.
const MAX_BATCH: usize = 128;
/// How many times a batch runs before a deadlock or serialization failure is its answer.
const MAX_ATTEMPTS: u32 = 5;
/// How many turns the writer thread gives waiting `Store::write` callers before it takes the
/// lock for its next batch anyway.
const MAX_YIELDS: u32 = 200;

/// What a caller's closure produced in the latest attempt: its value or error, or its panic.
type Ran<T> = std::thread::Result<Result<T>>;

/// Tells a job's caller how its batch ended.
type Answer = Box<dyn FnOnce(Result<(), &StoreError>) + Send>;

/// One queued write. `attempt` runs the caller's closure in the batch's transaction and says
/// whether its changes stand; it runs again if the batch is retried. `answer` tells the caller,
/// once, how the batch ended.
pub(crate) struct Job {
    attempt: Box<dyn FnMut(&mut Tx<'_>) -> Attempt + Send>,
    answer: Answer,
}

/// How one run of a job went, as far as the batch is concerned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Attempt {
    Kept,
    /// Its own error or panic: only its savepoint is undone.
    Undone,
    /// The database cancelled it (deadlock, serialization): the whole batch must run again.
    Cancelled,
    /// The connection was lost under it: the whole batch must run again, on a new one.
    Lost,
}

/// What the caller of a queued write receives.
enum Outcome<T> {
    Done(Result<T>),
    Panicked(Box<dyn Any + Send>),
}

/// The writer threads and the queue feeding them. Dropping it closes the queue and waits for
/// the threads to finish what was queued.
pub(crate) struct Writer {
    queue: Option<Sender<Job>>,
    /// Jobs submitted whose batch has not yet taken a writer's lock.
    queued: Arc<AtomicUsize>,
    threads: Vec<JoinHandle<()>>,
    thread_ids: Vec<ThreadId>,
}

/// What a writer thread shares with the synchronous `Store::write` path.
pub(crate) struct Shared {
    pub conn: Arc<Mutex<Conn>>,
    pub clock: Arc<dyn Clock>,
    pub sink: Arc<EventSink>,
    pub counters: Arc<Counters>,
    /// `Store::write` callers waiting for `conn` (see the module's note).
    pub callers_waiting: Arc<AtomicUsize>,
}

/// Counts a `Store::write` caller as waiting for the writer lock while it lives.
pub(crate) struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    pub fn on(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Writer {
    /// One writer on `shared.conn`, and one more for each of `more` (their own connections).
    pub(crate) fn start(shared: Shared, more: Vec<Conn>) -> std::io::Result<Writer> {
        let (queue, jobs) = std::sync::mpsc::channel();
        let jobs = Arc::new(Mutex::new(jobs));
        let queued = Arc::new(AtomicUsize::new(0));
        let mut conns = vec![shared.conn.clone()];
        conns.extend(more.into_iter().map(|c| Arc::new(Mutex::new(c))));
        let mut threads = Vec::with_capacity(conns.len());
        for (i, conn) in conns.into_iter().enumerate() {
            let worker = Shared {
                conn,
                clock: shared.clock.clone(),
                sink: shared.sink.clone(),
                counters: shared.counters.clone(),
                // Only the first writer shares its connection with `Store::write`.
                callers_waiting: if i == 0 {
                    shared.callers_waiting.clone()
                } else {
                    Arc::default()
                },
            };
            let (jobs, taken) = (jobs.clone(), queued.clone());
            threads.push(
                std::thread::Builder::new()
                    .name(format!("troupe-store-writer-{i}"))
                    .spawn(move || run(worker, &jobs, &taken))?,
            );
        }
        Ok(Writer {
            queue: Some(queue),
            queued,
            thread_ids: threads.iter().map(|t| t.thread().id()).collect(),
            threads,
        })
    }

    /// Jobs submitted whose batch has not yet taken a writer's lock.
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

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

impl Drop for Writer {
    fn drop(&mut self) {
        self.queue.take();
        // A job can hold the last handle on the store, so a writer itself may be dropping it.
        let me = std::thread::current().id();
        if self.thread_ids.contains(&me) {
            return;
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Store {
    /// Writes queued with [`Store::write_async`] that wait for a writer (a batch not yet
    /// begun): what a caller can wait on to know its writes will share a commit.
    pub fn pending_writes(&self) -> usize {
        self.inner.writer.get().map_or(0, Writer::queued)
    }

    /// Run `f` in a write transaction shared with other queued writes, committed by one of the
    /// store's writer threads; resolves only once that transaction has committed (an `Err` from
    /// `f` undoes only `f`'s changes). Events `f` appends are published after commit, in id
    /// order. `f` may run more than once (see the module's note), so it must do nothing but
    /// work on its transaction. A panic in `f` is resumed in the caller. Dropping the future
    /// does not withdraw a write already queued: it may still commit, unobserved.
    pub async fn write_async<T: Send + 'static>(
        &self,
        mut f: impl FnMut(&mut Tx<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let writer = self.writer()?;
        // Nothing queued and nobody writing: a batch would hold this write alone, so commit it
        // here and spare the two thread switches (a lone run's step would pay them twice).
        // A `Store::write` caller waiting for the lock goes first here too.
        if writer.queued.load(Ordering::Acquire) == 0
            && self.inner.callers_waiting.load(Ordering::Acquire) == 0
        {
            let conn = match self.inner.conn.try_lock() {
                Ok(conn) => Some(conn),
                Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
                Err(TryLockError::WouldBlock) => None,
            };
            if let Some(mut conn) = conn {
                conn.renew_if_broken();
                let mut attempts = 1;
                loop {
                    match self.write_locked_telling(conn, &mut f) {
                        // As a batch would be: run again when the database cancelled it, or
                        // lost the connection before COMMIT (see `commit_batch`).
                        Err((e, at_commit))
                            if (cancelled(&e) || (lost(&e) && !at_commit))
                                && attempts < MAX_ATTEMPTS =>
                        {
                            attempts += 1;
                            conn = self.lock();
                        }
                        done => return done.map_err(|(e, _)| e),
                    }
                }
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

/// Whether the database cancelled the transaction so that another could go on.
fn cancelled(e: &StoreError) -> bool {
    matches!(e, StoreError::Sql(s) if s.kind == SqlErrorKind::Busy)
}

/// Whether the connection to the database was lost.
fn lost(e: &StoreError) -> bool {
    matches!(e, StoreError::Sql(s) if s.kind == SqlErrorKind::Lost)
}

/// Wrap a caller's closure as a job, and the receiver its outcome arrives on.
fn job<T: Send + 'static>(
    mut f: impl FnMut(&mut Tx<'_>) -> Result<T> + Send + 'static,
) -> (Job, tokio::sync::oneshot::Receiver<Outcome<T>>) {
    let (tell, answered) = tokio::sync::oneshot::channel::<Outcome<T>>();
    let slot: Arc<Mutex<Option<Ran<T>>>> = Arc::new(Mutex::new(None));
    let latest = slot.clone();
    let attempt = Box::new(move |tx: &mut Tx<'_>| {
        let ran = catch_unwind(AssertUnwindSafe(|| {
            let out = f(tx);
            // What was sent without waiting answers now: its failure is this job's, never the
            // next job's.
            let settled = tx.settle();
            out.and_then(|v| settled.map(|_| v))
        }));
        if ran.is_err() {
            let _ = tx.settle();
        }
        let how = match &ran {
            Ok(Ok(_)) => Attempt::Kept,
            Ok(Err(e)) if cancelled(e) => Attempt::Cancelled,
            // A lost connection took the whole transaction with it.
            Ok(Err(e)) if lost(e) => Attempt::Lost,
            _ => Attempt::Undone,
        };
        *latest.lock().unwrap_or_else(|p| p.into_inner()) = Some(ran);
        how
    });
    let answer = Box::new(move |committed: Result<(), &StoreError>| {
        let ran = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        let outcome = match (ran, committed) {
            (Some(Err(panic)), _) => Outcome::Panicked(panic),
            (Some(Ok(Ok(v))), Ok(())) => Outcome::Done(Ok(v)),
            (Some(Ok(Err(e))), _) => Outcome::Done(Err(e)),
            (Some(Ok(Ok(_))) | None, Err(e)) => Outcome::Done(Err(copy_error(e))),
            (None, Ok(())) => Outcome::Done(Err(StoreError::Conflict(
                "the batch committed without running this write".into(),
            ))),
        };
        let _ = tell.send(outcome);
    });
    (Job { attempt, answer }, answered)
}

fn run(shared: Shared, jobs: &Mutex<Receiver<Job>>, queued: &AtomicUsize) {
    loop {
        let batch = {
            // One writer gathers at a time; the others are committing meanwhile.
            let jobs = jobs.lock().unwrap_or_else(|p| p.into_inner());
            let Ok(first) = jobs.recv() else { return };
            let mut batch = vec![first];
            // Whatever queued while the previous batch committed joins this one.
            while batch.len() < MAX_BATCH
                && let Ok(job) = jobs.try_recv()
            {
                batch.push(job);
            }
            batch
        };
        commit_batch(&shared, batch, queued);
    }
}

fn commit_batch(shared: &Shared, batch: Vec<Job>, queued: &AtomicUsize) {
    // A caller woken when the last batch let go of the lock goes first (see the module's note).
    for _ in 0..MAX_YIELDS {
        if shared.callers_waiting.load(Ordering::Acquire) == 0 {
            break;
        }
        std::thread::yield_now();
    }
    // A panic while holding the lock leaves the database consistent (see `Store::lock`).
    let mut conn = shared.conn.lock().unwrap_or_else(|p| p.into_inner());
    conn.renew_if_broken();
    // Counted as queued until now, so no caller commits inline ahead of a batch that waits.
    queued.fetch_sub(batch.len(), Ordering::AcqRel);
    let mut batch = batch;
    let mut attempts = 0;
    let (outcome, kept) = loop {
        attempts += 1;
        let (outcome, kept, at_commit) = attempt_batch(&conn, shared, &mut batch);
        match outcome {
            Err(e) if cancelled(&e) && attempts < MAX_ATTEMPTS => {
                tracing::info!(error = %e, attempts, "a batch was cancelled by the database; running it again");
            }
            // The connection went away before COMMIT was sent: nothing of the batch stands,
            // so it runs again on a new one. Lost during COMMIT, its fate is unknown, and the
            // callers hear the error rather than risk writing it twice.
            Err(e) if lost(&e) && !at_commit && attempts < MAX_ATTEMPTS => {
                tracing::warn!(error = %e, "the database connection was lost; running the batch again on a new one");
                conn.renew_if_broken();
            }
            outcome => break (outcome, kept),
        }
    };
    if outcome.is_ok() {
        shared.counters.committed(kept.jobs, kept.changed);
        // Published while the writer's lock is still held, so its subscribers see ids in order.
        shared.sink.publish(kept.events);
        shared.sink.publish_control(kept.controls);
        shared.sink.publish_wakes(kept.wakes);
    }
    drop(conn);
    for job in batch {
        (job.answer)(outcome.as_ref().map(|_| ()));
    }
}

/// What the jobs whose changes stand leave for after the commit.
#[derive(Default)]
struct Kept {
    jobs: usize,
    changed: bool,
    events: Vec<Event>,
    controls: Vec<String>,
    wakes: Vec<troupe_core::ThreadId>,
}

/// Run every job of the batch in one transaction and commit it; on failure the transaction is
/// rolled back (nothing of it stands). The flag says whether the failure was the COMMIT's own.
fn attempt_batch(conn: &Conn, shared: &Shared, batch: &mut [Job]) -> (Result<()>, Kept, bool) {
    let changes = conn.changes();
    let mut kept = Kept::default();
    // Set once the transaction cannot be trusted: later jobs are not run, nothing commits.
    let mut failed = conn.begin_write().err();
    for job in batch.iter_mut() {
        if failed.is_some() {
            break;
        }
        failed = run_job(conn, shared, job, &mut kept);
    }
    if failed.is_none() {
        failed = crate::events::flush_pending(conn, &mut kept.events).err();
    }
    kept.changed = conn.changes() != changes;
    let at_commit = failed.is_none();
    let outcome = match failed {
        Some(e) => Err(e),
        None => conn.step("COMMIT"),
    };
    if outcome.is_err() && conn.in_transaction() {
        let _ = conn.step("ROLLBACK");
    }
    (outcome, kept, at_commit)
}

/// Run one job in its own savepoint, keeping its events and control messages (and counting it)
/// only if its changes stand. An error is returned when the savepoint could not be opened or
/// closed, or the database cancelled the job: either fails (and may retry) the whole batch.
fn run_job(
    conn: &Conn,
    shared: &Shared,
    job: &mut Job,
    kept_jobs: &mut Kept,
) -> Option<StoreError> {
    let step = |sql: &str| conn.step(sql);
    if let Err(e) = step("SAVEPOINT job") {
        return Some(e);
    }
    let mut tx = Tx {
        conn,
        now: shared.clock.now_ms(),
        events: Vec::new(),
        controls: Vec::new(),
        wakes: Vec::new(),
        writing: true,
    };
    let how = (job.attempt)(&mut tx);
    let whole_batch = match how {
        Attempt::Cancelled => Some((
            SqlErrorKind::Busy,
            "the database cancelled a write of this batch to break a lock cycle",
        )),
        Attempt::Lost => Some((
            SqlErrorKind::Lost,
            "the database connection was lost during this batch",
        )),
        Attempt::Kept | Attempt::Undone => None,
    };
    if let Some((kind, message)) = whole_batch {
        return Some(StoreError::Sql(crate::SqlError {
            kind,
            message: message.into(),
        }));
    }
    let closed = if how == Attempt::Kept {
        step("RELEASE job")
    } else {
        step("ROLLBACK TO job").and_then(|_| step("RELEASE job"))
    };
    match closed {
        Ok(_) => {
            if how == Attempt::Kept {
                kept_jobs.events.append(&mut tx.events);
                kept_jobs.controls.append(&mut tx.controls);
                kept_jobs.wakes.append(&mut tx.wakes);
                kept_jobs.jobs += 1;
            }
            None
        }
        Err(e) => Some(e),
    }
}

/// A copy of a batch's failure for each of its callers.
fn copy_error(e: &StoreError) -> StoreError {
    match e {
        StoreError::Sql(e) => StoreError::Sql(e.clone()),
        StoreError::Held => StoreError::Held,
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
            callers_waiting: s.inner.callers_waiting.clone(),
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
            Some("a bug in a queued write, on Some(\"troupe-store-writer-0\")")
        );
        // The writer goes on.
        s.write_async(|tx| tx.event("after", None, None, json!({})))
            .await
            .unwrap();
    }
}
