//! A Step of a Lattice Pathway, the Blueprint bound to it and the BlueprintLoop attempts that
//! carried it out. Evidence (bindings, attempts, results, failures) is only ever appended.

use crate::blueprint_loop::BlueprintLoopId;
use serde::{Deserialize, Serialize};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    Current,
    Executing,
    Completed,
    Failed,
    Cancelled,
}

impl StepStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::Current => "current",
            StepStatus::Executing => "executing",
            StepStatus::Completed => "completed",
            StepStatus::Failed => "failed",
            StepStatus::Cancelled => "cancelled",
        }
    }
}

/// The Blueprint note a Step is carried out by, as submitted and as reviewed.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlueprintBinding {
    pub note_id: i64,
    pub bound_version: i64,
    pub content_digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed_version: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed_digest: Option<String>,
    pub bound_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed_at: Option<i64>,
}

impl BlueprintBinding {
    /// The review covers exactly this version and content.
    pub fn reviewed_as(&self, version: i64, digest: &str) -> bool {
        self.reviewed_version == Some(version) && self.reviewed_digest.as_deref() == Some(digest)
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptStatus {
    Created,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl AttemptStatus {
    pub fn is_live(self) -> bool {
        matches!(self, AttemptStatus::Created | AttemptStatus::Running)
    }
}

/// One BlueprintLoop that carried out (or tried to) a Step's Blueprint.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopAttempt {
    pub loop_id: BlueprintLoopId,
    pub status: AttemptStatus,
    pub source_digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub id: String,
    pub title: String,
    pub objective: String,
    pub status: StepStatus,
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    #[serde(default)]
    pub assumptions: Vec<String>,
    /// Failed Steps this one makes up for.
    #[serde(default)]
    pub addresses_failed_step_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blueprint: Option<BlueprintBinding>,
    #[serde(default)]
    pub blueprint_history: Vec<BlueprintBinding>,
    #[serde(default)]
    pub loop_history: Vec<LoopAttempt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
}

impl Step {
    /// The live attempt (created or running), if any.
    pub fn live_attempt(&self) -> Option<&LoopAttempt> {
        self.loop_history.iter().rev().find(|a| a.status.is_live())
    }

    pub fn attempt_mut(&mut self, loop_id: BlueprintLoopId) -> Option<&mut LoopAttempt> {
        self.loop_history.iter_mut().find(|a| a.loop_id == loop_id)
    }

    /// Move the bound Blueprint into history (a new one is bound, or the old is invalidated).
    pub fn retire_binding(&mut self) {
        if let Some(b) = self.blueprint.take() {
            self.blueprint_history.push(b);
        }
    }
}
