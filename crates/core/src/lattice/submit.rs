//! The tools' side of the machine: `submit` records one pending action — fixed to the state
//! and Pathway revisions it was based on and the live Blueprint it names — or says why not.
//! The controller consumes it later ([`super::machine::step`]).

use super::action::{ActionKind, ActionSource, PendingAction};
use super::machine::NoteFacts;
use super::run::{LatticeRun, Mode, RunStatus};

/// Why `lattice_submit` recorded nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SubmitRefusal {
    #[error("the Lattice Run is {status}; nothing can be submitted until it is active again")]
    NotActive { status: &'static str },
    #[error("{action} is not valid in {state}; the valid action is {valid}")]
    WrongState {
        action: &'static str,
        state: &'static str,
        valid: &'static str,
    },
    #[error(
        "a different action ({pending}) is already pending; end the turn and let the host take it"
    )]
    Conflict { pending: &'static str },
    #[error("the Blueprint changed after it was reviewed; it goes back to review")]
    ReviewStale,
    #[error("{0}")]
    BlueprintUnavailable(String),
    #[error(
        "in collaborative mode execution is approved by the person: wait for their word in this conversation"
    )]
    AwaitsPerson,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Submitted {
    Queued(Box<LatticeRun>),
    /// The same action is already pending: nothing changed.
    AlreadyQueued,
}

/// What `submit` needs to know beyond the Run.
#[derive(Clone, Debug, Default)]
pub struct SubmitFacts {
    /// The live note: the submitted Blueprint for `submit_blueprint`, the current Step's bound
    /// one for the review and the approval.
    pub note: Option<NoteFacts>,
    /// A person wrote in the conversation after the Run entered its state.
    pub person_spoke: bool,
}

/// Record one pending action, or say why not (nothing changes then).
pub fn submit(
    run: &LatticeRun,
    kind: ActionKind,
    source: ActionSource,
    facts: &SubmitFacts,
    now: i64,
) -> Result<Submitted, SubmitRefusal> {
    if run.status != RunStatus::Active {
        return Err(SubmitRefusal::NotActive {
            status: run.status.as_str(),
        });
    }
    if let Some(p) = &run.pending_action {
        return if p.same_as(&kind) {
            Ok(Submitted::AlreadyQueued)
        } else {
            Err(SubmitRefusal::Conflict {
                pending: p.kind.name(),
            })
        };
    }
    if kind.required_state() != run.state {
        return Err(SubmitRefusal::WrongState {
            action: kind.name(),
            state: run.state.as_str(),
            valid: run.valid_action(),
        });
    }
    match &kind {
        ActionKind::SubmitBlueprint { .. } | ActionKind::SubmitBlueprintReview { .. } => {
            match &facts.note {
                None => {
                    return Err(SubmitRefusal::BlueprintUnavailable(
                        "the Blueprint note does not exist".into(),
                    ));
                }
                Some(n) if !n.is_blueprint => {
                    return Err(SubmitRefusal::BlueprintUnavailable(format!(
                        "note_{} is a plain note, not a Blueprint",
                        n.id
                    )));
                }
                Some(_) => {}
            }
        }
        ActionKind::ApproveExecution {
            blueprint_version,
            content_digest,
            ..
        } => {
            if run.mode == Mode::Collaborative
                && source == ActionSource::Agent
                && !facts.person_spoke
            {
                return Err(SubmitRefusal::AwaitsPerson);
            }
            let reviewed = run
                .current_step()
                .and_then(|s| s.blueprint.as_ref())
                .is_some_and(|bd| bd.reviewed_as(*blueprint_version, content_digest));
            if !reviewed {
                return Err(SubmitRefusal::ReviewStale);
            }
        }
        _ => {}
    }
    let mut next = run.clone();
    next.pending_action = Some(PendingAction {
        id: next.next_effect_id,
        source,
        expected_state_revision: run.state_revision,
        expected_pathway_revision: run.pathway_revision,
        at: now,
        kind,
    });
    next.next_effect_id += 1;
    next.updated_at = now;
    Ok(Submitted::Queued(Box::new(next)))
}

/// The Run has spent its model-call cap.
pub fn budget_spent(run: &LatticeRun) -> bool {
    run.max_model_calls > 0 && run.model_call_count >= run.max_model_calls
}
