//! Parsing the model's raw argument text into typed calls.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ArgError;
use crate::spec::BUILTIN_NAMES;
use crate::text::{fold_command, one_line};

/// Longest shell timeout a model may ask for.
pub const MAX_SHELL_TIMEOUT_SECS: u64 = 600;
const DEFAULT_SHELL_TIMEOUT_SECS: u64 = 120;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    pub path: String,
    /// First line to return, 1-based (0 is treated as 1).
    #[serde(default)]
    pub offset_line: Option<u64>,
    #[serde(default)]
    pub limit_lines: Option<u64>,
}

impl ReadFileArgs {
    pub fn is_ranged(&self) -> bool {
        self.offset_line.is_some() || self.limit_lines.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    pub path: String,
    pub content: String,
    #[serde(default = "default_true")]
    pub create_dirs: bool,
}

/// Other agents' names for the two texts (`old_string`, `oldText`) are taken too: models
/// trained on them send them unasked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    pub path: String,
    #[serde(alias = "old_string", alias = "oldText")]
    pub old_text: String,
    #[serde(alias = "new_string", alias = "newText")]
    pub new_text: String,
    #[serde(default)]
    pub replace_all: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    #[serde(default = "default_dot")]
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteFileArgs {
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    pub command: String,
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    #[serde(default)]
    pub workdir: Option<String>,
}

fn default_true() -> bool {
    true
}
fn default_dot() -> String {
    ".".to_string()
}
fn default_timeout() -> u64 {
    DEFAULT_SHELL_TIMEOUT_SECS
}

/// A parsed, validated call to a built-in tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuiltinCall {
    ReadFile(ReadFileArgs),
    WriteFile(WriteFileArgs),
    EditFile(EditFileArgs),
    ListDir(ListDirArgs),
    DeleteFile(DeleteFileArgs),
    Shell(ShellArgs),
}

/// What a call whose arguments are not JSON is told. The call goes back to the model as `{}`
/// (servers refuse malformed arguments in a request's history), so this says how much came
/// and how it ended.
pub fn not_json(raw_args: &str, e: &serde_json::Error) -> String {
    let cut = if e.is_eof() {
        ", cut off before its end"
    } else {
        ""
    };
    format!(
        "arguments are not valid JSON ({} characters{cut}: {e}); nothing was run. Send the \
         call again with its arguments as one whole JSON object.",
        raw_args.chars().count()
    )
}

/// Parse the raw argument text a model produced for built-in tool `name`.
pub fn parse_call(name: &str, raw_args: &str) -> Result<BuiltinCall, ArgError> {
    if !BUILTIN_NAMES.contains(&name) {
        return Err(ArgError::new(format!(
            "unknown tool `{}`; available tools: {}",
            one_line(name),
            BUILTIN_NAMES.join(", ")
        )));
    }
    // Models often send "" for a call without arguments; treat it as {}.
    let value: Value = if raw_args.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(raw_args).map_err(|e| ArgError::new(not_json(raw_args, &e)))?
    };
    if !value.is_object() {
        return Err(ArgError::new(format!(
            "{name}: arguments must be a JSON object, got {}",
            json_kind(&value)
        )));
    }
    let call = match name {
        "read_file" => BuiltinCall::ReadFile(typed(name, value)?),
        "write_file" => BuiltinCall::WriteFile(typed(name, value)?),
        "edit_file" => BuiltinCall::EditFile(typed(name, value)?),
        "list_dir" => BuiltinCall::ListDir(typed(name, value)?),
        "delete_file" => BuiltinCall::DeleteFile(typed(name, value)?),
        _ => BuiltinCall::Shell(validate_shell(typed(name, value)?)?),
    };
    Ok(call)
}

/// Deserialize from an already-parsed value, so serde's message carries no
/// line/column noise: "write_file: missing field `content`".
fn typed<T: DeserializeOwned>(name: &str, value: Value) -> Result<T, ArgError> {
    // The path names the offending field, which serde's own message leaves out for type errors.
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let named =
            inner.to_string().starts_with("unknown field") || path == "." || path.is_empty();
        if named {
            // A missing or unknown field: the model has the shape wrong, so say the shape.
            ArgError::new(format!("{name}: {inner}; {}", usage(name)))
        } else {
            ArgError::new(format!("{name}: `{path}`: {inner}"))
        }
    })
}

/// `name takes {"path": string, "limit_lines"?: integer}`, read from the tool's own schema.
fn usage(name: &str) -> String {
    crate::spec::builtin_specs()
        .into_iter()
        .find(|s| s.name == name)
        .map(|spec| shape(name, &spec.parameters))
        .unwrap_or_default()
}

