//! Fixtures the Lattice machine's tests share: a Blueprint note's facts, and the action that
//! leaves each work state.

use super::*;

pub(super) fn note(version: i64) -> NoteFacts {
    NoteFacts {
        id: 7,
        version,
        digest: format!("d{version}"),
        is_blueprint: true,
    }
}

/// The action that leaves `state` (the one the model is asked for), measured against `n`.
pub(super) fn kind_for(state: WorkState, n: &NoteFacts) -> ActionKind {
    match state {
        WorkState::Clarifying | WorkState::Executing => ActionKind::SubmitRequirements {
            requirements: Requirements {
                goal: "g".into(),
                success_criteria: vec!["c".into()],
                ..Requirements::default()
            },
        },
        WorkState::Planning => ActionKind::SubmitPathway { reason: "r".into() },
        WorkState::ReviewingPathway => ActionKind::SubmitPathwayReview { reason: "r".into() },
        WorkState::Blueprinting => ActionKind::SubmitBlueprint {
            blueprint_id: n.id,
            blueprint_version: n.version,
            content_digest: n.digest.clone(),
        },
        WorkState::ReviewingBlueprint => ActionKind::SubmitBlueprintReview {
            reason: "r".into(),
            blueprint_version: n.version,
            content_digest: n.digest.clone(),
        },
        WorkState::AwaitingExecution => ActionKind::ApproveExecution {
            reason: "r".into(),
            blueprint_version: n.version,
            content_digest: n.digest.clone(),
        },
    }
}
