//! Holds and plans across clearing a conversation and deleting a group (HOLD-X1, X2,
//! PLAN-D2, D10, D12). A hold is never deleted (HOLD-2), so a plan a hold names outlives a
//! clear; a deleted group's surviving plans leave it, and one its hold keeps parked gets a
//! plan hold of its own first, or nothing would keep it parked once it has no home.

use super::parking::parks_plan;
use super::scope::{Hold, HoldEffect, HoldScope, HoldTarget, ParkedPlan};
use crate::{CheckBackId, HoldId, PlanId, SessionId};

/// What is ending the conversation's history.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Its history is cleared; the conversation stays.
    Clear,
    /// The group is deleted.
    DeleteGroup,
}

/// What is known of a plan whose home the conversation is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanFacts {
    /// A hold names it ([`named_by_holds`]).
    pub named_by_hold: bool,
    /// Another conversation's turn, line, work or delegation still belongs to it.
    pub belongs_elsewhere: bool,
    /// A hold in force on the group parks it: that hold and the restore note
    /// ([`group_parking`]).
    pub parked_by_group: Option<(HoldId, ParkedPlan)>,
    /// A plan hold of its own is in force already.
    pub own_plan_hold: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanFate {
    /// Nothing refers to it any more: deleted with what is only its own.
    Delete,
    /// It stays, dormant (PLAN-D2). `leaves_home`: it becomes session-less (its group is
    /// gone). `own_hold`: make it a plan hold (source `migration`) carrying this restore
    /// note, taken from the group's hold (HOLD-X2).
    Keep {
        leaves_home: bool,
        own_hold: Option<(HoldId, ParkedPlan)>,
    },
}

/// The plan's fate (PLAN-D10, D12; HOLD-X1, X2).
pub fn plan_fate(ending: Ending, facts: &PlanFacts) -> PlanFate {
    if !facts.named_by_hold && !facts.belongs_elsewhere {
        return PlanFate::Delete;
    }
    match ending {
        Ending::Clear => PlanFate::Keep {
            leaves_home: false,
            own_hold: None,
        },
        Ending::DeleteGroup => PlanFate::Keep {
            leaves_home: true,
            own_hold: if facts.own_plan_hold {
                None
            } else {
                facts.parked_by_group.clone()
            },
        },
    }
}

/// Whether a hold names the plan (HOLD-X1): in its scope (plan, Bot × plan, a turn on it) or
/// a target, lifted or not.
pub fn named_by_holds(holds: &[Hold], plan: PlanId) -> bool {
    holds.iter().any(|h| {
        let in_scope = match &h.scope {
            HoldScope::Plan { plan_id } | HoldScope::BotPlan { plan_id, .. } => *plan_id == plan,
            HoldScope::Turn { plan_id, .. } => *plan_id == Some(plan),
            _ => false,
        };
        in_scope
            || h.targets
                .iter()
                .any(|t| matches!(t, HoldTarget::BotPlan { plan_id, .. } if *plan_id == plan))
    })
}

/// A deleted plan leaves what a hold in force would give back on its lift: the plan it
/// parked (a conversation's hold parks the jobs it is home to without naming them) and the
/// plan's check-backs it set aside. Whether anything changed.
pub fn forget_plan(effect: &mut HoldEffect, plan: PlanId, its_check_backs: &[CheckBackId]) -> bool {
    let before = (
        effect.plans_parked.len(),
        effect.check_backs_set_aside.len(),
    );
    effect.plans_parked.retain(|p| p.plan_id != plan);
    effect
        .check_backs_set_aside
        .retain(|c| !its_check_backs.contains(c));
    before
        != (
            effect.plans_parked.len(),
            effect.check_backs_set_aside.len(),
        )
}

/// The hold in force on the group that keeps the plan parked, with its restore note.
pub fn group_parking(
    holds: &[Hold],
    group: SessionId,
    plan: PlanId,
) -> Option<(HoldId, ParkedPlan)> {
    holds
        .iter()
        .filter(|h| {
            h.in_force()
                && matches!(h.scope, HoldScope::Session { session_id } if session_id == group)
        })
        .find_map(|h| {
            h.effect
                .plans_parked
                .iter()
                .find(|p| p.plan_id == plan)
                .map(|p| (h.id, p.clone()))
        })
}

