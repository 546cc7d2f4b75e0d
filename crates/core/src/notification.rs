//! Notifications: what the person is told outside the conversation they are looking at, so
//! work that stopped for them is not missed (SV-18's "stopped", END-11's blocked work, a work
//! question waiting for an answer, WQ-5/WQ-8). A notification is open until what it asked for
//! happens (resolved) or stops mattering (voided); the open ones are the page's badge.

use serde::{Deserialize, Serialize};

/// Why the person is told.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotificationKind {
    /// The supervisor stopped picking work up: its retries ran out, or its last step's outcome
    /// is unknown (SV-18). Resolved when the work runs again.
    Stopped,
    /// Work ended twice without progress while it still owes something (END-11). Resolved
    /// when it no longer waits on the person.
    Blocked,
    /// A work question card waits for the person's answer (WQ). Resolved by the answer;
    /// voided when the work goes on or closes without it (WQ-8).
    WaitingForAnswer,
}

impl NotificationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationKind::Stopped => "stopped",
            NotificationKind::Blocked => "blocked",
            NotificationKind::WaitingForAnswer => "waiting_for_answer",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "stopped" => NotificationKind::Stopped,
            "blocked" => NotificationKind::Blocked,
            "waiting_for_answer" => NotificationKind::WaitingForAnswer,
            other => return Err(format!("unknown notification kind {other:?}")),
        })
    }

    /// The title the person reads, naming the Bot and, when there is one, the job.
    pub fn title(self, bot: &str, job: Option<&str>) -> String {
        let what = match self {
            NotificationKind::Stopped => "stopped",
            NotificationKind::Blocked => "is blocked",
            NotificationKind::WaitingForAnswer => "is waiting for your answer",
        };
        match job.map(str::trim).filter(|j| !j.is_empty()) {
            Some(job) => format!("{bot} {what} on \u{201c}{job}\u{201d}"),
            None => format!("{bot} {what}"),
        }
    }
}

/// Where a notification is in its life; it never goes back to `open`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotificationStatus {
    Open,
    /// What it asked for happened (an answer, the work running again) or the person
    /// dismissed it.
    Resolved,
    /// It stopped mattering without the person (the work closed, a later question).
    Voided,
}

impl NotificationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationStatus::Open => "open",
            NotificationStatus::Resolved => "resolved",
            NotificationStatus::Voided => "voided",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "open" => NotificationStatus::Open,
            "resolved" => NotificationStatus::Resolved,
            "voided" => NotificationStatus::Voided,
            other => return Err(format!("unknown notification status {other:?}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_statuses_round_trip_their_names() {
        for k in [
            NotificationKind::Stopped,
            NotificationKind::Blocked,
            NotificationKind::WaitingForAnswer,
        ] {
            assert_eq!(NotificationKind::parse(k.as_str()), Ok(k));
        }
        for s in [
            NotificationStatus::Open,
            NotificationStatus::Resolved,
            NotificationStatus::Voided,
        ] {
            assert_eq!(NotificationStatus::parse(s.as_str()), Ok(s));
        }
        assert!(NotificationKind::parse("stalled").is_err());
    }

    #[test]
    fn titles_name_the_bot_and_the_job() {
        assert_eq!(
            NotificationKind::Stopped.title("Ada", Some("Promo video")),
            "Ada stopped on \u{201c}Promo video\u{201d}"
        );
        assert_eq!(
            NotificationKind::WaitingForAnswer.title("Bo", None),
            "Bo is waiting for your answer"
        );
        assert_eq!(
            NotificationKind::Blocked.title("Bo", Some(" ")),
            "Bo is blocked"
        );
    }
}
