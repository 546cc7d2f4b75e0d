//! troupe-tools: the built-in agent tools (`read_file`, `write_file`, `edit_file`,
//! `list_dir`, `delete_file`, `shell`).
//!
//! This crate is pure mechanism. It confines paths to a workspace, parses
//! model-supplied arguments, and runs the tools, including the process-group
//! handling `shell` needs. Effect ledgers, guards and records belong to the
//! engine above it.

mod args;
mod call;
mod capture;
mod edit;
mod elsewhere;
mod env;
mod error;
mod fs_tools;
mod group_reaper;
mod lenient;
mod picture;
mod process_group;
mod shell;
mod spec;
mod text;
mod workspace;

pub use args::{
    BuiltinCall, DeleteFileArgs, EditFileArgs, ListDirArgs, MAX_SHELL_TIMEOUT_SECS, ReadFileArgs,
    ShellArgs, WriteFileArgs, not_json, parse_call, shape,
};
pub use call::{ToolContext, ToolOutput};
pub use edit::MAX_EDIT_BYTES;
pub use env::{SHELL_ENV_WHITELIST, ShellEnv};
pub use error::{ArgError, ToolError};
pub use fs_tools::{MAX_LIST_ENTRIES, MAX_READ_BYTES};
pub use lenient::numbers_as_schema_says;
pub use picture::{
    MAX_PICTURE_BYTES, Picture, is_picture_path, load_picture, parse_picture_marker,
    picture_marker, sniff_media_type,
};
pub use process_group::{GroupEnd, end_groups, group_alive, process_running, terminate_group};
pub use shell::{KillPolicy, OUTPUT_TAIL_CHARS, ShellRecord, run_shell};
pub use spec::{ToolSpec, builtin_specs, is_builtin};
pub use text::{MAX_FOLDED_CHARS, fold_command, tail_chars};
pub use workspace::{Workspace, lexical};
