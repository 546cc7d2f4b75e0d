//! The manifest, `state.json`: everything the runner needs to know about a session, and the
//! only thing routing reads. Its schema ships as `schemas/state.schema.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::branch::BranchKey;
use crate::git::Identity;

/// The manifest format this crate writes.
pub const STATE_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    Running,
    /// Stopped for a person or something outside; the session stays on disk and can re-enter.
    Blocked,
    Done,
    /// Ended by a person.
    Stopped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BranchStatus {
    /// Its request is written; its agent runs (or will).
    Open,
    /// Its agent waits on a nested exchange.
    Waiting,
    Done,
    Blocked,
}

/// Where a branch sits in its workflow: step and branch, both 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Origin {
    pub step: u32,
    pub branch: u32,
}

/// What the manifest knows about one branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchRecord {
    pub operator: String,
    pub status: BranchStatus,
    /// The workflow branch it runs (or re-enters); none for a detour operator a route ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// For a detour operator: the blocked branch to come back to once it is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_to: Option<BranchKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    /// The response's `fields`: kind → path relative to the branch.
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
    /// Nested exchanges run for it so far.
    #[serde(default)]
    pub exchanges: u32,
}

/// A lease one agent holds while it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lease {
    /// The operator the agent runs.
    pub agent: String,
    /// What it may write: `response:<branch>[/<exchange>]`, `source:<root>`.
    pub holds: Vec<String>,
}

/// A re-entry: the branch that resumes another, and the stop it resumes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResumeRecord {
    pub resumes: BranchKey,
    pub stop: String,
}

/// A fallback code a branch recorded while it went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fallback {
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Where and why the session stopped making progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StoppedAt {
    /// When, as an ISO 8601 instant; filled in when the manifest is saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<BranchKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The route kind followed: `user`, `external`, or `done` when the chain finished.
    pub route: String,
    pub why: String,
}

/// The session's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Budget {
    pub max_steps: u32,
    /// Runs of one operator per session, and nested exchanges per branch.
    pub max_same_operator: u32,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            max_steps: 24,
            max_same_operator: 4,
        }
    }
}

/// The checkout a session writes source in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SourceRecord {
    /// The branch the person has checked out, which publish merges into.
    pub target: String,
    /// The head the session started from.
    pub frozen_head: String,
    /// `session/<sessionId>`.
    pub session_branch: String,
    /// The session worktree, when created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// The commit later requests pin: the frozen head, then each recorded commit.
    pub head: String,
    #[serde(default)]
    pub commits: Vec<String>,
    /// Who the last of `commits` is by: the person's git identity, or Troupe's when git had
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
}

/// `state.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionState {
    pub schema_version: u32,
    pub id: String,
    pub project: String,
    pub workflow: String,
    pub started_at: String,
    pub status: SessionStatus,
    /// Every branch in the order it was opened.
    pub chain: Vec<BranchKey>,
    /// Branch → operator.
    pub steps: BTreeMap<BranchKey, String>,
    /// Branches of the latest step not yet routed.
    pub current: Vec<BranchKey>,
    /// Agent (a branch key, or a branch key and exchange) → lease.
    pub leases: BTreeMap<String, Lease>,
    /// Branch (or branch and exchange) → sha256 of its request.json.
    pub request_hashes: BTreeMap<String, String>,
    /// Branch → sha256 of what its request consumes (operator, requirements, head, and the
    /// content of every input): a resume that blocks the same way on the same input hash made
    /// no progress.
    pub input_hashes: BTreeMap<String, String>,
    pub resumes: BTreeMap<BranchKey, ResumeRecord>,
    pub fallbacks: BTreeMap<BranchKey, Vec<Fallback>>,
    pub branches: BTreeMap<BranchKey, BranchRecord>,
    pub budget: Budget,
    /// Values set when the run started, laid over each branch's workflow presets.
    #[serde(default)]
    pub requirements: serde_json::Map<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<StoppedAt>,
}

impl SessionState {
    /// A fresh manifest with nothing opened yet.
    pub fn new(
        id: String,
        project: String,
        workflow: String,
        started_at: String,
        budget: Budget,
    ) -> Self {
        Self {
            schema_version: STATE_SCHEMA_VERSION,
            id,
            project,
            workflow,
            started_at,
            status: SessionStatus::Running,
            chain: Vec::new(),
            steps: BTreeMap::new(),
            current: Vec::new(),
            leases: BTreeMap::new(),
            request_hashes: BTreeMap::new(),
            input_hashes: BTreeMap::new(),
            resumes: BTreeMap::new(),
            fallbacks: BTreeMap::new(),
            branches: BTreeMap::new(),
            budget,
            requirements: serde_json::Map::new(),
            source: None,
            stopped_at: None,
        }
    }

    /// The highest step opened so far (0 before the first).
    pub fn last_step(&self) -> u32 {
        self.chain.iter().map(|k| k.step).max().unwrap_or(0)
    }

    /// The branches of step `step`, in parallel order.
    pub fn step_branches(&self, step: u32) -> Vec<BranchKey> {
        self.chain
            .iter()
            .copied()
            .filter(|k| k.step == step)
            .collect()
    }

    /// How many branches have run `operator` in this session.
    pub fn runs_of(&self, operator: &str) -> u32 {
        self.steps.values().filter(|op| *op == operator).count() as u32
    }
}
