//! The work-item passes (SV-4, SV-5, SV-6): what the tick does with a work item whose
//! `supervise_at` came due. Pick-ups of work that needs attention are `pickup.rs`'s.

use crate::work_item::WorkState;
use serde::Serialize;

/// What a waiting work item waits on, as it stands now (SV-4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitFacts {
    /// Not waiting.
    None,
    /// A delegation that is still open, its recipient's work not closed.
    DelegationOpen,
    /// A delegation that was answered: its reply is mail (SV-3 delivers it).
    DelegationReplied,
    /// The request was cancelled, its record is gone, or the other side's work closed.
    Gone { what: String },
    /// Waiting on the user.
    User,
}

/// A due work item as the tick reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkFacts {
    pub state: WorkState,
    /// A segment of it is live on this or another node.
    pub live_segment: bool,
    /// Mail on its thread that would wake it (not context, not consumed).
    pub mail: bool,
    pub wait: WaitFacts,
    /// A person's hold covers it: its wait stands, nothing moves it (SV-4, SV-10).
    pub held: bool,
    /// How its last segment ended: `None` when it never ran.
    pub last_segment: Option<LastSegment>,
    /// Its thread is paused by a cut or failed run: nothing drives it, whatever mail it gets,
    /// until a Continue or a pick-up releases it.
    pub paused_by_failure: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LastSegment {
    /// Cut by a restart or a drain.
    Interrupted,
    /// A model error, hop limit or internal error.
    Failed,
    /// A person stopped it.
    Stopped,
    /// Ended with a code of its own.
    Ended,
}

/// What to do with a due work item (besides the pick-up pass).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkAction {
    /// Look no further until something arms it again.
    Nothing,
    /// SV-4: the wait no longer stands: needs attention, with a Bot-only line saying so.
    WaitInvalid { what: String },
    /// SV-5: idle with mail that would wake it: queued, and driven.
    Requeue,
    /// SV-6: running with no live segment, cut or failed: needs attention (then picked up).
    NeedsAttention,
    /// SV-6: running with no live segment that ended otherwise: idle.
    Idle,
    /// Needs attention: the pick-up pass decides.
    PickUp,
}

/// SV-4…SV-6 for one due work item.
pub fn work_action(f: &WorkFacts) -> WorkAction {
    match f.state {
        WorkState::Waiting => match &f.wait {
            // A wait covered by a stop is valid (SV-4).
            _ if f.held => WorkAction::Nothing,
            WaitFacts::Gone { what } => WorkAction::WaitInvalid { what: what.clone() },
            // A reply is mail: it is delivered at once (SV-3); if it sits unread, requeue.
            WaitFacts::DelegationReplied if f.mail && !f.live_segment => WorkAction::Requeue,
            _ => WorkAction::Nothing,
        },
        // Mail on closed work never counts (SV-5).
        WorkState::Idle if f.mail && !f.held && !f.live_segment => WorkAction::Requeue,
        WorkState::Running if !f.live_segment => match f.last_segment {
            Some(LastSegment::Interrupted | LastSegment::Failed) => WorkAction::NeedsAttention,
            // Stopped, or ended without its closing being seen, and no stop covers it.
            _ if !f.held => WorkAction::Idle,
            _ => WorkAction::Nothing,
        },
        WorkState::NeedsAttention => WorkAction::PickUp,
        // SV-11: mail queued it after its segment was cut or failed, but its paused thread
        // runs nothing by itself: the mail is no reason to wait, it needs attention.
        WorkState::Queued if f.paused_by_failure && !f.live_segment && !f.held => {
            WorkAction::NeedsAttention
        }
        _ => WorkAction::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(state: WorkState) -> WorkFacts {
        WorkFacts {
            state,
            live_segment: false,
            mail: false,
            wait: WaitFacts::None,
            held: false,
            last_segment: None,
            paused_by_failure: false,
        }
    }

    #[test]
    fn sv_4_a_gone_wait_needs_attention_unless_held() {
        let mut f = facts(WorkState::Waiting);
        f.wait = WaitFacts::Gone {
            what: "delegation 4 was cancelled".into(),
        };
        assert_eq!(
            work_action(&f),
            WorkAction::WaitInvalid {
                what: "delegation 4 was cancelled".into()
            }
        );
        f.held = true;
        assert_eq!(work_action(&f), WorkAction::Nothing);
    }

    #[test]
    fn sv_4_an_open_wait_stands() {
        let mut f = facts(WorkState::Waiting);
        f.wait = WaitFacts::DelegationOpen;
        assert_eq!(work_action(&f), WorkAction::Nothing);
    }

    #[test]
    fn sv_5_idle_with_mail_is_requeued_closed_never() {
        let mut f = facts(WorkState::Idle);
        f.mail = true;
        assert_eq!(work_action(&f), WorkAction::Requeue);
        f.state = WorkState::Closed;
        assert_eq!(work_action(&f), WorkAction::Nothing);
        let mut held = facts(WorkState::Idle);
        held.mail = true;
        held.held = true;
        assert_eq!(work_action(&held), WorkAction::Nothing);
    }

    #[test]
    fn sv_6_running_without_a_live_segment_is_caught_up() {
        let mut f = facts(WorkState::Running);
        f.last_segment = Some(LastSegment::Interrupted);
        assert_eq!(work_action(&f), WorkAction::NeedsAttention);
        f.last_segment = Some(LastSegment::Failed);
        assert_eq!(work_action(&f), WorkAction::NeedsAttention);
        f.last_segment = Some(LastSegment::Stopped);
        assert_eq!(work_action(&f), WorkAction::Idle);
        f.live_segment = true;
        assert_eq!(work_action(&f), WorkAction::Nothing);
    }

    #[test]
    fn sv_11_mail_queued_on_a_failed_paused_thread_needs_attention() {
        let mut f = facts(WorkState::Queued);
        f.mail = true;
        assert_eq!(work_action(&f), WorkAction::Nothing, "an ordinary queue");
        f.paused_by_failure = true;
        assert_eq!(work_action(&f), WorkAction::NeedsAttention);
        f.held = true;
        assert_eq!(work_action(&f), WorkAction::Nothing);
    }

    #[test]
    fn needs_attention_goes_to_the_pickup_pass() {
        assert_eq!(
            work_action(&facts(WorkState::NeedsAttention)),
            WorkAction::PickUp
        );
    }
}
