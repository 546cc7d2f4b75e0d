//! Builders the hold rules' tests share, so each test states only what its case is about.

use super::scope::{Hold, HoldEffect, HoldScope, HoldSource, HoldStatus, TurnFacts};
use crate::{BotId, HoldId, SessionId, ThreadId};

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
