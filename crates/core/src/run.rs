//! Runs: one execution of a thread's loop, from a trigger to an end reason.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Completed,
    Failed,
    Stopped,
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Stopped => "stopped",
            RunStatus::Interrupted => "interrupted",
        }
    }
    pub fn is_live(self) -> bool {
        self == RunStatus::Running
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RunStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "running" => RunStatus::Running,
            "completed" => RunStatus::Completed,
            "failed" => RunStatus::Failed,
            "stopped" => RunStatus::Stopped,
            "interrupted" => RunStatus::Interrupted,
            other => return Err(format!("unknown run status '{other}'")),
        })
    }
}

/// Why a run ended. Every terminal run has one (the store enforces it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", content = "detail", rename_all = "snake_case")]
pub enum EndReason {
    /// The model ended the task.
    Completed,
    /// Nothing was left to do when the loop looked (e.g. a forced drive with no work).
    NoWork,
    /// A model call failed after its retries; detail names endpoint and cause.
    ModelError(String),
    /// The run hit its hop limit.
    HopLimit(u32),
    /// A person (or a domain) stopped it.
    Stopped,
    /// Its process died; found at startup.
    Interrupted,
    /// The kernel itself failed (store error); detail says what.
    Internal(String),
    /// A layer above ended it with a code of its own (a segment that delegated, one whose job
    /// needs attention…). The run counts as completed: the layer's records say what follows.
    Consumer {
        code: String,
        detail: Option<String>,
    },
}

impl EndReason {
    pub fn code(&self) -> &str {
        match self {
            EndReason::Consumer { code, .. } => code,
            EndReason::Completed => "completed",
            EndReason::NoWork => "no_work",
            EndReason::ModelError(_) => "model_error",
            EndReason::HopLimit(_) => "hop_limit",
            EndReason::Stopped => "stopped",
            EndReason::Interrupted => "interrupted",
            EndReason::Internal(_) => "internal",
        }
    }
    pub fn detail(&self) -> Option<String> {
        match self {
            EndReason::ModelError(d) | EndReason::Internal(d) => Some(d.clone()),
            EndReason::HopLimit(n) => Some(n.to_string()),
            EndReason::Consumer { detail, .. } => detail.clone(),
            _ => None,
        }
    }
    pub fn from_parts(code: &str, detail: Option<String>) -> Result<Self, String> {
        let d = detail.clone().unwrap_or_default();
        Ok(match code {
            "completed" => EndReason::Completed,
            "no_work" => EndReason::NoWork,
            "model_error" => EndReason::ModelError(d),
            "hop_limit" => EndReason::HopLimit(d.parse().unwrap_or(0)),
            "stopped" => EndReason::Stopped,
            "interrupted" => EndReason::Interrupted,
            "internal" => EndReason::Internal(d),
            "" => return Err("a blank end reason".into()),
            other => EndReason::Consumer {
                code: other.to_string(),
                detail,
            },
        })
    }
    /// The status a run ending this way takes.
    pub fn status(&self) -> RunStatus {
        match self {
            EndReason::Completed | EndReason::NoWork | EndReason::Consumer { .. } => {
                RunStatus::Completed
            }
            EndReason::ModelError(_) | EndReason::HopLimit(_) | EndReason::Internal(_) => {
                RunStatus::Failed
            }
            EndReason::Stopped => RunStatus::Stopped,
            EndReason::Interrupted => RunStatus::Interrupted,
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail() {
            Some(d) => write!(f, "{}: {d}", self.code()),
            None => f.write_str(self.code()),
        }
    }
}

/// Limits on one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunLimits {
    /// A run that makes this many model calls ends with `hop_limit`.
    pub max_hops: u32,
    /// Every this many hops the model is reminded it has been going long. Tools stay.
    pub reminder_every: u32,
    /// Command and tool call records kept per run.
    pub kept_calls: u32,
    /// Failures of one tool in a row that get reported in the run's record.
    pub failure_streak_report: u32,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_hops: 400,
            reminder_every: 40,
            kept_calls: 80,
            failure_streak_report: 3,
        }
    }
}

