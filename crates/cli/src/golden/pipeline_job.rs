//! A pipeline job: the fixture made a git checkout, then `troupe pipeline run` on it — the
//! command a person runs — with the bench's model and a wall-clock limit.

use super::job::{Job, Pipeline};
use super::progress::Live;
use super::runner::{Model, copy_dir};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::Command;

/// A fixed git identity, so the checkout's commits (the fixture's, the publish) need no user
/// configuration.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "troupe bench"),
    ("GIT_AUTHOR_EMAIL", "bench@localhost"),
    ("GIT_COMMITTER_NAME", "troupe bench"),
    ("GIT_COMMITTER_EMAIL", "bench@localhost"),
];

fn git(ws: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(ws)
        .envs(IDENTITY)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

async fn git_ok(ws: &Path, args: &[&str]) -> Result<()> {
    let out = git(ws)
        .args(args)
        .output()
        .await
        .context("cannot run git")?;
    if !out.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Run the pipeline; answers the limit that cut it short, if one did.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    job: &Job,
    p: &Pipeline,
    model: &Model,
    proxy_url: Option<&str>,
    dir: &Path,
    ws: &Path,
    data: &Path,
    config: &Path,
    live: &Live,
) -> Result<Option<String>> {
    copy_dir(&job.fixture(), ws)?;
    git_ok(ws, &["init", "-q", "-b", "main"]).await?;
    git_ok(ws, &["add", "-A"]).await?;
    git_ok(ws, &["commit", "-q", "-m", "the job's fixture"]).await?;
    let defs = std::fs::canonicalize(job.dir.join(&p.defs))?;
    let exe = std::env::current_exe().context("cannot find the troupe binary")?;
    let log = std::fs::File::create(dir.join("pipeline.log"))?;
    let mut cmd = Command::new(exe);
    cmd.args(["pipeline", "run", &p.workflow])
        .arg("--defs")
        .arg(&defs)
        .arg("--source")
        .arg(ws)
        .arg("--data-dir")
        .arg(data)
        .envs(IDENTITY)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .kill_on_drop(true);
    for (k, v) in &p.set {
        let v = match v {
            toml::Value::String(s) => s.clone(),
            other => serde_json::to_string(other)?,
        };
        cmd.arg("--set").arg(format!("{k}={v}"));
    }
    match model {
        Model::Endpoint {
            model,
            api_key_env,
            kind,
            max_output_tokens,
            ..
        } => {
            cmd.arg("--base-url")
                .arg(proxy_url.context("the proxy is not running")?)
                .args(["--model", model, "--provider", kind]);
            if let Some(n) = max_output_tokens {
                cmd.arg("--max-output-tokens").arg(n.to_string());
            }
            if let Some(var) = api_key_env {
                cmd.args(["--api-key-env", var]);
            }
        }
        Model::Config(_) => {
            cmd.arg("--config").arg(config);
        }
        Model::Scripts(set) => {
            let per_operator = job.dir.join("scripts").join(set);
            if per_operator.is_dir() {
                cmd.arg("--script-dir")
                    .arg(std::fs::canonicalize(per_operator)?);
            } else {
                let one = job.script(set, "default").with_context(|| {
                    format!(
                        "job {} has no scripts/{set}/ nor a {set}.json script",
                        job.id
                    )
                })?;
                cmd.arg("--script").arg(std::fs::canonicalize(one)?);
            }
        }
    }
    let mut child = cmd.spawn().context("cannot start troupe pipeline run")?;
    live.update(0, 0);
    let limit = Duration::from_secs(job.file.limits.wall_secs);
    match tokio::time::timeout(limit, child.wait()).await {
        // The run's own verdict (done, stopped, failed) is for the checks to judge.
        Ok(status) => {
            status?;
            Ok(None)
        }
        Err(_) => {
            child.kill().await?;
            Ok(Some(format!(
                "wall-clock limit of {}s reached",
                job.file.limits.wall_secs
            )))
        }
    }
}
