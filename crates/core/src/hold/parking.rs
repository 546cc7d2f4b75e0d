//! A job's status under holds (HOLD-P1, P3, P6, P7, P8), for Troupe's one plan status
//! (active | done | parked) and no "current slot". Only a hold over the job as a whole parks
//! it, so the job's own status shows it stopped; lifting gives back what was there before.

use super::scope::{Hold, HoldScope, ParkedPlan};
use crate::plan::PlanStatus;
use crate::{HoldId, PlanId, SessionId};

/// Whether the scope parks this job: its plan hold, or a hold on its home conversation (P1).
/// Everything, Bot, ticket, Bot × plan and turn holds leave the status alone (P7): the
/// job's other Bots go on.
pub fn parks_plan(scope: &HoldScope, plan: PlanId, home: Option<SessionId>) -> bool {
    match scope {
        HoldScope::Plan { plan_id } => *plan_id == plan,
        HoldScope::Session { session_id } => home == Some(*session_id),
        _ => false,
    }
}

/// What a new hold does to the job's status: parks an active job, keeping its prior status
/// for the lift. A parked job (another hold's) is not parked again, so the restore note stays
/// with the hold that parked it; a done job stays done.
pub fn park(
    scope: &HoldScope,
    plan: PlanId,
    home: Option<SessionId>,
    status: PlanStatus,
) -> Option<ParkedPlan> {
    (parks_plan(scope, plan, home) && status == PlanStatus::Active).then_some(ParkedPlan {
        plan_id: plan,
        prior: status,
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restore {
    /// Give the job this status back.
    To(PlanStatus),
    /// Another plan or session hold still covers it: it stays parked and that hold takes the
    /// restore note (P6).
    Inherit(HoldId),
    /// Changed meanwhile (marked done): nothing to give back.
    Leave,
}

/// On a hold's lift, what becomes of a job it parked. `other_whole_plan_holds` are the
/// other in-force holds that park this job (see `parking_holds`); the first inherits.
pub fn restore(
    parked: &ParkedPlan,
    current: PlanStatus,
    other_whole_plan_holds: &[HoldId],
) -> Restore {
    if current != PlanStatus::Parked {
        return Restore::Leave;
    }
    match other_whole_plan_holds.first() {
        Some(h) => Restore::Inherit(*h),
        None => Restore::To(parked.prior),
    }
}

/// In-force holds that park this job, other than `except` (the one lifting).
pub fn parking_holds(
    holds: &[Hold],
    plan: PlanId,
    home: Option<SessionId>,
    except: HoldId,
) -> Vec<HoldId> {
    holds
        .iter()
        .filter(|h| h.in_force() && h.id != except && parks_plan(&h.scope, plan, home))
        .map(|h| h.id)
        .collect()
}

/// `plan.held_by` (P8): in-force holds over the job as a whole — its own, its home
/// conversation's, everything.
pub fn held_by(holds: &[Hold], plan: PlanId, home: Option<SessionId>) -> Vec<HoldId> {
    holds
        .iter()
        .filter(|h| {
            h.in_force()
                && (matches!(h.scope, HoldScope::Everything) || parks_plan(&h.scope, plan, home))
        })
        .map(|h| h.id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hold::scope::HoldStatus;
    use crate::hold::test_support::hold;
    use crate::{BotId, RunId, ThreadId, TicketId};

    const JOB: PlanId = PlanId(5);
    const HOME: SessionId = SessionId(10);

    fn plan_hold() -> HoldScope {
        HoldScope::Plan { plan_id: JOB }
    }

    fn home_hold() -> HoldScope {
        HoldScope::Session { session_id: HOME }
    }

    #[test]
    fn plan_parking() {
        use PlanStatus::*;
        let note = ParkedPlan {
            plan_id: JOB,
            prior: Active,
        };
        let parked = Some(note.clone());
        // P1: the job's own hold, or its home conversation's, parks it.
        assert_eq!(park(&plan_hold(), JOB, Some(HOME), Active), parked);
        assert_eq!(park(&home_hold(), JOB, Some(HOME), Active), parked);
        // Not another job's hold, nor a conversation the job only has work in.
        assert_eq!(park(&plan_hold(), PlanId(6), Some(HOME), Active), None);
        let elsewhere = HoldScope::Session {
            session_id: SessionId(11),
        };
        assert_eq!(park(&elsewhere, JOB, Some(HOME), Active), None);
        // P3 (no displaced state here): a parked job is not parked again; done stays done.
        assert_eq!(park(&plan_hold(), JOB, Some(HOME), Parked), None);
        assert_eq!(park(&plan_hold(), JOB, Some(HOME), Done), None);

        // P7: these holds leave the job's status alone.
        let others = [
            HoldScope::Everything,
            HoldScope::Bot { bot_id: BotId(1) },
            HoldScope::Ticket {
                ticket_id: TicketId(1),
            },
            HoldScope::BotPlan {
                bot_id: BotId(1),
                plan_id: JOB,
            },
            HoldScope::Turn {
                run_id: RunId(1),
                thread_id: ThreadId(1),
                bot_id: BotId(1),
                session_id: HOME,
                plan_id: Some(JOB),
            },
        ];
        for scope in &others {
            assert_eq!(park(scope, JOB, Some(HOME), Active), None, "{scope:?}");
        }

        // P6: the lift gives the prior status back...
        assert_eq!(restore(&note, Parked, &[]), Restore::To(Active));
        // ...unless another whole-job hold still stands: it keeps it parked and takes the note.
        assert_eq!(
            restore(&note, Parked, &[HoldId(3), HoldId(4)]),
            Restore::Inherit(HoldId(3))
        );
        // Marked done meanwhile (P4): done stays.
        assert_eq!(restore(&note, Done, &[HoldId(3)]), Restore::Leave);
    }

    #[test]
    fn plan_parking_who_inherits_and_held_by() {
        let mut lifted = hold(9, 0, plan_hold());
        lifted.status = HoldStatus::Lifted;
        let holds = [
            hold(1, 0, plan_hold()),
            hold(2, 0, home_hold()),
            hold(3, 0, HoldScope::Everything),
            hold(4, 0, HoldScope::Bot { bot_id: BotId(1) }),
            lifted,
        ];
        // The one lifting is not its own heir; everything parks nothing, so inherits nothing.
        assert_eq!(
            parking_holds(&holds, JOB, Some(HOME), HoldId(1)),
            vec![HoldId(2)]
        );
        assert_eq!(
            held_by(&holds, JOB, Some(HOME)),
            vec![HoldId(1), HoldId(2), HoldId(3)]
        );
        // A job with no home: only its own hold and everything are over it.
        assert_eq!(held_by(&holds, JOB, None), vec![HoldId(1), HoldId(3)]);
    }
}