/// The reminder added to a model call at every `reminder_every`th hop, or None.
pub fn long_run_reminder(hop: u32, limits: &RunLimits) -> Option<String> {
    if hop == 0 || limits.reminder_every == 0 || !hop.is_multiple_of(limits.reminder_every) {
        return None;
    }
    Some(format!(
        "You have taken {hop} steps on this task. If you are stuck or repeating yourself, \
         step back: say what is blocking you, or end the turn with what you have."
    ))
}

/// What the model is told when its model server could not read its last answer (a tool call
/// written as JSON in its text or a code fence, or a call's JSON broken by an unescaped quote).
pub fn unreadable_answer_note(server_said: &str) -> String {
    format!(
        "Runtime note: your last answer could not be read by the model server ({server_said}), \
         so nothing of it was kept or run. Answer again: in plain words if words are the \
         answer; to use a tool, make the tool call itself, not the call written as JSON in \
         your text or in a code fence, with its arguments one whole JSON object (inside a \
         string, write a quote as \\\" and a line break as \\n)."
    )
}

/// Counts failures of each tool in a row and says when a streak reaches the report threshold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FailureStreaks {
    current: Option<(String, u32)>,
    repeated: crate::repeat::RepeatedCall,
}

impl FailureStreaks {
    /// Feed one call: the report line for the run's record (see [`Self::observe`]), and the
    /// note the model reads with the call's result when it repeats a call unchanged.
    pub fn observe_call(
        &mut self,
        tool: &str,
        arguments: &str,
        failed: bool,
        result: &str,
        started_effect: bool,
        threshold: u32,
    ) -> (Option<String>, Option<String>) {
        let note = self
            .repeated
            .observe(tool, arguments, failed, result, started_effect);
        (self.observe(tool, failed, threshold), note)
    }

    /// Feed one tool outcome; returns a report line exactly when a streak reaches `threshold`.
    pub fn observe(&mut self, tool: &str, failed: bool, threshold: u32) -> Option<String> {
        if !failed {
            if self.current.as_ref().is_some_and(|(t, _)| t == tool) {
                self.current = None;
            }
            return None;
        }
        let count = match &mut self.current {
            Some((t, n)) if t == tool => {
                *n += 1;
                *n
            }
            _ => {
                self.current = Some((tool.to_string(), 1));
                1
            }
        };
        (count == threshold).then(|| format!("{tool} failed {count} times in a row"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reminder_every_forty_hops_only() {
        let l = RunLimits::default();
        assert!(long_run_reminder(39, &l).is_none());
        assert!(long_run_reminder(40, &l).unwrap().contains("40 steps"));
        assert!(long_run_reminder(80, &l).is_some());
        assert!(long_run_reminder(0, &l).is_none());
    }

    #[test]
    fn three_failures_of_one_tool_in_a_row_are_reported_once() {
        let mut s = FailureStreaks::default();
        assert_eq!(s.observe("shell", true, 3), None);
        assert_eq!(s.observe("shell", true, 3), None);
        assert_eq!(
            s.observe("shell", true, 3).as_deref(),
            Some("shell failed 3 times in a row")
        );
        assert_eq!(s.observe("shell", true, 3), None);
    }

    #[test]
    fn a_success_or_another_tool_breaks_the_streak() {
        let mut s = FailureStreaks::default();
        s.observe("shell", true, 3);
        s.observe("shell", true, 3);
        s.observe("shell", false, 3);
        assert_eq!(s.observe("shell", true, 3), None);
        s.observe("read_file", true, 3);
        assert_eq!(s.observe("shell", true, 3), None);
    }

    #[test]
    fn end_reasons_round_trip_and_map_to_status() {
        for r in [
            EndReason::Completed,
            EndReason::ModelError("x".into()),
            EndReason::HopLimit(400),
            EndReason::Stopped,
            EndReason::Interrupted,
        ] {
            assert_eq!(EndReason::from_parts(r.code(), r.detail()).unwrap(), r);
        }
        assert_eq!(EndReason::Stopped.status(), RunStatus::Stopped);
        assert_eq!(EndReason::HopLimit(1).status(), RunStatus::Failed);
    }
}
