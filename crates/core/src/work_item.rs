//! Work items (WI-3…6, WI-12, END-11, END-20/21): what a Bot's work becomes once a segment
//! ends, who gets a work slot next, and when quiet endings block the work. Settlement runs in
//! the same write as the segment's end, so it must be a function of what that write knows.

use crate::ids::{DelegationId, WorkItemId};
use serde::{Deserialize, Serialize};

/// A desk answers before the Bot has chosen a job; work is bound to one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkMode {
    Desk,
    Work,
}

impl WorkMode {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkMode::Desk => "desk",
            WorkMode::Work => "work",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "desk" => Ok(WorkMode::Desk),
            "work" => Ok(WorkMode::Work),
            other => Err(format!(
                "unknown work mode '{other}' (expected desk or work)"
            )),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkState {
    Running,
    /// Waiting for a work slot, or for its unread mail to become the next trigger.
    Queued,
    Idle,
    /// A real wait keeps it: a delegation's reply or a timer.
    Waiting,
    /// Only the user can move it on.
    Blocked,
    /// Something went wrong that a person should look at before it runs again.
    NeedsAttention,
    Closed,
}

impl WorkState {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkState::Running => "running",
            WorkState::Queued => "queued",
            WorkState::Idle => "idle",
            WorkState::Waiting => "waiting",
            WorkState::Blocked => "blocked",
            WorkState::NeedsAttention => "needs_attention",
            WorkState::Closed => "closed",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "running" => Ok(WorkState::Running),
            "queued" => Ok(WorkState::Queued),
            "idle" => Ok(WorkState::Idle),
            "waiting" => Ok(WorkState::Waiting),
            "blocked" => Ok(WorkState::Blocked),
            "needs_attention" => Ok(WorkState::NeedsAttention),
            "closed" => Ok(WorkState::Closed),
            other => Err(format!(
                "unknown work state '{other}' (expected running, queued, idle, waiting, \
                 blocked, needs_attention or closed)"
            )),
        }
    }
}

/// What a waiting or blocked work item waits on, stored as JSON tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WaitingOn {
    Delegation { delegation_id: DelegationId },
    User,
}

/// How a segment ended, as far as settlement cares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SegmentOutcome {
    /// A normal ending with its end reason code (`done`, `answered`, `blocked`, …).
    Ended { code: String },
    /// A person stopped it.
    Stopped,
    /// Its process died under it.
    CutOff,
    /// Model error, internal error or hop limit.
    Failed,
}