/// A tool's arguments as one line a model can copy, from its JSON schema: `work_on takes
/// {"plan"?: string, "new"?: {"title": string}}`. Said when a call has the shape wrong (a
/// missing or unknown field), where the schema itself is far back in the prompt.
pub fn shape(name: &str, parameters: &Value) -> String {
    format!("{name} takes {}", object_shape(parameters))
}

fn object_shape(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return "{}".into();
    };
    // Required fields first, in the schema's order for them.
    let mut fields: Vec<(&String, &Value)> = props.iter().collect();
    fields.sort_by_key(|(k, _)| {
        required
            .iter()
            .position(|r| r == k)
            .unwrap_or(required.len())
    });
    let fields: Vec<String> = fields
        .into_iter()
        .map(|(k, v)| {
            let opt = if required.contains(&k.as_str()) {
                ""
            } else {
                "?"
            };
            format!("\"{k}\"{opt}: {}", value_shape(v))
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

fn value_shape(v: &Value) -> String {
    match &v["type"] {
        Value::String(t) if t == "object" && v["properties"].is_object() => object_shape(v),
        Value::String(t) if t == "array" => format!("[{}]", value_shape(&v["items"])),
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ => "value".into(),
    }
}

fn validate_shell(args: ShellArgs) -> Result<ShellArgs, ArgError> {
    if args.command.trim().is_empty() {
        return Err(ArgError::new("shell: `command` is empty"));
    }
    if args.timeout_secs == 0 {
        return Err(ArgError::new("shell: `timeout_secs` must be at least 1"));
    }
    if args.timeout_secs > MAX_SHELL_TIMEOUT_SECS {
        return Err(ArgError::new(format!(
            "shell: `timeout_secs` is {} but the maximum is {MAX_SHELL_TIMEOUT_SECS}",
            args.timeout_secs
        )));
    }
    Ok(args)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl BuiltinCall {
    pub fn name(&self) -> &'static str {
        match self {
            BuiltinCall::ReadFile(_) => "read_file",
            BuiltinCall::WriteFile(_) => "write_file",
            BuiltinCall::EditFile(_) => "edit_file",
            BuiltinCall::ListDir(_) => "list_dir",
            BuiltinCall::DeleteFile(_) => "delete_file",
            BuiltinCall::Shell(_) => "shell",
        }
    }

    /// Whether the call can change the world.
    pub fn effectful(&self) -> bool {
        matches!(
            self,
            BuiltinCall::WriteFile(_)
                | BuiltinCall::EditFile(_)
                | BuiltinCall::DeleteFile(_)
                | BuiltinCall::Shell(_)
        )
    }

    /// One line describing the call, for effect-ledger records.
    pub fn summary(&self) -> String {
        match self {
            BuiltinCall::ReadFile(a) => {
                let mut s = format!("read_file {}", one_line(&a.path));
                if a.is_ranged() {
                    let from = a.offset_line.unwrap_or(1).max(1);
                    match a.limit_lines {
                        Some(n) => s.push_str(&format!(" (lines {from}..+{n})")),
                        None => s.push_str(&format!(" (from line {from})")),
                    }
                }
                s
            }
            BuiltinCall::WriteFile(a) => format!(
                "write_file {} ({} bytes)",
                one_line(&a.path),
                a.content.len()
            ),
            BuiltinCall::EditFile(a) => format!(
                "edit_file {} ({} bytes for {}{})",
                one_line(&a.path),
                a.new_text.len(),
                a.old_text.len(),
                if a.replace_all { ", every one" } else { "" }
            ),
            BuiltinCall::ListDir(a) => format!("list_dir {}", one_line(&a.path)),
            BuiltinCall::DeleteFile(a) => format!("delete_file {}", one_line(&a.path)),
            BuiltinCall::Shell(a) => format!("shell: {}", fold_command(&a.command)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(name: &str, raw: &str) -> String {
        parse_call(name, raw).unwrap_err().to_string()
    }

    #[test]
    fn parses_each_tool_with_defaults() {
        assert_eq!(
            parse_call("write_file", r#"{"path":"a","content":"x"}"#).unwrap(),
            BuiltinCall::WriteFile(WriteFileArgs {
                path: "a".into(),
                content: "x".into(),
                create_dirs: true
            })
        );
        assert_eq!(
            parse_call("list_dir", "").unwrap(),
            BuiltinCall::ListDir(ListDirArgs { path: ".".into() })
        );
        let BuiltinCall::Shell(s) = parse_call("shell", r#"{"command":"ls"}"#).unwrap() else {
            panic!("not shell")
        };
        assert_eq!(s.timeout_secs, 120);
        assert_eq!(s.workdir, None);
        let BuiltinCall::ReadFile(r) = parse_call(
            "read_file",
            r#"{"path":"a","offset_line":3,"limit_lines":2}"#,
        )
        .unwrap() else {
            panic!("not read_file")
        };
        assert_eq!((r.offset_line, r.limit_lines), (Some(3), Some(2)));
        assert!(parse_call("delete_file", r#"{"path":"a"}"#).is_ok());
    }

    #[test]
    fn malformed_json() {
        assert_eq!(
            err("read_file", "{\"path\": }"),
            "arguments are not valid JSON (10 characters: expected value at line 1 column 10); \
             nothing was run. Send the call again with its arguments as one whole JSON object."
        );
        assert!(
            err("write_file", r#"{"path": "a.txt", "content": "abc"#).contains(
                "not valid JSON (33 characters, cut off before its end: EOF while parsing a string"
            )
        );
    }

    #[test]
    fn a_shape_shows_nested_objects_lists_and_either_types() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "new": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
                "ticket": {"type": ["integer", "string"]},
                "files": {"type": "array", "items": {"type": "string"}},
                "plan": {"type": "string"}
            },
            "required": ["plan"]
        });
        assert_eq!(
            shape("work_on", &schema),
            "work_on takes {\"plan\": string, \"files\"?: [string], \"new\"?: {\"title\": string}, \
             \"ticket\"?: integer|string}"
        );
    }

    #[test]
    fn missing_field() {
        assert_eq!(
            err("write_file", r#"{"path":"a"}"#),
            "write_file: missing field `content`; write_file takes {\"path\": string, \
             \"content\": string, \"create_dirs\"?: boolean}"
        );
    }

    #[test]
    fn wrong_type() {
        let e = err("read_file", r#"{"path":"a","limit_lines":"ten"}"#);
        assert!(
            e.starts_with("read_file: `limit_lines`: invalid type: string \"ten\""),
            "{e}"
        );
        let e = err(
            "write_file",
            r#"{"path":"a","content":"x","create_dirs":"yes"}"#,
        );
        assert!(e.contains("expected a boolean"), "{e}");
        assert_eq!(
            err("shell", "[1]"),
            "shell: arguments must be a JSON object, got an array"
        );
    }

    #[test]
    fn unknown_field() {
        let e = err("delete_file", r#"{"path":"a","recursive":true}"#);
        assert!(
            e.starts_with("delete_file: unknown field `recursive`"),
            "{e}"
        );
    }

    #[test]
    fn edit_file_takes_other_agents_names_for_its_texts() {
        let mine = parse_call("edit_file", r#"{"path":"a","old_text":"x","new_text":"y"}"#);
        let theirs = parse_call(
            "edit_file",
            r#"{"path":"a","old_string":"x","new_string":"y"}"#,
        );
        assert_eq!(mine.unwrap(), theirs.unwrap());
        let e = err("edit_file", r#"{"path":"a","old_text":"x"}"#);
        assert!(
            e.starts_with("edit_file: missing field `new_text`; edit_file takes {"),
            "{e}"
        );
        assert!(e.contains("\"old_text\": string"), "{e}");
        assert!(e.contains("\"replace_all\"?: boolean}"), "{e}");
    }

    #[test]
    fn unknown_tool() {
        assert_eq!(
            err("rm_rf", "{}"),
            "unknown tool `rm_rf`; available tools: read_file, write_file, edit_file, list_dir, delete_file, shell"
        );
    }

    #[test]
    fn shell_limits() {
        assert_eq!(
            err("shell", r#"{"command":"ls","timeout_secs":601}"#),
            "shell: `timeout_secs` is 601 but the maximum is 600"
        );
        assert!(parse_call("shell", r#"{"command":"ls","timeout_secs":600}"#).is_ok());
        assert!(err("shell", r#"{"command":"ls","timeout_secs":0}"#).contains("at least 1"));
        assert!(err("shell", r#"{"command":"  "}"#).contains("empty"));
        assert!(err("shell", r#"{"command":"ls","timeout_secs":-1}"#).contains("invalid value"));
    }

    #[test]
    fn name_effect_summary() {
        let w = parse_call("write_file", r#"{"path":"notes/a.md","content":"héllo"}"#).unwrap();
        assert_eq!(w.name(), "write_file");
        assert!(w.effectful());
        assert_eq!(w.summary(), "write_file notes/a.md (6 bytes)");
        let s = parse_call("shell", r#"{"command":"ls\n  -la"}"#).unwrap();
        assert_eq!(s.summary(), "shell: ls -la");
        assert!(s.effectful());
        let r = parse_call("read_file", r#"{"path":"x\ny"}"#).unwrap();
        assert!(!r.effectful());
        assert_eq!(r.summary(), "read_file x?y");
        assert!(!parse_call("list_dir", "{}").unwrap().effectful());
        assert!(
            parse_call("delete_file", r#"{"path":"a"}"#)
                .unwrap()
                .effectful()
        );
    }
}
