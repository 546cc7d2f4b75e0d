//! Holds the tests make: the person's stop on a Bot (as its menu makes it), and an app hold no
//! line of the person's lifts (HOLD-L7), written as the app writes one.

use super::World;
use troupe_collab::holds::{HoldRequest, ScopeRequest};
use troupe_core::BotId;
use troupe_core::hold::{Hold, HoldScope, HoldSource};

/// The person's stop on everything `bot` does.
pub fn bot_stop(bot: BotId) -> HoldRequest {
    HoldRequest {
        scope: ScopeRequest {
            kind: "bot".into(),
            bot_id: Some(bot),
            session_id: None,
            task_id: None,
            ticket_id: None,
            turn_id: None,
        },
        session_id: None,
        action: None,
    }
}

/// An app hold on `bot`: only Lift ends it.
pub fn app_hold_on_bot(w: &World, bot: BotId) -> Hold {
    w.collab
        .store()
        .write(|tx| {
            tx.insert_hold(&troupe_store::NewHold {
                scope: HoldScope::Bot { bot_id: bot },
                targets: Vec::new(),
                source: HoldSource::Migration,
                source_message_id: None,
                session_id: None,
                lift_on_next_user_message: false,
                cancel: false,
                composer_stop: false,
                effect: Default::default(),
            })
        })
        .unwrap()
}
