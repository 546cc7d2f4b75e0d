//! The durable store: SQLite (WAL, one writer) by default or PostgreSQL, migrations applied at
//! open, and every state change in one transaction that also appends its events.

mod acceptance_check_calls;
mod agenda;
mod blueprint_loops;
mod boss_channels;
mod bot_memories;
mod bot_skills;
mod ceiling;
mod channels;
mod check_backs;
mod check_work;
mod checks;
mod clearing;
mod closing_checks;
mod conversations;
mod copy;
mod db;
mod delegations;
mod durability;
mod effects;
mod engines;
mod error;
mod events;
mod external_jobs;
mod groups;
mod holds;
mod inbox;
mod inbox_metadata;
mod job_places;
mod large_jobs;
mod lattice;
mod lessons;
mod line_dispositions;
mod loop_guards;
mod mcp;
mod memories;
mod messages;
mod migrations;
mod nodes;
mod notes;
mod notifications;
mod permissions;
mod picture_judgements;
mod plan_changes;
mod plans;
mod project_skills;
mod projects;
mod quality;
mod quality_report;
mod quotes;
mod records;
mod reflections;
mod replacement_cards;
mod requirements;
mod retrospectives;
mod review_misses;
mod reviews;
mod routines;
mod rows;
mod runs;
mod runtime_boss;
mod schema;
mod scribe_queue;
mod stats;
mod stops;
mod submission_work;
mod submissions;
mod supervisor;
mod tail;
mod tasks;
pub mod testing;
mod threads;
mod ticket_work;
mod tickets;
mod usage;
mod work_items;
mod work_log;
mod workflow_terminals;
mod writer;

