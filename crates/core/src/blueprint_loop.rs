//! A BlueprintLoop: one execution of a Blueprint note, kept running until an independent audit
//! approves it. This module holds the record and the one rule every status change obeys; what
//! each event does to a loop is the workflow layer's machine, and the store writes the record
//! and its session bindings through a single transition point.

use crate::{MessageId, ThreadId};
use serde::{Deserialize, Serialize};
use std::fmt;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = i64))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BlueprintLoopId(pub i64);

impl BlueprintLoopId {
    /// How the loop's continuation guard names it.
    pub fn guard_ref(self) -> String {
        format!("blueprint_loop:{}", self.0)
    }
}

impl fmt::Display for BlueprintLoopId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::str::FromStr for BlueprintLoopId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        s.trim()
            .parse::<i64>()
            .map(BlueprintLoopId)
            .map_err(|_| format!("'{s}' is not a valid BlueprintLoop id (expected a number)"))
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopStatus {
    /// Created, not started yet.
    Armed,
    Running,
    /// A stop intent is under review by the bound audit session.
    Auditing,
    Completed,
    Failed,
    Cancelled,
}

impl LoopStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LoopStatus::Armed => "armed",
            LoopStatus::Running => "running",
            LoopStatus::Auditing => "auditing",
            LoopStatus::Completed => "completed",
            LoopStatus::Failed => "failed",
            LoopStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "armed" => LoopStatus::Armed,
            "running" => LoopStatus::Running,
            "auditing" => LoopStatus::Auditing,
            "completed" => LoopStatus::Completed,
            "failed" => LoopStatus::Failed,
            "cancelled" => LoopStatus::Cancelled,
            other => return Err(format!("unknown BlueprintLoop status '{other}'")),
        })
    }

    pub fn is_active(self) -> bool {
        matches!(
            self,
            LoopStatus::Armed | LoopStatus::Running | LoopStatus::Auditing
        )
    }

    /// The session phase this status projects onto the bound sessions (`None`: no binding).
    pub fn phase(self) -> Option<&'static str> {
        match self {
            LoopStatus::Running => Some("running"),
            LoopStatus::Auditing => Some("auditing"),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid BlueprintLoop transition from {from} to {to}")]
pub struct InvalidTransition {
    pub from: &'static str,
    pub to: &'static str,
}

/// The allowed status changes. A completed loop may be completed again (idempotent); failed and
/// cancelled absorb nothing else; there is no waiting status.
pub fn check_transition(from: LoopStatus, to: LoopStatus) -> Result<(), InvalidTransition> {
    use LoopStatus::*;
    let ok = matches!(
        (from, to),
        (Armed, Running | Failed | Cancelled)
            | (Running, Auditing | Completed | Failed | Cancelled)
            | (Auditing, Running | Completed | Failed | Cancelled)
            | (Completed, Completed)
    );
    if ok {
        Ok(())
    } else {
        Err(InvalidTransition {
            from: from.as_str(),
            to: to.as_str(),
        })
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunMode {
    /// The session the loop was started from executes it.
    Current,
    /// A fresh session on the same Bot and workspace.
    New,
    /// A fresh session working in a git worktree of the session's workspace.
    Worktree,
}

impl RunMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RunMode::Current => "current",
            RunMode::New => "new",
            RunMode::Worktree => "worktree",
        }
    }
}

/// Who made a loop: a person, or a Lattice Run for the Step it is executing.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopSource {
    #[default]
    User,
    Lattice,
}

impl LoopSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LoopSource::User => "user",
            LoopSource::Lattice => "lattice",
        }
    }
}

/// The executor's durable claim that the Blueprint is carried out, awaiting audit.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopStopRequest {
    pub summary: String,
    #[serde(default)]
    pub completed: Vec<String>,
    #[serde(default)]
    pub evidence: Vec<String>,
    #[serde(default)]
    pub remaining: Vec<String>,
    pub requested_at: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub requester_thread_id: ThreadId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub requester_message_id: MessageId,
    /// Recovery turns given to an auditor that ended without a verdict.
    #[serde(default)]
    pub review_recovery_attempts: u32,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditState {
    /// Rejections so far.
    #[serde(default)]
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_audited_at: Option<i64>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlueprintLoop {
    pub id: BlueprintLoopId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub note_id: i64,
    /// The Blueprint version the loop was started from.
    pub note_version: i64,
    pub title: String,
    /// The execution thread (the session's kernel thread).
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub thread_id: ThreadId,
    /// The thread the loop was created from (differs from `thread_id` in new/worktree mode).
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub origin_thread_id: ThreadId,
    /// The host-selected auditor agent.
    pub audit_agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub audit_thread_id: Option<ThreadId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_request: Option<LoopStopRequest>,
    pub status: LoopStatus,
    pub run_mode: RunMode,
    /// Who made it; records from before sources existed read as `user`.
    #[serde(default)]
    pub source: LoopSource,
    /// A Lattice loop's digest of the Blueprint content it was made for (its fingerprint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_digest: Option<String>,
    /// The run-specific instruction, given with the Blueprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_prompt: Option<String>,
    /// Rejections allowed before the loop fails as `iteration_exhausted`; none: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// The worktree the execution works in (worktree mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// The approval verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub audit: AuditState,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    pub updated_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use LoopStatus::*;

    const ALL: [LoopStatus; 6] = [Armed, Running, Auditing, Completed, Failed, Cancelled];

    #[test]
    fn transition_table_is_exactly_the_seeds() {
        let allowed = [
            (Armed, Running),
            (Armed, Failed),
            (Armed, Cancelled),
            (Running, Auditing),
            (Running, Completed),
            (Running, Failed),
            (Running, Cancelled),
            (Auditing, Running),
            (Auditing, Completed),
            (Auditing, Failed),
            (Auditing, Cancelled),
            (Completed, Completed),
        ];
        for from in ALL {
            for to in ALL {
                assert_eq!(
                    check_transition(from, to).is_ok(),
                    allowed.contains(&(from, to)),
                    "{from:?} -> {to:?}"
                );
            }
        }
    }

    #[test]
    fn phase_is_present_only_for_running_and_auditing() {
        for s in ALL {
            assert_eq!(
                s.phase().is_some(),
                matches!(s, Running | Auditing),
                "{s:?}"
            );
        }
        assert_eq!(Auditing.phase(), Some("auditing"));
    }

    #[test]
    fn status_names_round_trip() {
        for s in ALL {
            assert_eq!(LoopStatus::parse(s.as_str()), Ok(s));
        }
        assert!(LoopStatus::parse("waiting").is_err());
    }
}
