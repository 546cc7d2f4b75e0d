//! The drive's arbitration, the shared continuation gate, and the loop's choice of what to
//! take from the inbox next — as pure functions of a snapshot.

use crate::ids::{InboxItemId, MessageId};
use crate::inbox::{self, InboxItem, InboxMode};
use serde::{Deserialize, Serialize};

/// What the drive needs to know about a thread to decide.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriveSnapshot {
    pub archived: bool,
    pub running: bool,
    pub blocks_drive: bool,
    pub has_runnable_inbox: bool,
    /// A line a person wrote after the last effect was cut off is among the runnable inbox
    /// work (one queued before the cut was written without knowing of it).
    pub has_person_line: bool,
    /// The thread's latest effect is `unknown`: it must not resume by itself.
    pub unknown_effect: bool,
}

/// Why a drive request was not handled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriveRefusal {
    Running,
    Archived,
    Paused,
    UnknownEffect,
    NoWork,
}

impl DriveRefusal {
    pub fn as_str(self) -> &'static str {
        match self {
            DriveRefusal::Running => "running",
            DriveRefusal::Archived => "archived",
            DriveRefusal::Paused => "paused",
            DriveRefusal::UnknownEffect => "unknown_effect",
            DriveRefusal::NoWork => "no_work",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DriveStep {
    NotHandled(DriveRefusal),
    /// Start the loop now.
    Wake,
    /// No inbox work: ask the continuation policies.
    AskPolicies,
}

/// The drive's arbitration. A running or paused thread is never driven, not even by force;
/// the inbox comes before any policy. An unknown last effect stops the thread from resuming by
/// itself (boot wakes, policies, timers, the supervisor), not a person: a person's new line or
/// their Continue (a forced drive) is their decision and starts a turn.
pub fn arbitrate(s: &DriveSnapshot, force: bool) -> DriveStep {
    if s.running {
        return DriveStep::NotHandled(DriveRefusal::Running);
    }
    if s.archived {
        return DriveStep::NotHandled(DriveRefusal::Archived);
    }
    if s.blocks_drive {
        return DriveStep::NotHandled(DriveRefusal::Paused);
    }
    if force {
        return DriveStep::Wake;
    }
    if s.unknown_effect && !s.has_person_line {
        return DriveStep::NotHandled(DriveRefusal::UnknownEffect);
    }
    if s.has_runnable_inbox {
        return DriveStep::Wake;
    }
    DriveStep::AskPolicies
}

/// The latest task's state as the gate sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateInput {
    pub archived: bool,
    /// Blocking waits (a child task running, a watch) reported by wait providers.
    pub waits: Vec<String>,
    pub latest_root: Option<MessageId>,
    /// The latest assistant reply under that root: (id, terminal, has error).
    pub latest_reply: Option<(MessageId, bool, bool)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateRefusal {
    Archived,
    Waiting(Vec<String>),
    NoTask,
    NoTerminalReply,
    ReplyFailed,
}

/// The shared gate every continuation policy sits behind. Passes with the id of the terminal reply.
pub fn shared_gate(g: &GateInput) -> Result<MessageId, GateRefusal> {
    if g.archived {
        return Err(GateRefusal::Archived);
    }
    if !g.waits.is_empty() {
        return Err(GateRefusal::Waiting(g.waits.clone()));
    }
    if g.latest_root.is_none() {
        return Err(GateRefusal::NoTask);
    }
    match g.latest_reply {
        None => Err(GateRefusal::NoTerminalReply),
        Some((_, _, true)) => Err(GateRefusal::ReplyFailed),
        Some((_, false, _)) => Err(GateRefusal::NoTerminalReply),
        Some((id, true, false)) => Ok(id),
    }
}

/// The delivery key a policy's proposal gets when it names none.
pub fn continuation_key(policy_id: &str, revision: &str) -> String {
    format!("continuation:{policy_id}:{revision}")
}

/// Where the latest task stands, for the loop's inbox step.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RootState {
    None,
    /// The latest root still needs a model call (new input or tool results after the last reply).
    Open(MessageId),
    /// The latest root has its terminal reply.
    Done(MessageId),
    /// Found open when a run starts: an earlier run stopped inside it (abort, crash, hop limit).
    /// A person's next task takes over; otherwise a forced drive resumes it.
    Breakpoint(MessageId),
}

impl RootState {
    pub fn root(self) -> Option<MessageId> {
        match self {
            RootState::None => None,
            RootState::Open(r) | RootState::Done(r) | RootState::Breakpoint(r) => Some(r),
        }
    }
    /// How the state reads at the start of a run: an open root there is a breakpoint.
    pub fn at_run_start(self) -> RootState {
        match self {
            RootState::Open(r) => RootState::Breakpoint(r),
            other => other,
        }
    }
}

/// What the loop takes from the inbox before deciding on a model call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InboxTake {
    /// Becomes a new root.
    pub task: Option<InboxItemId>,
    /// Join the current (or new) root, in order.
    pub steers: Vec<InboxItemId>,
    /// Ride along, only when a call happens anyway.
    pub contexts: Vec<InboxItemId>,
    pub call_model: bool,
}

