//! The hold record (digest A §14.1): what a person's stop covers, who made it, and what it
//! stopped. A hold is `in_force` until the person lifts it, then `lifted` for good; it is never
//! deleted. Its scope and extra targets are fixed when it is made.

use crate::plan::PlanStatus;
use crate::{BotId, CheckBackId, HoldId, PlanId, RunId, SessionId, SessionMessageId, ThreadId};
use crate::{TicketId, WorkItemId};
use serde::{Deserialize, Serialize};

/// What a hold covers, by its refs.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HoldScope {
    /// Every Bot's work, and work that would start.
    Everything,
    /// One Bot, in every conversation.
    Bot {
        bot_id: BotId,
    },
    /// A conversation, and the jobs whose home it is (their work in Bot↔Bot directs too).
    Session {
        session_id: SessionId,
    },
    /// A job and its tickets.
    Plan {
        plan_id: PlanId,
    },
    Ticket {
        ticket_id: TicketId,
    },
    /// One Bot's work on one job.
    BotPlan {
        bot_id: BotId,
        plan_id: PlanId,
    },
    /// One turn, what it booked and whom its lines would wake: its thread while the hold
    /// stands. `session_id` is where it spoke; `plan_id` its job, if it had one.
    Turn {
        run_id: RunId,
        thread_id: ThreadId,
        bot_id: BotId,
        session_id: SessionId,
        plan_id: Option<PlanId>,
    },
}

impl HoldScope {
    pub fn kind(&self) -> &'static str {
        match self {
            HoldScope::Everything => "everything",
            HoldScope::Bot { .. } => "bot",
            HoldScope::Session { .. } => "session",
            HoldScope::Plan { .. } => "plan",
            HoldScope::Ticket { .. } => "ticket",
            HoldScope::BotPlan { .. } => "bot_plan",
            HoldScope::Turn { .. } => "turn",
        }
    }

    /// The job this scope is about as a whole, if any (HOLD-P1, P8: what may be parked).
    pub fn whole_plan(&self) -> Option<PlanId> {
        match self {
            HoldScope::Plan { plan_id } => Some(*plan_id),
            _ => None,
        }
    }
}

/// Coverage a hold gained at creation beyond its scope (HOLD-6, DEL-29): never changed after.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HoldTarget {
    /// Another Bot's turn opened by a covered turn's line (≤3 handoffs down).
    Turn {
        run_id: RunId,
        thread_id: ThreadId,
        bot_id: BotId,
    },
    /// A helper's work on a job, reached along an open delegation.
    BotPlan { bot_id: BotId, plan_id: PlanId },
    /// A Bot↔Bot direct holding handed-on work.
    Direct { session_id: SessionId },
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldStatus {
    InForce,
    Lifted,
}

impl HoldStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            HoldStatus::InForce => "in_force",
            HoldStatus::Lifted => "lifted",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "in_force" => Ok(HoldStatus::InForce),
            "lifted" => Ok(HoldStatus::Lifted),
            other => Err(format!("hold status '{other}' is not in_force or lifted")),
        }
    }
}

/// Who made the hold: the person's words, a button or menu, or the app carrying a job's
/// parking over (a group deleted).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldSource {
    UserText,
    UserButton,
    Migration,
}

impl HoldSource {
    pub fn as_str(self) -> &'static str {
        match self {
            HoldSource::UserText => "user_text",
            HoldSource::UserButton => "user_button",
            HoldSource::Migration => "migration",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "user_text" => Ok(HoldSource::UserText),
            "user_button" => Ok(HoldSource::UserButton),
            "migration" => Ok(HoldSource::Migration),
            other => Err(format!(
                "hold source '{other}' is not user_text, user_button or migration"
            )),
        }
    }
}

/// How the person lifted it: a line, or a button (Lift, the spec route, a control button).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LiftedBy {
    UserText,
    UserButton,
}

impl LiftedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            LiftedBy::UserText => "user_text",
            LiftedBy::UserButton => "user_button",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "user_text" => Ok(LiftedBy::UserText),
            "user_button" => Ok(LiftedBy::UserButton),
            other => Err(format!(
                "lifted_by '{other}' is not user_text or user_button"
            )),
        }
    }
}

