//! `response/response.json`: what an agent hands back. Only this file routes; `response.md`
//! is for people. Its schema ships as `schemas/response.schema.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::branch::BranchKey;
use super::state::Fallback;

pub const RESPONSE_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseStatus {
    Done,
    Blocked,
    Waiting,
}

/// The nested exchange a waiting agent needs answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Awaiting {
    /// The exchange's folder name inside the branch.
    pub exchange: String,
    /// One of the operator's declared exchange kinds.
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Response {
    pub schema_version: u32,
    pub operator_id: String,
    pub step: u32,
    pub parallel: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<String>,
    pub status: ResponseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    #[serde(default)]
    pub fallbacks: Vec<Fallback>,
    /// kind → path relative to the branch.
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
    /// For a source-writing operator: the paths (relative to the checkout) it wrote.
    #[serde(default)]
    pub writes: Vec<String>,
    /// Commits the runner recorded for the write set.
    #[serde(default)]
    pub commits: Vec<String>,
    /// What the agent suggests next; recorded, never routed on.
    #[serde(default)]
    pub next: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Response {
    pub fn branch(&self) -> BranchKey {
        BranchKey::new(self.step, self.parallel)
    }

    /// A `done` response for `branch` with no fields yet.
    pub fn done(operator: &str, branch: BranchKey) -> Self {
        Self {
            schema_version: RESPONSE_SCHEMA_VERSION,
            operator_id: operator.to_string(),
            step: branch.step,
            parallel: branch.parallel,
            exchange: None,
            status: ResponseStatus::Done,
            stop: None,
            awaiting: None,
            fallbacks: Vec::new(),
            fields: BTreeMap::new(),
            writes: Vec::new(),
            commits: Vec::new(),
            next: Vec::new(),
            reason: None,
        }
    }

    /// A `blocked` response with `stop` and why.
    pub fn blocked(operator: &str, branch: BranchKey, stop: &str, reason: &str) -> Self {
        Self {
            status: ResponseStatus::Blocked,
            stop: Some(stop.to_string()),
            reason: Some(reason.to_string()),
            ..Self::done(operator, branch)
        }
    }

    /// A `waiting` response asking for exchange `exchange` of kind `kind`.
    pub fn waiting(operator: &str, branch: BranchKey, exchange: &str, kind: &str) -> Self {
        Self {
            status: ResponseStatus::Waiting,
            awaiting: Some(Awaiting {
                exchange: exchange.to_string(),
                kind: kind.to_string(),
            }),
            ..Self::done(operator, branch)
        }
    }

    /// Adds a field (builder style).
    pub fn with_field(mut self, kind: &str, path: &str) -> Self {
        self.fields.insert(kind.to_string(), path.to_string());
        self
    }
}
