//! The file tools. Synchronous (run on the blocking pool by `execute`);
//! errors carry the model's own path in their message.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::args::{DeleteFileArgs, ListDirArgs, ReadFileArgs, WriteFileArgs};
use crate::error::ToolError;
use crate::picture::{Picture, is_picture_path, load_picture, picture_marker};
use crate::workspace::Workspace;

/// Largest file `read_file` returns whole, and the most text a ranged read
/// returns.
pub const MAX_READ_BYTES: u64 = 1024 * 1024;
/// Most entries `list_dir` shows.
pub const MAX_LIST_ENTRIES: usize = 1000;

/// `takes_pictures`: the model the result goes to takes pictures. A picture (png, jpg, jpeg,
/// gif or webp whose bytes are one) is then described under a [`picture_marker`] line, from
/// which the engine attaches it to the result; otherwise it is only described.
pub(crate) fn read_file(
    ws: &Workspace,
    args: &ReadFileArgs,
    takes_pictures: bool,
) -> Result<String, ToolError> {
    let shown = &args.path;
    let path = ws.resolve(shown)?;
    let meta = fs::metadata(&path).map_err(|e| ToolError::io("read", shown, e))?;
    if meta.is_dir() {
        return Err(ToolError::Refused(format!(
            "'{shown}' is a directory; use list_dir to see its contents"
        )));
    }
    // FIFOs and devices could block forever or never end.
    if !meta.is_file() {
        return Err(ToolError::Refused(format!(
            "'{shown}' is not a regular file"
        )));
    }
    // A file named as a picture whose bytes are not one is read as text below.
    if is_picture_path(shown)
        && let Some(picture) = load_picture(ws, shown)?
    {
        return Ok(picture_result(shown, &picture, takes_pictures));
    }
    if !args.is_ranged() {
        if meta.len() > MAX_READ_BYTES {
            return Err(ToolError::Refused(format!(
                "'{shown}' is {} bytes, over the 1 MiB limit for reading a whole file; \
                 read it in parts with offset_line and limit_lines",
                meta.len()
            )));
        }
        let bytes = fs::read(&path).map_err(|e| ToolError::io("read", shown, e))?;
        if bytes.contains(&0) {
            return Err(binary(shown));
        }
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    read_range(&path, args)
}

fn picture_result(shown: &str, picture: &Picture, takes_pictures: bool) -> String {
    let about = picture.describe(shown);
    if !takes_pictures {
        return format!(
            "{about}. This model cannot see pictures, so the picture is not shown (its bytes are \
             not text)."
        );
    }
    // The marker is one line; a path with a line break cannot be named in it.
    if shown.contains(['\n', '\r']) {
        return format!(
            "{about}. The picture cannot be attached because its path has a line break; \
             rename the file to see it."
        );
    }
    // The engine reads the picture again from the marker and says whether it is attached.
    format!("{}\n{about}.", picture_marker(shown, &picture.sha256))
}

fn binary(shown: &str) -> ToolError {
    ToolError::Refused(format!(
        "'{shown}' looks like a binary file (it contains NUL bytes); read_file only returns text"
    ))
}

/// Stream lines so a large file is never held in memory; stop at the range
/// end or the output cap.
fn read_range(path: &Path, args: &ReadFileArgs) -> Result<String, ToolError> {
    let shown = &args.path;
    let file = File::open(path).map_err(|e| ToolError::io("read", shown, e))?;
    let mut reader = BufReader::new(file);
    let first = args.offset_line.unwrap_or(1).max(1);
    let limit = args.limit_lines.unwrap_or(u64::MAX);
    let mut out: Vec<u8> = Vec::new();
    let mut line = Vec::new();
    let mut line_no = 0u64;
    let mut taken = 0u64;
    let mut capped = false;
    while taken < limit {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| ToolError::io("read", shown, e))?;
        if n == 0 {
            break;
        }
        if line.contains(&0) {
            return Err(binary(shown));
        }
        line_no += 1;
        if line_no < first {
            continue;
        }
        if (out.len() + line.len()) as u64 > MAX_READ_BYTES {
            capped = true;
            break;
        }
        out.extend_from_slice(&line);
        taken += 1;
    }
    if taken == 0 && !capped && line_no < first {
        return Err(ToolError::Refused(format!(
            "offset_line {first} is past the end of '{shown}', which has {line_no} lines"
        )));
    }
    let mut text = String::from_utf8_lossy(&out).into_owned();
    if capped {
        if !text.ends_with('\n') && !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "[output stopped at the 1 MiB limit after {taken} lines; continue with offset_line {}]",
            first + taken
        ));
    }
    Ok(text)
}

