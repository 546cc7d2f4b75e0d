//! The durable store: SQLite (WAL, one writer), migrations applied at open, and every state
//! change in one transaction that also appends its events.

mod agenda;
mod blueprint_loops;
mod conversations;
mod durability;
mod effects;
mod error;
mod events;
mod inbox;
mod loop_guards;
mod messages;
mod migrations;
mod notes;
mod records;
mod rows;
mod runs;
mod stats;
mod tasks;
mod threads;
mod usage;
mod workflow_terminals;
mod writer;

pub use agenda::{AgendaEdit, AgendaId, AgendaItem, AgendaStatus, NewAgendaItem};
pub use blueprint_loops::{LoopBinding, NewBlueprintLoop};
pub use conversations::{NewBot, NewLine};
pub use durability::{Durability, OpenOptions, UnknownDurability};
pub use effects::{EffectBegin, EffectRecord};
pub use error::StoreError;
pub use events::{Event, EventSink};
pub use inbox::Delivered;
pub use loop_guards::LoopGuard;
pub use messages::{NewMessage, RootTail};
pub use notes::{NewNote, Note, NoteEdit, NoteEditOutcome, NoteId, NoteKind};
pub use records::{CommandRecord, ModelCallRecord, RefusalRecord, ToolCallRecord};
pub use runs::{NewRun, RunRecord};
pub use stats::StoreStats;
pub use tasks::{NewTask, TaskEdit, TaskId, TaskRecord, TaskRole, TaskStatus};
pub use threads::NewThread;
pub use usage::UsageTotals;
pub use workflow_terminals::{NewWorkflowTerminal, WorkflowTerminal};

use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use troupe_core::Clock;

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A handle on one database file. Cheap to clone; one connection behind a mutex is the single writer.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    /// Shared with the writer thread, which takes it for each batch of queued writes.
    conn: Arc<Mutex<Connection>>,
    /// Started by the first `write_async`.
    writer: OnceLock<writer::Writer>,
    /// Idle read-only connections (file databases only): reads run beside the writer in WAL
    /// mode instead of queueing behind it.
    readers: Option<Mutex<Vec<Connection>>>,
    path: PathBuf,
    durability: Durability,
    clock: Arc<dyn Clock>,
    sink: Arc<EventSink>,
    /// What the commits cost; shared with the writer thread.
    counters: Arc<stats::Counters>,
}

impl Store {
    /// Open (creating if needed) the database at `path` and bring its schema up to date, with
    /// [`Durability::Full`]. A file that is not a Troupe database, or was written by a newer
    /// Troupe, is refused.
    pub fn open(path: impl AsRef<Path>, clock: Arc<dyn Clock>) -> Result<Store> {
        Self::open_with(path, clock, OpenOptions::default())
    }

