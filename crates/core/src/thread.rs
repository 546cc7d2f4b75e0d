//! Threads: the unit that runs a model loop, and the agent bound to one.

use crate::ids::{RunId, ThreadId};
use crate::pause::Paused;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// Whether a person watches the thread. Unattended threads (workers, reviewer children)
/// are never latched, so the drive can restart them after a crash.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Interaction {
    #[default]
    Interactive,
    Unattended,
}

impl Interaction {
    pub fn as_str(self) -> &'static str {
        match self {
            Interaction::Interactive => "interactive",
            Interaction::Unattended => "unattended",
        }
    }
}

impl FromStr for Interaction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "interactive" => Ok(Interaction::Interactive),
            "unattended" => Ok(Interaction::Unattended),
            other => Err(format!("unknown interaction '{other}'")),
        }
    }
}

/// Where a thread's model calls go. Secrets are never stored: only the name of the
/// environment variable that holds the key.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndpointSpec {
    /// `openai`, `anthropic` or `scripted`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// For `scripted`: the script file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The endpoint's model is marked as taking pictures: tools such as `read_file` then hand
    /// it images. (Anthropic endpoints take pictures whatever this says.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub takes_pictures: bool,
    /// The thinking levels the model lists, lightest first, as its server names them (an
    /// OpenAI-compatible `reasoning_effort`: `["minimal", "low", "medium", "high"]` for gpt-5).
    /// The app's own readings ask for the first; a Bot's turns send none (the server's
    /// default). Empty: nothing is sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking_levels: Vec<String>,
    /// The most tokens one reply of the model may run to, sent as the request's output cap
    /// (the app's own short readings keep their smaller caps). Unset: an OpenAI-compatible
    /// server's own default, and Anthropic's required cap of 4096.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

/// The largest output cap an endpoint may name: above every model's own limit, and low
/// enough that a typo (an extra digit or two) is caught.
pub const MAX_OUTPUT_TOKENS_LIMIT: u32 = 1_000_000;

impl EndpointSpec {
    pub fn validate(&self) -> Result<(), String> {
        match self.kind.as_str() {
            "openai" | "anthropic" => {
                if self.model.trim().is_empty() {
                    return Err(format!("endpoint of kind {} needs a model", self.kind));
                }
            }
            "scripted" => {
                if self.script.as_deref().is_none_or(|s| s.trim().is_empty()) {
                    return Err("endpoint of kind scripted needs a script file".into());
                }
            }
            other => {
                return Err(format!(
                    "unknown endpoint kind '{other}' (expected openai, anthropic or scripted)"
                ));
            }
        }
        if let Some(url) = &self.base_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(format!(
                "base_url '{url}' must start with http:// or https://"
            ));
        }
        if !self.thinking_levels.is_empty() && self.kind != "openai" {
            return Err(format!(
                "thinking_levels is for openai endpoints (sent as reasoning_effort); a {} \
                 endpoint takes none",
                self.kind
            ));
        }
        if let Some(bad) = self
            .thinking_levels
            .iter()
            .find(|l| l.trim().is_empty() || l.contains(char::is_whitespace))
        {
            return Err(format!(
                "thinking_levels: '{bad}' is not a level name (one word each, lightest first)"
            ));
        }
        if let Some(n) = self.max_output_tokens
            && !(1..=MAX_OUTPUT_TOKENS_LIMIT).contains(&n)
        {
            return Err(format!(
                "max_output_tokens is {n}; it must be from 1 to {MAX_OUTPUT_TOKENS_LIMIT} \
                 (the most tokens one reply of the model may run to)"
            ));
        }
        Ok(())
    }
}

/// The agent a thread is bound to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentBinding {
    pub name: String,
    pub system_prompt: String,
    /// The model role whose endpoint this agent uses when it has none of its own.
    #[serde(default = "default_role")]
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<EndpointSpec>,
}

fn default_role() -> String {
    "default".into()
}

