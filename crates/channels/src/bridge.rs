//! The outbound bridge: every send recorded in the ledger is made once its record is
//! committed, tried a few times, and settled sent or failed. At start, and whenever events
//! were missed, every send still pending is made: a crash between a send and its settlement
//! makes it again under the same idempotency key (at least once; the receiver drops repeats).

use crate::adapter::SendError;
use crate::message::Reaction;
use crate::service::Channels;
use tokio_util::sync::CancellationToken;
use troupe_store::{ChannelOutbound, NewChannelOutbound, OutboundKind, OutboundStatus, StoreError};

impl Channels {
    /// Record a send; the bridge makes it after commit. A key recorded before answers that
    /// record (a send is made once per key).
    pub fn record_send(&self, send: &NewChannelOutbound) -> Result<ChannelOutbound, StoreError> {
        Ok(self
            .collab()
            .store()
            .write(|tx| tx.record_channel_outbound(send))?
            .0)
    }

    /// Follow recorded sends and make them, after making every pending one; until `shutdown`.
    /// Subscribes before it reads the pending ones, so none recorded meanwhile is missed.
    pub fn spawn_sender(&self, shutdown: CancellationToken) {
        let me = self.clone();
        let mut events = self.collab().store().subscribe();
        tokio::spawn(async move {
            me.send_pending().await;
            loop {
                let event = tokio::select! {
                    () = shutdown.cancelled() => break,
                    e = events.recv() => e,
                };
                match event {
                    Ok(e) if e.kind == "channel_outbound_recorded" => {
                        if let Some(id) = e.payload.get("id").and_then(|v| v.as_i64()) {
                            let me = me.clone();
                            tokio::spawn(async move { me.send_one(id).await });
                        }
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        me.send_pending().await;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
    }

    /// Make every pending send, oldest first; answers how many were looked at.
    pub async fn send_pending(&self) -> usize {
        let pending = match self
            .collab()
            .store()
            .read(|tx| tx.pending_channel_outbound())
        {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the pending channel sends");
                return 0;
            }
        };
        for p in &pending {
            self.send_one(p.id).await;
        }
        pending.len()
    }

    /// Make one recorded send unless it is settled or being made here already.
    pub async fn send_one(&self, id: i64) {
        {
            let mut flying = self
                .inner
                .in_flight
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if !flying.insert(id) {
                return;
            }
        }
        if let Err(e) = self.try_send(id).await {
            tracing::warn!(send = id, error = %e, "a channel send could not be settled");
        }
        self.inner
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }

    async fn try_send(&self, id: i64) -> Result<(), StoreError> {
        let store = self.collab().store().clone();
        let row = store.read(|tx| tx.channel_outbound(id))?;
        if row.status != OutboundStatus::Pending {
            return Ok(());
        }
        let Some(adapter) = self.adapter(&row.account) else {
            let why = format!(
                "channel account {:?} is not configured or is disabled",
                row.account
            );
            store.write(|tx| tx.settle_channel_outbound(id, Some(&why)))?;
            return Ok(());
        };
        let waits = self.inner.retry.waits.clone();
        let mut last = SendError(String::new());
        for attempt in 0..=waits.len() {
            if !store.write(|tx| tx.attempt_channel_outbound(id))? {
                return Ok(());
            }
            let key = row.idempotency_key.as_str();
            let sent = match row.kind {
                OutboundKind::Reply => {
                    let to = row.reply_to_message_id.as_deref().unwrap_or_default();
                    adapter.reply(&row.chat_id, to, &row.text, key).await
                }
                OutboundKind::Message => adapter.push(&row.chat_id, &row.text, key).await,
                OutboundKind::Reaction => match reaction(&row) {
                    Ok((to, r)) => adapter.react(&row.chat_id, to, r, key).await,
                    Err(e) => Err(e),
                },
            };
            match sent {
                Ok(_) => {
                    store.write(|tx| tx.settle_channel_outbound(id, None))?;
                    return Ok(());
                }
                Err(e) => {
                    tracing::info!(send = id, attempt, error = %e, "a channel send failed");
                    last = e;
                }
            }
            if let Some(wait) = waits.get(attempt) {
                tokio::time::sleep(*wait).await;
            }
        }
        store.write(|tx| tx.settle_channel_outbound(id, Some(&last.0)))?;
        Ok(())
    }
}

/// A recorded reaction: the message it is on and which one.
fn reaction(row: &ChannelOutbound) -> Result<(&str, Reaction), SendError> {
    let r = match row.text.as_str() {
        "received" => Reaction::Received,
        "working" => Reaction::Working,
        "done" => Reaction::Done,
        other => {
            return Err(SendError(format!(
                "reaction {other:?} is none of received, working, done"
            )));
        }
    };
    let to = row
        .reply_to_message_id
        .as_deref()
        .ok_or_else(|| SendError("a reaction names the message it is on".into()))?;
    Ok((to, r))
}
