//! Boss Mode's rules as pure functions: who in a Boss tree may assign to, cancel or report to
//! whom (BOSS-3), what a task id may be, how an assignment and a report read, the tree built from
//! parent links and slots only (BOSS-1), and when a worker is nudged to go on or report (BOSS-4,
//! BOSS-5). Boss keeps no ledger of its own: the assignment and report messages are the record.

use serde::{Deserialize, Serialize};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BossRole {
    /// The root: the person's only entry to the tree.
    Boss,
    Worker,
}

/// What the guard knows of one session of (or outside) a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub session: i64,
    /// The session whose thread is this one's parent, if any.
    pub parent: Option<i64>,
    /// `None`: the session's slot is not Boss.
    pub role: Option<BossRole>,
    /// The tree's root (the session itself for a root).
    pub root: Option<i64>,
    pub archived: bool,
}

impl Member {
    pub fn root_id(&self) -> Option<i64> {
        match self.role {
            Some(BossRole::Boss) => Some(self.session),
            Some(BossRole::Worker) => self.root,
            None => None,
        }
    }
}

/// Why a Boss request was refused. Every code but `NotFound` is a 409; a refusal writes nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BossRefusal {
    #[error("{0}")]
    NotFound(String),
    #[error("the caller is not a member of a live Boss tree")]
    NotBoss,
    #[error("the target is not a direct child of the caller")]
    NotDirectChild,
    #[error("the target is not a Boss worker")]
    NotWorker,
    #[error("the target belongs to another Boss tree")]
    TreeMismatch,
    #[error("the caller has no parent to report to")]
    NoParent,
    #[error("{0}")]
    InvalidRole(String),
    #[error("{0}")]
    InvalidTaskId(String),
    #[error("{0}")]
    InvalidTask(String),
    #[error("{0}")]
    InvalidSummary(String),
    #[error("{0}")]
    UnknownAgent(String),
    #[error("{0}")]
    AgentNotDelegatable(String),
    #[error("{0}")]
    WorktreeFailed(String),
}

impl BossRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            BossRefusal::NotFound(_) => "not_found",
            BossRefusal::NotBoss => "not_boss",
            BossRefusal::NotDirectChild => "not_direct_child",
            BossRefusal::NotWorker => "not_worker",
            BossRefusal::TreeMismatch => "tree_mismatch",
            BossRefusal::NoParent => "no_parent",
            BossRefusal::InvalidRole(_) => "invalid_role",
            BossRefusal::InvalidTaskId(_) => "invalid_task_id",
            BossRefusal::InvalidTask(_) => "invalid_task",
            BossRefusal::InvalidSummary(_) => "invalid_summary",
            BossRefusal::UnknownAgent(_) => "unknown_agent",
            BossRefusal::AgentNotDelegatable(_) => "agent_not_delegatable",
            BossRefusal::WorktreeFailed(_) => "worktree_failed",
        }
    }

    /// The request itself is malformed (HTTP 422) rather than in conflict with the tree.
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            BossRefusal::InvalidRole(_)
                | BossRefusal::InvalidTaskId(_)
                | BossRefusal::InvalidTask(_)
                | BossRefusal::InvalidSummary(_)
                | BossRefusal::UnknownAgent(_)
        )
    }
}

/// The caller is a member of a live tree: its slot is Boss and, for a worker, its root is still
/// a Boss root (`root_live`).
pub fn check_member(caller: &Member, root_live: bool) -> Result<i64, BossRefusal> {
    if caller.archived {
        return Err(BossRefusal::NotBoss);
    }
    let root = caller.root_id().ok_or(BossRefusal::NotBoss)?;
    if caller.role == Some(BossRole::Worker) && !root_live {
        return Err(BossRefusal::NotBoss);
    }
    Ok(root)
}

/// Assign and cancel: the target is the caller's direct child worker in the same tree.
pub fn check_target(caller: &Member, root_live: bool, target: &Member) -> Result<(), BossRefusal> {
    let root = check_member(caller, root_live)?;
    if target.parent != Some(caller.session) {
        return Err(BossRefusal::NotDirectChild);
    }
    if target.role != Some(BossRole::Worker) || target.archived {
        return Err(BossRefusal::NotWorker);
    }
    if target.root != Some(root) {
        return Err(BossRefusal::TreeMismatch);
    }
    Ok(())
}

