//! Moving a whole database to another backend (`troupe db copy`), and the per-table row counts
//! and checksums that prove nothing was lost on the way.

use crate::db::{Dialect, Value};
use crate::{Result, Store, StoreError, Tx};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// One table's contents in brief: how many rows, and a checksum over them that does not depend
/// on the order a backend returns them in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSummary {
    pub rows: u64,
    pub checksum: String,
}

/// Tables a migration writes rows into (`supervisor.enabled` in 0027, the engine steps in 0029).
const SEEDED_BY_MIGRATIONS: &[&str] = &["app_settings", "engine_steps"];

impl Store {
    /// Every table's row count and checksum, from one snapshot.
    pub fn table_summaries(&self) -> Result<BTreeMap<String, TableSummary>> {
        self.read(|tx| {
            let outline = tx.schema_outline()?;
            let mut out = BTreeMap::new();
            for (table, columns) in &outline.tables {
                let rows = tx.all_rows(table, columns)?;
                out.insert(table.clone(), summarize(&rows));
            }
            Ok(out)
        })
    }

    /// Copy every row of this store into `to`, which must be empty and at the same schema
    /// version, in one transaction there: either all of it lands or none. Returns what the
    /// destination then holds, which the caller compares with [`Store::table_summaries`].
    pub fn copy_into(&self, to: &Store) -> Result<BTreeMap<String, TableSummary>> {
        let (outline, order, data) = self.read(|tx| {
            let outline = tx.schema_outline()?;
            let order = fk_order(tx, &outline.tables)?;
            let mut data = BTreeMap::new();
            for table in &order {
                data.insert(table.clone(), tx.all_rows(table, &outline.tables[table])?);
            }
            Ok((outline, order, data))
        })?;
        to.write(|tx| {
            let there = tx.schema_outline()?;
            if there.tables != outline.tables {
                return Err(StoreError::Conflict(
                    "the two databases' schemas differ; bring both to this Troupe's version first"
                        .into(),
                ));
            }
            for table in &order {
                // Rows a migration writes itself (a fresh database has them too) are replaced
                // by the source's rather than counted as data.
                if SEEDED_BY_MIGRATIONS.contains(&table.as_str()) {
                    tx.exec(&format!("DELETE FROM {table}"), &[])?;
                    continue;
                }
                let n: i64 =
                    tx.query_one(&format!("SELECT COUNT(*) FROM {table}"), &[], |r| r.get(0))?;
                if n > 0 {
                    return Err(StoreError::Conflict(format!(
                        "the destination already holds data (table {table} has {n} rows); \
                         copy into an empty database"
                    )));
                }
            }
            for table in &order {
                let columns = &outline.tables[table];
                let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
                let sql = format!(
                    "INSERT INTO {table} ({}) VALUES ({})",
                    columns.join(", "),
                    marks.join(", ")
                );
                for row in &data[table] {
                    tx.exec(&sql, row)?;
                }
                tx.restart_id_sequence(table, columns)?;
            }
            Ok(())
        })?;
        to.table_summaries()
    }
}

impl Tx<'_> {
    /// Every row of a table, oldest id first, so rows that point at older rows of their own
    /// table (a thread's parent, a message's root) are inserted after them.
    fn all_rows(&self, table: &str, columns: &[String]) -> Result<Vec<Vec<Value>>> {
        let sql = format!(
            "SELECT {} FROM {table} ORDER BY {}",
            columns.join(", "),
            columns.first().map_or("1", String::as_str)
        );
        self.query_all(&sql, &[], |r| {
            (0..r.len()).map(|i| r.get::<Value>(i)).collect()
        })
    }

    /// After rows were inserted with their ids, PostgreSQL's identity sequence must start past
    /// them (SQLite takes the next rowid from the table itself).
    fn restart_id_sequence(&self, table: &str, columns: &[String]) -> Result<()> {
        if self.dialect() != Dialect::Postgres || columns.first().map(String::as_str) != Some("id")
        {
            return Ok(());
        }
        let sequence: Option<String> = self.query_one(
            "SELECT pg_get_serial_sequence(?1, 'id')",
            crate::args![table],
            |r| r.get(0),
        )?;
        if let Some(seq) = sequence {
            self.query_one(
                &format!(
                    "SELECT CAST(setval(CAST(?1 AS TEXT)::regclass, COALESCE(MAX(id), 0) + 1, false) AS BIGINT) FROM {table}"
                ),
                crate::args![seq],
                |r| r.get::<i64>(0),
            )?;
        }
        Ok(())
    }
}

/// Tables in an order where each comes after the tables its foreign keys point at.
fn fk_order(tx: &Tx<'_>, tables: &BTreeMap<String, Vec<String>>) -> Result<Vec<String>> {
    let mut needs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for table in tables.keys() {
        needs.insert(table.clone(), tx.referenced_tables(table)?);
    }
    let mut order = Vec::with_capacity(tables.len());
    let mut placed = BTreeSet::new();
    while order.len() < tables.len() {
        let ready: Vec<String> = needs
            .iter()
            .filter(|(t, deps)| !placed.contains(*t) && deps.iter().all(|d| placed.contains(d)))
            .map(|(t, _)| t.clone())
            .collect();
        if ready.is_empty() {
            return Err(StoreError::Corrupt(
                "the tables' foreign keys form a cycle; no copy order exists".into(),
            ));
        }
        for t in ready {
            placed.insert(t.clone());
            order.push(t);
        }
    }
    Ok(order)
}

/// Row count and an order-free checksum: the wrapping sum of each row's SHA-256 (first 16
/// bytes), each value tagged with its kind so `1` and `'1'` differ.
fn summarize(rows: &[Vec<Value>]) -> TableSummary {
    let mut sum: u128 = 0;
    for row in rows {
        let mut h = Sha256::new();
        for v in row {
            match v {
                Value::Null => h.update(b"N;"),
                Value::Int(i) => h.update(format!("I{i};")),
                Value::Real(f) => h.update(format!("R{};", f.to_bits())),
                Value::Text(s) => h.update(format!("T{}:{s};", s.len())),
            }
        }
        let digest = h.finalize();
        let mut first = [0u8; 16];
        first.copy_from_slice(&digest[..16]);
        sum = sum.wrapping_add(u128::from_be_bytes(first));
    }
    TableSummary {
        rows: rows.len() as u64,
        checksum: format!("{sum:032x}"),
    }
}