pub use acceptance_check_calls::{AcceptanceCheckCall, NewAcceptanceCheckCall};
pub use agenda::{AgendaEdit, AgendaId, AgendaItem, AgendaStatus, NewAgendaItem};
pub use blueprint_loops::{LoopBinding, NewBlueprintLoop};
pub use bot_memories::{BotMemory, MemoryWriter};
pub use bot_skills::{BotSkill, CatalogEntry, SkillText, SkillWriter};
pub use ceiling::{CardState, CeilingCard, HandOverFailure, NewCeilingCard};
pub use channels::{
    ChannelChat, ChannelMessage, ChannelOutbound, NewChannelOutbound, OutboundKind, OutboundStatus,
};
pub use check_backs::{BookingScope, CheckBackFilter, CheckBackRecord, NewCheckBack};
pub use check_work::{FiledUserLine, SegmentActivity};
pub use checks::{
    CheckEdit, CheckKind, CheckRecord, CheckRunRecord, DEFAULT_TIMEOUT_SECS, MAX_TIMEOUT_SECS,
    NewCheck, NewCheckRun, OUTPUT_TAIL_MAX, RunOutcome, WordsStatus,
};
pub use conversations::{NewBot, NewLine};
pub use copy::TableSummary;
pub use delegations::{DelegationRecord, NewDelegation};
pub use durability::{Durability, OpenOptions, UnknownDurability};
pub use effects::{EffectBegin, EffectRecord};
pub use engines::{ENGINE_STEPS, ENGINES, EngineStep, FALLBACK_ENGINE, SessionEngineRecord};
pub use error::StoreError;
pub use events::{Event, EventSink, KINDS_READ_BY_KIND};
pub use external_jobs::{ExternalJobRecord, ExternalJobWaiter, JobUpdate, NewExternalJob};
pub use groups::{CONVERSATION, LineDelivery, LineReading, MemberRow, Segment};
pub use holds::{CoveredTurn, NewHold};
pub use inbox::Delivered;
pub use large_jobs::PlanDeliverables;
pub use lessons::{LessonRecord, shell_folder};
pub use line_dispositions::{LineDispositionRecord, NewLineDisposition};
pub use loop_guards::LoopGuard;
pub use mcp::{MCP_ERROR_KEPT_CHARS, MCP_RESULT_KEPT_CHARS, McpCallRecord, McpServerRow};
pub use memories::{MAX_SEARCH_WORDS, Memory, MemoryWrite};
pub use messages::{NewMessage, RootTail};
pub use migrations::{KNOWN_VERSION, SchemaStatus};
pub use nodes::{HEARTBEAT_EVERY_MS, NODE_EXPIRY_MS, NODE_RECORD_KEPT_MS, NewNode, NodeRecord};
pub use notes::{NewNote, Note, NoteEdit, NoteEditOutcome, NoteId, NoteKind};
pub use notifications::{NewNotification, Notification};
pub use permissions::{COMMUNICATION, PermissionDecision, PermissionRequest, PermissionStatus};
pub use picture_judgements::NewPictureJudgement;
pub use plan_changes::NewestStageChange;
pub use plans::{Filing, FilingSource, NewFiling, NewPlan, PlanRecord, PlanRevision};
pub use project_skills::ProjectSkill;
pub use projects::Project;
pub use quality::{
    NewQualityEvent, QualityEventRecord, QualityFilter, QualityType, cause as quality_cause,
};
pub use quality_report::{CallRecord, ModelPrice, QualityReport, QualityReportRow};
pub use quotes::{LineVersion, NewQuote, QuoteFiling, UserQuote};
pub use records::{CommandRecord, ModelCallRecord, RefusalRecord, ToolCallRecord};
pub use reflections::{ChecklistItem, NewReflection, ReflectionRecord};
pub use replacement_cards::{NewReplacementCard, ReplacementCard};
pub use requirements::{NewRequirement, RequirementChange, RequirementRecord};
pub use retrospectives::{NewRetrospective, RetrospectiveChange, RetrospectiveRecord};
pub use review_misses::ReviewMissRecord;
pub use reviews::{NewReview, ReviewRecord, ReviewResult, VerdictRecord};
pub use routines::{NewRoutine, Routine, RoutineEdit, RoutineRun, RoutineStatus};
pub use runs::{NewRun, RunRecord};
pub use runtime_boss::RuntimeBossSession;
pub use schema::SchemaOutline;
pub use scribe_queue::ScribeItem;
pub use stats::StoreStats;
pub use submission_work::TimedCall;
pub use submissions::{HandOverFiles, LineFile, NewSubmission, SubmissionRecord, SubmittedFile};
pub use supervisor::{SupervisorWake, TicketCallbacks};
pub use tasks::{NewTask, TaskEdit, TaskId, TaskRecord, TaskRole, TaskStatus};
pub use threads::NewThread;
pub use tickets::{
    BoardEdit, BoardPatch, LaidOut, Layout, LayoutItem, PartRecord, StageChange, StageMove,
    TicketRecord, TicketRef,
};
pub use usage::UsageTotals;
pub use work_items::{
    FilingReadingRecord, NewSegment, NewWorkItem, SegmentWork, WorkItemRecord, WorkQuestion,
};
pub use work_log::{WorkLogEntry, WorkRef};
pub use workflow_terminals::{NewWorkflowTerminal, WorkflowTerminal};

use db::{Conn, PgConn, PgTarget};
use rusqlite::{Connection, OpenFlags};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use troupe_core::{Clock, ThreadId};

pub use db::{Dialect, FromValue, Row, SqlError, SqlErrorKind, ToValue, Value};

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Writer threads of a PostgreSQL store (one connection each); SQLite has one. Four overlap
/// their statements' round trips: twice the steps per second of one on a 2-core machine
/// (docs/PERFORMANCE.md, "PostgreSQL and several nodes").
const PG_WRITERS: usize = 4;

/// A handle on one database. Cheap to clone; one connection behind a mutex is the single writer.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

/// Where the database lives.
#[derive(Clone, Debug)]
enum Location {
    /// A SQLite file; readers open their own connections to it.
    File,
    /// A private SQLite database in memory: every read goes through the writer's connection.
    Memory,
    Postgres(Box<PgTarget>),
}

struct Inner {
    /// Shared with the writer thread, which takes it for each batch of queued writes.
    conn: Arc<Mutex<Conn>>,
    /// Started by the first `write_async`.
    writer: OnceLock<writer::Writer>,
    /// Idle read-only connections: reads run beside the writer (SQLite in WAL mode, or
    /// PostgreSQL) instead of queueing behind it.
    readers: Option<Mutex<Vec<Conn>>>,
    location: Location,
    /// The file, or for PostgreSQL the URL without its password.
    path: PathBuf,
    durability: Durability,
    clock: Arc<dyn Clock>,
    sink: Arc<EventSink>,
    /// What the commits cost; shared with the writer thread.
    counters: Arc<stats::Counters>,
    /// `Store::write` callers waiting for the writer lock; the writer thread lets them go
    /// before its next batch.
    callers_waiting: Arc<AtomicUsize>,
}

