//! The PostgreSQL side of a connection, on tokio-postgres.
//!
//! The store's transactions are synchronous closures, called from inside tokio tasks as well as
//! from plain threads. tokio-postgres' socket task runs on a small runtime of the store's own;
//! a caller waits for its statement with `futures::executor::block_on`, which parks the thread
//! the way a SQLite write parks it on its lock or fsync, and is allowed inside a tokio task
//! where a nested tokio runtime is not.

use super::row::Row;
use super::value::Value;
use crate::{Result, SqlError, StoreError};
use bytes::BytesMut;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Statement};

/// Where the socket tasks of every PostgreSQL connection run. Never dropped: a runtime cannot
/// be dropped from inside another, and the store may be dropped anywhere.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("troupe-pg-io")
            .enable_all()
            .build()
            .expect("the PostgreSQL I/O runtime starts")
    })
}

/// Where a listening connection sends the notifications it hears: (channel, payload).
type Notices = std::sync::mpsc::Sender<(String, String)>;

/// A request already sent whose answer (rows changed, or the failure) is not read yet.
type Sent = Pin<Box<dyn Future<Output = std::result::Result<u64, tokio_postgres::Error>> + Send>>;

pub(crate) struct PgConn {
    client: Arc<Client>,
    /// Where it connected, to connect again when the server has closed it.
    target: Box<PgTarget>,
    /// Prepared statements by their SQLite-style text; hot statements are parsed once.
    cache: RefCell<HashMap<String, Statement>>,
    /// Rows changed through this connection, the counterpart of SQLite's `total_changes`.
    changes: std::cell::Cell<u64>,
    /// Transaction-control statements (BEGIN, SAVEPOINT, RELEASE) not sent yet: they go out
    /// with the next statement, in the same round trip, and any failure of theirs is that
    /// statement's. A statement is a round trip to another process here, and these would
    /// otherwise cost one each.
    deferred: RefCell<Vec<String>>,
    /// Statements sent without waiting for their answers (`execute_unawaited`), oldest first:
    /// the next statement waits for them with its own, and the first failure among them is
    /// its failure.
    sent: RefCell<Vec<Sent>>,
}

/// How to reach the database.
#[derive(Clone, Debug)]
pub(crate) struct PgTarget {
    pub config: tokio_postgres::Config,
}

