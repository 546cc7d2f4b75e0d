//! The workflow slot as this layer reads it. The kernel stores the slot as opaque JSON on the
//! thread; here it is `{kind, …}` with one shape per kind. A kind this build does not know (or
//! a known kind whose fields do not parse) is kept exactly as stored and written back unchanged.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use troupe_core::{MessageId, ThreadId};

pub const PLAN: &str = "plan";
pub const LIGHTLOOP: &str = "lightloop";
pub const LATTICE: &str = "lattice";
pub const BOSS: &str = "boss";

/// The version of the contract texts stamped on root messages.
pub const CONTRACT_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq)]
pub enum WorkflowSlot {
    Plan,
    LightLoop(Box<LightLoopSlot>),
    /// A Lattice Run owns the session; the slot is a projection of the Run the controller keeps.
    Lattice(LatticeSlot),
    /// A Boss tree's root (the person's entry) or one of its workers.
    Boss(BossSlot),
    /// Owned by a workflow this build does not load: never rewritten.
    Unknown(Value),
}

/// An active Light Loop. "Reviewing" is derived (a reviewer is bound), never stored.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LightLoopSlot {
    pub instructions: String,
    /// Rejections allowed before the loop ends as `iteration_exhausted`; none means unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// The executor's durable claim of completion, awaiting review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_request: Option<StopRequest>,
    #[serde(default)]
    pub review: ReviewState,
}

/// The Lattice slot: which Run, its mode, and whether its Step is executing (the Lattice tools
/// and section are withdrawn then, LAT-14).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatticeSlot {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub run_id: troupe_core::LatticeRunId,
    pub mode: troupe_core::lattice::Mode,
    #[serde(default)]
    pub executing: bool,
}

/// The Boss slot. A worker names its role and its tree's root; the tree itself is read from
/// thread parents and these slots only (BOSS-1).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BossSlot {
    pub role: troupe_core::boss::BossRole,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub root_session_id: Option<troupe_core::SessionId>,
    /// Standing instructions (the root's for the tree, a worker's for its role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopRequest {
    pub summary: String,
    #[serde(default)]
    pub completed: Vec<String>,
    #[serde(default)]
    pub evidence: Vec<String>,
    #[serde(default)]
    pub limitations: Vec<String>,
    pub requested_at: i64,
    /// The executor's assistant message that made the claim.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub requester_message_id: MessageId,
    /// The reviewer child thread, once bound (before it starts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub reviewer_thread_id: Option<ThreadId>,
    /// Recovery turns given to a reviewer that ended without a verdict.
    #[serde(default)]
    pub review_recovery_attempts: u32,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewState {
    /// Rejections so far.
    #[serde(default)]
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reviewed_at: Option<i64>,
    /// What the last rejection said is still to do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_remaining: Vec<String>,
    /// The last rejection's concrete instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_instructions: Option<String>,
}

impl WorkflowSlot {
    /// Read a stored slot. Anything that is not a well-formed known kind is `Unknown`.
    pub fn from_value(v: &Value) -> WorkflowSlot {
        match v.get("kind").and_then(Value::as_str) {
            Some(PLAN) => WorkflowSlot::Plan,
            Some(LIGHTLOOP) => {
                let mut fields = v.clone();
                if let Some(obj) = fields.as_object_mut() {
                    obj.remove("kind");
                }
                match serde_json::from_value::<LightLoopSlot>(fields) {
                    Ok(ll) if !ll.instructions.trim().is_empty() => {
                        WorkflowSlot::LightLoop(Box::new(ll))
                    }
                    _ => WorkflowSlot::Unknown(v.clone()),
                }
            }
            Some(LATTICE) => {
                let mut fields = v.clone();
                if let Some(obj) = fields.as_object_mut() {
                    obj.remove("kind");
                }
                match serde_json::from_value::<LatticeSlot>(fields) {
                    Ok(l) => WorkflowSlot::Lattice(l),
                    Err(_) => WorkflowSlot::Unknown(v.clone()),
                }
            }
            Some(BOSS) => {
                let mut fields = v.clone();
                if let Some(obj) = fields.as_object_mut() {
                    obj.remove("kind");
                }
                match serde_json::from_value::<BossSlot>(fields) {
                    Ok(b)
                        if b.role == troupe_core::boss::BossRole::Boss
                            || b.root_session_id.is_some() =>
                    {
                        WorkflowSlot::Boss(b)
                    }
                    _ => WorkflowSlot::Unknown(v.clone()),
                }
            }
            _ => WorkflowSlot::Unknown(v.clone()),
        }
    }

    /// The slot stored on a thread, if any.
    pub fn of(workflow: Option<&Value>) -> Option<WorkflowSlot> {
        workflow.map(WorkflowSlot::from_value)
    }

