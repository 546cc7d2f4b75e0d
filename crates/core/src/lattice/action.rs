//! The one pending action a Run may hold: what the model (or the panel) asked the controller to
//! do next, fixed to the state and Pathway revisions it was based on.

use super::run::{Requirements, WorkState};
use serde::{Deserialize, Serialize};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionSource {
    /// The model, through `lattice_submit`.
    Agent,
    /// The person, through the Lattice panel's Approve.
    Panel,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ActionKind {
    SubmitRequirements {
        requirements: Requirements,
    },
    SubmitPathway {
        reason: String,
    },
    SubmitPathwayReview {
        reason: String,
    },
    /// The Blueprint note for the current Step, with its live version and digest.
    SubmitBlueprint {
        blueprint_id: i64,
        blueprint_version: i64,
        content_digest: String,
    },
    SubmitBlueprintReview {
        reason: String,
        blueprint_version: i64,
        content_digest: String,
    },
    ApproveExecution {
        reason: String,
        blueprint_version: i64,
        content_digest: String,
    },
}

impl ActionKind {
    pub fn name(&self) -> &'static str {
        match self {
            ActionKind::SubmitRequirements { .. } => "submit_requirements",
            ActionKind::SubmitPathway { .. } => "submit_pathway",
            ActionKind::SubmitPathwayReview { .. } => "submit_pathway_review",
            ActionKind::SubmitBlueprint { .. } => "submit_blueprint",
            ActionKind::SubmitBlueprintReview { .. } => "submit_blueprint_review",
            ActionKind::ApproveExecution { .. } => "approve_execution",
        }
    }

    /// The state this action is consumed in.
    pub fn required_state(&self) -> WorkState {
        match self {
            ActionKind::SubmitRequirements { .. } => WorkState::Clarifying,
            ActionKind::SubmitPathway { .. } => WorkState::Planning,
            ActionKind::SubmitPathwayReview { .. } => WorkState::ReviewingPathway,
            ActionKind::SubmitBlueprint { .. } => WorkState::Blueprinting,
            ActionKind::SubmitBlueprintReview { .. } => WorkState::ReviewingBlueprint,
            ActionKind::ApproveExecution { .. } => WorkState::AwaitingExecution,
        }
    }
}

/// The action that moves a Run out of `state` (executing has none: its loop decides).
pub fn valid_action(state: WorkState) -> &'static str {
    match state {
        WorkState::Clarifying => "submit_requirements",
        WorkState::Planning => "submit_pathway",
        WorkState::ReviewingPathway => "submit_pathway_review",
        WorkState::Blueprinting => "submit_blueprint",
        WorkState::ReviewingBlueprint => "submit_blueprint_review",
        WorkState::AwaitingExecution => "approve_execution",
        WorkState::Executing => "none (the BlueprintLoop owns execution)",
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAction {
    pub id: u64,
    pub source: ActionSource,
    pub expected_state_revision: u64,
    pub expected_pathway_revision: u64,
    pub at: i64,
    pub kind: ActionKind,
}

impl PendingAction {
    /// The same request, whatever its envelope (id, revisions, time, source).
    pub fn same_as(&self, kind: &ActionKind) -> bool {
        &self.kind == kind
    }
}
