//! Status reactions on the messages a runtime boss session takes (digest §8.3): `received`
//! when a message is accepted (the ingress records it), `working` when a turn of the session
//! starts with the message waiting or taken, `done` when a turn ends that took it. Each is a
//! send in the outbound ledger (`kind: reaction`), once per (message, reaction) by its key, in
//! the transaction that records the run's start or end; the bridge makes it after commit.

use troupe_channels::Reaction;
use troupe_channels::routing::delivery_key;
use troupe_engine::extension::RunObserver;
use troupe_store::{NewChannelOutbound, OutboundKind, RunRecord, StoreError, Tx};

/// How many of a session's newest inbound messages a turn looks at: more than one turn takes.
const RECENT: u32 = 20;

/// The idempotency key of one reaction on one message.
pub fn reaction_key(account: &str, message_id: &str, r: Reaction) -> String {
    format!("channel:{account}:react:{message_id}:{}", r.as_str())
}

/// The send that puts reaction `r` on an inbound message.
pub fn reaction_send(
    account: &str,
    chat_id: &str,
    message_id: &str,
    r: Reaction,
) -> NewChannelOutbound {
    NewChannelOutbound {
        idempotency_key: reaction_key(account, message_id, r),
        account: account.into(),
        chat_id: chat_id.into(),
        kind: OutboundKind::Reaction,
        text: r.as_str().into(),
        reply_to_message_id: Some(message_id.into()),
        line_id: None,
    }
}

/// Registered on the engine; acts only on runtime boss sessions' threads.
pub struct BossReactions;

impl BossReactions {
    fn react(tx: &mut Tx<'_>, run: &RunRecord, r: Reaction) -> Result<(), StoreError> {
        let Some((session, _)) = tx.thread_session(run.thread_id)? else {
            return Ok(());
        };
        if !tx.is_runtime_boss_session(session)? {
            return Ok(());
        }
        for m in tx.channel_messages_of_session(session, RECENT)? {
            let has = |tx: &Tx<'_>, r| {
                tx.channel_outbound_by_key(&reaction_key(&m.account, &m.message_id, r))
                    .map(|o| o.is_some())
            };
            if has(tx, Reaction::Done)? {
                continue;
            }
            let taken = tx
                .delivery_receipt(run.thread_id, &delivery_key(&m.account, &m.message_id))?
                .is_some();
            let due = match r {
                // Waiting or taken, and not yet shown as worked on.
                Reaction::Working => !has(tx, Reaction::Working)?,
                // Taken by a turn that is now over (a message that joined a running turn gets
                // `done` without `working`).
                Reaction::Done => taken,
                Reaction::Received => false,
            };
            if due {
                tx.record_channel_outbound(&reaction_send(
                    &m.account,
                    &m.chat_id,
                    &m.message_id,
                    r,
                ))?;
            }
        }
        Ok(())
    }
}

impl RunObserver for BossReactions {
    fn on_run_started(&self, tx: &mut Tx<'_>, run: &RunRecord) -> Result<(), StoreError> {
        Self::react(tx, run, Reaction::Working)
    }

    fn on_run_ended(&self, tx: &mut Tx<'_>, run: &RunRecord) -> Result<(), StoreError> {
        Self::react(tx, run, Reaction::Done)
    }
}
