//! Tool descriptions offered to the model.

use serde_json::{Value, json};

use crate::args::MAX_SHELL_TIMEOUT_SECS;

/// One tool as advertised to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema for the arguments object.
    pub parameters: Value,
    /// Whether a call can change the world (the engine ledgers these).
    pub effectful: bool,
}

pub(crate) const BUILTIN_NAMES: [&str; 6] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "delete_file",
    "shell",
];

pub fn is_builtin(name: &str) -> bool {
    BUILTIN_NAMES.contains(&name)
}

/// The six built-in tools, in a stable order.
pub fn builtin_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "read_file",
            description: "Read a text file in the workspace. Paths are relative to your working folder; an \
                absolute path must lie inside the workspace. \
                Files over 1 MiB must be read in parts using offset_line/limit_lines. \
                Binary files are refused, except pictures (PNG, JPEG, GIF, WebP up to 5 MiB), \
                which are shown to models that take pictures.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to your working folder."},
                    "offset_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based). Default 1."},
                    "limit_lines": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to return. Default: to the end of the file."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            effectful: false,
        },
        ToolSpec {
            name: "write_file",
            description: "Create or overwrite a file in the workspace with the given content. \
                The write is atomic: readers see either the old or the new content. \
                Missing parent directories are created unless create_dirs is false.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to your working folder."},
                    "content": {"type": "string", "description": "The complete new content of the file."},
                    "create_dirs": {"type": "boolean", "description": "Create missing parent directories. Default true."}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
            effectful: true,
        },
        ToolSpec {
            name: "edit_file",
            description: "Change an existing text file by replacing one exact piece of it: \
                old_text must match the file exactly (spaces and line breaks included) and occur \
                once, unless replace_all is true. Copy old_text from read_file's result, with \
                enough lines around the change to make it unique.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to your working folder."},
                    "old_text": {"type": "string", "description": "The exact text to replace."},
                    "new_text": {"type": "string", "description": "The text to put in its place."},
                    "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_text. Default false."}
                },
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": false
            }),
            effectful: true,
        },
        ToolSpec {
            name: "list_dir",
            description: "List a directory in the workspace, sorted by name. \
                Directories are shown with a trailing '/'. At most 1000 entries are shown.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Directory path relative to your working folder. Default '.' (the working folder)."}
                },
                "additionalProperties": false
            }),
            effectful: false,
        },
        ToolSpec {
            name: "delete_file",
            description: "Delete one file in the workspace. Directories cannot be deleted with this tool.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to your working folder."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            effectful: true,
        },
        ToolSpec {
            name: "shell",
            description: "Run a command with /bin/sh -c in the workspace. stdin is empty; stdout and stderr \
                are merged and you receive the exit code and the last 4000 characters of output. \
                The command and everything it starts are terminated on timeout, and background \
                processes still running when it exits are terminated too.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "Shell command line."},
                    "timeout_secs": {"type": "integer", "minimum": 1, "maximum": MAX_SHELL_TIMEOUT_SECS, "description": "Time limit in seconds. Default 120, maximum 600."},
                    "workdir": {"type": "string", "description": "Working directory relative to your working folder. Default: the working folder."}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
            effectful: true,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_match_names_and_effects() {
        let specs = builtin_specs();
        let names: Vec<_> = specs.iter().map(|s| s.name).collect();
        assert_eq!(names, BUILTIN_NAMES);
        for s in &specs {
            assert!(is_builtin(s.name));
            assert_eq!(s.parameters["type"], "object");
            assert_eq!(s.parameters["additionalProperties"], false);
            let effectful = matches!(s.name, "write_file" | "edit_file" | "delete_file" | "shell");
            assert_eq!(s.effectful, effectful, "{}", s.name);
        }
        assert!(!is_builtin("rm_rf"));
    }
}