/// One task at a time becomes a root once the previous one is done; steers join the task in
/// hand (or re-open the last one); context only joins a call that is needed anyway.
pub fn plan_inbox_take(root: RootState, items: &[InboxItem]) -> InboxTake {
    let steers: Vec<InboxItemId> = inbox::ordered(items, InboxMode::Steer)
        .into_iter()
        .map(|i| i.id)
        .collect();
    let mut take = InboxTake::default();
    match root {
        RootState::Open(_) => {
            take.steers = steers;
            take.call_model = true;
        }
        RootState::Breakpoint(_) => {
            take.task = inbox::next_task(items).map(|t| t.id);
            take.steers = steers;
            take.call_model = true;
        }
        RootState::Done(_) | RootState::None => {
            if let Some(task) = inbox::next_task(items) {
                take.task = Some(task.id);
                take.steers = steers;
                take.call_model = true;
            } else if matches!(root, RootState::Done(_)) && !steers.is_empty() {
                take.steers = steers;
                take.call_model = true;
            }
        }
    }
    if take.call_model {
        take.contexts = inbox::ordered(items, InboxMode::Context)
            .into_iter()
            .map(|i| i.id)
            .collect();
    }
    take
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ThreadId;
    use crate::inbox::Priority;
    use crate::message::Origin;

    fn item(id: i64, mode: InboxMode) -> InboxItem {
        InboxItem {
            id: InboxItemId(id),
            thread_id: ThreadId(1),
            mode,
            priority: Priority::USER,
            order_key: id,
            delivery_key: None,
            origin: Origin::User,
            text: "x".into(),
            visible: true,
            failed: None,
            created_at: 0,
        }
    }

    #[test]
    fn drive_never_runs_a_running_or_paused_thread_even_forced() {
        let running = DriveSnapshot {
            running: true,
            has_runnable_inbox: true,
            ..Default::default()
        };
        assert_eq!(
            arbitrate(&running, true),
            DriveStep::NotHandled(DriveRefusal::Running)
        );
        let paused = DriveSnapshot {
            blocks_drive: true,
            has_runnable_inbox: true,
            ..Default::default()
        };
        assert_eq!(
            arbitrate(&paused, true),
            DriveStep::NotHandled(DriveRefusal::Paused)
        );
    }

    #[test]
    fn inbox_work_comes_before_policies() {
        let s = DriveSnapshot {
            has_runnable_inbox: true,
            ..Default::default()
        };
        assert_eq!(arbitrate(&s, false), DriveStep::Wake);
        assert_eq!(
            arbitrate(&DriveSnapshot::default(), false),
            DriveStep::AskPolicies
        );
    }

    #[test]
    fn unknown_effect_blocks_automatic_drive_but_not_force() {
        let s = DriveSnapshot {
            unknown_effect: true,
            has_runnable_inbox: true,
            ..Default::default()
        };
        assert_eq!(
            arbitrate(&s, false),
            DriveStep::NotHandled(DriveRefusal::UnknownEffect)
        );
        assert_eq!(arbitrate(&s, true), DriveStep::Wake);
    }

    #[test]
    fn a_person_line_starts_a_turn_despite_an_unknown_effect() {
        let s = DriveSnapshot {
            unknown_effect: true,
            has_runnable_inbox: true,
            has_person_line: true,
            ..Default::default()
        };
        assert_eq!(arbitrate(&s, false), DriveStep::Wake);
        // A person's line never lifts a pause the person has not lifted.
        let paused = DriveSnapshot {
            blocks_drive: true,
            ..s
        };
        assert_eq!(
            arbitrate(&paused, false),
            DriveStep::NotHandled(DriveRefusal::Paused)
        );
    }

    #[test]
    fn gate_passes_only_on_a_terminal_error_free_reply() {
        let mut g = GateInput {
            archived: false,
            waits: vec![],
            latest_root: Some(MessageId(1)),
            latest_reply: Some((MessageId(2), true, false)),
        };
        assert_eq!(shared_gate(&g), Ok(MessageId(2)));
        g.latest_reply = Some((MessageId(2), true, true));
        assert_eq!(shared_gate(&g), Err(GateRefusal::ReplyFailed));
        g.latest_reply = Some((MessageId(2), false, false));
        assert_eq!(shared_gate(&g), Err(GateRefusal::NoTerminalReply));
        g.latest_reply = Some((MessageId(2), true, false));
        g.waits = vec!["child".into()];
        assert!(matches!(shared_gate(&g), Err(GateRefusal::Waiting(_))));
        g.waits.clear();
        g.archived = true;
        assert_eq!(shared_gate(&g), Err(GateRefusal::Archived));
    }

    #[test]
    fn a_new_task_waits_until_the_current_root_is_done() {
        let items = vec![item(1, InboxMode::Task), item(2, InboxMode::Steer)];
        let open = plan_inbox_take(RootState::Open(MessageId(9)), &items);
        assert_eq!(open.task, None);
        assert_eq!(open.steers, vec![InboxItemId(2)]);
        let done = plan_inbox_take(RootState::Done(MessageId(9)), &items);
        assert_eq!(done.task, Some(InboxItemId(1)));
    }

    #[test]
    fn steer_reopens_a_done_root_but_needs_one() {
        let items = vec![item(2, InboxMode::Steer)];
        assert!(plan_inbox_take(RootState::Done(MessageId(9)), &items).call_model);
        assert!(!plan_inbox_take(RootState::None, &items).call_model);
    }

    #[test]
    fn a_breakpoint_yields_to_a_new_task_and_otherwise_resumes() {
        let items = vec![item(1, InboxMode::Task)];
        let take = plan_inbox_take(RootState::Breakpoint(MessageId(9)), &items);
        assert_eq!(take.task, Some(InboxItemId(1)));
        let resume = plan_inbox_take(RootState::Breakpoint(MessageId(9)), &[]);
        assert!(resume.call_model);
        assert_eq!(resume.task, None);
        assert_eq!(
            RootState::Open(MessageId(9)).at_run_start(),
            RootState::Breakpoint(MessageId(9))
        );
    }

    #[test]
    fn context_rides_along_only_with_a_needed_call() {
        let items = vec![item(3, InboxMode::Context)];
        let idle = plan_inbox_take(RootState::Done(MessageId(9)), &items);
        assert!(!idle.call_model);
        assert!(idle.contexts.is_empty());
        let open = plan_inbox_take(RootState::Open(MessageId(9)), &items);
        assert_eq!(open.contexts, vec![InboxItemId(3)]);
    }
}
