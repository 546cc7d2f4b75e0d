//! AC-13: a seams check's parts, in order. From a command printing them one per line (run
//! like a command check: its own process group, the shell's whitelist, one command check on
//! the machine at a time), from a glob (every match, natural order; videos that are cuts of
//! one master: the newest, cut at its scenes), or from one file cut up (Markdown and text at
//! `#`/`##`, HTML at `h1`/`h2`, a video at its scene cuts). A single file listed or matched is
//! cut the same way. Code is not for this check (AC-17); text and pictures are not mixed.

use super::frames;
use crate::checks::run::{Outcome, run_command};
use std::path::{Path, PathBuf};
use troupe_core::acceptance_check::path_inside;
use troupe_core::seams::split::{Section, html_words, split_html, split_markdown};
use troupe_core::seams::{
    PartKind, Source, natural_cmp, not_for_code, part_kind, source, stem, videos_are_recuts,
};
use troupe_store::{CheckRecord, RunOutcome};
use troupe_tools::Workspace;

/// The most parts one check judges: each seam is a picture or two excerpts in one call.
pub const MAX_PARTS: usize = 40;
/// Text read from one part at most.
const TEXT_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// What a part is made of.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// A text part's words.
    Text(String),
    Picture(PathBuf),
    /// A stretch of a video, in seconds; `end` None: to its end.
    Video {
        file: PathBuf,
        start: f64,
        end: Option<f64>,
    },
}

impl Body {
    pub fn is_text(&self) -> bool {
        matches!(self, Body::Text(_))
    }
}

/// One part, named as the run's detail names it ("02-market").
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub name: String,
    pub body: Body,
}

fn error(detail: impl Into<String>) -> Outcome {
    Outcome::new(RunOutcome::Error, detail)
}

fn failed(detail: impl Into<String>) -> Outcome {
    Outcome::new(RunOutcome::Failed, detail)
}

fn blocked(detail: impl Into<String>) -> Outcome {
    Outcome::new(RunOutcome::Blocked, detail)
}

/// The check's parts in order, or how the run ends without a judge.
pub async fn parts(c: &CheckRecord, ws: &Workspace) -> Result<Vec<Part>, Outcome> {
    let Some(src) = source(c.path.as_deref(), c.command.as_deref()) else {
        return Err(error("the check names no parts (no path and no command)"));
    };
    let files = match src {
        Source::Command(cmd) => listed(c, cmd, ws).await?,
        Source::Glob(pattern) => globbed(pattern, ws)?,
        Source::File(path) => vec![(path.to_string(), resolved(path, "path", ws)?)],
    };
    let parts = if let [(rel, abs)] = files.as_slice() {
        cut(rel, abs).await?
    } else {
        whole_files(&files).await?
    };
    match parts.len() {
        0 | 1 => Err(error(format!(
            "only {} part{}: there is no seam to judge",
            parts.len(),
            if parts.len() == 1 { "" } else { "s" }
        ))),
        n if n > MAX_PARTS => Err(error(format!(
            "{n} parts: a seams check judges at most {MAX_PARTS}; list fewer, or split the check"
        ))),
        _ => Ok(parts),
    }
}

/// A workspace-relative path made real: outside the workspace it is blocked (AC-1, judged
/// again at run), missing it fails.
fn resolved(rel: &str, field: &'static str, ws: &Workspace) -> Result<PathBuf, Outcome> {
    if let Err(e) = path_inside(rel, field) {
        return Err(blocked(format!("not run: {}", e.message)));
    }
    let real = ws
        .resolve(rel)
        .map_err(|e| blocked(format!("not run: {rel}: {e}")))?;
    if !real.is_file() {
        return Err(failed(format!("{rel} does not exist")));
    }
    Ok(real)
}

/// The parts a command prints, one per line, relative to its folder.
async fn listed(
    c: &CheckRecord,
    cmd: &str,
    ws: &Workspace,
) -> Result<Vec<(String, PathBuf)>, Outcome> {
    let rec = run_command(c, cmd, ws.clone()).await?;
    if rec.timed_out {
        return Err(error(format!(
            "the list command timed out after {} s",
            c.timeout_secs
        )));
    }
    if rec.exit_code != Some(0) {
        let mut o = error(format!(
            "the list command failed (exit {})",
            rec.exit_code
                .map_or_else(|| "by a signal".into(), |c| c.to_string())
        ));
        o.output_tail = rec.output_tail;
        return Err(o);
    }
    let base = c.cwd.as_deref().unwrap_or("").trim_end_matches('/');
    let mut files = Vec::new();
    for line in rec
        .output_tail
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        let line = line.strip_prefix("./").unwrap_or(line);
        if line.starts_with('/') {
            return Err(blocked(format!(
                "not run: the part '{line}' is an absolute path, outside the workspace"
            )));
        }
        let rel = if base.is_empty() {
            line.to_string()
        } else {
            format!("{base}/{line}")
        };
        let real = resolved(&rel, "part", ws)?;
        files.push((rel, real));
    }
    if files.is_empty() {
        return Err(failed("the list command printed no parts"));
    }
    Ok(files)
}

