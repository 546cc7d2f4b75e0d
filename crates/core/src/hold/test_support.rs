//! Builders the hold rules' tests share, so each test states only what its case is about.

use super::scope::{Hold, HoldEffect, HoldScope, HoldSource, HoldStatus, StoppedTurn, TurnFacts};
use crate::{BotId, HoldId, PlanId, RunId, SessionId, ThreadId};

/// An in-force hold made by the person's words.
pub fn hold(id: i64, created_at: i64, scope: HoldScope) -> Hold {
    Hold {
        id: HoldId(id),
        created_at,
        status: HoldStatus::InForce,
        lifted_at: None,
        lifted_by: None,
        lift_message_id: None,
        scope,
        targets: vec![],
        source: HoldSource::UserText,
        source_message_id: None,
        session_id: None,
        lift_on_next_user_message: true,
        cancel: false,
        composer_stop: false,
        effect: HoldEffect::default(),
    }
}

/// A jobless turn of `bot` on `thread` in `session`.
pub fn facts(bot: i64, session: i64, thread: i64) -> TurnFacts {
    TurnFacts {
        bot_id: BotId(bot),
        session_id: SessionId(session),
        thread_id: ThreadId(thread),
        plan_id: None,
        plan_home: None,
        ticket_id: None,
    }
}

/// A stopped turn; its run id is its thread id, which is all the tests need.
pub fn stopped(bot: i64, session: i64, thread: i64, plan: Option<i64>) -> StoppedTurn {
    StoppedTurn {
        run_id: RunId(thread),
        thread_id: ThreadId(thread),
        bot_id: BotId(bot),
        session_id: SessionId(session),
        plan_id: plan.map(PlanId),
        work_item_id: None,
        last_step: String::new(),
        files: vec![],
        last_calls: vec![],
    }
}

/// The facts a stopped turn is judged on when it would reopen.
pub fn facts_of(t: &StoppedTurn) -> TurnFacts {
    TurnFacts {
        bot_id: t.bot_id,
        session_id: t.session_id,
        thread_id: t.thread_id,
        plan_id: t.plan_id,
        plan_home: None,
        ticket_id: None,
    }
}
