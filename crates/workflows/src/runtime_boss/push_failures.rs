//! A `channel_push` the bridge could not make reaches the session that made it: when a push's
//! send settles failed, the session gets a `channel_delivery_failed` steer (keyed by the send,
//! so once) and is woken. At start every failed push is looked at again, so a crash between
//! the settlement and the steer loses nothing (the key makes a repeat deliver nothing).

use super::push::{PUSH_KEY_PREFIX, key_session};
use tokio_util::sync::CancellationToken;
use troupe_collab::Collab;
use troupe_core::ThreadId;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_store::{ChannelOutbound, OutboundStatus, StoreError, Tx};

pub const FAILED_ORIGIN: &str = "channel_delivery_failed";

/// Failed pushes looked at again at start, newest first.
const SWEEP: u32 = 200;

fn failed_text(o: &ChannelOutbound) -> String {
    format!(
        "channel_delivery_failed: your channel_push to chat {:?} on account {:?} was not \
         delivered after {} attempt(s): {}. It was not sent; decide whether to try again.",
        o.chat_id,
        o.account,
        o.attempts,
        o.error.as_deref().unwrap_or("no reason given")
    )
}

/// Tell the session a failed push; the thread to wake when this delivered something.
fn tell(tx: &mut Tx<'_>, o: &ChannelOutbound) -> Result<Option<ThreadId>, StoreError> {
    if o.status != OutboundStatus::Failed {
        return Ok(None);
    }
    let Some(session) = key_session(&o.idempotency_key) else {
        return Ok(None);
    };
    let s = tx.session(session)?;
    let Some(bot) = s.bot_ids.first() else {
        return Ok(None);
    };
    let Some(thread) = tx.session_thread(session, *bot, troupe_store::CONVERSATION)? else {
        return Ok(None);
    };
    let d = tx.deliver(
        thread,
        &Delivery::user_task(failed_text(o))
            .with_mode(InboxMode::Steer)
            .with_priority(Priority::DELEGATION_RESULT)
            .with_origin(Origin::System(FAILED_ORIGIN.into()))
            .with_key(format!("channel_delivery_failed:{}", o.id)),
    )?;
    Ok(d.created.then_some(thread))
}

async fn tell_and_wake(collab: &Collab, id: i64) {
    let told = collab.store().write(|tx| {
        let o = tx.channel_outbound(id)?;
        if !o.idempotency_key.starts_with(PUSH_KEY_PREFIX) {
            return Ok(None);
        }
        tell(tx, &o)
    });
    match told {
        Ok(Some(thread)) => {
            if let Err(e) = collab
                .engine()
                .request_drive(thread, FAILED_ORIGIN, false)
                .await
            {
                tracing::warn!(thread = %thread, error = %e, "drive after a failed push failed");
            }
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(send = id, error = %e, "a failed push could not be told"),
    }
}

/// Look at every failed push again (start, or events were missed).
pub async fn sweep(collab: &Collab) -> usize {
    let failed = match collab
        .store()
        .read(|tx| tx.failed_channel_outbound(PUSH_KEY_PREFIX, SWEEP))
    {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the failed pushes");
            return 0;
        }
    };
    for o in &failed {
        tell_and_wake(collab, o.id).await;
    }
    failed.len()
}

/// Follow settled sends until `shutdown`, after a sweep. Subscribes first, so none settled
/// meanwhile is missed.
pub fn spawn(collab: Collab, shutdown: CancellationToken) {
    let mut events = collab.store().subscribe();
    tokio::spawn(async move {
        sweep(&collab).await;
        loop {
            let event = tokio::select! {
                () = shutdown.cancelled() => break,
                e = events.recv() => e,
            };
            match event {
                Ok(e)
                    if e.kind == "channel_outbound_settled"
                        && e.payload.get("status").and_then(|v| v.as_str()) == Some("failed") =>
                {
                    if let Some(id) = e.payload.get("id").and_then(|v| v.as_i64()) {
                        tell_and_wake(&collab, id).await;
                    }
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    sweep(&collab).await;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    });
}