/// Every file a glob matches, in natural order; videos that are cuts of one master give
/// the newest alone.
fn globbed(pattern: &str, ws: &Workspace) -> Result<Vec<(String, PathBuf)>, Outcome> {
    if let Err(e) = path_inside(pattern, "path") {
        return Err(blocked(format!("not run: {}", e.message)));
    }
    let root = ws.root();
    let full = format!(
        "{}/{}",
        glob::Pattern::escape(&root.to_string_lossy()),
        pattern.trim_start_matches("./")
    );
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let matches =
        glob::glob_with(&full, options).map_err(|e| error(format!("path: not a glob: {e}")))?;
    let mut files = Vec::new();
    for m in matches.flatten() {
        let Ok(rel) = m
            .strip_prefix(root)
            .map(|r| r.to_string_lossy().into_owned())
        else {
            continue;
        };
        let real = ws
            .resolve(&rel)
            .map_err(|e| blocked(format!("not run: {rel}: {e}")))?;
        if real.is_file() {
            files.push((rel, real));
        }
    }
    if files.is_empty() {
        return Err(failed(format!("no file matches {pattern}")));
    }
    files.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    let names: Vec<&str> = files.iter().map(|(r, _)| r.as_str()).collect();
    if files.len() > 1
        && names.iter().all(|n| part_kind(n) == PartKind::Video)
        && videos_are_recuts(&names)
    {
        let newest = files
            .iter()
            .max_by_key(|(_, p)| std::fs::metadata(p).and_then(|m| m.modified()).ok())
            .cloned();
        return Ok(newest.into_iter().collect());
    }
    Ok(files)
}

/// Several files, each a part: all text, or all pictures and video.
async fn whole_files(files: &[(String, PathBuf)]) -> Result<Vec<Part>, Outcome> {
    let mut parts = Vec::new();
    let stems: Vec<&str> = files.iter().map(|(r, _)| stem(r)).collect();
    for (i, (rel, abs)) in files.iter().enumerate() {
        let kind = known_kind(rel)?;
        // A name shared by two files is said with its folder.
        let name = if stems.iter().filter(|s| **s == stems[i]).count() > 1 {
            rel.clone()
        } else {
            stems[i].to_string()
        };
        let body = match kind {
            PartKind::Text => Body::Text(read_text(rel, abs).await?),
            PartKind::Html => Body::Text(html_words(&read_text(rel, abs).await?)),
            PartKind::Picture => Body::Picture(abs.clone()),
            _ => Body::Video {
                file: abs.clone(),
                start: 0.0,
                end: None,
            },
        };
        parts.push(Part { name, body });
    }
    if parts.iter().any(|p| p.body.is_text()) && parts.iter().any(|p| !p.body.is_text()) {
        return Err(error(
            "the parts mix text with pictures or video: a seams check compares parts of one kind",
        ));
    }
    Ok(parts)
}

/// A part's kind, refusing code (AC-17) and what cannot be shown.
fn known_kind(rel: &str) -> Result<PartKind, Outcome> {
    match part_kind(rel) {
        PartKind::Code => Err(error(format!("{rel}: {}", not_for_code("path").message))),
        PartKind::Other => Err(error(format!(
            "{rel} is not text, a picture or a video, so its seams cannot be shown"
        ))),
        k => Ok(k),
    }
}

async fn read_text(rel: &str, abs: &Path) -> Result<String, Outcome> {
    let meta = tokio::fs::metadata(abs)
        .await
        .map_err(|e| error(format!("{rel} cannot be read: {e}")))?;
    if meta.len() > TEXT_MAX_BYTES {
        return Err(error(format!(
            "{rel} is larger than {} MiB",
            TEXT_MAX_BYTES >> 20
        )));
    }
    let bytes = tokio::fs::read(abs)
        .await
        .map_err(|e| error(format!("{rel} cannot be read: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// One file cut into its parts.
async fn cut(rel: &str, abs: &Path) -> Result<Vec<Part>, Outcome> {
    let sections = match known_kind(rel)? {
        PartKind::Text => split_markdown(&read_text(rel, abs).await?),
        PartKind::Html => split_html(&read_text(rel, abs).await?),
        PartKind::Picture => return Err(error(format!("{rel} is one picture: it has no seams"))),
        _ => return scenes(rel, abs).await,
    };
    Ok(sections
        .iter()
        .enumerate()
        .map(|(i, s)| Part {
            name: section_name(i, s),
            body: Body::Text(s.text.clone()),
        })
        .collect())
}

/// "02 Market": the part's place and heading, short.
fn section_name(i: usize, s: &Section) -> String {
    let heading: String = s.heading.chars().take(40).collect();
    if heading.is_empty() {
        format!("{:02} (before the first heading)", i + 1)
    } else {
        format!("{:02} {heading}", i + 1)
    }
}

/// A video cut at the cuts scene detection finds (it misses cuts between similar shots).
async fn scenes(rel: &str, abs: &Path) -> Result<Vec<Part>, Outcome> {
    let Some(cuts) = frames::scene_cuts(abs).await else {
        return Err(error(format!(
            "{rel}: its scenes could not be found (ffmpeg is needed)"
        )));
    };
    let mut bounds = vec![0.0];
    bounds.extend(cuts);
    Ok(bounds
        .iter()
        .enumerate()
        .map(|(i, start)| {
            let end = bounds.get(i + 1).copied();
            Part {
                name: format!(
                    "{} shot {} ({})",
                    stem(rel),
                    i + 1,
                    match end {
                        Some(e) => format!("{start:.1}–{e:.1} s"),
                        None => format!("from {start:.1} s"),
                    }
                ),
                body: Body::Video {
                    file: abs.to_path_buf(),
                    start: *start,
                    end,
                },
            }
        })
        .collect())
}
