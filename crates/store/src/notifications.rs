//! Notifications as rows (`notifications`, 0037): opened where the person has to act, closed
//! where that happens. Every change is a `notification_changed` event on the global stream (no
//! conversation, no thread), which the page's badge listens to wherever the person is.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::notification::{NotificationKind, NotificationStatus};
use troupe_core::{PlanId, SessionId, SessionMessageId, WorkItemId};

/// A notification, as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Notification {
    pub id: i64,
    pub kind: NotificationKind,
    pub title: String,
    pub body: String,
    /// Where the person goes to act on it.
    pub session_id: Option<SessionId>,
    pub task_id: Option<PlanId>,
    pub ticket_id: Option<i64>,
    pub work_item_id: Option<WorkItemId>,
    /// The line it is about (the app's line, the question card).
    pub message_id: Option<SessionMessageId>,
    pub status: NotificationStatus,
    /// Why it closed: `answered`, `resumed`, `dismissed`, `superseded`, `closed`.
    pub resolution: Option<String>,
    pub created_at: i64,
    pub closed_at: Option<i64>,
}

/// What opens a notification.
#[derive(Clone, Debug)]
pub struct NewNotification<'a> {
    pub kind: NotificationKind,
    pub title: &'a str,
    pub body: &'a str,
    pub session_id: Option<SessionId>,
    pub plan_id: Option<PlanId>,
    pub ticket_id: Option<i64>,
    pub work_item_id: Option<WorkItemId>,
    pub message_id: Option<SessionMessageId>,
}

const COLUMNS: &str = "id, kind, title, body, session_id, plan_id, ticket_id, work_item_id, \
     message_id, status, resolution, created_at, closed_at";

fn from_row(r: &crate::Row) -> Result<Notification> {
    let bad = |what: &str, e: String| StoreError::Corrupt(format!("notification {what}: {e}"));
    Ok(Notification {
        id: r.get(0)?,
        kind: NotificationKind::parse(&r.get::<String>(1)?).map_err(|e| bad("kind", e))?,
        title: r.get(2)?,
        body: r.get(3)?,
        session_id: r.get::<Option<i64>>(4)?.map(SessionId),
        task_id: r.get::<Option<i64>>(5)?.map(PlanId),
        ticket_id: r.get(6)?,
        work_item_id: r.get::<Option<i64>>(7)?.map(WorkItemId),
        message_id: r.get::<Option<i64>>(8)?.map(SessionMessageId),
        status: NotificationStatus::parse(&r.get::<String>(9)?).map_err(|e| bad("status", e))?,
        resolution: r.get(10)?,
        created_at: r.get(11)?,
        closed_at: r.get(12)?,
    })
}

impl Tx<'_> {
    /// Open a notification and announce it.
    pub fn notify(&mut self, n: &NewNotification<'_>) -> Result<Notification> {
        let id = self.insert(
            "INSERT INTO notifications (kind, title, body, session_id, plan_id, ticket_id,
                                        work_item_id, message_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            args![
                n.kind.as_str(),
                n.title,
                n.body,
                n.session_id.map(|s| s.0),
                n.plan_id.map(|p| p.0),
                n.ticket_id,
                n.work_item_id.map(|w| w.0),
                n.message_id.map(|m| m.0),
                self.now
            ],
        )?;
        let made = self.notification(id)?;
        self.announce_notification(&made)?;
        Ok(made)
    }

    pub fn notification(&self, id: i64) -> Result<Notification> {
        let sql = format!("SELECT {COLUMNS} FROM notifications WHERE id = ?1");
        self.query_opt(&sql, args![id], from_row)?
            .ok_or_else(|| StoreError::not_found("notification", id))
    }

    /// Newest first; only the open ones unless `all`.
    pub fn notifications(&self, all: bool, limit: u32) -> Result<Vec<Notification>> {
        let filter = if all { "" } else { "WHERE status = 'open'" };
        let sql = format!("SELECT {COLUMNS} FROM notifications {filter} ORDER BY id DESC LIMIT ?1");
        self.query_all(&sql, args![limit as i64], from_row)
    }

    pub fn open_notification_count(&self) -> Result<i64> {
        Ok(self
            .query_opt(
                "SELECT COUNT(*) FROM notifications WHERE status = 'open'",
                args![],
                |r| r.get::<i64>(0),
            )?
            .unwrap_or(0))
    }

    /// Close one open notification; false when it was closed already.
    pub fn close_notification(
        &mut self,
        id: i64,
        status: NotificationStatus,
        resolution: &str,
    ) -> Result<bool> {
        debug_assert_ne!(status, NotificationStatus::Open);
        let n = self.exec(
            "UPDATE notifications SET status = ?2, resolution = ?3, closed_at = ?4
             WHERE id = ?1 AND status = 'open'",
            args![id, status.as_str(), resolution, self.now],
        )?;
        if n == 1 {
            let closed = self.notification(id)?;
            self.announce_notification(&closed)?;
        }
        Ok(n == 1)
    }

    /// Close the open notifications of a work item of the given kinds; how many closed.
    pub fn close_work_notifications(
        &mut self,
        item: WorkItemId,
        kinds: &[NotificationKind],
        status: NotificationStatus,
        resolution: &str,
    ) -> Result<usize> {
        let ids: Vec<i64> = self
            .query_all(
                "SELECT id, kind FROM notifications WHERE work_item_id = ?1 AND status = 'open'",
                args![item.0],
                |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
            )?
            .into_iter()
            .filter(|(_, k)| kinds.iter().any(|want| want.as_str() == k))
            .map(|(id, _)| id)
            .collect();
        let mut closed = 0;
        for id in ids {
            closed += usize::from(self.close_notification(id, status, resolution)?);
        }
        Ok(closed)
    }

    /// The open notification about a line (a question card), if any.
    pub fn open_notification_of_line(
        &self,
        line: SessionMessageId,
    ) -> Result<Option<Notification>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM notifications WHERE message_id = ?1 AND status = 'open'
             ORDER BY id LIMIT 1"
        );
        self.query_opt(&sql, args![line.0], from_row)
    }

    fn announce_notification(&mut self, n: &Notification) -> Result<()> {
        let open = self.open_notification_count()?;
        self.event(
            "notification_changed",
            None,
            None,
            json!({"notification": n, "open_count": open}),
        )
    }
}
