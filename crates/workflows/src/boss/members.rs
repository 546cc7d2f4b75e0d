//! A Boss tree read from the store: each member's session, thread, slot and parent, the facts
//! the pure guard (`troupe_core::boss`) decides on, the assignments in a worker's inbox and
//! history (their delivery keys are the record: `boss:<from>:<task_id>`), and the tree.

use crate::slot::{BossSlot, WorkflowSlot};
use troupe_core::boss::{BossRole, CurrentTask, MAX_NODES, Member, TreeNode, task_title};
use troupe_core::inbox::InboxMode;
use troupe_core::message::{Origin, PartBody};
use troupe_core::{MessageId, SessionId, ThreadId};
use troupe_store::{CONVERSATION, StoreError, Tx};

pub const ASSIGN_ORIGIN: &str = "boss_assign";
pub const REPORT_ORIGIN: &str = "boss_report";

/// One session as the tree sees it.
#[derive(Clone, Debug)]
pub struct Node {
    pub session: SessionId,
    pub thread: ThreadId,
    pub title: String,
    pub bot: Option<String>,
    pub slot: Option<BossSlot>,
    pub parent_thread: Option<ThreadId>,
    pub archived: bool,
}

/// A session's direct thread as a node (`None`: no such session or no thread).
pub fn node(tx: &Tx<'_>, session: SessionId) -> Result<Option<Node>, StoreError> {
    let s = match tx.session(session) {
        Ok(s) => s,
        Err(StoreError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(bot) = s.bot_ids.first().copied() else {
        return Ok(None);
    };
    let Some(thread) = tx.session_thread(s.id, bot, CONVERSATION)? else {
        return Ok(None);
    };
    let t = tx.thread(thread)?;
    Ok(Some(Node {
        session: s.id,
        thread,
        title: s.title,
        bot: tx.bot(bot).ok().map(|b| b.name),
        slot: WorkflowSlot::of(t.workflow.as_ref()).and_then(|w| w.boss().cloned()),
        parent_thread: t.parent_id,
        archived: s.archived || t.archived_at.is_some(),
    }))
}

pub fn node_of_thread(tx: &Tx<'_>, thread: ThreadId) -> Result<Option<Node>, StoreError> {
    match tx.thread_session(thread)? {
        Some((session, _)) => node(tx, session),
        None => Ok(None),
    }
}

/// The guard's view of a node.
pub fn member(tx: &Tx<'_>, n: &Node) -> Result<Member, StoreError> {
    let parent = match n.parent_thread {
        Some(p) => tx.thread_session(p)?.map(|(s, _)| s.0),
        None => None,
    };
    Ok(Member {
        session: n.session.0,
        parent,
        role: n.slot.as_ref().map(|s| s.role),
        root: n.slot.as_ref().and_then(|s| s.root_session_id).map(|r| r.0),
        archived: n.archived,
    })
}

/// The tree's root is still a live Boss root.
pub fn root_live(tx: &Tx<'_>, root: i64) -> Result<bool, StoreError> {
    Ok(node(tx, SessionId(root))?
        .is_some_and(|n| !n.archived && n.slot.is_some_and(|s| s.role == BossRole::Boss)))
}

/// The root a member belongs to, if it is one.
pub fn root_of(n: &Node) -> Option<i64> {
    n.slot.as_ref().and_then(|s| match s.role {
        BossRole::Boss => Some(n.session.0),
        BossRole::Worker => s.root_session_id.map(|r| r.0),
    })
}

/// A node's live Boss children (archived and non-Boss children are left out).
pub fn children(tx: &Tx<'_>, n: &Node) -> Result<Vec<Node>, StoreError> {
    let mut out = Vec::new();
    for t in tx.child_threads(n.thread)? {
        if let Some(c) = node_of_thread(tx, t.id)?
            && c.slot.is_some()
            && !c.archived
        {
            out.push(c);
        }
    }
    Ok(out)
}

pub fn assignment_key(from: SessionId, task_id: &str) -> String {
    format!("boss:{}:{task_id}", from.0)
}

/// `(from, task_id)` of an assignment's delivery key.
pub fn parse_key(key: &str) -> Option<(SessionId, String)> {
    let mut parts = key.splitn(3, ':');
    (parts.next()? == "boss").then_some(())?;
    let from = parts.next()?.parse().ok()?;
    Some((SessionId(from), parts.next()?.to_string()))
}

/// Assignments waiting in a worker's inbox: `(item, from, task_id, title)`, oldest first.
pub fn pending(
    tx: &Tx<'_>,
    thread: ThreadId,
) -> Result<Vec<(troupe_core::inbox::InboxItem, SessionId, String)>, StoreError> {
    Ok(tx
        .inbox(thread)?
        .into_iter()
        .filter(|i| i.mode == InboxMode::Task)
        .filter_map(|i| {
            let (from, task) = parse_key(i.delivery_key.as_deref()?)?;
            Some((i, from, task))
        })
        .collect())
}

/// The latest assignment that became a task root in the worker's history: `(root, from, task_id,
/// title)`.
pub fn latest_assignment(
    tx: &Tx<'_>,
    thread: ThreadId,
) -> Result<Option<(MessageId, SessionId, String, String)>, StoreError> {
    let origin = Origin::System(ASSIGN_ORIGIN.into());
    Ok(tx.latest_root_with_origin(thread, &origin)?.and_then(|m| {
        let (from, task) = parse_key(m.delivery_key.as_deref()?)?;
        Some((m.id, from, task, task_title(&m.text())))
    }))
}

/// The worker reported on the task rooted at `root` (a `boss_report` call that succeeded).
pub fn reported(tx: &Tx<'_>, thread: ThreadId, root: MessageId) -> Result<bool, StoreError> {
    Ok(tx
        .messages(thread, Some(MessageId(root.0 - 1)), 2000)?
        .iter()
        .filter(|m| m.root_id == Some(root))
        .flat_map(|m| m.parts.iter())
        .any(|p| {
            matches!(&p.body, PartBody::ToolResult { name, is_error, .. }
                if name == "boss_report" && !is_error)
        }))
}

/// The task a node works on or will: the oldest pending assignment, else the latest one taken.
fn current_task(tx: &Tx<'_>, thread: ThreadId) -> Result<Option<CurrentTask>, StoreError> {
    if let Some((item, _, task)) = pending(tx, thread)?.into_iter().next() {
        return Ok(Some(CurrentTask {
            task_id: task,
            task_title: task_title(&item.text),
        }));
    }
    Ok(
        latest_assignment(tx, thread)?.map(|(_, _, task, title)| CurrentTask {
            task_id: task,
            task_title: title,
        }),
    )
}

/// The subtree under `n`, `depth` levels deep, at most [`MAX_NODES`] nodes.
pub fn tree(
    tx: &Tx<'_>,
    n: &Node,
    depth: usize,
    running: &dyn Fn(ThreadId) -> bool,
) -> Result<TreeNode, StoreError> {
    let mut budget = MAX_NODES;
    build(tx, n, depth, running, &mut budget)
}

fn build(
    tx: &Tx<'_>,
    n: &Node,
    depth: usize,
    running: &dyn Fn(ThreadId) -> bool,
    budget: &mut usize,
) -> Result<TreeNode, StoreError> {
    *budget = budget.saturating_sub(1);
    let t = tx.thread(n.thread)?;
    let status = if running(n.thread) || t.lease.holder.is_some() {
        "running"
    } else if tx
        .inbox(n.thread)?
        .iter()
        .any(|i| i.mode == InboxMode::Task)
    {
        "queued"
    } else {
        "idle"
    };
    let mut kids = Vec::new();
    if depth > 0 {
        for c in children(tx, n)? {
            if *budget == 0 {
                break;
            }
            kids.push(build(tx, &c, depth - 1, running, budget)?);
        }
    }
    let slot = n.slot.clone();
    Ok(TreeNode {
        session_id: n.session.0,
        title: n.title.clone(),
        role: slot.as_ref().map_or(BossRole::Worker, |s| s.role),
        worker_role: slot.and_then(|s| s.worker_role),
        bot: n.bot.clone(),
        status: status.into(),
        current_task: current_task(tx, n.thread)?,
        children: kids,
    })
}
