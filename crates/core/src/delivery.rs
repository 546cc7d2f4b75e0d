//! A job's delivery (digest B T9, T10): it is delivered when every ticket that is not dropped
//! is approved and its job-wide gates passed on their last run; a delivered job is active
//! again as soon as one of its tickets leaves approved (handed over again, sent back, moved on
//! the board). Only a ticket's stage moving decides this (T13: a settle never does).

use crate::ticket::TicketStage;

/// What a stage move does to the job's delivery.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DeliveryChange {
    /// T9: `plan.delivered`.
    Deliver,
    /// T10: `plan.reopened`; the job is active again.
    Reopen,
}

/// The job's delivery after one of its tickets moved to `moved_to`. `stages` are all the
/// job's tickets' stages after the move; `gates_passed` says whether every job-wide gate
/// passed on its last run (no such gate: passed). A job with no ticket left to approve
/// (none, or all dropped) is not delivered by this: nothing was handed over.
pub fn delivery_after(
    delivered: bool,
    stages: &[TicketStage],
    gates_passed: bool,
    moved_to: TicketStage,
) -> Option<DeliveryChange> {
    if delivered {
        // Dropping a ticket of a delivered job leaves the rest as approved as they were.
        let left_approved = !matches!(moved_to, TicketStage::Approved | TicketStage::Dropped);
        return left_approved.then_some(DeliveryChange::Reopen);
    }
    let mut open = stages.iter().filter(|s| **s != TicketStage::Dropped);
    let mut any = false;
    let all_approved = open.all(|s| {
        any = true;
        *s == TicketStage::Approved
    });
    (any && all_approved && gates_passed).then_some(DeliveryChange::Deliver)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TicketStage::*;

    #[test]
    fn t9_delivered_when_every_open_ticket_is_approved_and_gates_passed() {
        assert_eq!(
            delivery_after(false, &[Approved, Approved, Dropped], true, Approved),
            Some(DeliveryChange::Deliver)
        );
        assert_eq!(
            delivery_after(false, &[Approved, Approved], false, Approved),
            None,
            "a job-wide gate failed or never ran"
        );
        assert_eq!(
            delivery_after(false, &[Approved, InReview], true, Approved),
            None
        );
        assert_eq!(delivery_after(false, &[Dropped], true, Dropped), None);
        assert_eq!(delivery_after(false, &[], true, Approved), None);
        // The last open ticket dropped while the rest are approved delivers too.
        assert_eq!(
            delivery_after(false, &[Approved, Dropped], true, Dropped),
            Some(DeliveryChange::Deliver)
        );
    }

    #[test]
    fn t10_reopened_when_a_ticket_leaves_approved() {
        for to in [ToDo, InProgress, Submitted, InReview, Rework] {
            assert_eq!(
                delivery_after(true, &[to, Approved], true, to),
                Some(DeliveryChange::Reopen),
                "{to}"
            );
        }
        assert_eq!(
            delivery_after(true, &[Approved, Dropped], true, Dropped),
            None
        );
        assert_eq!(delivery_after(true, &[Approved], true, Approved), None);
    }
}