/// Report: from a worker to its direct parent, which must still be a Boss member of the same
/// tree (BOSS-3, BOSS-5).
pub fn check_report(
    caller: &Member,
    root_live: bool,
    parent: Option<&Member>,
) -> Result<i64, BossRefusal> {
    if caller.role != Some(BossRole::Worker) {
        return Err(BossRefusal::NotWorker);
    }
    let root = check_member(caller, root_live)?;
    let parent = parent.ok_or(BossRefusal::NoParent)?;
    if parent.root_id() != Some(root) || parent.archived {
        return Err(BossRefusal::TreeMismatch);
    }
    Ok(parent.session)
}

pub fn check_task_id(id: &str) -> Result<(), BossRefusal> {
    let ok = (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(BossRefusal::InvalidTaskId(format!(
            "task_id: '{id}' must be 1–64 of the letters A–Z, a–z, the digits, '.', '_' and '-'"
        )))
    }
}

pub fn check_role(role: &str) -> Result<String, BossRefusal> {
    let r = role.trim();
    if r.is_empty() || r.chars().count() > 64 {
        return Err(BossRefusal::InvalidRole(
            "role: a worker needs a role of 1–64 characters (e.g. \"code\", \"research\")".into(),
        ));
    }
    Ok(r.to_string())
}

/// The first 80 characters of the task's first line.
pub fn task_title(task: &str) -> String {
    task.lines()
        .next()
        .unwrap_or("")
        .trim()
        .chars()
        .take(80)
        .collect()
}

fn bullets(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("- {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The assignment as the worker reads it.
pub fn assignment_text(task: &str, context: Option<&str>, acceptance: &[String]) -> String {
    let mut out = task.trim().to_string();
    if let Some(c) = context.map(str::trim).filter(|c| !c.is_empty()) {
        out.push_str(&format!("\n\nContext:\n{c}"));
    }
    let acceptance: Vec<String> = acceptance
        .iter()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .collect();
    if !acceptance.is_empty() {
        out.push_str(&format!(
            "\n\nAcceptance criteria:\n{}",
            bullets(&acceptance)
        ));
    }
    out
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportStatus {
    Completed,
    Blocked,
    NeedsInput,
}

impl ReportStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportStatus::Completed => "completed",
            ReportStatus::Blocked => "blocked",
            ReportStatus::NeedsInput => "needs_input",
        }
    }
}

/// The report as the parent reads it.
pub fn report_text(status: ReportStatus, summary: &str, refs: &[String]) -> String {
    let mut out = format!("Status: {}\n\n{}", status.as_str(), summary.trim());
    if !refs.is_empty() {
        out.push_str(&format!("\n\nReferences:\n{}", bullets(refs)));
    }
    out
}

/// A worker is nudged ("continue, or report") only under a live root, with nothing runnable
/// queued, and an assignment it has not reported on (BOSS-4, BOSS-5). The root never is.
pub fn needs_nudge(
    role: BossRole,
    root_live: bool,
    runnable_task: bool,
    latest_assignment: bool,
    reported: bool,
) -> bool {
    role == BossRole::Worker && root_live && !runnable_task && latest_assignment && !reported
}

/// A session of the tree as `boss_status` and the tree route show it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TreeNode {
    pub session_id: i64,
    pub title: String,
    pub role: BossRole,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot: Option<String>,
    /// `running`, `queued` (a task is waiting) or `idle`.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_task: Option<CurrentTask>,
    #[cfg_attr(feature = "openapi", schema(no_recursion))]
    pub children: Vec<TreeNode>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CurrentTask {
    pub task_id: String,
    pub task_title: String,
}

/// Depth and size bounds of a rendered tree.
pub const MAX_DEPTH: usize = 16;
pub const MAX_NODES: usize = 200;

