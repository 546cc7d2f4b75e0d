//! When a plan goes dormant and what wakes it (PLAN-D3, D5, D9). Dormancy is not a status: it
//! neither accepts nor abandons the job, it only takes it out of the default candidates and
//! keeps call-backs away (PLAN-D1).

/// Quiet this long (no person, no segment) before a new plan may set an older one aside.
pub const SET_ASIDE_AFTER_MS: i64 = 2 * 3600 * 1000;
/// A delivered plan goes dormant after this long without the person.
pub const DELIVERED_DORMANT_AFTER_MS: i64 = 72 * 3600 * 1000;

/// What the rules read of a plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanActivity {
    pub last_user_activity_at: Option<i64>,
    /// The start of the plan's latest segment.
    pub last_segment_at: Option<i64>,
    /// Open work items on the plan that are not idle (running, waiting, blocked).
    pub non_idle_work_items: usize,
    pub delivered_at: Option<i64>,
    pub created_at: i64,
}

/// PLAN-D3: opening a new plan sets this one aside only when it has been quiet for 2 h — no
/// word from the person and no segment — and none of its work is still going. A plan that
/// never had either counts from its creation.
pub fn may_set_aside(a: &PlanActivity, now: i64) -> bool {
    let quiet_since = |t: Option<i64>| now - t.unwrap_or(a.created_at) >= SET_ASIDE_AFTER_MS;
    quiet_since(a.last_user_activity_at)
        && quiet_since(a.last_segment_at)
        && a.non_idle_work_items == 0
}

/// PLAN-D5: a delivered plan goes dormant after 72 h without the person since it was
/// delivered (their activity before the delivery does not count).
pub fn delivered_goes_dormant(a: &PlanActivity, now: i64) -> bool {
    let Some(delivered) = a.delivered_at else {
        return false;
    };
    let since = a
        .last_user_activity_at
        .map_or(delivered, |u| u.max(delivered));
    now - since >= DELIVERED_DORMANT_AFTER_MS
}

/// Something that happens to a dormant plan.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WakeCause {
    /// The person's line (or answer) was filed under it, from any conversation.
    UserLine,
    /// The person edited its fields (a rename is one: PLAN-5).
    UserEdit,
    /// A Bot's segment in it: a check-back, a call-back, being named into it.
    BotSegment,
}

/// PLAN-D9: only the person wakes a dormant plan; a Bot's segment in it leaves it dormant.
pub fn wakes(cause: WakeCause) -> bool {
    match cause {
        WakeCause::UserLine | WakeCause::UserEdit => true,
        WakeCause::BotSegment => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3600 * 1000;

    fn quiet(created_at: i64) -> PlanActivity {
        PlanActivity {
            created_at,
            ..Default::default()
        }
    }

    #[test]
    fn quiet_plan_goes_dormant() {
        let a = PlanActivity {
            last_user_activity_at: Some(0),
            last_segment_at: Some(H),
            ..quiet(0)
        };
        assert!(may_set_aside(&a, 3 * H));
        // Two hours after the last segment exactly is enough.
        assert!(may_set_aside(&a, H + SET_ASIDE_AFTER_MS));
    }

    #[test]
    fn plan_with_recent_user_words_stays_awake() {
        let a = PlanActivity {
            last_user_activity_at: Some(2 * H),
            ..quiet(0)
        };
        assert!(!may_set_aside(&a, 3 * H));
    }

    #[test]
    fn plan_with_a_recent_segment_stays_awake() {
        let a = PlanActivity {
            last_segment_at: Some(2 * H),
            ..quiet(0)
        };
        assert!(!may_set_aside(&a, 3 * H));
    }

    #[test]
    fn plan_with_running_work_stays_awake() {
        let a = PlanActivity {
            non_idle_work_items: 1,
            ..quiet(0)
        };
        assert!(!may_set_aside(&a, 100 * H));
    }

    #[test]
    fn a_new_plan_without_activity_counts_from_its_creation() {
        assert!(!may_set_aside(&quiet(10 * H), 11 * H));
        assert!(may_set_aside(&quiet(10 * H), 12 * H));
    }

    #[test]
    fn delivered_plan_goes_dormant_after_72_hours_without_the_user() {
        let a = PlanActivity {
            delivered_at: Some(10 * H),
            last_user_activity_at: Some(5 * H),
            ..quiet(0)
        };
        assert!(!delivered_goes_dormant(&a, 81 * H));
        assert!(delivered_goes_dormant(&a, 82 * H));
    }

    #[test]
    fn user_activity_after_delivery_keeps_it_awake() {
        let a = PlanActivity {
            delivered_at: Some(10 * H),
            last_user_activity_at: Some(50 * H),
            ..quiet(0)
        };
        assert!(!delivered_goes_dormant(&a, 100 * H));
        assert!(delivered_goes_dormant(&a, 122 * H));
    }

    #[test]
    fn an_undelivered_plan_never_goes_dormant_by_the_clock() {
        assert!(!delivered_goes_dormant(&quiet(0), 1000 * H));
    }

    #[test]
    fn user_line_and_user_edit_wake_a_dormant_plan() {
        assert!(wakes(WakeCause::UserLine));
        assert!(wakes(WakeCause::UserEdit));
    }

    #[test]
    fn bot_segment_does_not_wake_a_dormant_plan() {
        assert!(!wakes(WakeCause::BotSegment));
    }
}