/// Whether a plan hold of its own is in force over the plan.
pub fn has_own_plan_hold(holds: &[Hold], plan: PlanId) -> bool {
    holds.iter().any(|h| {
        h.in_force()
            && matches!(h.scope, HoldScope::Plan { .. })
            && parks_plan(&h.scope, plan, None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BotId;
    use crate::hold::scope::HoldStatus;
    use crate::hold::test_support::{hold, stopped};
    use crate::plan::PlanStatus;

    const JOB: PlanId = PlanId(5);
    const GROUP: SessionId = SessionId(10);

    fn parked() -> ParkedPlan {
        ParkedPlan {
            plan_id: JOB,
            prior: PlanStatus::Active,
        }
    }

    #[test]
    fn hold_x1_plan_named_by_a_hold_survives_a_clear_else_it_goes() {
        let kept = PlanFate::Keep {
            leaves_home: false,
            own_hold: None,
        };
        let named = PlanFacts {
            named_by_hold: true,
            ..PlanFacts::default()
        };
        assert_eq!(plan_fate(Ending::Clear, &named), kept);
        let elsewhere = PlanFacts {
            belongs_elsewhere: true,
            ..PlanFacts::default()
        };
        assert_eq!(plan_fate(Ending::Clear, &elsewhere), kept);
        assert_eq!(
            plan_fate(Ending::Clear, &PlanFacts::default()),
            PlanFate::Delete
        );
        assert_eq!(
            plan_fate(Ending::DeleteGroup, &PlanFacts::default()),
            PlanFate::Delete
        );
    }

    #[test]
    fn hold_x2_deleted_group_hands_its_parking_to_a_plan_hold_unless_one_stands() {
        let mut facts = PlanFacts {
            belongs_elsewhere: true,
            parked_by_group: Some((HoldId(3), parked())),
            ..PlanFacts::default()
        };
        assert_eq!(
            plan_fate(Ending::DeleteGroup, &facts),
            PlanFate::Keep {
                leaves_home: true,
                own_hold: Some((HoldId(3), parked())),
            }
        );
        // A clear keeps the group and its hold: nothing moves.
        assert_eq!(
            plan_fate(Ending::Clear, &facts),
            PlanFate::Keep {
                leaves_home: false,
                own_hold: None,
            }
        );
        facts.own_plan_hold = true;
        assert_eq!(
            plan_fate(Ending::DeleteGroup, &facts),
            PlanFate::Keep {
                leaves_home: true,
                own_hold: None,
            }
        );
    }

    #[test]
    fn named_by_holds_reads_scopes_and_targets_lifted_or_not() {
        let plan_hold = hold(1, 0, HoldScope::Plan { plan_id: JOB });
        assert!(named_by_holds(std::slice::from_ref(&plan_hold), JOB));
        assert!(!named_by_holds(&[plan_hold], PlanId(6)));
        let mut lifted = hold(
            2,
            0,
            HoldScope::BotPlan {
                bot_id: BotId(1),
                plan_id: JOB,
            },
        );
        lifted.status = HoldStatus::Lifted;
        assert!(named_by_holds(&[lifted], JOB));
        let mut target = hold(3, 0, HoldScope::Bot { bot_id: BotId(2) });
        target.targets.push(HoldTarget::BotPlan {
            bot_id: BotId(4),
            plan_id: JOB,
        });
        assert!(named_by_holds(&[target], JOB));
        // A conversation's hold parks its jobs without naming them.
        let mut session = hold(4, 0, HoldScope::Session { session_id: GROUP });
        session.effect.plans_parked.push(parked());
        assert!(!named_by_holds(&[session], JOB));
    }

    #[test]
    fn a_deleted_plan_is_forgotten_by_what_a_hold_gives_back() {
        let mut effect = HoldEffect::default();
        effect.plans_parked.push(parked());
        effect.plans_parked.push(ParkedPlan {
            plan_id: PlanId(6),
            prior: PlanStatus::Active,
        });
        effect.check_backs_set_aside = vec![CheckBackId(1), CheckBackId(2)];
        effect
            .stopped_turns
            .push(stopped(1, GROUP.0, 1, Some(JOB.0)));
        assert!(forget_plan(&mut effect, JOB, &[CheckBackId(2)]));
        assert_eq!(effect.plans_parked.len(), 1);
        assert_eq!(effect.plans_parked[0].plan_id, PlanId(6));
        assert_eq!(effect.check_backs_set_aside, vec![CheckBackId(1)]);
        // What it stopped is history: it stays.
        assert_eq!(effect.stopped_turns.len(), 1);
        assert!(!forget_plan(&mut effect, JOB, &[CheckBackId(2)]));
    }

    #[test]
    fn group_parking_finds_the_groups_hold_and_its_restore_note() {
        let mut group = hold(7, 0, HoldScope::Session { session_id: GROUP });
        assert_eq!(group_parking(&[group.clone()], GROUP, JOB), None);
        group.effect.plans_parked.push(parked());
        assert_eq!(
            group_parking(&[group.clone()], GROUP, JOB),
            Some((HoldId(7), parked()))
        );
        assert_eq!(group_parking(&[group.clone()], SessionId(11), JOB), None);
        let own = hold(8, 0, HoldScope::Plan { plan_id: JOB });
        assert!(has_own_plan_hold(&[group.clone(), own], JOB));
        assert!(!has_own_plan_hold(&[group], JOB));
    }
}
