//! Row-to-domain mapping. Text enums are parsed strictly: a value this build does not know
//! is reported as corrupt data, never guessed.

use crate::Row;
use crate::{Result, StoreError};
use troupe_core::inbox::{InboxItem, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::pause::Paused;
use troupe_core::thread::{Lease, Thread};
use troupe_core::{InboxItemId, RunId, ThreadId};

pub(crate) fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

pub(crate) fn thread_from_row(r: &Row) -> Result<Thread> {
    let agent: String = r.get(3)?;
    let interaction: String = r.get(5)?;
    let workflow: Option<String> = r.get(6)?;
    let paused_reason: Option<String> = r.get(7)?;
    let id = ThreadId(r.get(0)?);
    let paused_description: Option<String> = r.get(8)?;
    let paused_since: Option<i64> = r.get(9)?;
    let parent: Option<i64> = r.get(1)?;
    let title: String = r.get(2)?;
    let workspace: String = r.get(4)?;
    let archived_at: Option<i64> = r.get(10)?;
    let generation: i64 = r.get(11)?;
    let holder: Option<i64> = r.get(12)?;
    let created_at: i64 = r.get(13)?;
    let workspace_root: Option<String> = r.get(14)?;
    (|| {
        let paused = match paused_reason {
            Some(reason) => Some(Paused {
                reason: reason
                    .parse()
                    .map_err(|e| corrupt("thread pause reason", e))?,
                description: paused_description,
                since: paused_since.unwrap_or(0),
            }),
            None => None,
        };
        Ok(Thread {
            id,
            parent_id: parent.map(ThreadId),
            title,
            agent: serde_json::from_str(&agent).map_err(|e| corrupt("thread agent", e))?,
            workspace,
            workspace_root,
            interaction: interaction
                .parse()
                .map_err(|e| corrupt("thread interaction", e))?,
            workflow: workflow
                .map(|w| serde_json::from_str(&w))
                .transpose()
                .map_err(|e| corrupt("thread workflow", e))?,
            paused,
            archived_at,
            lease: Lease {
                generation,
                holder: holder.map(RunId),
            },
            created_at,
        })
    })()
}

pub(crate) const INBOX_COLUMNS: &str = "id, thread_id, mode, priority, order_key, delivery_key, origin, origin_detail, body, visible, failed_reason, created_at";

pub(crate) fn inbox_from_row(r: &Row) -> Result<InboxItem> {
    let mode: String = r.get(2)?;
    let priority: i64 = r.get(3)?;
    let origin: String = r.get(6)?;
    let origin_detail: Option<String> = r.get(7)?;
    let id = InboxItemId(r.get(0)?);
    let thread_id = ThreadId(r.get(1)?);
    let order_key: i64 = r.get(4)?;
    let delivery_key: Option<String> = r.get(5)?;
    let text: String = r.get(8)?;
    let visible: bool = r.get(9)?;
    let failed: Option<String> = r.get(10)?;
    let created_at: i64 = r.get(11)?;
    (|| {
        Ok(InboxItem {
            id,
            thread_id,
            mode: mode
                .parse::<InboxMode>()
                .map_err(|e| corrupt("inbox mode", e))?,
            priority: Priority::new(priority as u8).map_err(|e| corrupt("inbox priority", e))?,
            order_key,
            delivery_key,
            origin: Origin::from_parts(&origin, origin_detail)
                .map_err(|e| corrupt("inbox origin", e))?,
            text,
            visible,
            failed,
            created_at,
        })
    })()
}
