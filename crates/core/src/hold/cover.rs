//! What a hold in force covers (§14.1): its scope, or any target it gained when made. The
//! store's `held_cover` view says the same in SQL; this is the rule the kernel and tests use.

use super::scope::{Hold, HoldScope, HoldTarget, TurnFacts};
use crate::HoldId;

/// Whether `hold` keeps this turn from running. A lifted hold covers nothing.
pub fn covers(hold: &Hold, t: &TurnFacts) -> bool {
    hold.in_force()
        && (scope_covers(&hold.scope, t) || hold.targets.iter().any(|x| target_covers(x, t)))
}

/// The in-force holds covering the turn, in the given order.
pub fn covering(holds: &[Hold], t: &TurnFacts) -> Vec<HoldId> {
    holds
        .iter()
        .filter(|h| covers(h, t))
        .map(|h| h.id)
        .collect()
}

/// The scope alone, whatever the hold's status.
pub fn scope_covers(scope: &HoldScope, t: &TurnFacts) -> bool {
    match scope {
        HoldScope::Everything => true,
        HoldScope::Bot { bot_id } => t.bot_id == *bot_id,
        // The conversation, and its jobs' work wherever it runs (Bot↔Bot directs too).
        HoldScope::Session { session_id } => {
            t.session_id == *session_id || t.plan_home == Some(*session_id)
        }
        // A job's tickets are its work, so the job's hold reaches them through plan_id.
        HoldScope::Plan { plan_id } => t.plan_id == Some(*plan_id),
        HoldScope::Ticket { ticket_id } => t.ticket_id == Some(*ticket_id),
        HoldScope::BotPlan { bot_id, plan_id } => {
            t.bot_id == *bot_id && t.plan_id == Some(*plan_id)
        }
        // By thread, not run: the turn's later wakes on its thread stay held while it stands.
        HoldScope::Turn { thread_id, .. } => t.thread_id == *thread_id,
    }
}

pub fn target_covers(target: &HoldTarget, t: &TurnFacts) -> bool {
    match target {
        HoldTarget::Turn { thread_id, .. } => t.thread_id == *thread_id,
        HoldTarget::BotPlan { bot_id, plan_id } => {
            t.bot_id == *bot_id && t.plan_id == Some(*plan_id)
        }
        HoldTarget::Direct { session_id } => t.session_id == *session_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hold::scope::HoldStatus;
    use crate::hold::test_support::{facts, hold};
    use crate::{BotId, PlanId, RunId, SessionId, ThreadId, TicketId};

    #[test]
    fn cover_per_scope() {
        // Bot 1 in session 10 on thread 100, job 5 (home 11), ticket 7.
        let mut t = facts(1, 10, 100);
        t.plan_id = Some(PlanId(5));
        t.plan_home = Some(SessionId(11));
        t.ticket_id = Some(TicketId(7));
        let yes_no = |scope: HoldScope| {
            let mut other = facts(2, 12, 200);
            other.plan_id = Some(PlanId(6));
            let h = hold(1, 0, scope);
            (covers(&h, &t), covers(&h, &other))
        };

        // Everything covers every turn, even one with no job.
        assert_eq!(yes_no(HoldScope::Everything), (true, true));
        assert_eq!(yes_no(HoldScope::Bot { bot_id: BotId(1) }), (true, false));
        // A session covers turns spoken in it and its jobs' turns spoken elsewhere.
        let here = SessionId(10);
        let home = SessionId(11);
        assert_eq!(
            yes_no(HoldScope::Session { session_id: here }),
            (true, false)
        );
        assert_eq!(
            yes_no(HoldScope::Session { session_id: home }),
            (true, false)
        );
        assert!(!covers(
            &hold(
                1,
                0,
                HoldScope::Session {
                    session_id: SessionId(12)
                }
            ),
            &t
        ));
        // A plan covers its tickets' turns.
        assert_eq!(
            yes_no(HoldScope::Plan { plan_id: PlanId(5) }),
            (true, false)
        );
        let ticket = HoldScope::Ticket {
            ticket_id: TicketId(7),
        };
        assert_eq!(yes_no(ticket), (true, false));
        let bot_plan = |b, p| HoldScope::BotPlan {
            bot_id: BotId(b),
            plan_id: PlanId(p),
        };
        assert_eq!(yes_no(bot_plan(1, 5)), (true, false));
        assert_eq!(yes_no(bot_plan(1, 6)), (false, false));
        assert_eq!(yes_no(bot_plan(2, 5)), (false, false));
        // A turn hold covers a later run on the same thread.
        let turn = HoldScope::Turn {
            run_id: RunId(99),
            thread_id: ThreadId(100),
            bot_id: BotId(1),
            session_id: SessionId(10),
            plan_id: None,
        };
        assert_eq!(yes_no(turn), (true, false));

        // Targets widen a hold whose scope misses the turn.
        let base = || hold(1, 0, HoldScope::Bot { bot_id: BotId(9) });
        assert!(!covers(&base(), &t));
        let with = |target: HoldTarget| {
            let mut h = base();
            h.targets.push(target);
            covers(&h, &t)
        };
        let turn_target = |th| HoldTarget::Turn {
            run_id: RunId(1),
            thread_id: ThreadId(th),
            bot_id: BotId(1),
        };
        assert!(with(turn_target(100)));
        assert!(!with(turn_target(101)));
        let bp = |b, p| HoldTarget::BotPlan {
            bot_id: BotId(b),
            plan_id: PlanId(p),
        };
        assert!(with(bp(1, 5)));
        assert!(!with(bp(1, 6)));
        // DEL-31: the helper's other job is not its work on this one.
        assert!(!with(bp(2, 5)));
        assert!(with(HoldTarget::Direct {
            session_id: SessionId(10)
        }));
        assert!(!with(HoldTarget::Direct {
            session_id: SessionId(11)
        }));

        // Lifted, it covers nothing, targets included.
        let mut lifted = hold(1, 0, HoldScope::Everything);
        lifted.targets.push(turn_target(100));
        lifted.status = HoldStatus::Lifted;
        assert!(!covers(&lifted, &t));
    }

    #[test]
    fn cover_per_scope_covering_lists_in_force_holds_in_order() {
        let t = facts(1, 10, 100);
        let mut lifted = hold(3, 0, HoldScope::Everything);
        lifted.status = HoldStatus::Lifted;
        let holds = vec![
            hold(1, 0, HoldScope::Bot { bot_id: BotId(1) }),
            hold(2, 0, HoldScope::Bot { bot_id: BotId(2) }),
            lifted,
            hold(4, 0, HoldScope::Everything),
        ];
        assert_eq!(
            covering(&holds, &t),
            vec![crate::HoldId(1), crate::HoldId(4)]
        );
    }
}
