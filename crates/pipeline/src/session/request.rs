//! `request/request.json`: what the runner hands one agent. Written and hashed by the runner
//! before the agent starts; its schema ships as `schemas/request.schema.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::branch::BranchKey;

pub const REQUEST_SCHEMA_VERSION: u32 = 1;

/// The branch a request re-enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResumeRef {
    pub step: u32,
    pub parallel: u32,
}

impl ResumeRef {
    pub fn key(&self) -> BranchKey {
        BranchKey::new(self.step, self.parallel)
    }
}

impl From<BranchKey> for ResumeRef {
    fn from(k: BranchKey) -> Self {
        Self {
            step: k.step,
            parallel: k.parallel,
        }
    }
}

/// Why a detour operator runs: the branch that blocked and its stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cause {
    pub branch: BranchKey,
    pub stop: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Request {
    pub schema_version: u32,
    pub session_id: String,
    pub operator_id: String,
    pub step: u32,
    pub parallel: u32,
    /// Set for the request of a nested exchange inside the branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<String>,
    #[serde(default)]
    pub requirements: serde_json::Map<String, serde_json::Value>,
    /// kind → `step-N/parallel-M/<path>` from the session root.
    #[serde(default)]
    pub inputs: BTreeMap<String, String>,
    /// The blocked branch this request re-enters, or null.
    #[serde(default)]
    pub resume: Option<ResumeRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    /// The source commit the agent reads, when the session writes source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
}

impl Request {
    pub fn branch(&self) -> BranchKey {
        BranchKey::new(self.step, self.parallel)
    }

    /// The manifest key its hash is recorded under.
    pub fn hash_key(&self) -> String {
        match &self.exchange {
            Some(x) => self.branch().exchange_key(x),
            None => self.branch().to_string(),
        }
    }
}
