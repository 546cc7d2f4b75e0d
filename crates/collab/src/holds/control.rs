//! Buttons under a line read as possibly control (§15.1, HOLD-B1): Stop makes the stop the
//! line meant; Continue lifts what it can over what the line names. Pressed once per line:
//! the press is recorded on the line and a repeat does nothing.

use super::lift::lift_in;
use super::make::HoldSpec;
use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use troupe_core::hold::control::ControlAction;
use troupe_core::hold::reopen::LiftTrigger;
use troupe_core::hold::{Hold, HoldScope, HoldSource, LiftedBy};
use troupe_core::{HoldId, PlanId, SessionMessageId};

/// `POST /v1/messages/:id/control`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlRequest {
    /// `stop` or `continue`; on a ceiling card its options; on a replacement card `use_new`,
    /// `change` or `keep_old`.
    pub action: String,
    /// Accepted for the seed's per-job buttons; those are not offered, so it must be absent.
    pub task_id: Option<PlanId>,
}

/// What a press did.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ControlOutcome {
    pub made: Vec<HoldId>,
    pub lifted: Vec<HoldId>,
    /// A ceiling card's answer (B §7.3), when the line was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<crate::ceiling::CeilingAnswer>,
    /// A replacement card's answer (C §16 CW-18), when the line was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<crate::checks::replacement::ReplacementAnswer>,
    /// A reflection's proposal answered (B §10.2: adopt or no), when the line was its card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reflection: Option<troupe_store::ReflectionRecord>,
}

/// Whether a hold in force is within what the line named, for Continue's old rule: the same
/// scope, or for a Bot every hold on its work.
fn within(hold: &Hold, named: &[HoldScope]) -> bool {
    named.iter().any(|n| {
        *n == hold.scope
            || match (n, &hold.scope) {
                (HoldScope::Bot { bot_id: b }, HoldScope::BotPlan { bot_id, .. })
                | (HoldScope::Bot { bot_id: b }, HoldScope::Turn { bot_id, .. }) => b == bot_id,
                (HoldScope::Everything, _) => true,
                _ => false,
            }
    })
}

impl Collab {
    pub async fn press_control(
        &self,
        id: SessionMessageId,
        req: ControlRequest,
    ) -> Result<ControlOutcome, CollabError> {
        let line = self.store().read(|tx| tx.line(id))?;
        if line
            .control
            .as_ref()
            .is_some_and(|c| c["kind"] == "ceiling")
        {
            let answer = self.answer_ceiling(&line, &req.action)?;
            return Ok(ControlOutcome {
                ceiling: Some(answer),
                ..ControlOutcome::default()
            });
        }
        if let Some(c) = line.control.as_ref().filter(|c| c["kind"] == "reflection") {
            let adopt = match req.action.as_str() {
                "adopt" => true,
                "no" => false,
                other => {
                    return Err(CollabError::invalid(format!(
                        "action: '{other}' is not adopt or no"
                    )));
                }
            };
            let id = c["reflection_id"].as_i64().unwrap_or_default();
            let answered = self.answer_reflection(id, adopt).map_err(|e| match e {
                CollabError::Conflict { message, .. } => CollabError::Conflict {
                    code: "card_closed",
                    message,
                },
                other => other,
            })?;
            return Ok(ControlOutcome {
                reflection: Some(answered),
                ..ControlOutcome::default()
            });
        }
        if line
            .control
            .as_ref()
            .is_some_and(|c| c["kind"] == "replacement")
        {
            if req.task_id.is_some() {
                return Err(CollabError::invalid(
                    "task_id: a replacement card has no per-job buttons",
                ));
            }
            let answer = self.answer_replacement(&line, &req.action).await?;
            return Ok(ControlOutcome {
                replacement: Some(answer),
                ..ControlOutcome::default()
            });
        }
        let action = match req.action.as_str() {
            "stop" => ControlAction::Stop,
            "continue" => ControlAction::Continue,
            other => {
                return Err(CollabError::invalid(format!(
                    "action: '{other}' is not stop or continue"
                )));
            }
        };
        if req.task_id.is_some() {
            return Err(CollabError::invalid(
                "task_id: no per-job button is offered on this line",
            ));
        }
        let Some(control) = line.control.clone() else {
            return Err(CollabError::invalid(format!("message {id} has no buttons")));
        };
        let offer: Vec<ControlAction> =
            serde_json::from_value(control["offer"].clone()).unwrap_or_default();
        if !offer.contains(&action) {
            return Err(CollabError::invalid(format!(
                "message {id} has no {} button",
                req.action
            )));
        }
        if let Some(done) = &line.control_acted {
            return Ok(serde_json::from_value(done["outcome"].clone()).unwrap_or_default());
        }
        let scopes: Vec<HoldScope> =
            serde_json::from_value(control["scopes"].clone()).unwrap_or_default();
        let mut out = ControlOutcome::default();
        match action {
            ControlAction::Stop => {
                for scope in scopes {
                    let m = self
                        .make_hold(HoldSpec {
                            scope,
                            source: HoldSource::UserButton,
                            source_message_id: Some(id),
                            session_id: Some(line.session_id),
                            lift_on_next_user_message: true,
                            cancel: false,
                            composer_stop: false,
                        })
                        .await?;
                    out.made.push(m.hold.id);
                }
            }
            ControlAction::Continue => {
                let after = self.store().write(|tx| {
                    let ids: Vec<HoldId> = tx
                        .holds_in_force()?
                        .into_iter()
                        .filter(|h| !h.is_app_hold() && within(h, &scopes))
                        .map(|h| h.id)
                        .collect();
                    lift_in(
                        tx,
                        &ids,
                        LiftedBy::UserButton,
                        Some(id),
                        LiftTrigger::Button,
                    )
                })?;
                out.lifted = after.lifted.iter().map(|h| h.id).collect();
                self.drive_lifted(&after).await;
            }
        }
        let acted = serde_json::json!({"action": req.action, "outcome": out});
        let first = self.store().write(|tx| {
            let first = tx.press_line_control(id, &acted)?;
            if first {
                let ids: Vec<HoldId> = out.made.iter().chain(&out.lifted).copied().collect();
                super::log::entry(
                    tx,
                    "control_acted",
                    &ids,
                    serde_json::json!({"message_id": id, "action": req.action}),
                )?;
            }
            Ok(first)
        })?;
        if !first {
            // Two presses raced: the first one's record stands.
            let line = self.store().read(|tx| tx.line(id))?;
            return Ok(line
                .control_acted
                .and_then(|d| serde_json::from_value(d["outcome"].clone()).ok())
                .unwrap_or_default());
        }
        Ok(out)
    }
}
