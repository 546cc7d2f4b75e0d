//! Small file helpers: atomic writes (temp file + rename) and JSON reads that keep the line of
//! a syntax error.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` so that a reader sees either the old file or the whole new one:
/// the bytes go to a temporary file in the same folder, are flushed to disk, then renamed.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Serializes `value` as pretty JSON with a trailing newline and writes it atomically.
pub(crate) fn write_json_atomic<T: serde::Serialize>(
    path: &Path,
    value: &T,
) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    text.push(b'\n');
    write_atomic(path, &text)
}

/// Why a JSON file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonReadError {
    /// The file is not there.
    Missing(PathBuf),
    /// Any other I/O failure.
    Io(PathBuf, String),
    /// The text is not JSON; `line` and `column` are 1-based.
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

/// Reads a file as a JSON value, keeping the position of a syntax error.
pub(crate) fn read_json_value(path: &Path) -> Result<serde_json::Value, JsonReadError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(JsonReadError::Missing(path.to_path_buf()));
        }
        Err(e) => return Err(JsonReadError::Io(path.to_path_buf(), e.to_string())),
    };
    serde_json::from_str(&text).map_err(|e| JsonReadError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}