impl Store {
    /// Open (creating if needed) the database at `path` and bring its schema up to date, with
    /// [`Durability::Full`]. A file that is not a Troupe database, or was written by a newer
    /// Troupe, is refused.
    pub fn open(path: impl AsRef<Path>, clock: Arc<dyn Clock>) -> Result<Store> {
        Self::open_with(path, clock, OpenOptions::default())
    }

    /// Open the database a URL names: `postgres://…` (or `postgresql://…`), `sqlite:///path`,
    /// or a plain path to a SQLite file.
    pub fn open_url(url: &str, clock: Arc<dyn Clock>, options: OpenOptions) -> Result<Store> {
        match DatabaseUrl::parse(url)? {
            DatabaseUrl::Sqlite(path) => Self::open_with(path, clock, options),
            DatabaseUrl::Postgres(target) => Self::open_postgres(target, clock, options),
        }
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
        Self::from_sqlite(conn, path, Location::File, clock, options.durability)
    }

    /// A private in-memory database, for tests.
    pub fn open_in_memory(clock: Arc<dyn Clock>) -> Result<Store> {
        let conn = Connection::open_in_memory().map_err(|e| StoreError::Open {
            path: ":memory:".into(),
            detail: e.to_string(),
        })?;
        Self::from_sqlite(
            conn,
            ":memory:".into(),
            Location::Memory,
            clock,
            Durability::default(),
        )
    }

    fn from_sqlite(
        conn: Connection,
        path: PathBuf,
        location: Location,
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
        db::register_functions(&conn).map_err(corrupt)?;
        let conn = Conn::Sqlite(conn);
        migrations::apply(&conn, &path)?;
        let readers = matches!(location, Location::File).then(|| Mutex::new(Vec::new()));
        Ok(Self::assemble(
            conn,
            readers,
            location,
            path,
            durability,
            clock,
            syncs_at_commit,
        ))
    }

    fn open_postgres(
        target: Box<PgTarget>,
        clock: Arc<dyn Clock>,
        options: OpenOptions,
    ) -> Result<Store> {
        let path = PathBuf::from(target.describe());
        let conn = Conn::Pg(PgConn::connect(&target)?);
        // PostgreSQL makes every commit durable (synchronous_commit on); Normal is taken as
        // "may lose the last commits", which is what synchronous_commit off means there.
        if options.durability == Durability::Normal {
            conn.batch("SET synchronous_commit = off")?;
        }
        migrations::apply(&conn, &path)?;
        let syncs = options.durability == Durability::Full;
        let tailed = target.clone();
        let store = Self::assemble(
            conn,
            Some(Mutex::new(Vec::new())),
            Location::Postgres(target),
            path,
            options.durability,
            clock,
            syncs,
        );
        store.inner.sink.tail(&tailed)?;
        Ok(store)
    }

    fn assemble(
        conn: Conn,
        readers: Option<Mutex<Vec<Conn>>>,
        location: Location,
        path: PathBuf,
        durability: Durability,
        clock: Arc<dyn Clock>,
        syncs_at_commit: bool,
    ) -> Store {
        Store {
            inner: Arc::new(Inner {
                conn: Arc::new(Mutex::new(conn)),
                writer: OnceLock::new(),
                readers,
                location,
                path,
                durability,
                clock,
                sink: Arc::new(EventSink::new()),
                counters: Arc::new(stats::Counters::new(syncs_at_commit)),
                callers_waiting: Arc::default(),
            }),
        }
    }

