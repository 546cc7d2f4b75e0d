//! The one effect a Run may hold: an outside change the controller carries out after the state
//! that asks for it is persisted (LAT-3), and acknowledges once done. Each has an id that is
//! never reused, so a delivery key made from it delivers once however often it is retried.

use super::run::WorkState;
use crate::blueprint_loop::BlueprintLoopId;
use crate::{LatticeRunId, MessageId};
use serde::{Deserialize, Serialize};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptType {
    /// The Run entered a state: say what it is and the one action that leaves it.
    StateEntry,
    /// The Run was resumed.
    Resume,
    /// The last action could not be taken: say why and what to do.
    Repair,
}

impl PromptType {
    pub fn as_str(self) -> &'static str {
        match self {
            PromptType::StateEntry => "state_entry",
            PromptType::Resume => "resume",
            PromptType::Repair => "repair",
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Effect {
    DeliverPrompt {
        id: u64,
        prompt_type: PromptType,
        state: WorkState,
        delivery_key: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        validation_errors: Vec<String>,
        /// Times the steer was put in the inbox (the key makes a repeat a no-op).
        attempt_count: u32,
    },
    CreateBlueprintLoop {
        id: u64,
        step_id: String,
        note_id: i64,
        blueprint_version: i64,
        source_digest: String,
        /// A loop created for this effect is created at or after this time (the fingerprint).
        at: i64,
    },
    StartBlueprintLoop {
        id: u64,
        step_id: String,
        loop_id: BlueprintLoopId,
        blueprint_version: i64,
        source_digest: String,
    },
    DeliverCompletion {
        id: u64,
        delivery_key: String,
    },
}

impl Effect {
    pub fn id(&self) -> u64 {
        match self {
            Effect::DeliverPrompt { id, .. }
            | Effect::CreateBlueprintLoop { id, .. }
            | Effect::StartBlueprintLoop { id, .. }
            | Effect::DeliverCompletion { id, .. } => *id,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Effect::DeliverPrompt { .. } => "deliver_prompt",
            Effect::CreateBlueprintLoop { .. } => "create_blueprint_loop",
            Effect::StartBlueprintLoop { .. } => "start_blueprint_loop",
            Effect::DeliverCompletion { .. } => "deliver_completion",
        }
    }

    /// A create or start effect: the Run is between review and a running loop.
    pub fn is_handoff(&self) -> bool {
        matches!(
            self,
            Effect::CreateBlueprintLoop { .. } | Effect::StartBlueprintLoop { .. }
        )
    }
}

pub fn prompt_key(run: LatticeRunId, effect: u64) -> String {
    format!("lattice:{}:prompt:{effect}", run.0)
}

pub fn completion_key(run: LatticeRunId) -> String {
    format!("lattice:{}:completion", run.0)
}

pub fn continue_key(run: LatticeRunId, terminal: MessageId) -> String {
    format!("lattice:{}:continue:{}", run.0, terminal.0)
}
