//! The logical schema as the database itself reports it: tables with their columns in order,
//! named indexes, views and triggers. Both backends must report the same outline after the
//! same migrations, and `troupe db copy` walks it.

use crate::args;
use crate::db::Dialect;
use crate::{Result, Store, Tx};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchemaOutline {
    /// Each table's columns, in their order.
    pub tables: BTreeMap<String, Vec<String>>,
    /// Indexes created by name (those a primary key or UNIQUE column makes are left out: the
    /// backends name them differently).
    pub indexes: BTreeSet<String>,
    pub views: BTreeSet<String>,
    pub triggers: BTreeSet<String>,
}

/// The store's own bookkeeping table on PostgreSQL (SQLite keeps the version in a pragma).
pub(crate) const VERSION_TABLE: &str = "troupe_schema";

impl Store {
    /// What the database holds, read from its catalog.
    pub fn schema_outline(&self) -> Result<SchemaOutline> {
        self.read(|tx| tx.schema_outline())
    }
}

impl Tx<'_> {
    pub fn schema_outline(&self) -> Result<SchemaOutline> {
        let names = |sql: &str, args: &[crate::Value]| -> Result<BTreeSet<String>> {
            Ok(self
                .query_all(sql, args, |r| r.get::<String>(0))?
                .into_iter()
                .collect())
        };
        let mut out = SchemaOutline::default();
        let table_names = match self.dialect() {
            Dialect::Sqlite => {
                let of = |kind: &str| {
                    names(
                        "SELECT name FROM sqlite_master WHERE type = ?1 AND name NOT LIKE 'sqlite_%'",
                        args![kind],
                    )
                };
                out.indexes = of("index")?;
                out.views = of("view")?;
                out.triggers = of("trigger")?;
                of("table")?
            }
            Dialect::Postgres => {
                out.indexes = names(
                    "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema()
                     AND indexname NOT IN (SELECT conname FROM pg_constraint
                                           WHERE connamespace = current_schema()::regnamespace)",
                    args![],
                )?;
                out.views = names(
                    "SELECT table_name::text FROM information_schema.views
                     WHERE table_schema = current_schema()",
                    args![],
                )?;
                out.triggers = names(
                    "SELECT t.tgname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                     WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace",
                    args![],
                )?;
                let mut tables = names(
                    "SELECT table_name::text FROM information_schema.tables
                     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
                    args![],
                )?;
                tables.remove(VERSION_TABLE);
                tables
            }
        };
        for table in table_names {
            let columns = self.columns(&table)?;
            out.tables.insert(table, columns);
        }
        Ok(out)
    }

    /// A table's columns, in order.
    pub(crate) fn columns(&self, table: &str) -> Result<Vec<String>> {
        match self.dialect() {
            Dialect::Sqlite => self.query_all(
                "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
                args![table],
                |r| r.get(0),
            ),
            Dialect::Postgres => self.query_all(
                "SELECT column_name::text FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = ?1 ORDER BY ordinal_position",
                args![table],
                |r| r.get(0),
            ),
        }
    }

    /// The tables another table's foreign keys point at.
    pub(crate) fn referenced_tables(&self, table: &str) -> Result<BTreeSet<String>> {
        let rows = match self.dialect() {
            Dialect::Sqlite => self.query_all(
                "SELECT DISTINCT \"table\" FROM pragma_foreign_key_list(?1)",
                args![table],
                |r| r.get::<String>(0),
            )?,
            Dialect::Postgres => self.query_all(
                "SELECT DISTINCT confrelid::regclass::text FROM pg_constraint
                 WHERE contype = 'f' AND conrelid = CAST(CAST(?1 AS text) AS regclass)",
                args![table],
                |r| r.get::<String>(0),
            )?,
        };
        Ok(rows.into_iter().filter(|t| t != table).collect())
    }
}
