//! Conversations as people see them: Bots, conversations (sessions) and their lines. These are
//! kept apart from the kernel's threads, which hold model context and runs.

use crate::ids::{BotId, RunId, SessionId, SessionMessageId};
use crate::thread::EndpointSpec;
use serde::{Deserialize, Serialize};

/// The model roles a person can point at an endpoint.
pub const ROLES: [&str; 6] = [
    "default",
    "reading",
    "scribe",
    "judgement",
    "review",
    "picture_judge",
];

pub fn validate_role(role: &str) -> Result<(), String> {
    if ROLES.contains(&role) {
        Ok(())
    } else {
        Err(format!(
            "unknown role '{role}' (expected one of {})",
            ROLES.join(", ")
        ))
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bot {
    pub id: BotId,
    pub name: String,
    pub persona: String,
    /// None: the Bot uses the `default` role's endpoint.
    pub endpoint: Option<EndpointSpec>,
    /// A built-in scripted demo Bot.
    pub scripted: bool,
    pub archived: bool,
    pub created_at: i64,
}

/// Names are what people mention Bots by: trimmed, 1–40 characters, no control characters.
pub fn validate_bot_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("name must not be empty".into());
    }
    if name.chars().count() > 40 {
        return Err("name must be at most 40 characters".into());
    }
    if name.chars().any(char::is_control) {
        return Err("name must not contain control characters".into());
    }
    Ok(name.to_string())
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    Direct,
    Group,
}

impl SessionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Direct => "direct",
            SessionKind::Group => "group",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "direct" => Ok(SessionKind::Direct),
            "group" => Ok(SessionKind::Group),
            other => Err(format!(
                "unknown session kind '{other}' (expected direct or group)"
            )),
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: SessionId,
    pub kind: SessionKind,
    pub title: String,
    pub bot_ids: Vec<BotId>,
    pub archived: bool,
    pub created_at: i64,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Author {
    User,
    Bot,
    System,
}

impl Author {
    pub fn as_str(self) -> &'static str {
        match self {
            Author::User => "user",
            Author::Bot => "bot",
            Author::System => "system",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "user" => Ok(Author::User),
            "bot" => Ok(Author::Bot),
            "system" => Ok(Author::System),
            other => Err(format!("unknown author '{other}'")),
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineStatus {
    Done,
    Working,
    Failed,
    Interrupted,
}

impl LineStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LineStatus::Done => "done",
            LineStatus::Working => "working",
            LineStatus::Failed => "failed",
            LineStatus::Interrupted => "interrupted",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "done" => Ok(LineStatus::Done),
            "working" => Ok(LineStatus::Working),
            "failed" => Ok(LineStatus::Failed),
            "interrupted" => Ok(LineStatus::Interrupted),
            other => Err(format!("unknown line status '{other}'")),
        }
    }
}

/// A line in a conversation.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionMessage {
    pub id: SessionMessageId,
    pub session_id: SessionId,
    pub author: Author,
    pub bot_id: Option<BotId>,
    pub parent_id: Option<SessionMessageId>,
    pub body: String,
    pub turn_id: Option<RunId>,
    pub status: LineStatus,
    pub created_at: i64,
}

/// A user line must say something, and not be absurdly long.
pub fn validate_line(body: &str) -> Result<(), String> {
    if body.trim().is_empty() {
        return Err("body must not be empty".into());
    }
    if body.len() > 200_000 {
        return Err("body must be at most 200000 bytes".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bot_names_are_trimmed_and_bounded() {
        assert_eq!(validate_bot_name("  Ada ").unwrap(), "Ada");
        assert!(validate_bot_name("   ").is_err());
        assert!(validate_bot_name(&"x".repeat(41)).is_err());
        assert!(validate_bot_name("a\nb").is_err());
    }

    #[test]
    fn roles_are_the_six_known_ones() {
        assert!(validate_role("review").is_ok());
        assert!(
            validate_role("reviewer")
                .unwrap_err()
                .contains("picture_judge")
        );
    }
}