impl AgentBinding {
    pub fn new(name: impl Into<String>, system_prompt: impl Into<String>) -> Self {
        AgentBinding {
            name: name.into(),
            system_prompt: system_prompt.into(),
            role: default_role(),
            endpoint: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    pub id: ThreadId,
    pub parent_id: Option<ThreadId>,
    pub title: String,
    pub agent: AgentBinding,
    pub workspace: String,
    /// A folder holding `workspace` that the thread's tools may also reach; `None`: only
    /// `workspace` (see `NewThread::workspace_root`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<String>,
    pub interaction: Interaction,
    /// The workflow slot; consumers own its shape, the kernel only stores it.
    pub workflow: Option<serde_json::Value>,
    pub paused: Option<Paused>,
    pub archived_at: Option<i64>,
    pub lease: Lease,
    pub created_at: i64,
}

impl Thread {
    /// A latch can be written only on threads a person watches.
    pub fn latchable(&self) -> bool {
        self.archived_at.is_none() && self.interaction == Interaction::Interactive
    }
    /// Whether the latch keeps the drive away.
    pub fn blocks_drive(&self) -> bool {
        self.paused.is_some() && self.interaction == Interaction::Interactive
    }
}

/// The single-loop lease: a generation that only ever grows, and the run holding it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Lease {
    pub generation: i64,
    pub holder: Option<RunId>,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    #[error("thread is busy: run {0} holds its lease")]
    Busy(RunId),
    #[error("stale lease: generation {presented} does not hold the thread (current {current})")]
    Stale { presented: i64, current: i64 },
}

impl Lease {
    /// Take the lease for `run`; fails while another run holds it.
    pub fn acquire(self, run: RunId) -> Result<Lease, LeaseError> {
        match self.holder {
            Some(holder) => Err(LeaseError::Busy(holder)),
            None => Ok(Lease {
                generation: self.generation + 1,
                holder: Some(run),
            }),
        }
    }
    /// Only the exact holder (same generation) may release; a stale owner changes nothing.
    pub fn release(self, generation: i64) -> Result<Lease, LeaseError> {
        if self.holder.is_some() && self.generation == generation {
            Ok(Lease {
                generation: self.generation,
                holder: None,
            })
        } else {
            Err(LeaseError::Stale {
                presented: generation,
                current: self.generation,
            })
        }
    }
    pub fn is_held_by(&self, generation: i64) -> bool {
        self.holder.is_some() && self.generation == generation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_acquire_fails_while_held() {
        let l = Lease::default().acquire(RunId(1)).unwrap();
        assert_eq!(l.generation, 1);
        assert_eq!(l.acquire(RunId(2)), Err(LeaseError::Busy(RunId(1))));
    }

    #[test]
    fn stale_lease_cannot_release_a_newer_one() {
        let first = Lease::default().acquire(RunId(1)).unwrap();
        let released = first.release(first.generation).unwrap();
        let second = released.acquire(RunId(2)).unwrap();
        // The first owner comes back late and tries to release: refused, second keeps it.
        assert!(matches!(
            second.release(first.generation),
            Err(LeaseError::Stale { .. })
        ));
        assert!(second.is_held_by(2));
    }

    #[test]
    fn endpoint_validation_names_the_problem() {
        let mut e = EndpointSpec {
            kind: "openai".into(),
            base_url: Some("ftp://x".into()),
            model: "m".into(),
            api_key_env: None,
            script: None,
            takes_pictures: false,
            thinking_levels: Vec::new(),
            max_output_tokens: None,
        };
        assert!(e.validate().unwrap_err().contains("http://"));
        e.base_url = None;
        e.kind = "bard".into();
        assert!(e.validate().unwrap_err().contains("unknown endpoint kind"));
        e.kind = "scripted".into();
        assert!(e.validate().unwrap_err().contains("script"));
    }

    #[test]
    fn an_output_cap_of_zero_or_past_the_limit_is_refused_by_name() {
        let mut e: EndpointSpec =
            serde_json::from_str(r#"{"kind":"anthropic","model":"m"}"#).unwrap();
        assert_eq!(e.max_output_tokens, None);
        for bad in [0, MAX_OUTPUT_TOKENS_LIMIT + 1] {
            e.max_output_tokens = Some(bad);
            let err = e.validate().unwrap_err();
            assert!(
                err.starts_with(&format!(
                    "max_output_tokens is {bad}; it must be from 1 to "
                )),
                "{err}"
            );
        }
        e.max_output_tokens = Some(32_000);
        assert_eq!(e.validate(), Ok(()));
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.contains(r#""max_output_tokens":32000"#), "{text}");
    }

    #[test]
    fn taking_pictures_is_off_unless_said_and_only_written_when_on() {
        let mut e: EndpointSpec = serde_json::from_str(r#"{"kind":"openai","model":"m"}"#).unwrap();
        assert!(!e.takes_pictures);
        assert!(
            !serde_json::to_string(&e)
                .unwrap()
                .contains("takes_pictures")
        );
        e.takes_pictures = true;
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.contains(r#""takes_pictures":true"#), "{text}");
        assert_eq!(serde_json::from_str::<EndpointSpec>(&text).unwrap(), e);
    }
}
