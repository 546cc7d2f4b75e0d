//! A golden-path job as data: `bench/golden/<job>/job.toml` (format in bench/golden/FORMAT.md),
//! read strictly so a typo is an error, not a check that silently never runs.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    pub title: String,
    #[serde(default)]
    pub about: Option<String>,
    /// Commands the checks need on PATH.
    #[serde(default)]
    pub needs: Vec<String>,
    #[serde(default)]
    pub workflow: Option<Workflow>,
    #[serde(default)]
    pub blueprint: Option<Blueprint>,
    #[serde(default)]
    pub pipeline: Option<Pipeline>,
    #[serde(default)]
    pub limits: Limits,
    #[serde(default)]
    pub lines: Vec<Line>,
    pub checks: Vec<Check>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workflow {
    pub kind: String,
    #[serde(default)]
    pub instructions: Option<String>,
    #[serde(default)]
    pub max_iterations: Option<u32>,
}

/// A Blueprint the person writes under Plan and hands to a BlueprintLoop before any line.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blueprint {
    pub title: String,
    pub body: String,
    #[serde(default)]
    pub max_iterations: Option<u32>,
}

/// A pipeline run (`troupe pipeline run`, a person's way to run one) on the fixture made a git
/// checkout, instead of a conversation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    /// The workflow's name in the definitions.
    pub workflow: String,
    /// The definitions folder, relative to the job directory.
    pub defs: String,
    /// Values laid over every branch's requirements (`--set KEY=VALUE`).
    #[serde(default)]
    pub set: std::collections::BTreeMap<String, toml::Value>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    #[serde(default = "default_wall")]
    pub wall_secs: u64,
    #[serde(default = "default_calls")]
    pub model_calls: u64,
}

fn default_wall() -> u64 {
    900
}

fn default_calls() -> u64 {
    80
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            wall_secs: default_wall(),
            model_calls: default_calls(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub body: String,
    #[serde(default)]
    pub after: After,
}

/// What the harness waits for after sending a line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum After {
    /// The Bot is idle (its turn, and any workflow turns it set off, are over).
    #[default]
    Idle,
    /// A tool call with an effect started: the harness presses Stop.
    EffectStarted,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    FileMatches {
        path: String,
        regex: String,
    },
    FileAbsent {
        path: String,
    },
    Command {
        run: String,
        #[serde(default)]
        exit_code: i32,
        #[serde(default = "default_check_timeout")]
        timeout_secs: u64,
    },
    JsonSchema {
        path: String,
        schema: String,
    },
    Unchanged {
        path: String,
    },
}

fn default_check_timeout() -> u64 {
    60
}

/// A job read from its directory.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: String,
    pub dir: PathBuf,
    pub file: JobFile,
}

impl Job {
    pub fn fixture(&self) -> PathBuf {
        self.dir.join("fixture")
    }

    /// The script for `role` in script set `set`: the job's own, else the jobs directory's shared
    /// one (only for the default role).
    pub fn script(&self, set: &str, role: &str) -> Option<PathBuf> {
        let name = if role == "default" {
            format!("{set}.json")
        } else {
            format!("{set}.{role}.json")
        };
        let own = self.dir.join("scripts").join(&name);
        if own.is_file() {
            return Some(own);
        }
        let shared = self.dir.parent()?.join("scripts").join(&name);
        (role == "default" && shared.is_file()).then_some(shared)
    }
}

/// Every job under `root` (a directory holding `<job>/job.toml`), sorted by id.
pub fn load_all(root: &Path) -> Result<Vec<Job>> {
    let entries = std::fs::read_dir(root)
        .with_context(|| format!("cannot read the jobs directory {}", root.display()))?;
    let mut jobs = Vec::new();
    for e in entries {
        let dir = e?.path();
        if dir.join("job.toml").is_file() {
            jobs.push(load(&dir)?);
        }
    }
    if jobs.is_empty() {
        bail!(
            "no jobs in {} (each is a directory with a job.toml)",
            root.display()
        );
    }
    jobs.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(jobs)
}

pub fn load(dir: &Path) -> Result<Job> {
    let id = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        bail!(
            "job directory {}: the name must be lowercase letters, digits and '-'",
            dir.display()
        );
    }
    let path = dir.join("job.toml");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let file: JobFile =
        toml::from_str(&text).with_context(|| format!("{} is not a valid job", path.display()))?;
    validate(&file).with_context(|| format!("{} is not a valid job", path.display()))?;
    if !dir.join("fixture").is_dir() {
        bail!("job {id}: {} has no fixture/ directory", dir.display());
    }
    if let Some(p) = &file.pipeline
        && !dir.join(&p.defs).is_dir()
    {
        bail!("job {id}: the pipeline definitions {} are missing", p.defs);
    }
    for c in &file.checks {
        if let Check::JsonSchema { schema, .. } = c
            && !dir.join(schema).is_file()
        {
            bail!("job {id}: the schema {schema} named by a json_schema check is missing");
        }
    }
    Ok(Job {
        id,
        dir: dir.to_path_buf(),
        file,
    })
}