impl SegmentOutcome {
    fn code_is(&self, code: &str) -> bool {
        matches!(self, SegmentOutcome::Ended { code: c } if c == code)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settle {
    pub mode: WorkMode,
    pub outcome: SegmentOutcome,
    /// Mail that arrived for this work item and the segment never read.
    pub unread_mail: bool,
    /// A delegation wait was left open by this segment.
    pub delegation_wait: bool,
}

/// WI-12: the state a work item takes when its segment ends; it never stays running.
///
/// A desk closes, unless a line it never read must become the next desk's trigger (DS-2) or
/// its refusal budget is spent. A person's stop wins over both: it never leaves anything to
/// resume by itself. Work settles by the first rule that applies: stopped → idle; cut off,
/// failed or `needs_attention` → needs attention; `blocked` → blocked; unread mail → queued;
/// a delegation wait → waiting; otherwise idle.
pub fn settle(s: &Settle) -> WorkState {
    let out = &s.outcome;
    match s.mode {
        WorkMode::Desk => {
            if *out == SegmentOutcome::Stopped {
                WorkState::Closed
            } else if s.unread_mail {
                WorkState::Queued
            } else if out.code_is("needs_attention") {
                WorkState::NeedsAttention
            } else if out.code_is("blocked") {
                // WQ-2: it waits on the person's answer to its card, which wakes it; closed, the
                // card could take no answer.
                WorkState::Blocked
            } else {
                WorkState::Closed
            }
        }
        WorkMode::Work => match out {
            SegmentOutcome::Stopped => WorkState::Idle,
            SegmentOutcome::CutOff | SegmentOutcome::Failed => WorkState::NeedsAttention,
            _ if out.code_is("needs_attention") => WorkState::NeedsAttention,
            _ if out.code_is("blocked") => WorkState::Blocked,
            _ if s.unread_mail => WorkState::Queued,
            _ if s.delegation_wait || out.code_is("delegated") => WorkState::Waiting,
            _ => WorkState::Idle,
        },
    }
}

/// WI-3: work segments a Bot may run at once when it sets no limit of its own.
pub const DEFAULT_PARALLEL_LIMIT: usize = 2;

/// WI-6 dispatch priorities; lower goes first.
pub const PRIORITY_USER: u8 = 1;
pub const PRIORITY_DELEGATION_REPLY: u8 = 2;
pub const PRIORITY_DELEGATION_REQUEST: u8 = 3;
pub const PRIORITY_CHECK_BACK: u8 = 4;

/// A Bot's stored `parallel_limit`; absent, zero or negative reads as the default.
pub fn parallel_limit(raw: Option<i64>) -> usize {
    match raw {
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(usize::MAX),
        _ => DEFAULT_PARALLEL_LIMIT,
    }
}

/// A work item waiting for a slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueEntry {
    pub work_item: WorkItemId,
    pub priority: u8,
    /// The inbox id of its oldest waiting mail: first come, first served within a priority.
    pub order: i64,
}

/// WI-6: priority first, then inbox order. The work item id breaks ties so the order is total.
pub fn queue_order(entries: &mut [QueueEntry]) {
    entries.sort_by_key(|e| (e.priority, e.order, e.work_item));
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Admit {
    Start,
    /// Shown as "Queued, at position N" (WI-5); 1-based.
    Queued {
        position: usize,
    },
}

/// WI-3/WI-5: whether `me` may start a work segment now. Desks never take a slot, so callers
/// do not ask this for a desk.
///
/// Each free slot goes to the next entry in queue order, so with one free slot only the head
/// starts and an entry further back keeps its place. `me` missing from `queue` is counted
/// behind everyone.
pub fn admit(
    live_work_segments: usize,
    limit: usize,
    queue: &[QueueEntry],
    me: WorkItemId,
) -> Admit {
    let mut sorted = queue.to_vec();
    queue_order(&mut sorted);
    let ahead = sorted
        .iter()
        .position(|e| e.work_item == me)
        .unwrap_or(sorted.len());
    let free = limit.saturating_sub(live_work_segments);
    if ahead < free {
        Admit::Start
    } else {
        Admit::Queued {
            position: ahead + 1,
        }
    }
}

/// END-11: this many quiet endings in a row, while something is still owed, block the work.
pub const NO_PROGRESS_BLOCK_AFTER: u32 = 2;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NoProgress {
    /// The new count of consecutive no-progress endings to store.
    pub count: u32,
    /// The work item goes `blocked` and the user is told.
    pub block: bool,
}

/// END-11/END-17: count an ending toward the no-progress block. Progress, or owing nothing,
/// starts the count again.
pub fn after_ending(
    no_progress_endings: u32,
    made_progress: bool,
    obligations_remain: bool,
) -> NoProgress {
    if made_progress || !obligations_remain {
        return NoProgress {
            count: 0,
            block: false,
        };
    }
    let count = no_progress_endings.saturating_add(1);
    NoProgress {
        count,
        block: count >= NO_PROGRESS_BLOCK_AFTER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(code: &str) -> SegmentOutcome {
        SegmentOutcome::Ended { code: code.into() }
    }

    fn work(outcome: SegmentOutcome) -> Settle {
        Settle {
            mode: WorkMode::Work,
            outcome,
            unread_mail: false,
            delegation_wait: false,
        }
    }

    fn desk(outcome: SegmentOutcome) -> Settle {
        Settle {
            mode: WorkMode::Desk,
            ..work(outcome)
        }
    }

    #[test]
    fn states_and_modes_round_trip_as_snake_case() {
        for s in [
            WorkState::Running,
            WorkState::Queued,
            WorkState::Idle,
            WorkState::Waiting,
            WorkState::Blocked,
            WorkState::NeedsAttention,
            WorkState::Closed,
        ] {
            assert_eq!(WorkState::parse(s.as_str()), Ok(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
        }
        for m in [WorkMode::Desk, WorkMode::Work] {
            assert_eq!(WorkMode::parse(m.as_str()), Ok(m));
        }
        assert!(
            WorkState::parse("asleep")
                .unwrap_err()
                .contains("needs_attention")
        );
        assert!(WorkMode::parse("Desk").is_err());
    }

    #[test]
    fn waiting_on_is_tagged_by_kind() {
        let d = WaitingOn::Delegation {
            delegation_id: DelegationId(7),
        };
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "delegation", "delegation_id": 7})
        );
        assert_eq!(serde_json::from_value::<WaitingOn>(json).unwrap(), d);
        let u: WaitingOn = serde_json::from_str(r#"{"kind":"user"}"#).unwrap();
        assert_eq!(u, WaitingOn::User);
    }

    #[test]
    fn desk_closes_when_it_ends() {
        assert_eq!(settle(&desk(ended("answered"))), WorkState::Closed);
        assert_eq!(settle(&desk(SegmentOutcome::CutOff)), WorkState::Closed);
    }

    #[test]
    fn desk_with_unread_line_is_queued_not_closed() {
        let s = Settle {
            unread_mail: true,
            ..desk(ended("answered"))
        };
        assert_eq!(settle(&s), WorkState::Queued);
    }

    /// WQ-2: a desk that ended blocked waits on the person's answer to its card.
    #[test]
    fn desk_ended_blocked_waits_for_the_answer() {
        assert_eq!(settle(&desk(ended("blocked"))), WorkState::Blocked);
    }

    #[test]
    fn desk_out_of_refusals_needs_attention() {
        assert_eq!(
            settle(&desk(ended("needs_attention"))),
            WorkState::NeedsAttention
        );
    }

    #[test]
    fn stopped_desk_closes_even_with_unread_line() {
        let s = Settle {
            unread_mail: true,
            ..desk(SegmentOutcome::Stopped)
        };
        assert_eq!(settle(&s), WorkState::Closed);
    }

    #[test]
    fn stopped_work_goes_idle_whatever_else_holds() {
        let s = Settle {
            unread_mail: true,
            delegation_wait: true,
            ..work(SegmentOutcome::Stopped)
        };
        assert_eq!(settle(&s), WorkState::Idle);
    }

    #[test]
    fn cut_off_or_failed_work_needs_attention_before_unread_mail() {
        for outcome in [
            SegmentOutcome::CutOff,
            SegmentOutcome::Failed,
            ended("needs_attention"),
        ] {
            let s = Settle {
                unread_mail: true,
                ..work(outcome.clone())
            };
            assert_eq!(settle(&s), WorkState::NeedsAttention, "{outcome:?}");
        }
    }

    #[test]
    fn blocked_ending_blocks_even_with_unread_mail() {
        let s = Settle {
            unread_mail: true,
            delegation_wait: true,
            ..work(ended("blocked"))
        };
        assert_eq!(settle(&s), WorkState::Blocked);
    }

    #[test]
    fn unread_mail_queues_work_before_a_wait() {
        let s = Settle {
            unread_mail: true,
            delegation_wait: true,
            ..work(ended("delegated"))
        };
        assert_eq!(settle(&s), WorkState::Queued);
    }

    #[test]
    fn delegation_wait_keeps_work_waiting() {
        assert_eq!(settle(&work(ended("delegated"))), WorkState::Waiting);
        let s = Settle {
            delegation_wait: true,
            ..work(ended("nothing_new"))
        };
        assert_eq!(settle(&s), WorkState::Waiting);
    }

    #[test]
    fn ordinary_work_ending_goes_idle_never_closed() {
        for code in ["done", "answered", "nothing_new", "gave_up", "moved"] {
            assert_eq!(settle(&work(ended(code))), WorkState::Idle, "{code}");
        }
    }

    #[test]
    fn parallel_limit_defaults_to_two_unless_positive() {
        assert_eq!(parallel_limit(None), 2);
        assert_eq!(parallel_limit(Some(0)), 2);
        assert_eq!(parallel_limit(Some(-3)), 2);
        assert_eq!(parallel_limit(Some(5)), 5);
    }

    fn entry(id: i64, priority: u8, order: i64) -> QueueEntry {
        QueueEntry {
            work_item: WorkItemId(id),
            priority,
            order,
        }
    }

    #[test]
    fn queue_orders_by_priority_then_inbox_order() {
        let mut q = vec![
            entry(1, PRIORITY_CHECK_BACK, 1),
            entry(2, PRIORITY_USER, 9),
            entry(3, PRIORITY_DELEGATION_REPLY, 2),
            entry(4, PRIORITY_USER, 5),
        ];
        queue_order(&mut q);
        let ids: Vec<i64> = q.iter().map(|e| e.work_item.0).collect();
        assert_eq!(ids, vec![4, 2, 3, 1]);
    }

    #[test]
    fn third_job_is_queued_at_position_one_when_both_slots_are_taken() {
        // S-WI-2.
        let q = [entry(3, PRIORITY_USER, 10)];
        assert_eq!(
            admit(2, DEFAULT_PARALLEL_LIMIT, &q, WorkItemId(3)),
            Admit::Queued { position: 1 }
        );
        assert_eq!(
            admit(1, DEFAULT_PARALLEL_LIMIT, &q, WorkItemId(3)),
            Admit::Start
        );
    }

    #[test]
    fn free_slot_admits_only_the_head_of_the_queue() {
        let q = [
            entry(5, PRIORITY_DELEGATION_REQUEST, 1),
            entry(6, PRIORITY_USER, 8),
        ];
        assert_eq!(admit(1, 2, &q, WorkItemId(6)), Admit::Start);
        assert_eq!(
            admit(1, 2, &q, WorkItemId(5)),
            Admit::Queued { position: 2 }
        );
        // Two free slots go to the first two in order.
        assert_eq!(admit(0, 2, &q, WorkItemId(5)), Admit::Start);
    }

    #[test]
    fn work_item_missing_from_queue_waits_behind_everyone() {
        let q = [entry(5, PRIORITY_USER, 1)];
        assert_eq!(
            admit(1, 2, &q, WorkItemId(9)),
            Admit::Queued { position: 2 }
        );
        assert_eq!(admit(0, 2, &[], WorkItemId(9)), Admit::Start);
    }

    #[test]
    fn two_no_progress_endings_block() {
        let first = after_ending(0, false, true);
        assert_eq!(
            first,
            NoProgress {
                count: 1,
                block: false
            }
        );
        let second = after_ending(first.count, false, true);
        assert_eq!(
            second,
            NoProgress {
                count: 2,
                block: true
            }
        );
    }

    #[test]
    fn progress_or_nothing_owed_resets_the_no_progress_count() {
        assert_eq!(
            after_ending(1, true, true),
            NoProgress {
                count: 0,
                block: false
            }
        );
        assert_eq!(
            after_ending(1, false, false),
            NoProgress {
                count: 0,
                block: false
            }
        );
    }
}
