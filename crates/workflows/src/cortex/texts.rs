//! What child tasks say to the child and to its parent.

use crate::cortex::contract::OutputContract;
use serde_json::{Value, json};
use troupe_store::{TaskRecord, TaskStatus};

/// The result text shown to the parent, at most this many bytes (the rest via `task_output`).
pub const NOTICE_MAX_BYTES: usize = 16 * 1024;

/// The child's task: who asked, what for, and what its final reply must be.
pub fn child_prompt(description: &str, prompt: &str, contract: &OutputContract) -> String {
    format!(
        "[Task: {description}]\nAnother agent handed you this task; it sees only your final reply, not your steps.\n\n{prompt}\n\n{}",
        contract.instructions()
    )
}

/// The delivery key of the prompt: a resumed task finds it delivered already.
pub fn prompt_key(task: &TaskRecord) -> String {
    format!("cortex:{}:prompt", task.id)
}

fn clip(text: &str) -> String {
    if text.len() <= NOTICE_MAX_BYTES {
        return text.to_string();
    }
    let mut end = NOTICE_MAX_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… (cut; task_output has all of it)", &text[..end])
}

/// The steer item a parent gets when its task ends.
pub fn result_notice(t: &TaskRecord) -> String {
    let head = format!(
        "[Task {} ({}) {}: {}]",
        t.id,
        t.agent,
        t.status.as_str(),
        t.description
    );
    match t.status {
        TaskStatus::Completed => format!(
            "{head}\n{}",
            clip(t.output_text.as_deref().unwrap_or_default())
        ),
        _ => format!(
            "{head}\n{}",
            t.error.as_deref().unwrap_or("no reason was recorded")
        ),
    }
}

/// The steer item a parent gets when startup finds its task cut off.
pub fn interrupted_notice(t: &TaskRecord) -> String {
    format!(
        "[Task {} ({}) interrupted: {}]\nThe process running it stopped before it finished. To continue it where it stopped, call task with {{\"resume\": \"{}\"}}; otherwise leave it.",
        t.id, t.agent, t.description, t.id
    )
}

/// What `task_output` and the tools show of a task.
pub fn view(t: &TaskRecord) -> Value {
    json!({
        "task_id": t.id.to_string(),
        "agent": t.agent,
        "description": t.description,
        "status": t.status.as_str(),
        "output_kind": t.output_contract.get("kind").cloned().unwrap_or(Value::Null),
        "output": t.output_text,
        "structured": t.output_json,
        "error": t.error,
        "repair_attempts": t.repair_attempts,
        "child_thread_id": t.child_thread_id,
    })
}
