//! The slot's controls as a pure function: `(facts, request) -> (slot, effects)`. One kind at a
//! time; enabling, switching and ordinary disabling only while the session is idle; Light Loop
//! instruction updates refused while a review is pending; a kind this build does not know is
//! never rewritten, only cleared by an explicit disable.

use crate::lightloop::machine::{self, LoopEffect, LoopEvent, LoopRefusal};
use crate::slot::{BossSlot, LightLoopSlot, ReviewState, WorkflowSlot};
use troupe_core::boss::BossRole;

fn clean(text: Option<String>) -> Option<String> {
    text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
}

/// What the decision needs to know about the session.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotFacts {
    pub slot: Option<WorkflowSlot>,
    /// A loop owns the thread (a turn is live).
    pub running: bool,
    /// An active BlueprintLoop is bound to the session (PLN-1: Plan cannot be enabled then).
    pub blueprint_loop_active: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotRequest {
    EnablePlan,
    /// Make the session a Boss root (its standing instructions, if any).
    EnableBoss {
        instructions: Option<String>,
    },
    EnableLightLoop {
        instructions: String,
        max_iterations: Option<u32>,
    },
    Disable,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SlotTransition {
    /// The slot after the request (`None`: empty).
    pub next: Option<WorkflowSlot>,
    /// Effects of a workflow that ended (a Light Loop's terminal record), applied before the
    /// slot is written.
    pub effects: Vec<LoopEffect>,
    /// False when the request changed nothing (enabling what is already on, disabling nothing).
    pub changed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SlotRefusal {
    /// 422: the request itself is wrong; checked before any state.
    #[error("{0}")]
    Invalid(String),
    #[error("the session is running; workflows change only while it is idle (stop it or wait)")]
    Running,
    #[error("workflow '{current}' is active; disable it before enabling another")]
    WorkflowActive { current: String },
    #[error("a BlueprintLoop is bound to this session")]
    BlueprintLoopActive,
    #[error("a completion review is pending; instructions cannot change until it is decided")]
    ReviewPending,
    #[error(
        "this session is a Boss worker: its tree's root is the only entry, and its workflow is the root's to change"
    )]
    BossWorker,
}

impl SlotRefusal {
    /// The API's conflict code for a refusal (None for the 422 case).
    pub fn code(&self) -> Option<&'static str> {
        match self {
            SlotRefusal::Invalid(_) => None,
            SlotRefusal::Running => Some("session_running"),
            SlotRefusal::WorkflowActive { .. } => Some("workflow_active"),
            SlotRefusal::BlueprintLoopActive => Some("blueprint_loop_active"),
            SlotRefusal::ReviewPending => Some("review_pending"),
            SlotRefusal::BossWorker => Some("boss_worker"),
        }
    }
}

fn validate(req: &SlotRequest) -> Result<(), SlotRefusal> {
    if let SlotRequest::EnableLightLoop {
        instructions,
        max_iterations,
    } = req
    {
        if instructions.trim().is_empty() {
            return Err(SlotRefusal::Invalid(
                "instructions: a Light Loop needs non-empty instructions".into(),
            ));
        }
        if *max_iterations == Some(0) {
            return Err(SlotRefusal::Invalid(
                "max_iterations: must be at least 1".into(),
            ));
        }
    }
    Ok(())
}

fn unchanged(slot: Option<WorkflowSlot>) -> SlotTransition {
    SlotTransition {
        next: slot,
        effects: vec![],
        changed: false,
    }
}

pub fn decide(facts: &SlotFacts, req: SlotRequest) -> Result<SlotTransition, SlotRefusal> {
    validate(&req)?;
    if facts.running {
        return Err(SlotRefusal::Running);
    }
    let current = facts.slot.clone();
    // A worker's slot belongs to its tree (BOSS-6): no person's request changes it.
    if matches!(&current, Some(WorkflowSlot::Boss(b)) if b.role == BossRole::Worker) {
        return Err(SlotRefusal::BossWorker);
    }
    match (req, current) {
        (SlotRequest::Disable, None) => Ok(unchanged(None)),
        (SlotRequest::Disable, Some(WorkflowSlot::LightLoop(ll))) => {
            // An ordinary disable of a Light Loop ends it as cancelled, through its own machine,
            // so the terminal record is written like any other ending.
            let step = machine::step(Some(&ll), LoopEvent::Cancel).map_err(refusal)?;
            Ok(SlotTransition {
                next: None,
                effects: step.effects,
                changed: true,
            })
        }
        (SlotRequest::Disable, Some(_)) => Ok(SlotTransition {
            next: None,
            effects: vec![],
            changed: true,
        }),
        (_, _) if facts.blueprint_loop_active => Err(SlotRefusal::BlueprintLoopActive),
        (SlotRequest::EnableBoss { instructions }, None) => Ok(SlotTransition {
            next: Some(WorkflowSlot::Boss(BossSlot {
                role: BossRole::Boss,
                worker_role: None,
                root_session_id: None,
                instructions: clean(instructions),
            })),
            effects: vec![],
            changed: true,
        }),
        (SlotRequest::EnableBoss { instructions }, Some(WorkflowSlot::Boss(b))) => {
            let next = BossSlot {
                instructions: clean(instructions),
                ..b.clone()
            };
            let changed = next != b;
            Ok(SlotTransition {
                next: Some(WorkflowSlot::Boss(next)),
                effects: vec![],
                changed,
            })
        }
        (SlotRequest::EnablePlan, Some(WorkflowSlot::Plan)) => {
            Ok(unchanged(Some(WorkflowSlot::Plan)))
        }
        (SlotRequest::EnablePlan, None) => Ok(SlotTransition {
            next: Some(WorkflowSlot::Plan),
            effects: vec![],
            changed: true,
        }),
        (
            SlotRequest::EnableLightLoop {
                instructions,
                max_iterations,
            },
            None,
        ) => Ok(SlotTransition {
            next: Some(WorkflowSlot::LightLoop(Box::new(LightLoopSlot {
                instructions: instructions.trim().to_string(),
                max_iterations,
                stop_request: None,
                review: ReviewState::default(),
            }))),
            effects: vec![],
            changed: true,
        }),
        (
            SlotRequest::EnableLightLoop {
                instructions,
                max_iterations,
            },
            Some(WorkflowSlot::LightLoop(ll)),
        ) => {
            let step = machine::step(
                Some(&ll),
                LoopEvent::UpdateInstructions {
                    instructions,
                    max_iterations,
                },
            )
            .map_err(refusal)?;
            let changed = step.next.as_ref() != Some(&ll);
            Ok(SlotTransition {
                next: step.next.map(|n| WorkflowSlot::LightLoop(Box::new(n))),
                effects: step.effects,
                changed,
            })
        }
        (_, Some(other)) => Err(SlotRefusal::WorkflowActive {
            current: other.kind(),
        }),
    }
}

fn refusal(r: LoopRefusal) -> SlotRefusal {
    match r {
        LoopRefusal::ReviewPending => SlotRefusal::ReviewPending,
        other => SlotRefusal::Invalid(other.to_string()),
    }
}
