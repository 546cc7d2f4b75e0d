//! The pause latch: a stored reason that keeps the drive from starting a thread by itself.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseReason {
    /// A person stopped the run.
    Aborted,
    /// A run ended in an error.
    Failed,
    /// Startup found an unfinished run.
    Interrupted,
    /// A workflow lost its driver.
    Workflow,
}

impl PauseReason {
    pub fn as_str(self) -> &'static str {
        match self {
            PauseReason::Aborted => "aborted",
            PauseReason::Failed => "failed",
            PauseReason::Interrupted => "interrupted",
            PauseReason::Workflow => "workflow",
        }
    }
}

impl FromStr for PauseReason {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "aborted" => PauseReason::Aborted,
            "failed" => PauseReason::Failed,
            "interrupted" => PauseReason::Interrupted,
            "workflow" => PauseReason::Workflow,
            other => return Err(format!("unknown pause reason '{other}'")),
        })
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paused {
    pub reason: PauseReason,
    pub description: Option<String>,
    pub since: i64,
}

/// What a pause request does to the stored latch. The first pause wins; threads that no
/// person watches (unattended, archived) are never latched.
pub fn apply_pause(current: Option<&Paused>, latchable: bool, requested: Paused) -> Option<Paused> {
    match current {
        Some(existing) => Some(existing.clone()),
        None if latchable => Some(requested),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(reason: PauseReason, since: i64) -> Paused {
        Paused {
            reason,
            description: None,
            since,
        }
    }

    #[test]
    fn first_pause_wins() {
        let first = p(PauseReason::Aborted, 1);
        let out = apply_pause(Some(&first), true, p(PauseReason::Failed, 2));
        assert_eq!(out, Some(first));
    }

    #[test]
    fn unlatchable_threads_are_never_latched() {
        assert_eq!(apply_pause(None, false, p(PauseReason::Failed, 2)), None);
        assert!(apply_pause(None, true, p(PauseReason::Failed, 2)).is_some());
    }
}