    /// Where the database a URL names stands, without changing it: its schema version and
    /// the migrations this Troupe would apply. A SQLite file that does not exist is an error.
    pub fn schema_status_of(url: &str) -> Result<SchemaStatus> {
        let (conn, path) = match DatabaseUrl::parse(url)? {
            DatabaseUrl::Sqlite(path) => {
                let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let conn =
                    Connection::open_with_flags(&path, flags).map_err(|e| StoreError::Open {
                        path: path.clone(),
                        detail: format!("no database can be read there ({e})"),
                    })?;
                (Conn::Sqlite(conn), path)
            }
            DatabaseUrl::Postgres(target) => {
                let path = PathBuf::from(target.describe());
                (Conn::Pg(PgConn::connect(&target)?), path)
            }
        };
        migrations::status(&conn).map_err(|e| StoreError::Open {
            path,
            detail: format!("not a usable Troupe database ({e})"),
        })
    }

    /// The SQLite file, or for PostgreSQL the database's URL without its password.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Which database this store is on.
    pub fn dialect(&self) -> Dialect {
        match self.inner.location {
            Location::Postgres(_) => Dialect::Postgres,
            _ => Dialect::Sqlite,
        }
    }

    /// The durability the store was opened with.
    pub fn durability(&self) -> Durability {
        self.inner.durability
    }

    /// `PRAGMA synchronous` as the writer connection reports it (2 = FULL, 1 = NORMAL): what
    /// SQLite really does at each commit, whatever was asked. On PostgreSQL, 2 while
    /// `synchronous_commit` is on and 1 while it is off.
    pub fn synchronous(&self) -> Result<i64> {
        let conn = self.lock();
        match &*conn {
            Conn::Sqlite(c) => Ok(c.query_row("PRAGMA synchronous", [], |r| r.get(0))?),
            Conn::Pg(_) => {
                let rows = conn.query("SELECT current_setting('synchronous_commit')", &[])?;
                let on: String = rows
                    .first()
                    .map(|r| r.get(0))
                    .transpose()?
                    .unwrap_or_default();
                Ok(if on == "off" { 1 } else { 2 })
            }
        }
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

    /// Events committed from now on, as they commit (on PostgreSQL, every node's, in id
    /// order).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Event> {
        self.inner.sink.subscribe()
    }

    /// Control messages sent with [`Tx::notify_control`] from now on, by any node.
    pub fn subscribe_control(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.inner.sink.subscribe_control()
    }

    /// Threads given work by a transaction that asked to wake them, on this node, after it
    /// committed (see [`Tx::wake_after_commit`]).
    pub fn subscribe_wakes(&self) -> tokio::sync::broadcast::Receiver<ThreadId> {
        self.inner.sink.subscribe_wakes()
    }

