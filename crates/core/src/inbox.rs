//! The durable inbox: what a thread is asked to do, and the rules for picking what comes next.

use crate::ids::{InboxItemId, ThreadId};
use crate::message::Origin;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How a delivery joins the thread's work.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InboxMode {
    /// Starts a new root task once the current one has ended.
    Task,
    /// Joins the running task before its next model call; may wake an idle thread.
    Steer,
    /// Rides along with the next model call that is needed anyway; never wakes.
    Context,
}

impl InboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            InboxMode::Task => "task",
            InboxMode::Steer => "steer",
            InboxMode::Context => "context",
        }
    }
    /// Whether an item of this mode is enough reason to start a loop.
    pub fn wakes(self) -> bool {
        !matches!(self, InboxMode::Context)
    }
}

impl fmt::Display for InboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for InboxMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "task" => Ok(InboxMode::Task),
            "steer" => Ok(InboxMode::Steer),
            "context" => Ok(InboxMode::Context),
            other => Err(format!(
                "unknown inbox mode '{other}' (expected task, steer or context)"
            )),
        }
    }
}

/// Delivery priority, 1 (most urgent) to 4.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct Priority(u8);

impl Priority {
    /// Lines a person wrote.
    pub const USER: Priority = Priority(1);
    /// Results coming back from delegated work.
    pub const DELEGATION_RESULT: Priority = Priority(2);
    /// Supervisor wakes and delegation requests.
    pub const SUPERVISOR: Priority = Priority(3);
    /// The thread's own timers and routines.
    pub const OWN_TIMER: Priority = Priority(4);

    pub fn new(value: u8) -> Result<Self, String> {
        if (1..=4).contains(&value) {
            Ok(Priority(value))
        } else {
            Err(format!("priority must be 1 to 4, got {value}"))
        }
    }
    pub fn get(self) -> u8 {
        self.0
    }
}

impl TryFrom<u8> for Priority {
    type Error = String;
    fn try_from(v: u8) -> Result<Self, String> {
        Priority::new(v)
    }
}

impl From<Priority> for u8 {
    fn from(p: Priority) -> u8 {
        p.0
    }
}

/// A queued inbox row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InboxItem {
    pub id: InboxItemId,
    pub thread_id: ThreadId,
    pub mode: InboxMode,
    pub priority: Priority,
    pub order_key: i64,
    pub delivery_key: Option<String>,
    pub origin: Origin,
    pub text: String,
    pub visible: bool,
    /// Set when the payload deterministically cannot become a message; the item is parked.
    pub failed: Option<String>,
    pub created_at: i64,
}

impl InboxItem {
    fn sort_key(&self) -> (Priority, i64, InboxItemId) {
        (self.priority, self.order_key, self.id)
    }
}

/// What a new delivery asks for, before it has a row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub mode: InboxMode,
    pub priority: Priority,
    pub origin: Origin,
    pub text: String,
    pub visible: bool,
    /// Makes the delivery idempotent: a second delivery with the same key returns the first.
    pub delivery_key: Option<String>,
    /// Defaults to the delivery time; ties keep arrival order.
    pub order_key: Option<i64>,
    /// A steer that changes what the person asked for: tool calls of the running hop that have
    /// not run yet when it arrives are answered "deferred" instead of run (TURN-4).
    #[serde(default)]
    pub defers_calls: bool,
}

impl Delivery {
    /// A line a person typed: a visible task at user priority.
    pub fn user_task(text: impl Into<String>) -> Self {
        Delivery {
            mode: InboxMode::Task,
            priority: Priority::USER,
            origin: Origin::User,
            text: text.into(),
            visible: true,
            delivery_key: None,
            order_key: None,
            defers_calls: false,
        }
    }
    pub fn with_mode(mut self, mode: InboxMode) -> Self {
        self.mode = mode;
        self
    }
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.delivery_key = Some(key.into());
        self
    }
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }
    pub fn with_origin(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }
    pub fn deferring_calls(mut self, defers: bool) -> Self {
        self.defers_calls = defers;
        self
    }
    pub fn validate(&self) -> Result<(), String> {
        if self.text.trim().is_empty() {
            return Err("delivery text is empty".into());
        }
        if let Some(key) = &self.delivery_key
            && key.trim().is_empty()
        {
            return Err("delivery key, when given, must not be empty".into());
        }
        Ok(())
    }
}