fn validate(f: &JobFile) -> Result<()> {
    if f.title.trim().is_empty() || f.title.contains('\n') {
        bail!("title must be one non-empty line");
    }
    if f.lines.is_empty() && f.blueprint.is_none() && f.pipeline.is_none() {
        bail!("a job needs at least one [[lines]] entry (or a [blueprint] or a [pipeline])");
    }
    if f.pipeline.is_some()
        && (!f.lines.is_empty() || f.workflow.is_some() || f.blueprint.is_some())
    {
        bail!(
            "a [pipeline] job has no lines, workflow or blueprint: the pipeline is the whole job"
        );
    }
    if let Some(b) = &f.blueprint {
        if b.title.trim().is_empty() || b.body.trim().is_empty() {
            bail!("a blueprint needs a title and a body");
        }
        if f.workflow.is_some() {
            bail!(
                "a job with a [blueprint] runs a BlueprintLoop; it cannot also name a [workflow]"
            );
        }
    }
    if f.lines.iter().any(|l| l.body.trim().is_empty()) {
        bail!("a line's body must not be empty");
    }
    if f.checks.is_empty() {
        bail!("a job needs at least one [[checks]] entry");
    }
    if f.limits.wall_secs == 0 || f.limits.model_calls == 0 {
        bail!("limits.wall_secs and limits.model_calls must be at least 1");
    }
    if let Some(w) = &f.workflow {
        match w.kind.as_str() {
            "plan" | "lightloop" => {}
            other => bail!("workflow.kind {other:?} is not one of plan, lightloop"),
        }
        if w.kind == "lightloop"
            && w.instructions
                .as_deref()
                .is_none_or(|i| i.trim().is_empty())
        {
            bail!("a lightloop workflow needs instructions");
        }
    }
    for c in &f.checks {
        match c {
            Check::FileMatches { path, regex } => {
                relative(path)?;
                regex::Regex::new(regex)
                    .with_context(|| format!("check on {path}: the regex does not compile"))?;
            }
            Check::FileAbsent { path } | Check::Unchanged { path } => relative(path)?,
            Check::JsonSchema { path, schema } => {
                relative(path)?;
                relative(schema)?;
            }
            Check::Command { run, .. } => {
                if run.trim().is_empty() {
                    bail!("a command check needs a command in run");
                }
            }
        }
    }
    Ok(())
}

/// A path inside the workspace (or the job directory): relative, with no `..`.
pub fn relative(p: &str) -> Result<()> {
    let path = Path::new(p);
    if p.is_empty()
        || path.is_absolute()
        || path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        bail!("path {p:?} must be relative to the workspace, without '..'");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<JobFile> {
        let f: JobFile = toml::from_str(text)?;
        validate(&f)?;
        Ok(f)
    }

    const MINIMAL: &str = r#"
title = "t"
[[lines]]
body = "do it"
[[checks]]
kind = "file_absent"
path = "x"
"#;

    #[test]
    fn a_minimal_job_reads_with_default_limits() {
        let f = parse(MINIMAL).unwrap();
        assert_eq!((f.limits.wall_secs, f.limits.model_calls), (900, 80));
        assert_eq!(f.lines[0].after, After::Idle);
    }

    #[test]
    fn unknown_keys_and_bad_checks_are_errors_that_say_what_is_wrong() {
        let typo = MINIMAL.replace("body =", "bdy =");
        assert!(format!("{:#}", parse(&typo).unwrap_err()).contains("bdy"));
        let escape = MINIMAL.replace("path = \"x\"", "path = \"../x\"");
        assert!(format!("{:#}", parse(&escape).unwrap_err()).contains("without '..'"));
        let regex = r#"
title = "t"
[[lines]]
body = "b"
[[checks]]
kind = "file_matches"
path = "a"
regex = "("
"#;
        assert!(format!("{:#}", parse(regex).unwrap_err()).contains("does not compile"));
        let no_checks = "title = \"t\"\nchecks = []\n[[lines]]\nbody = \"b\"\n";
        assert!(format!("{:#}", parse(no_checks).unwrap_err()).contains("at least one [[checks]]"));
    }
}