impl PgTarget {
    /// Parse a `postgres://` URL, saying what is wrong with one that does not parse.
    pub fn parse(url: &str) -> std::result::Result<PgTarget, String> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| format!("not a PostgreSQL URL ({e})"))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("troupe");
        Ok(PgTarget { config })
    }

    /// The URL without its password, for messages.
    pub fn describe(&self) -> String {
        let hosts: Vec<String> = self
            .config
            .get_hosts()
            .iter()
            .map(|h| match h {
                tokio_postgres::config::Host::Tcp(name) => name.clone(),
                tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        format!(
            "postgres://{}@{}:{port}/{}",
            self.config.get_user().unwrap_or(""),
            hosts.join(","),
            self.config.get_dbname().unwrap_or("")
        )
    }
}

impl PgConn {
    pub fn connect(target: &PgTarget) -> Result<PgConn> {
        Self::open(target, None)
    }

    /// A connection that also hears `NOTIFY`: each notification on a channel it listens to
    /// arrives on the returned receiver as (channel, payload). The receiver closes when the
    /// connection ends.
    pub fn connect_listening(
        target: &PgTarget,
        channels: &[&str],
    ) -> Result<(PgConn, std::sync::mpsc::Receiver<(String, String)>)> {
        let (heard, hear) = std::sync::mpsc::channel();
        let conn = Self::open(target, Some(heard))?;
        for channel in channels {
            conn.batch(&format!("LISTEN {channel}"))?;
        }
        Ok((conn, hear))
    }

    fn open(target: &PgTarget, heard: Option<Notices>) -> Result<PgConn> {
        let config = target.config.clone();
        let connecting = runtime().spawn(async move {
            let (client, mut connection) = config.connect(tokio_postgres::NoTls).await?;
            // Ends when the client is dropped or the server goes away; a statement sent after
            // that fails with "connection closed", which the caller hears.
            tokio::spawn(async move {
                use futures::StreamExt;
                let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
                while let Some(Ok(message)) = messages.next().await {
                    if let (Some(heard), tokio_postgres::AsyncMessage::Notification(n)) =
                        (&heard, message)
                    {
                        // Nobody listening any more is fine: the connection goes on serving.
                        let _ = heard.send((n.channel().to_string(), n.payload().to_string()));
                    }
                }
            });
            Ok::<_, tokio_postgres::Error>(client)
        });
        let client = futures::executor::block_on(connecting)
            .map_err(|e| StoreError::Conflict(format!("the PostgreSQL connect task failed: {e}")))?
            .map_err(|e| StoreError::Open {
                path: target.describe().into(),
                detail: connect_detail(&e),
            })?;
        Ok(PgConn {
            client: Arc::new(client),
            target: Box::new(target.clone()),
            cache: RefCell::new(HashMap::new()),
            changes: std::cell::Cell::new(0),
            deferred: RefCell::new(Vec::new()),
            sent: RefCell::new(Vec::new()),
        })
    }

    fn statement(&self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.cache.borrow().get(sql) {
            return Ok(s.clone());
        }
        // Preparing waits for the server anyway, so what waits to go first goes now: the
        // deferred transaction control (a failed write's ROLLBACK TO, without which the
        // transaction refuses the preparation) and the answers of statements sent unanswered
        // (whose failure would otherwise hide behind that refusal).
        self.with_deferred(std::future::ready(Ok::<(), tokio_postgres::Error>(())))?;
        let text = placeholders(sql);
        let stmt = futures::executor::block_on(self.client.prepare(&text)).map_err(|e| {
            let mut err = SqlError::from_pg(&e);
            // Naming the statement makes a dialect slip findable at once.
            err.message = format!(
                "{} in: {}",
                err.message,
                sql.split_whitespace().collect::<Vec<_>>().join(" ")
            );
            StoreError::Sql(err)
        })?;
        self.cache
            .borrow_mut()
            .insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }

    /// Send `cmd` with the next statement instead of now.
    pub fn defer(&self, cmd: &str) {
        self.deferred.borrow_mut().push(cmd.to_string());
    }

    /// End the transaction without waiting for the answer (a read's end, or after a failure):
    /// the request goes out now and the next statement queues behind it. A transaction that
    /// never sent anything has nothing to end.
    pub fn rollback_nowait(&self) {
        // What was sent unanswered is undone with the rest; its answers are dropped unread.
        self.sent.borrow_mut().clear();
        let mut deferred = std::mem::take(&mut *self.deferred.borrow_mut());
        if deferred.iter().any(|c| c.starts_with("BEGIN")) {
            return;
        }
        deferred.push("ROLLBACK".into());
        let text = deferred.join("; ");
        let mut sending = Box::pin(self.client.batch_execute(&text));
        use futures::FutureExt;
        // The first poll hands the request to the connection, which reads and drops the reply.
        let _ = sending.as_mut().now_or_never();
    }

    /// Run `f` after the statements sent unanswered and the deferred ones, all in one round
    /// trip: the first failure, in the order they were sent, is the answer.
    fn with_deferred<T>(
        &self,
        f: impl Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        let sent = std::mem::take(&mut *self.sent.borrow_mut());
        let deferred = std::mem::take(&mut *self.deferred.borrow_mut());
        if sent.is_empty() && deferred.is_empty() {
            return Ok(futures::executor::block_on(f)?);
        }
        let text = deferred.join("; ");
        let control = async {
            if text.is_empty() {
                Ok(())
            } else {
                self.client.batch_execute(&text).await
            }
        };
        // `join!` polls in order, so the deferred statements go out before `f`.
        let (earlier, first, out) =
            futures::executor::block_on(async { futures::join!(answers(sent), control, f) });
        self.changes.set(self.changes.get() + earlier?);
        first?;
        Ok(out?)
    }

    /// Send a statement and go on without its answer: for writes whose row count nobody reads
    /// and whose failure fails the whole write. A round trip to the server is the cost of a
    /// statement here; sent this way, a write's statements share one. The failure, if any, is
    /// the next statement's or `settle`'s.
    pub fn execute_unawaited(&self, sql: &str, args: &[Value]) -> Result<()> {
        let stmt = self.statement(sql)?;
        let deferred = std::mem::take(&mut *self.deferred.borrow_mut());
        if !deferred.is_empty() {
            let client = self.client.clone();
            let text = deferred.join("; ");
            self.send(Box::pin(async move {
                client.batch_execute(&text).await.map(|_| 0)
            }));
        }
        let client = self.client.clone();
        let args = args.to_vec();
        self.send(Box::pin(async move {
            let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|v| v as _).collect();
            client.execute(&stmt, &params).await
        }));
        Ok(())
    }

    /// Hand a request to the connection now (its first poll writes it) and keep its answer
    /// for later.
    fn send(&self, mut request: Sent) {
        use futures::FutureExt;
        match request.as_mut().now_or_never() {
            // Answered at once (a failure to encode, say): kept as an answer all the same.
            Some(done) => self.sent.borrow_mut().push(Box::pin(async move { done })),
            None => self.sent.borrow_mut().push(request),
        }
    }

    /// Wait for the statements sent unanswered; the first failure among them is the answer.
    pub fn settle(&self) -> Result<()> {
        let sent = std::mem::take(&mut *self.sent.borrow_mut());
        if sent.is_empty() {
            return Ok(());
        }
        let n = futures::executor::block_on(answers(sent))?;
        self.changes.set(self.changes.get() + n);
        Ok(())
    }

    pub fn execute(&self, sql: &str, args: &[Value]) -> Result<usize> {
        let stmt = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|v| v as _).collect();
        let n = self.with_deferred(self.client.execute(&stmt, &params))?;
        self.changes.set(self.changes.get() + n);
        Ok(n as usize)
    }

    pub fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>> {
        let stmt = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|v| v as _).collect();
        let rows = self.with_deferred(self.client.query(&stmt, &params))?;
        // An INSERT/UPDATE … RETURNING changes rows too.
        if !sql
            .trim_start()
            .get(..6)
            .is_some_and(|w| w.eq_ignore_ascii_case("select"))
        {
            self.changes.set(self.changes.get() + rows.len() as u64);
        }
        rows.iter().map(row_of).collect()
    }

    /// Several statements without parameters (migrations, transaction control).
    pub fn batch(&self, sql: &str) -> Result<()> {
        let mut all = std::mem::take(&mut *self.deferred.borrow_mut());
        all.push(sql.to_string());
        let text = all.join("; ");
        self.with_deferred(self.client.batch_execute(&text))
    }

    pub fn changes(&self) -> u64 {
        self.changes.get()
    }

    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// A new connection to the same server (its statement cache starts empty).
    pub fn reconnect(&self) -> Result<PgConn> {
        PgConn::connect(&self.target)
    }
}

