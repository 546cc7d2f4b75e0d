//! The person's notifications (see `troupe_core::notification`): listed newest first with the
//! open count the page's badge shows, and dismissed one at a time. Where they open and close is
//! with what they are about (supervisor lines, blocked work, work questions, work state).

use crate::{Collab, CollabError};
use serde::Serialize;
use troupe_core::notification::NotificationStatus;
use troupe_store::Notification;

/// `GET /v1/notifications`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct NotificationList {
    pub notifications: Vec<Notification>,
    /// How many are open, whatever was listed.
    pub open_count: i64,
}

impl Collab {
    /// The open notifications (or all, with `all`), newest first, at most `limit` (1–200).
    pub fn notifications(&self, all: bool, limit: u32) -> Result<NotificationList, CollabError> {
        if !(1..=200).contains(&limit) {
            return Err(CollabError::invalid("limit: must be between 1 and 200"));
        }
        Ok(self.store().read(|tx| {
            Ok(NotificationList {
                notifications: tx.notifications(all, limit)?,
                open_count: tx.open_notification_count()?,
            })
        })?)
    }

    /// The person has seen it: an open notification closes as `dismissed`; a closed one is
    /// `409 not_open` (it closed by itself, or was dismissed before).
    pub fn dismiss_notification(&self, id: i64) -> Result<Notification, CollabError> {
        self.store().write(|tx| {
            let n = tx.notification(id)?;
            if n.status != NotificationStatus::Open {
                return Ok(Err(CollabError::conflict(
                    "not_open",
                    format!("notification {id} is {} already", n.status.as_str()),
                )));
            }
            tx.close_notification(id, NotificationStatus::Resolved, "dismissed")?;
            Ok(Ok(tx.notification(id)?))
        })?
    }
}
