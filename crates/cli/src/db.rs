//! `troupe db`: the database's schema version, its migrations, and moving a single-machine
//! install to PostgreSQL.

use crate::config::Config;
use crate::paths;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;
use troupe_store::{OpenOptions, Store};

/// Look after the database: its schema version and migrations, and copying it elsewhere.
#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Print the database's schema version and the migrations this troupe would apply.
    Status(Target),
    /// Apply the pending migrations (troupe serve also applies them when it starts).
    Migrate(Target),
    /// Copy every row of one database into another, empty one, and check that each table's
    /// row count and checksum arrived unchanged. Stop the daemon that uses --from first.
    Copy(CopyArgs),
}

/// Which database: --database, else TROUPE_DATABASE_URL, else the config file's
/// `database_url`, else DATA_DIR/troupe.db.
#[derive(Debug, Args)]
pub struct Target {
    /// postgres://…, sqlite:///PATH or a path.
    #[arg(
        long,
        value_name = "URL",
        env = "TROUPE_DATABASE_URL",
        hide_env_values = true
    )]
    pub database: Option<String>,
    /// The data dir whose troupe.db is meant when no URL is given.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The config file (default: $XDG_CONFIG_HOME/troupe/config.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The database to copy (postgres://…, sqlite:///PATH or a path).
    #[arg(long, value_name = "URL")]
    pub from: String,
    /// The empty database to copy into; it is migrated to this troupe's version first.
    #[arg(long, value_name = "URL")]
    pub to: String,
}

impl Target {
    fn url(&self) -> anyhow::Result<String> {
        let config = Config::locate(self.config.as_deref(), &paths::process_env)?;
        if let Some(url) = config.database_url(self.database.clone()) {
            return Ok(url);
        }
        let dir = match &self.data_dir {
            Some(d) => d.clone(),
            None => paths::data_dir(&paths::process_env)?,
        };
        Ok(dir.join("troupe.db").display().to_string())
    }
}

pub fn db(args: DbArgs) -> anyhow::Result<u8> {
    match args.command {
        DbCommand::Status(t) => status(&t.url()?),
        DbCommand::Migrate(t) => migrate(&t.url()?),
        DbCommand::Copy(c) => copy(&c.from, &c.to),
    }
}

fn status(url: &str) -> anyhow::Result<u8> {
    let s = Store::schema_status_of(url)?;
    println!(
        "schema version {} (this troupe knows {})",
        s.version, s.known
    );
    if s.version > s.known {
        println!("written by a newer troupe: this one refuses to open it");
        return Ok(1);
    }
    if s.pending.is_empty() {
        println!("up to date");
    } else {
        println!("pending: {}", s.pending.join(", "));
    }
    Ok(0)
}

fn migrate(url: &str) -> anyhow::Result<u8> {
    let before = Store::schema_status_of(url).ok();
    let store = Store::open_url(url, clock(), OpenOptions::default())?;
    let after = Store::schema_status_of(url)?;
    match before {
        Some(b) if b.pending.is_empty() => println!("already at schema version {}", b.version),
        Some(b) => println!(
            "applied {} (schema version {} -> {})",
            b.pending.join(", "),
            b.version,
            after.version
        ),
        None => println!("created at schema version {}", after.version),
    }
    drop(store);
    Ok(0)
}

fn copy(from: &str, to: &str) -> anyhow::Result<u8> {
    if from == to {
        bail!("--from and --to name the same database");
    }
    let source = Store::open_url(from, clock(), OpenOptions::default())
        .with_context(|| "cannot open --from")?;
    let dest =
        Store::open_url(to, clock(), OpenOptions::default()).with_context(|| "cannot open --to")?;
    let expected = source.table_summaries()?;
    let arrived = source.copy_into(&dest)?;
    let mut bad = Vec::new();
    for (table, want) in &expected {
        let got = arrived.get(table);
        let mark = if got == Some(want) { "ok" } else { "DIFFERS" };
        if got != Some(want) {
            bad.push(table.clone());
        }
        println!(
            "{mark:>7}  {table:<24} {:>8} rows  {}",
            want.rows, want.checksum
        );
    }
    if !bad.is_empty() {
        bail!("copied, but these tables differ: {}", bad.join(", "));
    }
    let rows: u64 = expected.values().map(|t| t.rows).sum();
    println!(
        "copied {rows} rows in {} tables from {} to {}",
        expected.len(),
        source.path().display(),
        dest.path().display()
    );
    Ok(0)
}

fn clock() -> Arc<dyn troupe_core::Clock> {
    Arc::new(troupe_core::SystemClock)
}