/// Every answer of requests sent earlier, in order: the rows they changed, or the first failure
/// (the later ones are still read, so nothing is left half-answered).
async fn answers(sent: Vec<Sent>) -> std::result::Result<u64, tokio_postgres::Error> {
    let mut changed = 0;
    let mut failed = None;
    for request in sent {
        match request.await {
            Ok(n) => changed += n,
            Err(e) if failed.is_none() => failed = Some(e),
            Err(_) => {}
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(changed),
    }
}

/// A failed connect in one line: what the server or the network said.
fn connect_detail(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("the server refused: {}", db.message());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// SQLite's `?N` placeholders as PostgreSQL's `$N`, outside quoted text; a bare `?` takes the
/// next number, as in SQLite.
pub(crate) fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    let mut highest = 0u32;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                out.push(c);
            }
            '?' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                let n = if digits.is_empty() {
                    highest + 1
                } else {
                    digits.parse().unwrap_or(0)
                };
                highest = highest.max(n);
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    out
}

fn row_of(r: &tokio_postgres::Row) -> Result<Row> {
    let mut values = Vec::with_capacity(r.len());
    for (i, col) in r.columns().iter().enumerate() {
        let ty = col.type_();
        let v = match *ty {
            Type::INT8 => r.try_get::<_, Option<i64>>(i)?.map(Value::Int),
            Type::INT4 => r
                .try_get::<_, Option<i32>>(i)?
                .map(|v| Value::Int(v.into())),
            Type::INT2 => r
                .try_get::<_, Option<i16>>(i)?
                .map(|v| Value::Int(v.into())),
            Type::OID => r
                .try_get::<_, Option<u32>>(i)?
                .map(|v| Value::Int(v.into())),
            Type::BOOL => r
                .try_get::<_, Option<bool>>(i)?
                .map(|v| Value::Int(v.into())),
            Type::FLOAT8 => r.try_get::<_, Option<f64>>(i)?.map(Value::Real),
            Type::FLOAT4 => r
                .try_get::<_, Option<f32>>(i)?
                .map(|v| Value::Real(v.into())),
            // A function called for its effect (pg_advisory_lock) returns nothing.
            Type::VOID => None,
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
                r.try_get::<_, Option<String>>(i)?.map(Value::Text)
            }
            _ => {
                return Err(StoreError::Corrupt(format!(
                    "column {} has PostgreSQL type {ty}, which the store does not read; \
                     the query should cast it",
                    col.name()
                )));
            }
        };
        values.push(v.unwrap_or(Value::Null));
    }
    Ok(Row::new(values))
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match (self, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(i), &Type::INT8) => i.to_sql(ty, out),
            (Value::Int(i), &Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::INT2) => i16::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::BOOL) => (*i != 0).to_sql(ty, out),
            (Value::Int(i), &Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Value::Int(i), &Type::TEXT | &Type::VARCHAR) => i.to_string().to_sql(ty, out),
            (Value::Real(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Real(f), &Type::FLOAT4) => (*f as f32).to_sql(ty, out),
            (Value::Text(s), &Type::TEXT | &Type::VARCHAR | &Type::BPCHAR | &Type::NAME) => {
                s.as_str().to_sql(ty, out)
            }
            (Value::Text(s), &Type::JSON) => {
                out.extend_from_slice(s.as_bytes());
                Ok(IsNull::No)
            }
            (v, ty) => Err(format!("cannot send {v:?} as PostgreSQL type {ty}").into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        // Checked per value in `to_sql`, which says what did not fit.
        true
    }

    to_sql_checked!();
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(e: tokio_postgres::Error) -> Self {
        SqlError::from_pg(&e).into()
    }
}

