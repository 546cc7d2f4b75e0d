//! The tools the test server offers and how its `tools/list` is paged.

use std::sync::Arc;

use rmcp::{
    ErrorData,
    model::{JsonObject, ListToolsResult, Tool, ToolAnnotations},
};
use serde_json::{Value, json};

/// Tools per `tools/list` page: small, so a client's cursor handling is exercised even by the
/// ten base tools once `late_tool` joins them.
pub const PAGE_SIZE: usize = 10;

/// The tool `unlock` adds to the list.
pub const LATE_TOOL: &str = "late_tool";

/// Every tool on offer right now, in a stable order: the base tools, `late_tool` once
/// unlocked, then the `many` numbered tools `t0..`.
pub fn tools(many: usize, unlocked: bool) -> Vec<Tool> {
    let text_arg = schema(json!({"text": {"type": "string"}}), &["text"]);
    let no_args = schema(json!({}), &[]);
    let mut all = vec![
        read_only(Tool::new(
            "echo",
            "Returns the given text.",
            text_arg.clone(),
        )),
        read_only(Tool::new(
            "add",
            "Returns the sum of two integers as text.",
            schema(
                json!({"a": {"type": "integer"}, "b": {"type": "integer"}}),
                &["a", "b"],
            ),
        )),
        Tool::new(
            "write_note",
            "Appends the text as one line to the notes file (env MCP_TEST_NOTES).",
            text_arg.clone(),
        ),
        Tool::new(
            "slow",
            "Waits the given seconds; records a cancellation from the client in MCP_TEST_EVENTS.",
            schema(json!({"secs": {"type": "number", "minimum": 0}}), &["secs"]),
        ),
        read_only(Tool::new(
            "fail",
            "Always answers with an error result.",
            no_args.clone(),
        )),
        Tool::new(
            "exit_now",
            "Ends the server process (code 3) without answering.",
            no_args.clone(),
        ),
        Tool::new(
            "freeze",
            "Stops the whole server process (SIGSTOP) without answering: a hung server.",
            no_args.clone(),
        ),
        read_only(Tool::new(
            "picture",
            "Returns a tiny PNG image and a caption.",
            no_args.clone(),
        )),
        read_only(Tool::new(
            "env_names",
            "Returns the names of the server's environment variables, sorted, one per line.",
            no_args.clone(),
        )),
        read_only(Tool::new(
            "big",
            "Returns a text of the given number of characters.",
            schema(
                json!({"chars": {"type": "integer", "minimum": 0}}),
                &["chars"],
            ),
        )),
        read_only(Tool::new(
            "unlock",
            "Adds the tool late_tool and tells the client the tool list changed.",
            no_args.clone(),
        )),
    ];
    if unlocked {
        all.push(read_only(Tool::new(
            LATE_TOOL,
            "Returns \"late\"; offered only after unlock.",
            no_args,
        )));
    }
    for i in 0..many {
        all.push(read_only(Tool::new(
            format!("t{i}"),
            format!("Numbered tool {i}: returns the given text."),
            text_arg.clone(),
        )));
    }
    all
}

/// Whether `name` is one of the numbered tools `t0..t{many-1}`.
pub fn is_numbered(name: &str, many: usize) -> bool {
    name.strip_prefix('t')
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .filter(|digits| !(digits.len() > 1 && digits.starts_with('0')))
        .and_then(|digits| digits.parse::<usize>().ok())
        .is_some_and(|i| i < many)
}

/// One page of `all`, starting at the offset the cursor names; the cursor is the decimal
/// offset of the next page, absent on the last one.
pub fn page(all: Vec<Tool>, cursor: Option<&str>) -> Result<ListToolsResult, ErrorData> {
    let start = match cursor {
        None => 0,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|start| *start <= all.len())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!(
                        "tools/list: cursor {text:?} is not an offset into the {} tools",
                        all.len()
                    ),
                    None,
                )
            })?,
    };
    let end = (start + PAGE_SIZE).min(all.len());
    let next = (end < all.len()).then(|| end.to_string());
    let mut result =
        ListToolsResult::with_all_items(all.into_iter().skip(start).take(end - start).collect());
    result.next_cursor = next;
    Ok(result)
}

fn read_only(tool: Tool) -> Tool {
    tool.with_annotations(ToolAnnotations::new().read_only(true))
}

fn schema(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let mut object = JsonObject::new();
    object.insert("type".into(), json!("object"));
    object.insert("properties".into(), properties);
    if !required.is_empty() {
        object.insert("required".into(), json!(required));
    }
    Arc::new(object)
}
