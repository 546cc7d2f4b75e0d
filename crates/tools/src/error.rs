//! Error types. Their `Display` text is shown to the model, so it says what
//! went wrong and what to do instead, using the model's own (relative) paths.

use std::io;
use std::path::PathBuf;

/// A tool could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("workspace root '{}' cannot be opened: {source}", root.display())]
    RootUnavailable { root: PathBuf, source: io::Error },
    #[error("workspace root '{}' is not a directory", root.display())]
    RootNotDirectory { root: PathBuf },
    #[error("path is empty; give a path relative to the working folder")]
    EmptyPath,
    #[error(
        "path '{path}' is absolute and not under the workspace ('{}'); give a path relative to the working folder",
        root.display()
    )]
    AbsolutePath { path: String, root: PathBuf },
    #[error("path '{path}' is outside the workspace (it must stay under the workspace root)")]
    OutsideWorkspace { path: String },
    #[error(
        "path '{path}' resolves through a symlink to outside the workspace (it must stay under the workspace root)"
    )]
    SymlinkEscape { path: String },
    #[error("cannot {action} '{path}': {source}")]
    Io {
        action: &'static str,
        path: String,
        source: io::Error,
    },
    /// The request is well-formed but refused (directory given to a file
    /// tool, binary file, file too large, ...). The message says why.
    #[error("{0}")]
    Refused(String),
}

impl ToolError {
    pub(crate) fn io(action: &'static str, path: &str, source: io::Error) -> ToolError {
        ToolError::Io {
            action,
            path: path.to_string(),
            source,
        }
    }
}

/// The model's arguments for a tool call could not be accepted.
/// `Display` is the complete message for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ArgError {
    pub message: String,
}

impl ArgError {
    pub(crate) fn new(message: impl Into<String>) -> ArgError {
        ArgError {
            message: message.into(),
        }
    }
}