impl SqlError {
    fn from_pg(e: &tokio_postgres::Error) -> SqlError {
        match e.as_db_error() {
            Some(db) => {
                let code = db.code().code();
                // Class 23 is "integrity constraint violation"; 40001/40P01 are conflicts a
                // retry may clear.
                let kind = if code.starts_with("23") {
                    super::SqlErrorKind::Constraint
                } else if code == "40001" || code == "40P01" || code == "55P03" {
                    super::SqlErrorKind::Busy
                } else {
                    super::SqlErrorKind::Other
                };
                let mut message = db.message().to_string();
                if let Some(d) = db.detail() {
                    message.push_str(&format!(" ({d})"));
                }
                SqlError {
                    kind,
                    message: format!("{message} [SQLSTATE {code}]"),
                }
            }
            None => SqlError {
                kind: if e.is_closed() {
                    super::SqlErrorKind::Lost
                } else {
                    super::SqlErrorKind::Other
                },
                message: connect_detail(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::placeholders;

    #[test]
    fn placeholders_are_renumbered_outside_quotes() {
        assert_eq!(
            placeholders("SELECT ?1, '?2', ?, \"a?\" WHERE x = ?12"),
            "SELECT $1, '?2', $2, \"a?\" WHERE x = $12"
        );
    }
}
