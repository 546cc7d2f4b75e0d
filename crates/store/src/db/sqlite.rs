//! The SQLite side of a connection: rusqlite with its statement cache.

use super::row::Row;
use super::value::Value;
use crate::Result;
use rusqlite::types::{ToSqlOutput, ValueRef};

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

fn value_of(v: ValueRef<'_>) -> rusqlite::Result<Value> {
    Ok(match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(
            std::str::from_utf8(t)
                .map_err(rusqlite::Error::Utf8Error)?
                .to_string(),
        ),
        // Troupe stores no blobs; one is read as its bytes' text so nothing is lost silently.
        ValueRef::Blob(b) => Value::Text(String::from_utf8_lossy(b).into_owned()),
    })
}

pub(crate) fn execute(conn: &rusqlite::Connection, sql: &str, args: &[Value]) -> Result<usize> {
    let mut stmt = conn.prepare_cached(sql)?;
    Ok(stmt.execute(rusqlite::params_from_iter(args))?)
}

pub(crate) fn query(conn: &rusqlite::Connection, sql: &str, args: &[Value]) -> Result<Vec<Row>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let width = stmt.column_count();
    let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut values = Vec::with_capacity(width);
        for i in 0..width {
            values.push(value_of(r.get_ref(i)?)?);
        }
        out.push(Row::new(values));
    }
    Ok(out)
}

/// SQL functions the schema's triggers call, registered on every connection: `fold(text)`,
/// the requirements ledger's folding (troupe_core::requirement::db_fold; PostgreSQL has the
/// same as a function made by its migration).
pub(crate) fn register_functions(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "fold",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(t) => Some(troupe_core::requirement::db_fold(
                    &String::from_utf8_lossy(t),
                )),
                _ => None,
            })
        },
    )
}
