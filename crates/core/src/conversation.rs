//! Conversations as people see them: Bots, conversations (sessions) and their lines. These are
//! kept apart from the kernel's threads, which hold model context and runs.

use crate::ids::{BotId, RunId, SessionId, SessionMessageId};
use crate::thread::EndpointSpec;
use serde::{Deserialize, Serialize};

/// The model roles a person can point at an endpoint.
pub const ROLES: [&str; 8] = [
    "default",
    "reading",
    "scribe",
    "judgement",
    "review",
    "picture_judge",
    "retrospective",
    "reflection",
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
    /// A person and one Bot.
    Direct,
    /// A person and several Bots.
    Group,
    /// Two Bots, opened by one of them; the person reads it under its origin.
    BotDirect,
}

impl SessionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Direct => "direct",
            SessionKind::Group => "group",
            SessionKind::BotDirect => "bot_direct",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "direct" => Ok(SessionKind::Direct),
            "group" => Ok(SessionKind::Group),
            "bot_direct" => Ok(SessionKind::BotDirect),
            other => Err(format!(
                "unknown session kind '{other}' (expected direct, group or bot_direct)"
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
    /// A Bot↔Bot direct: the conversation it was opened from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_session_id: Option<SessionId>,
    /// A Bot↔Bot direct: the Bot that opened it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_by_bot_id: Option<BotId>,
    /// A Bot↔Bot direct: `create_direct` (every line wakes the other side) or `delegation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_via: Option<String>,
}

/// What a line is: something said, a Bot's question to the person, or the app's own notice.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    Line,
    Ask,
    System,
}

impl LineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LineKind::Line => "line",
            LineKind::Ask => "ask",
            LineKind::System => "system",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "line" => Ok(LineKind::Line),
            "ask" => Ok(LineKind::Ask),
            "system" => Ok(LineKind::System),
            other => Err(format!("unknown line kind '{other}'")),
        }
    }
}

/// One choice an ask offers.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskOption {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The person's answer, stored on the ask itself: the picked options (by index) and words.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskAnswer {
    #[serde(default)]
    pub options: Vec<usize>,
    #[serde(default)]
    pub text: Option<String>,
}

/// A Bot's question to the person, with its answer once given.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ask {
    pub question: String,
    #[serde(default)]
    pub options: Vec<AskOption>,
    #[serde(default)]
    pub multiple: bool,
    #[serde(default)]
    pub answer: Option<AskAnswer>,
    #[serde(default)]
    pub answered_at: Option<i64>,
    /// Set when it stopped taking an answer: its turn ended without one (a stop), or, for a
    /// work question card, the work went on without it or closed.
    #[serde(default)]
    pub closed_at: Option<i64>,
    /// Why a closed work question card takes no answer: `superseded` (its work went on without
    /// it: a later question, or a segment woken another way ended, WQ-8) or `closed` (its work
    /// closed). None for an ask closed by its turn's stop.
    #[serde(default)]
    pub closed_why: Option<String>,
}

pub const MAX_ASK_OPTIONS: usize = 8;

impl Ask {
    /// Check an answer against the ask: something must be given, picks must exist, a single
    /// choice takes one pick.
    pub fn check_answer(&self, a: &AskAnswer) -> Result<(), String> {
        let words = a.text.as_deref().map(str::trim).unwrap_or("");
        if a.options.is_empty() && words.is_empty() {
            return Err("an answer needs a picked option or some words".into());
        }
        if let Some(bad) = a.options.iter().find(|i| **i >= self.options.len()) {
            return Err(format!(
                "options: {bad} is not one of the ask's options (it has {})",
                self.options.len()
            ));
        }
        let mut seen = a.options.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != a.options.len() {
            return Err("options: an option is picked twice".into());
        }
        if !self.multiple && a.options.len() > 1 {
            return Err("options: this ask takes a single choice".into());
        }
        Ok(())
    }

    /// The answer as the Bot reads it: the picked labels, then the words.
    pub fn answer_text(&self, a: &AskAnswer) -> String {
        let mut out = Vec::new();
        for i in &a.options {
            if let Some(o) = self.options.get(*i) {
                out.push(format!("Picked: {}", o.label));
            }
        }
        if let Some(t) = a.text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            out.push(t.to_string());
        }
        out.join("\n")
    }
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
    pub kind: LineKind,
    /// A person's line on its way to the Bots: reading, queued, routed or withdrawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<Ask>,
    /// Buttons under a line read as possibly control: `{kind: "possible_control", offer,
    /// scopes}`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<serde_json::Value>,
    /// What the one press of a button did: `{action, made, lifted, at}` (HOLD-B1).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_acted: Option<serde_json::Value>,
    /// The person changed its words after sending it (UQ-7); its earlier words are its
    /// versions.
    #[serde(default)]
    pub edited: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_at: Option<i64>,
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