    /// [`Store::open`] with explicit options.
    pub fn open_with(
        path: impl AsRef<Path>,
        clock: Arc<dyn Clock>,
        options: OpenOptions,
    ) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                path: path.clone(),
                detail: format!("cannot create its directory: {e}"),
            })?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| StoreError::Open {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        let mut store = Self::from_connection(conn, path, clock, options.durability)?;
        if let Some(inner) = Arc::get_mut(&mut store.inner) {
            inner.readers = Some(Mutex::new(Vec::new()));
        }
        Ok(store)
    }

    /// A private in-memory database, for tests.
    pub fn open_in_memory(clock: Arc<dyn Clock>) -> Result<Store> {
        let conn = Connection::open_in_memory().map_err(|e| StoreError::Open {
            path: ":memory:".into(),
            detail: e.to_string(),
        })?;
        Self::from_connection(conn, ":memory:".into(), clock, Durability::default())
    }

    fn from_connection(
        mut conn: Connection,
        path: PathBuf,
        clock: Arc<dyn Clock>,
        durability: Durability,
    ) -> Result<Store> {
        let corrupt = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            detail: format!("not a usable Troupe database ({e})"),
        };
        conn.set_prepared_statement_cache_capacity(256);
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(corrupt)?;
        let syncs_at_commit = retry_busy(|| configure(&conn, durability)).map_err(corrupt)?;
        migrations::apply(&mut conn, &path)?;
        Ok(Store {
            inner: Arc::new(Inner {
                conn: Arc::new(Mutex::new(conn)),
                writer: OnceLock::new(),
                readers: None,
                path,
                durability,
                clock,
                sink: Arc::new(EventSink::new()),
                counters: Arc::new(stats::Counters::new(syncs_at_commit)),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The durability the store was opened with.
    pub fn durability(&self) -> Durability {
        self.inner.durability
    }

    /// `PRAGMA synchronous` as the writer connection reports it (2 = FULL, 1 = NORMAL): what
    /// SQLite really does at each commit, whatever was asked.
    pub fn synchronous(&self) -> Result<i64> {
        let conn = self.lock();
        Ok(conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?)
    }

    /// What the write transactions committed since the store was opened cost: commits, the
    /// writes they carried and the WAL syncs they made (see [`StoreStats`] for what is not
    /// counted).
    pub fn stats(&self) -> StoreStats {
        self.inner.counters.read()
    }

    pub fn now(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    pub fn clock(&self) -> Arc<dyn Clock> {
        self.inner.clock.clone()
    }

    /// Events committed from now on, as they commit.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Event> {
        self.inner.sink.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves SQLite consistent (the transaction rolls back
        // on drop), so a poisoned lock is safe to take over.
        self.inner.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` in one write transaction. Events it appends are published after commit.
    pub fn write<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        self.write_locked(self.lock(), f)
    }

    /// `write` once the writer lock is held; the lock is released when it returns.
    fn write_locked<T>(
        &self,
        mut conn: MutexGuard<'_, Connection>,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        let changes = conn.total_changes();
        let txn = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let mut tx = Tx {
            conn: &txn,
            now: self.inner.clock.now_ms(),
            events: Vec::new(),
        };
        let out = f(&mut tx)?;
        let events = std::mem::take(&mut tx.events);
        let changed = txn.total_changes() != changes;
        txn.commit().map_err(StoreError::from)?;
        self.inner.counters.committed(1, changed);
        // Published while the writer lock is still held, so subscribers see ids in order.
        self.inner.sink.publish(events);
        drop(conn);
        Ok(out)
    }

    /// Run `f` against a consistent read snapshot of what is committed.
    pub fn read<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        let Some(pool) = &self.inner.readers else {
            let mut conn = self.lock();
            return Self::read_on(&mut conn, self.inner.clock.now_ms(), f);
        };
        let idle = pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match idle {
            Some(c) => c,
            None => self.open_reader()?,
        };
        let out = Self::read_on(&mut conn, self.inner.clock.now_ms(), f);
        pool.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
        out
    }

    fn writer(&self) -> Result<&writer::Writer> {
        if let Some(w) = self.inner.writer.get() {
            return Ok(w);
        }
        let started = writer::Writer::start(writer::Shared {
            conn: self.inner.conn.clone(),
            clock: self.inner.clock.clone(),
            sink: self.inner.sink.clone(),
            counters: self.inner.counters.clone(),
        })
        .map_err(|e| StoreError::Conflict(format!("cannot start the store's writer: {e}")))?;
        // Two first callers may race: the loser's writer is dropped unused.
        Ok(self.inner.writer.get_or_init(|| started))
    }

    fn open_reader(&self) -> Result<Connection> {
        let path = &self.inner.path;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let err = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            detail: format!("cannot open a reader: {e}"),
        };
        let conn = Connection::open_with_flags(path, flags).map_err(err)?;
        conn.set_prepared_statement_cache_capacity(256);
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        Ok(conn)
    }

    fn read_on<T>(
        conn: &mut Connection,
        now: i64,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        let txn = conn.transaction().map_err(StoreError::from)?;
        let mut tx = Tx {
            conn: &txn,
            now,
            events: Vec::new(),
        };
        let out = f(&mut tx)?;
        debug_assert!(tx.events.is_empty(), "a read appended events");
        Ok(out)
    }
}

/// One open transaction. All store operations are methods on it, so a caller composes
/// several state changes atomically.
pub struct Tx<'a> {
    /// Inside a transaction (or a savepoint of one) for the Tx's whole life.
    conn: &'a rusqlite::Connection,
    now: i64,
    events: Vec<Event>,
}

impl Tx<'_> {
    /// The clock reading taken when the transaction began.
    pub fn now(&self) -> i64 {
        self.now
    }
    pub(crate) fn conn(&self) -> &rusqlite::Connection {
        self.conn
    }
    /// Execute through the statement cache: hot statements are parsed once per connection.
    pub(crate) fn exec(&self, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
        self.conn.prepare_cached(sql)?.execute(params)
    }
    pub(crate) fn query_one<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.conn.prepare_cached(sql)?.query_row(params, f)
    }
}

/// Set the connection up; answers whether each commit that writes frames syncs the WAL.
fn configure(conn: &Connection, durability: Durability) -> rusqlite::Result<bool> {
    // Small pages: each commit appends every page it touched to the WAL, and the kernel's
    // transactions touch many pages with a few rows each. Only takes effect on a new file.
    conn.execute_batch("PRAGMA page_size = 1024;")?;
    // journal_mode answers with a row, so it is read rather than executed.
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    conn.execute_batch(
        "PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY; \
         PRAGMA wal_autocheckpoint = 8000;",
    )?;
    // Only the writer's setting matters: readers never commit.
    conn.execute_batch(durability.pragma())?;
    // In WAL mode FULL (or EXTRA) syncs the WAL once per commit that wrote frames; an
    // in-memory database answers "memory" and never syncs.
    let level: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?;
    Ok(mode.eq_ignore_ascii_case("wal") && level >= 2)
}

/// Run `f` again while SQLite answers "busy" or "locked", for up to five seconds. Switching a
/// brand-new file to WAL takes an exclusive lock that SQLite does not wait for with the busy
/// handler, so two processes opening the same new file at once can see SQLITE_BUSY at once.
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && std::time::Instant::now() < deadline =>
            {
                // A backoff, not a synchronization: the other opener holds a file lock.
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}
