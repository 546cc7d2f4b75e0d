//! The Lattice Run record: one large goal, its requirements, its Pathway of Steps, at most one
//! pending action and one effect. Only the machine ([`super::machine`]) changes `state`,
//! `status`, `current_step_id` or a Step's status (LAT-2).

use super::action::PendingAction;
use super::effect::Effect;
use super::step::{Step, StepStatus};
use crate::{LatticeRunId, ThreadId};
use serde::{Deserialize, Serialize};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The reviewed Blueprint is executed at once.
    Auto,
    /// The person approves each reviewed Blueprint before it is executed.
    Collaborative,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Collaborative => "collaborative",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "auto" => Ok(Mode::Auto),
            "collaborative" => Ok(Mode::Collaborative),
            other => Err(format!(
                "mode: unknown Lattice mode '{other}' (expected auto or collaborative)"
            )),
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Active,
    Paused,
    Completed,
    Failed,
    Cancelled,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Active => "active",
            RunStatus::Paused => "paused",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled
        )
    }
}

/// Why a Run is paused, failed or cancelled (`status_reason`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusReason {
    ModelCallBudgetExhausted,
    BlueprintLoopFailed,
    BlueprintLoopCancelled,
    BlueprintLoopOwnershipConflict,
    MultipleBlueprintLoopOwners,
    DuplicateActiveRun,
    BlueprintUnavailable,
    WorkflowProjectionConflict,
    /// The person left Lattice (disable) with work done: kept for an explicit resume.
    UserExit,
    /// Cancelled through the cancel route.
    UserCancelled,
    /// Cancelled by the session's Abandon.
    Abandoned,
    /// A pristine Run replaced or disabled before anything happened.
    Superseded,
}

impl StatusReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StatusReason::ModelCallBudgetExhausted => "model_call_budget_exhausted",
            StatusReason::BlueprintLoopFailed => "blueprint_loop_failed",
            StatusReason::BlueprintLoopCancelled => "blueprint_loop_cancelled",
            StatusReason::BlueprintLoopOwnershipConflict => "blueprint_loop_ownership_conflict",
            StatusReason::MultipleBlueprintLoopOwners => "multiple_blueprint_loop_owners",
            StatusReason::DuplicateActiveRun => "duplicate_active_run",
            StatusReason::BlueprintUnavailable => "blueprint_unavailable",
            StatusReason::WorkflowProjectionConflict => "workflow_projection_conflict",
            StatusReason::UserExit => "user_exit",
            StatusReason::UserCancelled => "user_cancelled",
            StatusReason::Abandoned => "abandoned",
            StatusReason::Superseded => "superseded",
        }
    }

    /// The reason in words, as the session latch shows it.
    pub fn words(self) -> String {
        self.as_str().replace('_', " ")
    }

    /// A pause whose cause is a loop's ownership or a duplicate: resume reopens the Step.
    pub fn is_ownership(self) -> bool {
        matches!(
            self,
            StatusReason::BlueprintLoopOwnershipConflict
                | StatusReason::MultipleBlueprintLoopOwners
                | StatusReason::DuplicateActiveRun
        )
    }
}

/// The work state of a Run (meaningful while it is active or paused).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkState {
    Clarifying,
    Planning,
    ReviewingPathway,
    Blueprinting,
    ReviewingBlueprint,
    AwaitingExecution,
    Executing,
}

impl WorkState {
    pub const ALL: [WorkState; 7] = [
        WorkState::Clarifying,
        WorkState::Planning,
        WorkState::ReviewingPathway,
        WorkState::Blueprinting,
        WorkState::ReviewingBlueprint,
        WorkState::AwaitingExecution,
        WorkState::Executing,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WorkState::Clarifying => "clarifying",
            WorkState::Planning => "planning",
            WorkState::ReviewingPathway => "reviewing_pathway",
            WorkState::Blueprinting => "blueprinting",
            WorkState::ReviewingBlueprint => "reviewing_blueprint",
            WorkState::AwaitingExecution => "awaiting_execution",
            WorkState::Executing => "executing",
        }
    }

    /// States the controller prompts the model in when it enters them.
    pub fn prompts_on_entry(self) -> bool {
        !matches!(self, WorkState::AwaitingExecution | WorkState::Executing)
    }
}

/// What the goal is taken to mean, agreed in `clarifying`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirements {
    pub goal: String,
    pub success_criteria: Vec<String>,
    #[serde(default)]
    pub constraints: Vec<String>,
    #[serde(default)]
    pub non_goals: Vec<String>,
    #[serde(default)]
    pub assumptions: Vec<String>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatticeRun {
    pub id: LatticeRunId,
    /// The session's thread the Run works in.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub thread_id: ThreadId,
    pub mode: Mode,
    /// Model calls the Run may make (0: no cap).
    pub max_model_calls: u32,
    /// Model calls of the session's thread while this Run is current, as last flushed.
    pub model_call_count: u32,
    pub status: RunStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<StatusReason>,
    pub state: WorkState,
    /// The goal the person gave when enabling, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_seed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Requirements>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_step_id: Option<String>,
    pub state_revision: u64,
    pub pathway_revision: u64,
    pub pathway: Vec<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_action: Option<PendingAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<Effect>,
    /// The next effect's and the next new Step's numbers (ids are never reused).
    pub next_effect_id: u64,
    pub next_step_no: u64,
    /// When the current state was entered (a person's line after it counts as their word).
    pub state_entered_at: i64,
    pub created_at: i64,
    pub updated_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
}

impl LatticeRun {
    /// A new Run in `clarifying`.
    pub fn new(
        id: LatticeRunId,
        thread_id: ThreadId,
        mode: Mode,
        max_model_calls: u32,
        goal_seed: Option<String>,
        now: i64,
    ) -> Self {
        LatticeRun {
            id,
            thread_id,
            mode,
            max_model_calls,
            model_call_count: 0,
            status: RunStatus::Active,
            status_reason: None,
            state: WorkState::Clarifying,
            goal_seed,
            requirements: None,
            current_step_id: None,
            state_revision: 0,
            pathway_revision: 0,
            pathway: Vec::new(),
            pending_action: None,
            effect: None,
            next_effect_id: 1,
            next_step_no: 1,
            state_entered_at: now,
            created_at: now,
            updated_at: now,
            paused_at: None,
            completed_at: None,
        }
    }

    /// Nothing has happened yet: no call, no action, no requirements, no Pathway.
    pub fn is_pristine(&self) -> bool {
        self.state == WorkState::Clarifying
            && self.pathway_revision == 0
            && self.model_call_count == 0
            && self.pathway.is_empty()
            && self.current_step_id.is_none()
            && self.pending_action.is_none()
            && self.requirements.is_none()
    }

    pub fn step(&self, id: &str) -> Option<&Step> {
        self.pathway.iter().find(|s| s.id == id)
    }

    pub fn step_mut(&mut self, id: &str) -> Option<&mut Step> {
        self.pathway.iter_mut().find(|s| s.id == id)
    }

    pub fn current_step(&self) -> Option<&Step> {
        self.current_step_id.as_deref().and_then(|id| self.step(id))
    }

    pub fn pending_steps(&self) -> impl Iterator<Item = &Step> {
        self.pathway
            .iter()
            .filter(|s| s.status == StepStatus::Pending)
    }

    pub fn completed_steps(&self) -> usize {
        self.pathway
            .iter()
            .filter(|s| s.status == StepStatus::Completed)
            .count()
    }

    /// The one action valid in the current state, by name.
    pub fn valid_action(&self) -> &'static str {
        super::action::valid_action(self.state)
    }
}
