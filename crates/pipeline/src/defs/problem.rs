//! A problem found while loading a definitions folder. Loading collects every problem instead
//! of stopping at the first, so one `validate` run shows the owner all that needs fixing.

use std::fmt;
use std::path::PathBuf;

/// One thing wrong with a definitions folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file it was found in, relative to the definitions folder, when there is one.
    pub file: Option<PathBuf>,
    /// 1-based line (and column) inside `file`, for JSON that does not parse or fit its shape.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl Problem {
    /// A problem about the folder as a whole.
    pub fn general(message: impl Into<String>) -> Self {
        Self {
            file: None,
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// A problem in one file.
    pub fn in_file(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self {
            file: Some(file.into()),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// A problem at a position in one file.
    pub fn at(
        file: impl Into<PathBuf>,
        line: usize,
        column: usize,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: Some(file.into()),
            line: Some(line),
            column: Some(column),
            message: message.into(),
        }
    }

    /// A serde error from parsing `shown`, syntax or shape, with its position.
    pub(crate) fn from_serde(shown: PathBuf, err: &serde_json::Error) -> Self {
        let what = if err.is_syntax() || err.is_eof() {
            "malformed JSON"
        } else {
            "does not fit its format"
        };
        Self::at(shown, err.line(), err.column(), format!("{what}: {err}"))
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line, self.column) {
            (Some(file), Some(line), Some(col)) => {
                write!(f, "{}:{line}:{col}: {}", file.display(), self.message)
            }
            (Some(file), Some(line), None) => {
                write!(f, "{}:{line}: {}", file.display(), self.message)
            }
            (Some(file), None, _) => write!(f, "{}: {}", file.display(), self.message),
            (None, _, _) => f.write_str(&self.message),
        }
    }
}

/// Every problem found in a definitions folder; never empty when returned as an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    /// Whether any problem's text contains `needle` (a convenience for tests and callers).
    pub fn mentions(&self, needle: &str) -> bool {
        self.0.iter().any(|p| p.to_string().contains(needle))
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} problem(s) in the definitions:", self.0.len())?;
        for p in &self.0 {
            writeln!(f, "  - {p}")?;
        }
        Ok(())
    }
}