    fn lock(&self) -> MutexGuard<'_, Conn> {
        // A panic while holding the lock leaves the database consistent (the transaction is
        // rolled back before the next use), so a poisoned lock is safe to take over.
        let mut conn = self.inner.conn.lock().unwrap_or_else(|p| p.into_inner());
        // A connection the server closed (restart, failover) is replaced before it is used.
        conn.renew_if_broken();
        conn
    }

    /// Run `f` in one write transaction. Events it appends are published after commit.
    pub fn write<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        // Counted while it waits, so the writer thread lets it in before its next batch.
        let conn = {
            let _waiting = writer::Waiting::on(&self.inner.callers_waiting);
            self.lock()
        };
        self.write_locked(conn, f)
    }

    /// `write` once the writer lock is held; the lock is released when it returns.
    fn write_locked<T>(
        &self,
        conn: MutexGuard<'_, Conn>,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        self.write_locked_telling(conn, f).map_err(|(e, _)| e)
    }

    /// `write_locked`, saying with a failure whether COMMIT itself failed (then whether the
    /// transaction committed is unknown; before it, nothing of it stands).
    pub(crate) fn write_locked_telling<T>(
        &self,
        conn: MutexGuard<'_, Conn>,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T, (StoreError, bool)> {
        let changes = conn.changes();
        conn.begin_write().map_err(|e| (e, false))?;
        let mut tx = Tx {
            conn: &conn,
            now: self.inner.clock.now_ms(),
            events: Vec::new(),
            controls: Vec::new(),
            wakes: Vec::new(),
            writing: true,
        };
        let out = match catch_unwind(AssertUnwindSafe(|| {
            let v = f(&mut tx)?;
            tx.settle()?;
            Ok(v)
        })) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => {
                let _ = conn.step("ROLLBACK");
                return Err((e, false));
            }
            Err(panic) => {
                let _ = conn.step("ROLLBACK");
                resume_unwind(panic)
            }
        };
        let mut events = std::mem::take(&mut tx.events);
        let controls = std::mem::take(&mut tx.controls);
        let wakes = std::mem::take(&mut tx.wakes);
        if let Err(e) = events::flush_pending(&conn, &mut events) {
            let _ = conn.step("ROLLBACK");
            return Err((e, false));
        }
        let changed = conn.changes() != changes;
        if let Err(e) = conn.step("COMMIT") {
            if conn.in_transaction() {
                let _ = conn.step("ROLLBACK");
            }
            return Err((e, true));
        }
        self.inner.counters.committed(1, changed);
        // Published while the writer lock is still held, so subscribers see ids in order.
        self.inner.sink.publish(events);
        self.inner.sink.publish_control(controls);
        self.inner.sink.publish_wakes(wakes);
        drop(conn);
        Ok(out)
    }

    /// Run `f` against a consistent read snapshot of what is committed.
    pub fn read<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        let Some(pool) = &self.inner.readers else {
            let conn = self.lock();
            return Self::read_on(&conn, self.inner.clock.now_ms(), f);
        };
        let idle = pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match idle {
            Some(c) if !c.is_broken() => c,
            _ => self.open_reader()?,
        };
        let out = Self::read_on(&conn, self.inner.clock.now_ms(), f);
        // One the server closed meanwhile is dropped; the next read opens another.
        if !conn.is_broken() {
            pool.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
        }
        out
    }

    fn writer(&self) -> Result<&writer::Writer> {
        if let Some(w) = self.inner.writer.get() {
            return Ok(w);
        }
        // On PostgreSQL more writers, each on its own connection (see writer.rs).
        let more = match &self.inner.location {
            Location::Postgres(target) => (1..PG_WRITERS)
                .map(|_| PgConn::connect(target).map(Conn::Pg))
                .collect::<Result<Vec<_>>>()?,
            _ => Vec::new(),
        };
        let started = writer::Writer::start(
            writer::Shared {
                conn: self.inner.conn.clone(),
                clock: self.inner.clock.clone(),
                sink: self.inner.sink.clone(),
                counters: self.inner.counters.clone(),
                callers_waiting: self.inner.callers_waiting.clone(),
            },
            more,
        )
        .map_err(|e| StoreError::Conflict(format!("cannot start the store's writer: {e}")))?;
        // Two first callers may race: the loser's writer is dropped unused.
        Ok(self.inner.writer.get_or_init(|| started))
    }

    fn open_reader(&self) -> Result<Conn> {
        let path = &self.inner.path;
        if let Location::Postgres(target) = &self.inner.location {
            return Ok(Conn::Pg(PgConn::connect(target)?));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let err = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            detail: format!("cannot open a reader: {e}"),
        };
        let conn = Connection::open_with_flags(path, flags).map_err(err)?;
        db::register_functions(&conn).map_err(err)?;
        conn.set_prepared_statement_cache_capacity(256);
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        Ok(Conn::Sqlite(conn))
    }

    fn read_on<T>(conn: &Conn, now: i64, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        conn.begin_read()?;
        let mut tx = Tx {
            conn,
            now,
            events: Vec::new(),
            controls: Vec::new(),
            wakes: Vec::new(),
            writing: false,
        };
        let out = catch_unwind(AssertUnwindSafe(|| f(&mut tx)));
        debug_assert!(tx.events.is_empty(), "a read appended events");
        // A read never keeps anything; ending it this way also works after an error.
        let _ = conn.step("ROLLBACK");
        match out {
            Ok(v) => v,
            Err(panic) => resume_unwind(panic),
        }
    }
}

/// A database named by a URL or a path.
#[derive(Clone, Debug)]
pub(crate) enum DatabaseUrl {
    Sqlite(PathBuf),
    Postgres(Box<PgTarget>),
}

