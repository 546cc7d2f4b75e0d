//! `troupe login-link`: a new one-time link that logs a browser in to the running daemon's
//! web page (the one on `troupe serve`'s first line is used up once opened, and voided by a
//! restart).

use clap::Args;
use serde_json::Value;
use std::path::PathBuf;

use crate::mcp::{Daemon, need};
use crate::paths;

/// Print a new one-time login link for the running daemon's web page.
///
/// Asks the daemon found through DATA_DIR/daemon.json (or --addr) with its token (--token,
/// TROUPE_TOKEN, else DATA_DIR/token). Opening the link sets the page's session cookie in that
/// browser; the link then stops working.
#[derive(Debug, Args)]
pub struct LoginLinkArgs {
    /// Where troupe keeps its database, daemon.json and token (default: $XDG_DATA_HOME/troupe,
    /// else ~/.local/share/troupe).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// The daemon's address, instead of the one DATA_DIR/daemon.json names.
    #[arg(long, value_name = "HOST:PORT")]
    pub addr: Option<String>,

    /// The daemon's bearer token (default: DATA_DIR/token).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TROUPE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
}

/// Run `troupe login-link`; returns the exit code.
pub async fn login_link(args: LoginLinkArgs) -> anyhow::Result<u8> {
    let data_dir = match &args.data_dir {
        Some(d) => d.clone(),
        None => paths::data_dir(&paths::process_env)?,
    };
    let daemon = need(
        Daemon::find(&data_dir, args.addr.as_deref(), args.token.clone())?,
        &data_dir,
    )?;
    let link = daemon
        .send(reqwest::Method::POST, "/v1/login-links", None)
        .await?;
    let path = link
        .get("path")
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow::anyhow!("the daemon's answer names no link: {link}"))?;
    println!("{}{path}", daemon.base);
    Ok(0)
}