    pub fn to_value(&self) -> Value {
        match self {
            WorkflowSlot::Plan => serde_json::json!({"kind": PLAN}),
            WorkflowSlot::LightLoop(ll) => {
                let mut v = serde_json::to_value(ll).unwrap_or_else(|_| serde_json::json!({}));
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("kind".into(), Value::String(LIGHTLOOP.into()));
                }
                v
            }
            WorkflowSlot::Lattice(l) => {
                let mut v = serde_json::to_value(l).unwrap_or_else(|_| serde_json::json!({}));
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("kind".into(), Value::String(LATTICE.into()));
                }
                v
            }
            WorkflowSlot::Boss(b) => {
                let mut v = serde_json::to_value(b).unwrap_or_else(|_| serde_json::json!({}));
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("kind".into(), Value::String(BOSS.into()));
                }
                v
            }
            WorkflowSlot::Unknown(v) => v.clone(),
        }
    }

    /// The kind as stored (`plan`, `lightloop`, or whatever an unknown slot says).
    pub fn kind(&self) -> String {
        match self {
            WorkflowSlot::Plan => PLAN.into(),
            WorkflowSlot::LightLoop(_) => LIGHTLOOP.into(),
            WorkflowSlot::Lattice(_) => LATTICE.into(),
            WorkflowSlot::Boss(_) => BOSS.into(),
            WorkflowSlot::Unknown(v) => v
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string(),
        }
    }

    pub fn lattice(&self) -> Option<&LatticeSlot> {
        match self {
            WorkflowSlot::Lattice(l) => Some(l),
            _ => None,
        }
    }

    pub fn boss(&self) -> Option<&BossSlot> {
        match self {
            WorkflowSlot::Boss(b) => Some(b),
            _ => None,
        }
    }

    pub fn light_loop(&self) -> Option<&LightLoopSlot> {
        match self {
            WorkflowSlot::LightLoop(ll) => Some(ll),
            _ => None,
        }
    }
}

/// Whether the thread's slot holds Plan.
pub fn plan_active(workflow: Option<&Value>) -> bool {
    matches!(WorkflowSlot::of(workflow), Some(WorkflowSlot::Plan))
}

/// Whether the thread may write Blueprints: Plan or Lattice is active.
pub fn blueprint_writes_allowed(workflow: Option<&Value>) -> bool {
    matches!(
        WorkflowSlot::of(workflow),
        Some(WorkflowSlot::Plan | WorkflowSlot::Lattice(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_kind_round_trips_byte_for_byte() {
        let stored = json!({"kind": "crew", "role": "captain", "extra": [1, 2]});
        let slot = WorkflowSlot::from_value(&stored);
        assert_eq!(slot.kind(), "crew");
        assert_eq!(slot.to_value(), stored);
    }

    #[test]
    fn malformed_lightloop_is_kept_as_stored() {
        let stored = json!({"kind": "lightloop", "instructions": 5});
        assert_eq!(
            WorkflowSlot::from_value(&stored),
            WorkflowSlot::Unknown(stored.clone())
        );
        let blank = json!({"kind": "lightloop", "instructions": "  "});
        assert!(matches!(
            WorkflowSlot::from_value(&blank),
            WorkflowSlot::Unknown(_)
        ));
    }

    #[test]
    fn lattice_round_trips_and_a_malformed_one_is_kept_as_stored() {
        let stored = json!({"kind": "lattice", "run_id": 7, "mode": "auto", "executing": true});
        let slot = WorkflowSlot::from_value(&stored);
        assert_eq!(slot.lattice().map(|l| l.run_id.0), Some(7));
        assert_eq!(slot.to_value(), stored);
        let bad = json!({"kind": "lattice", "run_id": "x"});
        assert_eq!(
            WorkflowSlot::from_value(&bad),
            WorkflowSlot::Unknown(bad.clone())
        );
    }

    #[test]
    fn boss_root_and_worker_round_trip_and_a_rootless_worker_is_kept_as_stored() {
        let root = json!({"kind": "boss", "role": "boss", "instructions": "ship it"});
        assert!(WorkflowSlot::from_value(&root).boss().is_some());
        assert_eq!(WorkflowSlot::from_value(&root).to_value(), root);
        let worker =
            json!({"kind": "boss", "role": "worker", "worker_role": "code", "root_session_id": 4});
        assert_eq!(WorkflowSlot::from_value(&worker).to_value(), worker);
        let orphan = json!({"kind": "boss", "role": "worker"});
        assert_eq!(
            WorkflowSlot::from_value(&orphan),
            WorkflowSlot::Unknown(orphan.clone())
        );
    }

    #[test]
    fn lightloop_round_trips_with_its_kind() {
        let ll = LightLoopSlot {
            instructions: "ship it".into(),
            max_iterations: Some(3),
            stop_request: None,
            review: ReviewState::default(),
        };
        let v = WorkflowSlot::LightLoop(Box::new(ll.clone())).to_value();
        assert_eq!(v["kind"], "lightloop");
        assert_eq!(
            WorkflowSlot::from_value(&v),
            WorkflowSlot::LightLoop(Box::new(ll))
        );
    }
}
