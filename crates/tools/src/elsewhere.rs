//! Where else a missed `old_text` is: a model that names the wrong file (the test for the code
//! it tests, `shop.py` for `src/shop.py`) is told which file has the text, since the file it
//! named shows nothing like it. The search is bounded: files under the working folder, a few
//! levels deep, small text files only, hidden and build folders skipped.

use std::fs;
use std::path::{Path, PathBuf};

use crate::workspace::Workspace;

const MAX_DEPTH: usize = 4;
const MAX_FILES: usize = 400;
const MAX_FILE_BYTES: u64 = 256 * 1024;
/// All the files read for one miss, together: a working folder that is a whole home folder
/// costs a miss no more than this.
const MAX_BYTES: u64 = 8 * 1024 * 1024;
/// Folders no hand-written text lives in.
const SKIPPED: [&str; 5] = ["node_modules", "target", "__pycache__", "venv", "dist"];

/// The files (as the model would name them, from the working folder) holding `needle`
/// exactly, with the line its first occurrence starts on; `missed` itself is not looked in.
/// At most `limit`.
pub(crate) fn files_holding(
    ws: &Workspace,
    missed: &Path,
    needle: &str,
    limit: usize,
) -> Vec<(String, usize)> {
    let base = ws.base();
    let mut found = Vec::new();
    let mut budget = Budget {
        files: MAX_FILES,
        bytes: MAX_BYTES,
    };
    walk(
        &base,
        0,
        &mut |file| {
            if file == missed || found.len() >= limit {
                return;
            }
            let Ok(text) = fs::read_to_string(file) else {
                return;
            };
            if let Some(at) = text.find(needle) {
                let line = text[..at].matches('\n').count() + 1;
                let shown = file.strip_prefix(&base).unwrap_or(file);
                found.push((shown.display().to_string(), line));
            }
        },
        &mut budget,
    );
    found
}

/// What is left to read.
struct Budget {
    files: usize,
    bytes: u64,
}

fn walk(dir: &Path, depth: usize, visit: &mut dyn FnMut(&Path), budget: &mut Budget) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    // Sorted, so the same tree always gives the same answer.
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if budget.files == 0 {
            return;
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        // Not followed through links: the workspace's confinement is not walked around.
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if depth < MAX_DEPTH && !SKIPPED.contains(&name) {
                walk(&path, depth + 1, visit, budget);
            }
        } else if meta.is_file() && meta.len() <= MAX_FILE_BYTES.min(budget.bytes) {
            budget.files -= 1;
            budget.bytes -= meta.len();
            visit(&path);
        }
    }
}
