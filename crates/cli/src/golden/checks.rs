//! The deterministic checks a job's outcome is judged by. Each reads the workspace (and, for
//! `unchanged`, the job's fixture); none calls a model or writes anything.

use super::job::{Check, Job};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// One check's verdict.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Verdict {
    pub check: String,
    pub passed: bool,
    /// Why it failed (empty when it passed).
    pub message: String,
}

pub async fn run_all(job: &Job, workspace: &Path) -> Vec<Verdict> {
    let mut out = Vec::new();
    for c in &job.file.checks {
        let (check, result) = (describe(c), run(job, workspace, c).await);
        out.push(Verdict {
            check,
            passed: result.is_ok(),
            message: result.err().unwrap_or_default(),
        });
    }
    out
}

pub fn describe(c: &Check) -> String {
    match c {
        Check::FileMatches { path, regex } => format!("{path} matches /{regex}/"),
        Check::FileAbsent { path } => format!("{path} is absent"),
        Check::Command { run, exit_code, .. } => format!("`{run}` exits {exit_code}"),
        Check::JsonSchema { path, schema } => format!("{path} is valid against {schema}"),
        Check::Unchanged { path } => format!("{path} is unchanged"),
    }
}

async fn run(job: &Job, ws: &Path, c: &Check) -> Result<(), String> {
    match c {
        Check::FileMatches { path, regex } => {
            let text = read(ws, path)?;
            let re = regex::Regex::new(regex).map_err(|e| format!("bad regex: {e}"))?;
            if re.is_match(&text) {
                Ok(())
            } else {
                Err(format!(
                    "{path} does not match /{regex}/ ({} bytes)",
                    text.len()
                ))
            }
        }
        Check::FileAbsent { path } => {
            if ws.join(path).exists() {
                Err(format!("{path} exists"))
            } else {
                Ok(())
            }
        }
        Check::Unchanged { path } => {
            let now = std::fs::read(ws.join(path)).map_err(|e| format!("{path}: {e}"))?;
            let was = std::fs::read(job.fixture().join(path))
                .map_err(|e| format!("{path} is not in the fixture: {e}"))?;
            if now == was {
                Ok(())
            } else {
                Err(format!("{path} was changed"))
            }
        }
        Check::JsonSchema { path, schema } => {
            let text = read(ws, path)?;
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{path} is not JSON: {e}"))?;
            let schema_text = std::fs::read_to_string(job.dir.join(schema))
                .map_err(|e| format!("cannot read {schema}: {e}"))?;
            let schema_value: serde_json::Value = serde_json::from_str(&schema_text)
                .map_err(|e| format!("{schema} is not JSON: {e}"))?;
            let validator = jsonschema::validator_for(&schema_value)
                .map_err(|e| format!("{schema} is not a usable schema: {e}"))?;
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .take(3)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            if errors.is_empty() {
                Ok(())
            } else {
                Err(format!("{path} is not valid: {}", errors.join("; ")))
            }
        }
        Check::Command {
            run,
            exit_code,
            timeout_secs,
        } => command(ws, run, *exit_code, Duration::from_secs(*timeout_secs)).await,
    }
}

fn read(ws: &Path, path: &str) -> Result<String, String> {
    std::fs::read_to_string(ws.join(path)).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{path} does not exist"),
        _ => format!("cannot read {path}: {e}"),
    })
}

async fn command(ws: &Path, run: &str, want: i32, limit: Duration) -> Result<(), String> {
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(run)
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run `{run}`: {e}"))?;
    let out = match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(out) => out.map_err(|e| format!("`{run}`: {e}"))?,
        Err(_) => return Err(format!("did not finish in {}s", limit.as_secs())),
    };
    let code = out.status.code();
    if code == Some(want) {
        return Ok(());
    }
    let mut tail = String::from_utf8_lossy(&out.stderr).into_owned();
    tail.push_str(&String::from_utf8_lossy(&out.stdout));
    let tail: String = tail
        .trim()
        .lines()
        .rev()
        .take(3)
        .collect::<Vec<_>>()
        .join(" | ");
    Err(format!(
        "exited {}: {tail}",
        code.map_or("by a signal".into(), |c| c.to_string())
    ))
}
