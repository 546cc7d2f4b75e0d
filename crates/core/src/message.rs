//! Stored messages and their parts. What the model sees is projected from these; they are
//! never rewritten to change the model's view.

use crate::ids::{MessageId, RunId, ThreadId};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            other => Err(format!("unknown role '{other}'")),
        }
    }
}

/// Who or what a message came from. Stored as a kind plus an optional detail.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", content = "detail", rename_all = "snake_case")]
pub enum Origin {
    /// A person.
    User,
    /// The model itself (assistant messages).
    Agent,
    /// The runtime (reminders, ending-hook bounces, recovery notes); detail says which.
    System(String),
    /// Work handed over by another thread.
    Delegation(String),
    /// A continuation policy's proposal; detail is the policy id.
    Continuation(String),
    /// A timer or routine of the thread's own.
    Timer(String),
}

impl Origin {
    pub fn kind(&self) -> &'static str {
        match self {
            Origin::User => "user",
            Origin::Agent => "agent",
            Origin::System(_) => "system",
            Origin::Delegation(_) => "delegation",
            Origin::Continuation(_) => "continuation",
            Origin::Timer(_) => "timer",
        }
    }
    pub fn detail(&self) -> Option<&str> {
        match self {
            Origin::User | Origin::Agent => None,
            Origin::System(d)
            | Origin::Delegation(d)
            | Origin::Continuation(d)
            | Origin::Timer(d) => Some(d),
        }
    }
    pub fn from_parts(kind: &str, detail: Option<String>) -> Result<Self, String> {
        let d = detail.unwrap_or_default();
        Ok(match kind {
            "user" => Origin::User,
            "agent" => Origin::Agent,
            "system" => Origin::System(d),
            "delegation" => Origin::Delegation(d),
            "continuation" => Origin::Continuation(d),
            "timer" => Origin::Timer(d),
            other => return Err(format!("unknown origin '{other}'")),
        })
    }
}

/// One piece of a message. Visibility to people and inclusion in model context are
/// separate decisions: a reminder can be in context yet hidden, a notice visible yet not in context.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Part {
    #[serde(flatten)]
    pub body: PartBody,
    pub visible: bool,
    pub in_context: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PartBody {
    Text {
        text: String,
    },
    ToolCall {
        call_id: String,
        name: String,
        arguments: String,
    },
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

impl Part {
    pub fn text(text: impl Into<String>) -> Self {
        Part {
            body: PartBody::Text { text: text.into() },
            visible: true,
            in_context: true,
        }
    }
    pub fn hidden(mut self) -> Self {
        self.visible = false;
        self
    }
    pub fn kind(&self) -> &'static str {
        match self.body {
            PartBody::Text { .. } => "text",
            PartBody::ToolCall { .. } => "tool_call",
            PartBody::ToolResult { .. } => "tool_result",
        }
    }
}

/// Why an assistant message stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// The model ended its answer.
    Stop,
    /// The model asked for tools; the task goes on.
    ToolCalls,
    /// Output was cut at the token limit.
    Length,
    /// The call failed; `error` says why.
    Error,
    /// Stopped by abort or a crash; the breakpoint a Continue resumes from.
    Interrupted,
}

impl Finish {
    pub fn as_str(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::ToolCalls => "tool_calls",
            Finish::Length => "length",
            Finish::Error => "error",
            Finish::Interrupted => "interrupted",
        }
    }
    /// A terminal assistant ends its task; tool calls and interruptions do not.
    pub fn is_terminal(self) -> bool {
        matches!(self, Finish::Stop | Finish::Length | Finish::Error)
    }
}

impl fmt::Display for Finish {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Finish {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "stop" => Finish::Stop,
            "tool_calls" => Finish::ToolCalls,
            "length" => Finish::Length,
            "error" => Finish::Error,
            "interrupted" => Finish::Interrupted,
            other => return Err(format!("unknown finish '{other}'")),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub id: MessageId,
    pub thread_id: ThreadId,
    pub role: Role,
    pub origin: Origin,
    /// A root starts a task and requires a reply.
    pub is_root: bool,
    /// The task this message belongs to (itself for a root).
    pub root_id: Option<MessageId>,
    pub run_id: Option<RunId>,
    pub parts: Vec<Part>,
    pub finish: Option<Finish>,
    pub error: Option<String>,
    pub delivery_key: Option<String>,
    /// Stamps fixed when the message was written (a workflow wrapper reads these).
    pub metadata: Option<serde_json::Value>,
    pub created_at: i64,
}

impl Message {
    /// All text parts joined, visible or not.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            if let PartBody::Text { text } = &p.body {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.parts.iter().filter_map(|p| match &p.body {
            PartBody::ToolCall {
                call_id,
                name,
                arguments,
            } => Some((call_id.as_str(), name.as_str(), arguments.as_str())),
            _ => None,
        })
    }
    pub fn is_terminal_reply(&self) -> bool {
        self.role == Role::Assistant
            && self.error.is_none()
            && self.finish.is_some_and(Finish::is_terminal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_round_trips_through_kind_and_detail() {
        for o in [
            Origin::User,
            Origin::Agent,
            Origin::System("reminder".into()),
            Origin::Continuation("light_loop".into()),
        ] {
            let back = Origin::from_parts(o.kind(), o.detail().map(String::from)).unwrap();
            assert_eq!(back, o);
        }
        assert!(Origin::from_parts("martian", None).is_err());
    }

    #[test]
    fn only_stop_length_and_error_are_terminal() {
        assert!(Finish::Stop.is_terminal());
        assert!(!Finish::ToolCalls.is_terminal());
        assert!(!Finish::Interrupted.is_terminal());
    }
}
