//! What an inbox item carries besides its text (issue 18 item 13): a channel message
//! delivered to a runtime boss session carries its `channel_*` facts (account, chat id and
//! type, sender, message id). They are set on the item in the transaction that delivers it
//! and, when the item is taken, become part of the message's metadata next to the stamps the
//! context contributors fix (a stamp of the same name wins: stamps drive wrapping).

use crate::{Result, StoreError, Tx, args};
use serde_json::{Map, Value};
use troupe_core::{InboxItemId, ThreadId};

impl Tx<'_> {
    /// Give a queued item what it carries: a JSON object, kept until the item is taken.
    pub fn set_inbox_metadata(&mut self, item: InboxItemId, metadata: &Value) -> Result<()> {
        if !metadata.is_object() {
            return Err(StoreError::Invalid(
                "inbox metadata: a JSON object of named facts".into(),
            ));
        }
        let n = self.exec(
            "UPDATE inbox_items SET metadata = ?2 WHERE id = ?1",
            args![item.0, metadata.to_string()],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("inbox item", item));
        }
        Ok(())
    }

    /// What a queued item carries, if anything.
    pub fn inbox_metadata(&self, item: InboxItemId) -> Result<Option<Map<String, Value>>> {
        let raw: Option<Option<String>> = self.query_opt(
            "SELECT metadata FROM inbox_items WHERE id = ?1",
            args![item.0],
            |r| r.get(0),
        )?;
        match raw.flatten() {
            None => Ok(None),
            Some(s) => match serde_json::from_str::<Value>(&s) {
                Ok(Value::Object(m)) => Ok(Some(m)),
                _ => Err(StoreError::Corrupt(format!(
                    "inbox_items.metadata of item {item} is not a JSON object"
                ))),
            },
        }
    }

    /// The metadata of the newest message a thread took from a channel delivery (key
    /// `channel:…`): the inbound message its latest channel line answers.
    pub fn latest_channel_metadata(&self, thread: ThreadId) -> Result<Option<Value>> {
        let raw: Option<Option<String>> = self.query_opt(
            "SELECT metadata FROM messages WHERE thread_id = ?1 AND role = 'user'
               AND delivery_key LIKE 'channel:%' AND metadata IS NOT NULL
             ORDER BY id DESC LIMIT 1",
            args![thread.0],
            |r| r.get(0),
        )?;
        Ok(raw.flatten().and_then(|s| serde_json::from_str(&s).ok()))
    }
}

/// The message's metadata: the stamps, with what the item carried added under names no
/// stamp took.
pub(crate) fn with_carried(
    stamps: Option<Value>,
    carried: Option<Map<String, Value>>,
) -> Option<Value> {
    let Some(carried) = carried else {
        return stamps;
    };
    let mut out = match stamps {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for (k, v) in carried {
        out.entry(k).or_insert(v);
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stamps_win_and_carried_facts_join() {
        let stamps = Some(json!({"workflow": {"kind": "boss"}}));
        let carried = json!({"channel_chat_id": "c1", "workflow": "x"});
        let got = with_carried(stamps, carried.as_object().cloned()).unwrap();
        assert_eq!(got["workflow"], json!({"kind": "boss"}));
        assert_eq!(got["channel_chat_id"], "c1");
        assert_eq!(with_carried(None, None), None);
        assert_eq!(
            with_carried(None, json!({"a": 1}).as_object().cloned()),
            Some(json!({"a": 1}))
        );
    }
}