/// What coverage is judged on: a turn (live, or about to start) of one Bot on one thread.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnFacts {
    pub bot_id: BotId,
    /// The conversation it speaks in.
    pub session_id: SessionId,
    pub thread_id: ThreadId,
    pub plan_id: Option<PlanId>,
    /// The job's home conversation (a session hold covers its jobs everywhere).
    pub plan_home: Option<SessionId>,
    pub ticket_id: Option<TicketId>,
}

/// A turn the hold ended, as it was when it stopped (HOLD-5): enough to reopen it on a note.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoppedTurn {
    pub run_id: RunId,
    pub thread_id: ThreadId,
    pub bot_id: BotId,
    pub session_id: SessionId,
    pub plan_id: Option<PlanId>,
    pub work_item_id: Option<WorkItemId>,
    /// What it was doing when it stopped (the last step's words or call).
    pub last_step: String,
    /// Files it wrote, workspace-relative.
    pub files: Vec<String>,
    /// Its last calls (at most 5), newest last, as "tool: summary".
    pub last_calls: Vec<String>,
}

/// A job the hold parked, with the status to give back on lift (HOLD-P1, P6).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParkedPlan {
    pub plan_id: PlanId,
    pub prior: PlanStatus,
}

/// A stopped turn another hold still covered when this one lifted: it reopens when that one
/// does (HOLD-N4).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldOver {
    pub turn: StoppedTurn,
    /// The hold it was handed from.
    pub from: HoldId,
}

/// What making (and lifting) the hold did, recorded on it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoldEffect {
    pub stopped_turns: Vec<StoppedTurn>,
    /// Other Bots' turns still working in the same jobs, not covered.
    pub working_beside: Vec<RunId>,
    /// Turns whose process groups were still alive after the kill: empty unless a fault.
    pub still_running: Vec<RunId>,
    pub check_backs_set_aside: Vec<CheckBackId>,
    pub plans_parked: Vec<ParkedPlan>,
    /// Lines that got only a read-only answer under this hold, handed back on lift (HOLD-N5).
    pub answered_lines: Vec<SessionMessageId>,
    /// Turns handed to this hold by one that lifted while this still covered them.
    pub held_over: Vec<HeldOver>,
}

/// A person's stop.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    pub id: HoldId,
    pub created_at: i64,
    pub status: HoldStatus,
    pub lifted_at: Option<i64>,
    pub lifted_by: Option<LiftedBy>,
    /// The line that lifted it, when a line did.
    pub lift_message_id: Option<SessionMessageId>,
    pub scope: HoldScope,
    pub targets: Vec<HoldTarget>,
    pub source: HoldSource,
    pub source_message_id: Option<SessionMessageId>,
    /// The conversation whose menu or composer made it.
    pub session_id: Option<SessionId>,
    pub lift_on_next_user_message: bool,
    /// Set when the hold drops the job rather than stopping it for now.
    pub cancel: bool,
    /// Made by a direct's composer Stop (STOP-5): its lift reopens nothing (STOP-6).
    pub composer_stop: bool,
    pub effect: HoldEffect,
}

impl Hold {
    pub fn in_force(&self) -> bool {
        self.status == HoldStatus::InForce
    }

    /// The app's own holds: no line lifts them, only an explicit Lift (HOLD-L7).
    pub fn is_app_hold(&self) -> bool {
        self.source == HoldSource::Migration || self.cancel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_serializes_with_its_kind_and_refs() {
        let s = HoldScope::BotPlan {
            bot_id: BotId(2),
            plan_id: PlanId(7),
        };
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"kind":"bot_plan","bot_id":2,"plan_id":7})
        );
        assert_eq!(serde_json::from_value::<HoldScope>(v).unwrap(), s);
        assert_eq!(s.kind(), "bot_plan");
    }

    #[test]
    fn app_holds_are_migration_or_cancel() {
        let mut h = Hold {
            id: HoldId(1),
            created_at: 0,
            status: HoldStatus::InForce,
            lifted_at: None,
            lifted_by: None,
            lift_message_id: None,
            scope: HoldScope::Everything,
            targets: vec![],
            source: HoldSource::UserText,
            source_message_id: None,
            session_id: None,
            lift_on_next_user_message: true,
            cancel: false,
            composer_stop: false,
            effect: HoldEffect::default(),
        };
        assert!(!h.is_app_hold());
        h.cancel = true;
        assert!(h.is_app_hold());
        h.cancel = false;
        h.source = HoldSource::Migration;
        assert!(h.is_app_hold());
        assert!(HoldSource::parse("legacy").is_err());
    }
}