/// Whether any queued item is reason enough to run the thread.
/// A steer needs a root to join; context never wakes; parked items never run.
pub fn has_runnable(items: &[InboxItem], has_root: bool) -> bool {
    items.iter().any(|i| {
        i.failed.is_none()
            && match i.mode {
                InboxMode::Task => true,
                InboxMode::Steer => has_root,
                InboxMode::Context => false,
            }
    })
}

/// Whether a line a person wrote after `since` (epoch ms) is among the runnable items: their
/// decision to go on, which the drive honours where it would not resume the thread by itself.
pub fn has_person_line_after(items: &[InboxItem], has_root: bool, since: i64) -> bool {
    items.iter().any(|i| {
        i.origin == Origin::User
            && i.created_at > since
            && has_runnable(std::slice::from_ref(i), has_root)
    })
}

/// The next task to become a root: lowest priority number, then order key, then id.
pub fn next_task(items: &[InboxItem]) -> Option<&InboxItem> {
    items
        .iter()
        .filter(|i| i.failed.is_none() && i.mode == InboxMode::Task)
        .min_by_key(|i| i.sort_key())
}

/// Items of one mode, in the order they are taken.
pub fn ordered(items: &[InboxItem], mode: InboxMode) -> Vec<&InboxItem> {
    let mut out: Vec<&InboxItem> = items
        .iter()
        .filter(|i| i.failed.is_none() && i.mode == mode)
        .collect();
    out.sort_by_key(|i| i.sort_key());
    out
}

/// The items a user abort removes: steer and context go, tasks stay.
pub fn dropped_on_abort(items: &[InboxItem]) -> Vec<InboxItemId> {
    items
        .iter()
        .filter(|i| matches!(i.mode, InboxMode::Steer | InboxMode::Context))
        .map(|i| i.id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: i64, mode: InboxMode, prio: u8, order: i64) -> InboxItem {
        InboxItem {
            id: InboxItemId(id),
            thread_id: ThreadId(1),
            mode,
            priority: Priority::new(prio).unwrap(),
            order_key: order,
            delivery_key: None,
            origin: Origin::User,
            text: format!("item {id}"),
            visible: true,
            failed: None,
            created_at: 0,
        }
    }

    #[test]
    fn priority_outside_one_to_four_is_refused() {
        assert!(Priority::new(0).is_err());
        assert!(Priority::new(5).is_err());
        assert_eq!(Priority::new(4).unwrap(), Priority::OWN_TIMER);
    }

    #[test]
    fn next_task_orders_by_priority_then_order_key_then_id() {
        let items = vec![
            item(1, InboxMode::Task, 4, 10),
            item(2, InboxMode::Task, 1, 30),
            item(3, InboxMode::Task, 1, 20),
            item(4, InboxMode::Task, 1, 20),
            item(5, InboxMode::Steer, 1, 0),
        ];
        assert_eq!(next_task(&items).unwrap().id, InboxItemId(3));
    }

    #[test]
    fn steer_is_runnable_only_with_a_root_and_context_never_wakes() {
        let steer = vec![item(1, InboxMode::Steer, 1, 0)];
        assert!(!has_runnable(&steer, false));
        assert!(has_runnable(&steer, true));
        let ctx = vec![item(1, InboxMode::Context, 1, 0)];
        assert!(!has_runnable(&ctx, true));
    }

    #[test]
    fn parked_items_do_not_run_and_do_not_block_others() {
        let mut parked = item(1, InboxMode::Task, 1, 0);
        parked.failed = Some("cannot materialize".into());
        let items = vec![parked.clone()];
        assert!(!has_runnable(&items, true));
        let items = vec![parked, item(2, InboxMode::Task, 1, 5)];
        assert_eq!(next_task(&items).unwrap().id, InboxItemId(2));
    }

    #[test]
    fn abort_drops_steer_and_context_and_keeps_tasks() {
        let items = vec![
            item(1, InboxMode::Task, 1, 0),
            item(2, InboxMode::Steer, 1, 0),
            item(3, InboxMode::Context, 1, 0),
        ];
        assert_eq!(
            dropped_on_abort(&items),
            vec![InboxItemId(2), InboxItemId(3)]
        );
    }

    #[test]
    fn empty_delivery_is_refused() {
        assert!(Delivery::user_task("  ").validate().is_err());
        assert!(Delivery::user_task("hi").with_key(" ").validate().is_err());
        assert!(Delivery::user_task("hi").with_key("k").validate().is_ok());
    }
}