impl DatabaseUrl {
    pub(crate) fn parse(url: &str) -> Result<DatabaseUrl> {
        let bad = |detail: String| StoreError::Open {
            path: url.split('@').next_back().unwrap_or(url).into(),
            detail,
        };
        if let Some(rest) = url.strip_prefix("sqlite://") {
            if rest.is_empty() {
                return Err(bad(
                    "a sqlite:// URL needs a path, as in sqlite:///var/lib/troupe.db".into(),
                ));
            }
            return Ok(DatabaseUrl::Sqlite(PathBuf::from(rest)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return PgTarget::parse(url)
                .map(|t| DatabaseUrl::Postgres(Box::new(t)))
                .map_err(bad);
        }
        if let Some((scheme, _)) = url.split_once("://") {
            return Err(bad(format!(
                "unknown database kind {scheme:?}: use postgres://…, sqlite:///path or a file path"
            )));
        }
        if url.trim().is_empty() {
            return Err(bad("the database URL is empty".into()));
        }
        Ok(DatabaseUrl::Sqlite(PathBuf::from(url)))
    }
}

/// One open transaction. All store operations are methods on it, so a caller composes
/// several state changes atomically.
pub struct Tx<'a> {
    /// Inside a transaction (or a savepoint of one) for the Tx's whole life.
    conn: &'a Conn,
    now: i64,
    events: Vec<Event>,
    /// Control messages to publish at commit (SQLite; PostgreSQL sends them with NOTIFY).
    controls: Vec<String>,
    /// Threads to wake on this node once this transaction commits (see `wake_after_commit`).
    wakes: Vec<ThreadId>,
    /// A write transaction (reads run read-only and take no row locks).
    writing: bool,
}

impl Tx<'_> {
    /// The clock reading taken when the transaction began.
    pub fn now(&self) -> i64 {
        self.now
    }

    /// Which SQL this transaction's database speaks.
    pub fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }

    /// Whether row locks are taken: a write transaction on PostgreSQL, where other connections
    /// write at the same time (SQLite has one writer, so there is nothing to lock against).
    pub(crate) fn locks_rows(&self) -> bool {
        self.writing && self.dialect() == Dialect::Postgres
    }

    /// One statement of raw SQL, past every check the store's methods make (but never past the
    /// database's own rules). For tests that attack those rules, and for operators' repairs.
    pub fn raw_execute(&self, sql: &str) -> Result<usize> {
        self.conn.execute(sql, &[])
    }

    /// Execute one statement (through the statement cache); answers the rows it changed.
    pub(crate) fn exec(&self, sql: &str, args: &[Value]) -> Result<usize> {
        self.conn.execute(sql, args)
    }

    /// `exec` for a write whose row count nobody reads: on PostgreSQL it is sent without
    /// waiting, so the transaction's next statement shares its round trip, and its failure is
    /// reported there (or when the write's closure ends). Only for statements whose failure
    /// should fail the whole write, never one whose error a caller inspects.
    pub(crate) fn exec_unawaited(&self, sql: &str, args: &[Value]) -> Result<()> {
        self.conn.execute_unawaited(sql, args)
    }

    /// The answers of statements sent unawaited: the first failure among them.
    pub(crate) fn settle(&self) -> Result<()> {
        self.conn.settle()
    }

    /// Insert one row and answer its new `id`.
    pub(crate) fn insert(&self, sql: &str, args: &[Value]) -> Result<i64> {
        let sql = format!("{sql} RETURNING id");
        self.query_one(&sql, args, |r| r.get(0))
    }

    /// The first row of a query, which must return one.
    pub(crate) fn query_one<T>(
        &self,
        sql: &str,
        args: &[Value],
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<T> {
        self.query_opt(sql, args, f)?.ok_or_else(|| {
            StoreError::Corrupt(format!(
                "a query that always returns a row returned none: {sql}"
            ))
        })
    }

    /// The first row of a query, if it returned any.
    pub(crate) fn query_opt<T>(
        &self,
        sql: &str,
        args: &[Value],
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<Option<T>> {
        self.conn.query(sql, args)?.first().map(f).transpose()
    }

    /// Every row of a query, each mapped by `f`.
    pub(crate) fn query_all<T>(
        &self,
        sql: &str,
        args: &[Value],
        f: impl FnMut(&Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.conn.query(sql, args)?.iter().map(f).collect()
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
