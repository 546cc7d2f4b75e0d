//! The database a test runs on. With `TROUPE_TEST_DATABASE=postgres://…` set, every store a
//! test opens gets a schema of its own in that database, so the same tests prove both
//! backends; without it, tests use SQLite. `.ci/run` runs the suites both ways.

use crate::db::{Conn, PgConn, PgTarget};
use crate::{Dialect, OpenOptions, Result, Store, StoreError};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use troupe_core::Clock;

/// The variable that names the PostgreSQL server tests use.
pub const TEST_DATABASE_VAR: &str = "TROUPE_TEST_DATABASE";

/// The server named by `TROUPE_TEST_DATABASE`, if any.
pub fn postgres_server() -> Option<String> {
    std::env::var(TEST_DATABASE_VAR)
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// The backend tests run on.
pub fn backend() -> Dialect {
    if postgres_server().is_some() {
        Dialect::Postgres
    } else {
        Dialect::Sqlite
    }
}

/// Set (as `.ci/run` sets it for its PostgreSQL run) to make a missing server a failure.
pub const REQUIRE_POSTGRES_VAR: &str = "TROUPE_REQUIRE_POSTGRES";

/// The server for a test that only makes sense on PostgreSQL. `None` (after saying so) when
/// none is configured, unless `TROUPE_REQUIRE_POSTGRES` is set: then the test fails.
pub fn postgres_or_skip(test: &str) -> Option<String> {
    let server = postgres_server();
    if server.is_none() {
        if std::env::var_os(REQUIRE_POSTGRES_VAR).is_some() {
            panic!(
                "{test}: {REQUIRE_POSTGRES_VAR} is set, but {TEST_DATABASE_VAR} names no server"
            );
        }
        eprintln!("{test}: skipped, {TEST_DATABASE_VAR} is not set (no PostgreSQL to test on)");
    }
    server
}

/// A new, empty database on the PostgreSQL server `server` names, and its URL.
pub fn fresh_postgres_database(server: &str) -> Result<String> {
    let name = unique_name("troupe_t");
    admin(server)?.batch(&format!("CREATE DATABASE {name}"))?;
    Ok(with_database(server, &name))
}

/// A new, empty schema in the database `server` names, and a URL whose connections work in it
/// (its `search_path`). Much cheaper than a database (no copy of a template), so every store a
/// test opens gets one; tests that must be alone in a database (one that ends every connection
/// of it, say) use [`fresh_postgres_database`].
pub fn fresh_postgres_schema(server: &str) -> Result<String> {
    let name = unique_name("troupe_s");
    admin(server)?.batch(&format!("CREATE SCHEMA {name}"))?;
    let join = if server.contains('?') { '&' } else { '?' };
    Ok(format!("{server}{join}options=-c%20search_path%3D{name}"))
}

/// A name no other test of any process has used: the pid, a counter and the clock.
fn unique_name(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}{}_{n}_{nanos}", std::process::id())
}

/// A connection to the server, to create what a test needs.
fn admin(server: &str) -> Result<Conn> {
    let target = PgTarget::parse(server).map_err(|detail| StoreError::Open {
        path: TEST_DATABASE_VAR.into(),
        detail,
    })?;
    Ok(Conn::Pg(PgConn::connect(&target)?))
}

/// `url` with its database name replaced.
pub fn with_database(url: &str, name: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let (base, query) = match url.find('?') {
        Some(q) => (&url[..q], &url[q..]),
        None => (url, ""),
    };
    let host_end = base[after_scheme..]
        .find('/')
        .map_or(base.len(), |i| after_scheme + i);
    format!("{}/{name}{query}", &base[..host_end])
}

/// A store for a test: a fresh PostgreSQL database when one is configured, else a private
/// in-memory SQLite database.
pub fn open(clock: Arc<dyn Clock>) -> Store {
    match postgres_server() {
        Some(server) => open_postgres(&server, clock),
        None => Store::open_in_memory(clock).expect("an in-memory store opens"),
    }
}

/// A store for a test that keeps its data in `dir`: `dir/troupe.db`, or with PostgreSQL the
/// database made for `dir` the first time (so a test that reopens `dir` to play a restart
/// finds what it wrote).
pub fn open_in(dir: &Path, clock: Arc<dyn Clock>) -> Store {
    Store::open_url(&database_url_in(dir), clock, OpenOptions::default())
        .expect("the test store opens")
}

/// The database URL for a test's data dir, the one [`open_in`] opens: what a test gives a
/// daemon or command it starts.
pub fn database_url_in(dir: &Path) -> String {
    let Some(server) = postgres_server() else {
        return dir.join("troupe.db").display().to_string();
    };
    let memo = dir.join("troupe.postgres-url");
    if let Ok(url) = std::fs::read_to_string(&memo) {
        return url.trim().to_string();
    }
    let url = fresh_postgres_schema(&server).expect("a test schema is created");
    std::fs::create_dir_all(dir).expect("the test's data dir exists");
    std::fs::write(&memo, &url).expect("the test database's URL is kept in its data dir");
    url
}

fn open_postgres(server: &str, clock: Arc<dyn Clock>) -> Store {
    let url = fresh_postgres_schema(server).expect("a test schema is created");
    Store::open_url(&url, clock, OpenOptions::default()).expect("the test database opens")
}

/// A SQLite database file as a Troupe at schema `version` left it (only that many
/// migrations applied), for tests of an upgrade.
pub fn sqlite_file_at_version(path: &Path, version: usize) -> Result<()> {
    crate::migrations::sqlite_at_version(path, version)
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn a_url_gets_another_database_name_and_keeps_its_parameters() {
        assert_eq!(
            with_database("postgres://u@h:5/db?sslmode=disable", "t1"),
            "postgres://u@h:5/t1?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://u@h:5", "t2"),
            "postgres://u@h:5/t2"
        );
    }
}