/// The tree as text, for the root's `<boss-tree>` and `boss_status`.
pub fn render_tree(node: &TreeNode) -> String {
    fn walk(n: &TreeNode, depth: usize, out: &mut String) {
        let role = match (&n.role, &n.worker_role) {
            (BossRole::Boss, _) => "boss".to_string(),
            (BossRole::Worker, Some(r)) => format!("worker:{r}"),
            (BossRole::Worker, None) => "worker".to_string(),
        };
        let task = n.current_task.as_ref().map_or(String::new(), |t| {
            format!(" — task {}: {}", t.task_id, t.task_title)
        });
        out.push_str(&format!(
            "{}- session {} [{role}] {} ({}){task}\n",
            "  ".repeat(depth),
            n.session_id,
            n.bot.as_deref().unwrap_or(&n.title),
            n.status
        ));
        for c in &n.children {
            walk(c, depth + 1, out);
        }
    }
    let mut out = String::new();
    walk(node, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(session: i64, parent: Option<i64>, role: Option<BossRole>, root: Option<i64>) -> Member {
        Member {
            session,
            parent,
            role,
            root,
            archived: false,
        }
    }

    #[test]
    fn assign_goes_only_to_a_direct_child_worker_of_the_same_tree() {
        let root = m(1, None, Some(BossRole::Boss), None);
        let w = m(2, Some(1), Some(BossRole::Worker), Some(1));
        let g = m(3, Some(2), Some(BossRole::Worker), Some(1));
        assert_eq!(check_target(&root, true, &w), Ok(()));
        assert_eq!(
            check_target(&root, true, &g),
            Err(BossRefusal::NotDirectChild)
        );
        assert_eq!(
            check_target(&w, true, &g),
            Ok(()),
            "workers spawn and assign to workers"
        );
        let stranger = m(4, Some(1), None, None);
        assert_eq!(
            check_target(&root, true, &stranger),
            Err(BossRefusal::NotWorker)
        );
        let other_tree = m(5, Some(1), Some(BossRole::Worker), Some(9));
        assert_eq!(
            check_target(&root, true, &other_tree),
            Err(BossRefusal::TreeMismatch)
        );
        let outsider = m(6, None, None, None);
        assert_eq!(check_target(&outsider, true, &w), Err(BossRefusal::NotBoss));
    }

    #[test]
    fn a_report_goes_from_a_worker_to_its_live_parent_only() {
        let root = m(1, None, Some(BossRole::Boss), None);
        let w = m(2, Some(1), Some(BossRole::Worker), Some(1));
        assert_eq!(check_report(&w, true, Some(&root)), Ok(1));
        assert_eq!(check_report(&root, true, None), Err(BossRefusal::NotWorker));
        // BOSS-5: a disabled root makes the worker's report fail.
        assert_eq!(
            check_report(&w, false, Some(&root)),
            Err(BossRefusal::NotBoss)
        );
        let no_longer = m(1, None, None, None);
        assert_eq!(
            check_report(&w, true, Some(&no_longer)),
            Err(BossRefusal::TreeMismatch)
        );
        assert_eq!(check_report(&w, true, None), Err(BossRefusal::NoParent));
    }

    #[test]
    fn task_ids_are_short_and_plain() {
        assert!(check_task_id("t1").is_ok());
        assert!(check_task_id("build.v2-final_3").is_ok());
        assert!(check_task_id("").is_err());
        assert!(check_task_id("has space").is_err());
        assert!(check_task_id(&"x".repeat(65)).is_err());
        assert_eq!(check_task_id("a/b").unwrap_err().code(), "invalid_task_id");
    }

    #[test]
    fn only_an_unreported_worker_under_a_live_root_is_nudged() {
        assert!(needs_nudge(BossRole::Worker, true, false, true, false));
        assert!(
            !needs_nudge(BossRole::Boss, true, false, true, false),
            "BOSS-4"
        );
        assert!(
            !needs_nudge(BossRole::Worker, false, false, true, false),
            "BOSS-5"
        );
        assert!(!needs_nudge(BossRole::Worker, true, true, true, false));
        assert!(!needs_nudge(BossRole::Worker, true, false, false, false));
        assert!(!needs_nudge(BossRole::Worker, true, false, true, true));
    }

    #[test]
    fn texts_carry_context_acceptance_status_and_refs() {
        let a = assignment_text(
            "Write the parser",
            Some("see spec.md"),
            &["tests pass".into()],
        );
        assert_eq!(
            a,
            "Write the parser\n\nContext:\nsee spec.md\n\nAcceptance criteria:\n- tests pass"
        );
        let r = report_text(ReportStatus::Blocked, "no access", &["log.txt".into()]);
        assert_eq!(r, "Status: blocked\n\nno access\n\nReferences:\n- log.txt");
        assert_eq!(task_title(&format!("{}\nmore", "a".repeat(100))).len(), 80);
    }
}