pub(crate) fn write_file(ws: &Workspace, args: &WriteFileArgs) -> Result<String, ToolError> {
    let shown = &args.path;
    let mut path = ws.resolve(shown)?;
    if path == ws.root() {
        return Err(ToolError::Refused(
            "cannot write to the workspace root itself; give a file path".to_string(),
        ));
    }
    // `resolve` already checked that a symlink's target stays inside; write
    // to that target rather than replacing the link with a file.
    if let Ok(meta) = fs::symlink_metadata(&path)
        && meta.file_type().is_symlink()
        && let Ok(real) = fs::canonicalize(&path)
    {
        path = real;
    }
    let existing = fs::metadata(&path).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(ToolError::Refused(format!(
            "'{shown}' is a directory; give a file path"
        )));
    }
    let parent = path
        .parent()
        .ok_or_else(|| ToolError::Refused(format!("'{shown}' has no parent directory")))?;
    if !parent.is_dir() {
        if !args.create_dirs {
            return Err(ToolError::Refused(format!(
                "the parent directory of '{shown}' does not exist; set create_dirs to true to create it"
            )));
        }
        fs::create_dir_all(parent)
            .map_err(|e| ToolError::io("create the parent directory of", shown, e))?;
    }
    replace_file(&path, parent, args.content.as_bytes(), existing.as_ref())
        .map_err(|e| ToolError::io("write", shown, e))?;
    Ok(format!("wrote {} bytes to {shown}", args.content.len()))
}

/// Put `content` at `path` atomically (a temporary file in `parent`, synced, renamed over it),
/// keeping an `existing` file's mode; the rename is made durable too.
pub(crate) fn replace_file(
    path: &Path,
    parent: &Path,
    content: &[u8],
    existing: Option<&fs::Metadata>,
) -> io::Result<()> {
    let tmp = parent.join(temp_name());
    let written = write_temp(&tmp, content, existing).and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    // Make the rename itself durable; failure here does not undo the write.
    if let Ok(dir) = File::open(parent) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Unique per process and call, short enough to never hit name limits.
fn temp_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        ".troupe-tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn write_temp(tmp: &Path, content: &[u8], existing: Option<&fs::Metadata>) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(tmp)?;
    file.write_all(content)?;
    // Overwriting keeps the old file's mode (e.g. an executable script).
    if let Some(meta) = existing {
        file.set_permissions(meta.permissions())?;
    }
    file.sync_all()
}

pub(crate) fn list_dir(ws: &Workspace, args: &ListDirArgs) -> Result<String, ToolError> {
    let shown = &args.path;
    let path = ws.resolve(shown)?;
    let meta = fs::metadata(&path).map_err(|e| ToolError::io("list", shown, e))?;
    if !meta.is_dir() {
        return Err(ToolError::Refused(format!(
            "'{shown}' is not a directory; use read_file to read a file"
        )));
    }
    let mut entries: Vec<(String, bool)> = Vec::new();
    for entry in fs::read_dir(&path).map_err(|e| ToolError::io("list", shown, e))? {
        let entry = entry.map_err(|e| ToolError::io("list", shown, e))?;
        // Follow symlinks for the "/" marker so a linked directory reads as one.
        let is_dir = fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
        entries.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
    }
    if entries.is_empty() {
        return Ok("(empty directory)".to_string());
    }
    entries.sort();
    let total = entries.len();
    let mut out = String::new();
    for (name, is_dir) in entries.iter().take(MAX_LIST_ENTRIES) {
        out.push_str(name);
        if *is_dir {
            out.push('/');
        }
        out.push('\n');
    }
    if total > MAX_LIST_ENTRIES {
        out.push_str(&format!(
            "[showing the first {MAX_LIST_ENTRIES} of {total} entries; {} more not shown]\n",
            total - MAX_LIST_ENTRIES
        ));
    }
    Ok(out)
}

pub(crate) fn delete_file(ws: &Workspace, args: &DeleteFileArgs) -> Result<String, ToolError> {
    let shown = &args.path;
    let path = ws.resolve(shown)?;
    if path == ws.root() {
        return Err(ToolError::Refused(
            "refusing to delete the workspace root".to_string(),
        ));
    }
    // symlink_metadata: a symlink is removed itself, never its target.
    let meta = fs::symlink_metadata(&path).map_err(|e| ToolError::io("delete", shown, e))?;
    if meta.is_dir() {
        return Err(ToolError::Refused(format!(
            "'{shown}' is a directory; delete_file only deletes files"
        )));
    }
    fs::remove_file(&path).map_err(|e| ToolError::io("delete", shown, e))?;
    Ok(format!("deleted {shown}"))
}
