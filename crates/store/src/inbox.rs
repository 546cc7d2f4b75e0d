//! The durable inbox: idempotent delivery, and materialization of an item into the message
//! it becomes — written, receipted and removed in one transaction.

use crate::args;
use crate::messages::NewMessage;
use crate::rows::{INBOX_COLUMNS, inbox_from_row};
use crate::{Result, StoreError, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::inbox::{Delivery, InboxItem, InboxMode};
use troupe_core::message::{Message, Part, Role};
use troupe_core::{InboxItemId, MessageId, RunId, ThreadId};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Delivered {
    pub item_id: InboxItemId,
    /// False when the delivery key was seen before: nothing new was written.
    pub created: bool,
    /// Set when the keyed item has already become a message.
    pub message_id: Option<MessageId>,
}

impl Tx<'_> {
    /// Queue a delivery. With a delivery key, a repeat (even after the first was consumed)
    /// writes nothing and returns the first item.
    pub fn deliver(&mut self, thread: ThreadId, d: &Delivery) -> Result<Delivered> {
        d.validate().map_err(StoreError::Invalid)?;
        let order_key = d.order_key.unwrap_or(self.now);
        // One statement in the usual case: the item goes in unless its thread is missing or its
        // key was delivered already (waiting, or taken); the look-ups below then say which.
        let inserted: Option<i64> = self.query_opt(
            "INSERT INTO inbox_items (thread_id, mode, priority, order_key, delivery_key, origin, origin_detail, body, visible, created_at, defers_calls)
             SELECT CAST(?1 AS BIGINT), CAST(?2 AS TEXT), CAST(?3 AS BIGINT), CAST(?4 AS BIGINT), CAST(?5 AS TEXT),
                    CAST(?6 AS TEXT), CAST(?7 AS TEXT), CAST(?8 AS TEXT), CAST(?9 AS BIGINT), CAST(?10 AS BIGINT), CAST(?11 AS BIGINT)
             WHERE EXISTS (SELECT 1 FROM threads WHERE id = ?1)
               AND NOT EXISTS (SELECT 1 FROM inbox_receipts WHERE thread_id = ?1 AND delivery_key = ?5)
             ON CONFLICT DO NOTHING RETURNING id",
            args![
                thread.0,
                d.mode.as_str(),
                d.priority.get(),
                order_key,
                d.delivery_key,
                d.origin.kind(),
                d.origin.detail(),
                d.text,
                d.visible,
                self.now,
                d.defers_calls && d.mode == InboxMode::Steer
            ],
            |r| r.get(0),
        )?;
        let Some(id) = inserted.map(InboxItemId) else {
            return self.delivered_before(thread, d);
        };
        // A context item wakes nobody and is told by what delivered it (the line's own event):
        // an event per member for every line said in a group would outweigh the line itself.
        if d.mode != InboxMode::Context {
            let payload = json!({
                "item_id": id, "mode": d.mode, "priority": d.priority, "delivery_key": d.delivery_key
            });
            self.event("inbox_delivered", Some(thread), None, payload)?;
        }
        Ok(Delivered {
            item_id: id,
            created: true,
            message_id: None,
        })
    }

    /// The same context item for many threads, each under its own key, in one statement
    /// whatever their number: a line said in a group reaches every member it does not wake.
    /// As with `deliver`, a key delivered before (waiting or taken) puts nothing in, and no
    /// `inbox_delivered` event is written for context. Answers how many went in; a thread
    /// that does not exist is an error (looked for only when fewer went in than were sent).
    pub fn deliver_context_many(
        &mut self,
        d: &Delivery,
        to: &[(ThreadId, String)],
    ) -> Result<usize> {
        if d.mode != InboxMode::Context {
            return Err(StoreError::Invalid(format!(
                "only context goes to many threads at once, not {}",
                d.mode.as_str()
            )));
        }
        d.validate().map_err(StoreError::Invalid)?;
        if to.is_empty() {
            return Ok(0);
        }
        for (thread, key) in to {
            if key.trim().is_empty() {
                return Err(StoreError::Invalid(format!(
                    "the delivery key for thread {thread} is empty"
                )));
            }
        }
        let rows =
            serde_json::to_string(&to.iter().map(|(t, k)| json!([t.0, k])).collect::<Vec<_>>())
                .map_err(|e| StoreError::Invalid(e.to_string()))?;
        let targets = match self.dialect() {
            crate::db::Dialect::Sqlite => {
                "SELECT json_extract(value, '$[0]') AS t, json_extract(value, '$[1]') AS k
                 FROM json_each(?1)"
            }
            crate::db::Dialect::Postgres => {
                "SELECT CAST(e->>0 AS BIGINT) AS t, e->>1 AS k
                 FROM json_array_elements(CAST(?1 AS json)) AS e"
            }
        };
        let inserted = self.exec(
            &format!(
                "INSERT INTO inbox_items (thread_id, mode, priority, order_key, delivery_key, origin, origin_detail, body, visible, created_at, defers_calls)
                 SELECT CAST(j.t AS BIGINT), 'context', CAST(?2 AS BIGINT), CAST(?3 AS BIGINT), CAST(j.k AS TEXT),
                        CAST(?4 AS TEXT), CAST(?5 AS TEXT), CAST(?6 AS TEXT), CAST(?7 AS BIGINT), CAST(?8 AS BIGINT), 0
                 FROM ({targets}) AS j
                 WHERE EXISTS (SELECT 1 FROM threads WHERE id = j.t)
                   AND NOT EXISTS (SELECT 1 FROM inbox_receipts r WHERE r.thread_id = j.t AND r.delivery_key = j.k)
                 ON CONFLICT DO NOTHING"
            ),
            args![
                rows,
                d.priority.get(),
                d.order_key.unwrap_or(self.now),
                d.origin.kind(),
                d.origin.detail(),
                d.text,
                d.visible,
                self.now
            ],
        )?;
        // Fewer went in than were sent: a key delivered before, or a missing thread, which
        // fails the whole write.
        if inserted < to.len() {
            let missing: Option<i64> = self.query_opt(
                &format!(
                    "SELECT j.t FROM ({targets}) AS j
                     WHERE NOT EXISTS (SELECT 1 FROM threads WHERE id = j.t) LIMIT 1"
                ),
                args![rows],
                |r| r.get(0),
            )?;
            if let Some(t) = missing {
                return Err(StoreError::not_found("thread", ThreadId(t)));
            }
        }
        Ok(inserted)
    }

    /// Why a delivery put nothing in: the thread is missing (`NotFound`), or its key was
    /// delivered before — taken already (its message) or still waiting (its item).
    fn delivered_before(&self, thread: ThreadId, d: &Delivery) -> Result<Delivered> {
        self.require_thread(thread)?;
        let key = d.delivery_key.as_deref().ok_or_else(|| {
            StoreError::Corrupt(format!(
                "an unkeyed delivery to thread {thread} was refused"
            ))
        })?;
        let receipt: Option<(i64, i64)> = self.query_opt(
            "SELECT item_id, message_id FROM inbox_receipts WHERE thread_id = ?1 AND delivery_key = ?2",
            args![thread.0, key],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if let Some((item, message)) = receipt {
            return Ok(Delivered {
                item_id: InboxItemId(item),
                created: false,
                message_id: Some(MessageId(message)),
            });
        }
        let existing: i64 = self.query_one(
            "SELECT id FROM inbox_items WHERE thread_id = ?1 AND delivery_key = ?2",
            args![thread.0, key],
            |r| r.get(0),
        )?;
        Ok(Delivered {
            item_id: InboxItemId(existing),
            created: false,
            message_id: None,
        })
    }

    /// The message a keyed delivery became, once the thread took it.
    pub fn delivery_receipt(&self, thread: ThreadId, key: &str) -> Result<Option<MessageId>> {
        self.query_opt(
            "SELECT message_id FROM inbox_receipts WHERE thread_id = ?1 AND delivery_key = ?2",
            args![thread.0, key],
            |r| Ok(MessageId(r.get(0)?)),
        )
    }

    /// Whether a steer that defers calls waits in the thread's inbox (a change the person sent
    /// while the Bot works): the hop's calls that have not run yet are then not run.
    pub fn has_deferring_steer(&self, thread: ThreadId) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT id FROM inbox_items WHERE thread_id = ?1 AND defers_calls = 1 AND failed_reason IS NULL LIMIT 1",
                args![thread.0],
                |r| r.get::<i64>(0),
            )?
            .is_some())
    }

    /// Whether an item that would wake the thread waits in its inbox (not a context item,
    /// which wakes nobody, nor a failed one): one row read, not the whole inbox.
    pub fn has_waking_item(&self, thread: ThreadId) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT id FROM inbox_items WHERE thread_id = ?1 AND mode <> 'context' AND failed_reason IS NULL LIMIT 1",
                args![thread.0],
                |r| r.get::<i64>(0),
            )?
            .is_some())
    }

    /// Every queued item of a thread (parked ones included), in take order.
    pub fn inbox(&self, thread: ThreadId) -> Result<Vec<InboxItem>> {
        let sql = format!(
            "SELECT {INBOX_COLUMNS} FROM inbox_items WHERE thread_id = ?1 ORDER BY priority, order_key, id"
        );
        self.query_all(&sql, args![thread.0], inbox_from_row)
    }

    pub fn inbox_item(&self, id: InboxItemId) -> Result<Option<InboxItem>> {
        let sql = format!("SELECT {INBOX_COLUMNS} FROM inbox_items WHERE id = ?1");
        self.query_opt(&sql, args![id.0], inbox_from_row)
    }

    /// Turn an item into its message: a task becomes a new root; steer and context join `root`.
    /// The message, the receipt and the item's removal commit together.
    pub fn materialize(
        &mut self,
        id: InboxItemId,
        root: Option<MessageId>,
        run: Option<RunId>,
        metadata: Option<serde_json::Value>,
    ) -> Result<Message> {
        let item = self
            .inbox_item(id)?
            .ok_or_else(|| StoreError::not_found("inbox item", id))?;
        let is_root = item.mode == InboxMode::Task;
        if !is_root && root.is_none() {
            return Err(StoreError::Invalid(format!(
                "inbox item {id} is a {} item and there is no task for it to join",
                item.mode
            )));
        }
        let metadata = crate::inbox_metadata::with_carried(metadata, self.inbox_metadata(id)?);
        let part = if item.visible {
            Part::text(&item.text)
        } else {
            Part::text(&item.text).hidden()
        };
        let message = self.insert_message(&NewMessage {
            thread_id: item.thread_id,
            role: Role::User,
            origin: item.origin.clone(),
            is_root,
            root_id: if is_root { None } else { root },
            run_id: run,
            parts: vec![part],
            finish: None,
            error: None,
            delivery_key: item.delivery_key.clone(),
            metadata,
        })?;
        if let Some(key) = &item.delivery_key {
            self.exec(
                "INSERT INTO inbox_receipts (thread_id, delivery_key, item_id, message_id, completed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                args![item.thread_id.0, key, id.0, message.id.0, self.now],
            )?;
        }
        self.exec("DELETE FROM inbox_items WHERE id = ?1", args![id.0])?;
        self.event(
            "inbox_consumed",
            Some(item.thread_id),
            run,
            json!({"item_id": id, "message_id": message.id, "mode": item.mode}),
        )?;
        Ok(message)
    }

    /// Remove items without materializing them (abort drops steer and context).
    pub fn drop_inbox_items(&mut self, thread: ThreadId, ids: &[InboxItemId]) -> Result<usize> {
        if ids.is_empty() {
            return Ok(0);
        }
        // One statement for any number of items: the ids travel as one JSON array.
        let list = crate::db::id_list(ids.iter().map(|i| i.0))?;
        let sql = format!(
            "DELETE FROM inbox_items WHERE thread_id = ?2 AND id IN {}",
            self.dialect().in_list(1)
        );
        let n = self.exec(&sql, args![list, thread.0])?;
        if n > 0 {
            self.event(
                "inbox_dropped",
                Some(thread),
                None,
                json!({"item_ids": ids}),
            )?;
        }
        Ok(n)
    }

    /// Park an item that cannot become a message: it stays visible, items behind it go on.
    pub fn park_inbox_item(&mut self, id: InboxItemId, reason: &str) -> Result<()> {
        let item = self
            .inbox_item(id)?
            .ok_or_else(|| StoreError::not_found("inbox item", id))?;
        self.exec(
            "UPDATE inbox_items SET failed_reason = ?2 WHERE id = ?1",
            args![id.0, reason],
        )?;
        self.event(
            "inbox_parked",
            Some(item.thread_id),
            None,
            json!({"item_id": id, "reason": reason}),
        )?;
        Ok(())
    }

    /// Non-archived threads holding a runnable (non-parked) task item: boot discovery.
    pub fn threads_with_runnable_tasks(&self) -> Result<Vec<ThreadId>> {
        let rows = self.query_all("SELECT DISTINCT i.thread_id FROM inbox_items i JOIN threads t ON t.id = i.thread_id
             WHERE i.mode = 'task' AND i.failed_reason IS NULL AND t.archived_at IS NULL ORDER BY i.thread_id", args![], |r| r.get::<i64>(0))?;
        Ok(rows.into_iter().map(ThreadId).collect())
    }
}
