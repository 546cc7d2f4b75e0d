//! What Boss Mode tells the root and its workers each turn, and the contract its root requests
//! are wrapped in.

use crate::slot::BossSlot;
use troupe_core::boss::{BossRole, MAX_DEPTH, render_tree};
use troupe_core::thread::Thread;
use troupe_store::Store;

pub const CONTRACT: &str = "This conversation is the root of a Boss tree: you coordinate a team of persistent workers rather than doing the work yourself.

How to work:
- Decide what the request needs, split it into tasks, and delegate them: boss_spawn a worker per role you need (it keeps its history between tasks), then boss_assign each task with a task_id you choose, context and acceptance criteria.
- Monitor with boss_status; workers report back with boss_report and you are woken by each report. Check a report against its acceptance criteria before you rely on it; assign follow-up work to the same worker.
- Summarize progress and results for the person. Decisions only the person can make are theirs: ask them.";

/// `<boss-context>` for the root, with the live tree.
pub fn root_context(slot: &BossSlot, tree: &str) -> String {
    let mut out = "<boss-context>\nYou are the Boss of this tree: decide, delegate, monitor, summarize. Use boss_spawn, boss_assign, boss_cancel and boss_status; workers answer with reports that wake you. Ask the person only for decisions that are theirs.".to_string();
    if let Some(i) = slot
        .instructions
        .as_deref()
        .filter(|i| !i.trim().is_empty())
    {
        out.push_str(&format!("\nStanding instructions: {i}"));
    }
    out.push_str("\n</boss-context>\n");
    out.push_str(&format!("<boss-tree>\n{tree}</boss-tree>"));
    out
}

/// `<boss-worker-context>` for a worker.
pub fn worker_context(slot: &BossSlot, root: i64) -> String {
    let mut out = format!(
        "<boss-worker-context>\nYou are a worker in a Boss tree: role {role}, root session {root}.\n- Tasks arrive in your inbox as assignments from your parent; do each one within its acceptance criteria.\n- When a task is done, or you are blocked, or you need input, call boss_report with a summary and a status (completed, blocked or needs_input), then end your turn.\n- You may spawn and assign to workers of your own; their reports wake you, handle them before you report.\n- Never address the person: your parent decides what reaches them.",
        role = slot.worker_role.as_deref().unwrap_or("worker"),
    );
    if let Some(i) = slot
        .instructions
        .as_deref()
        .filter(|i| !i.trim().is_empty())
    {
        out.push_str(&format!("\n- Standing instructions: {i}"));
    }
    out.push_str("\n</boss-worker-context>");
    out
}

/// The nudge a worker gets when it ended a turn without reporting on its task.
pub fn continuation(task_id: &str) -> String {
    format!(
        "[Boss] Your assignment {task_id} has no report yet. Continue working on it, or call boss_report with a summary and a status (completed, blocked or needs_input) and end your turn."
    )
}

/// The section a Boss member's model call gets: the root's context with its live tree, or a
/// worker's context. `None` when the tree cannot be read (the call goes on without it).
pub fn section(store: &Store, thread: &Thread, slot: &BossSlot) -> Option<String> {
    match slot.role {
        BossRole::Boss => {
            let tree = store
                .read(|tx| {
                    let Some(n) = super::members::node_of_thread(tx, thread.id)? else {
                        return Ok(None);
                    };
                    // Live runs are not visible from here; a held lease says running.
                    Ok(Some(super::members::tree(tx, &n, MAX_DEPTH, &|_| false)?))
                })
                .ok()
                .flatten()?;
            Some(root_context(slot, &render_tree(&tree)))
        }
        BossRole::Worker => Some(worker_context(
            slot,
            slot.root_session_id.map_or(0, |r| r.0),
        )),
    }
}
