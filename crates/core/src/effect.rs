//! The effect ledger's states. A side effect records its start before acting and its outcome
//! after; what was started is never run again.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectOutcome {
    Started,
    Succeeded,
    /// A guard refused it before it started.
    Refused,
    Failed,
    /// Cut off by abort or crash: whether it happened is not known.
    Unknown,
}

impl EffectOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            EffectOutcome::Started => "started",
            EffectOutcome::Succeeded => "succeeded",
            EffectOutcome::Refused => "refused",
            EffectOutcome::Failed => "failed",
            EffectOutcome::Unknown => "unknown",
        }
    }
    /// Only a started effect may take an outcome; every other state is final.
    pub fn settle(self, outcome: EffectOutcome) -> Result<EffectOutcome, String> {
        match (self, outcome) {
            (EffectOutcome::Started, EffectOutcome::Started) => {
                Err("an effect cannot start twice".into())
            }
            (EffectOutcome::Started, o) => Ok(o),
            (s, o) => Err(format!(
                "effect already settled as {} (cannot become {})",
                s.as_str(),
                o.as_str()
            )),
        }
    }
}

impl FromStr for EffectOutcome {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "started" => EffectOutcome::Started,
            "succeeded" => EffectOutcome::Succeeded,
            "refused" => EffectOutcome::Refused,
            "failed" => EffectOutcome::Failed,
            "unknown" => EffectOutcome::Unknown,
            other => return Err(format!("unknown effect outcome '{other}'")),
        })
    }
}

/// The ledger key of one tool call: the assistant message that asked for it and its call id.
pub fn effect_key(message_id: crate::MessageId, call_id: &str) -> String {
    format!("{}:{call_id}", message_id.0)
}

/// The tool result the model reads when a call was already started before.
pub fn repeated_effect_notice(previous: EffectOutcome) -> String {
    format!(
        "repeated_effect: this exact call was already started earlier (outcome: {}); it was not run again. \
         Check the workspace to see whether it took effect before repeating it.",
        previous.as_str()
    )
}

/// A call whose outcome is unknown, as a person and the next turn's model are told of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnknownCall {
    pub effect_id: crate::EffectId,
    pub tool: String,
    /// What the call did, as the ledger summarised it (the command, for `shell`).
    pub summary: String,
    /// Epoch milliseconds.
    pub started_at: i64,
    /// When it was marked unknown (the stop or the recovery that cut it off).
    pub cut_at: i64,
}

impl UnknownCall {
    fn line(&self) -> String {
        // Summaries start with the tool's name (`shell: …` for built-ins, `name {…}` for
        // registered tools); the line names the tool already.
        let what = self
            .summary
            .strip_prefix(self.tool.as_str())
            .and_then(|rest| rest.strip_prefix(": ").or_else(|| rest.strip_prefix(' ')))
            .unwrap_or(&self.summary);
        format!(
            "- `{}`: {} (started {})",
            self.tool,
            what,
            crate::time::iso_utc(self.started_at)
        )
    }
}

/// The note the next turn's context carries, once, about calls cut off before they reported.
pub fn unknown_effect_note(calls: &[UnknownCall]) -> String {
    let lines: Vec<String> = calls.iter().map(UnknownCall::line).collect();
    format!(
        "Runtime note: the outcome of {} is unknown. It was cut off (stopped or interrupted) \
         before it reported a result, so it may or may not have taken effect:\n{}\n\
         Check what it did before you repeat it.",
        if calls.len() == 1 {
            "this earlier tool call"
        } else {
            "these earlier tool calls"
        },
        lines.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_tool_command_and_time() {
        let note = unknown_effect_note(&[UnknownCall {
            effect_id: crate::EffectId(3),
            tool: "shell".into(),
            summary: "sleep 1000".into(),
            started_at: 1_709_214_307_000,
            cut_at: 1_709_214_308_000,
        }]);
        assert!(note.contains("this earlier tool call"), "{note}");
        assert!(
            note.contains("- `shell`: sleep 1000 (started 2024-02-29T13:45:07Z)"),
            "{note}"
        );
        let two = UnknownCall {
            effect_id: crate::EffectId(4),
            tool: "write_file".into(),
            summary: "write_file {\"path\":\"a\"}".into(),
            started_at: 0,
            cut_at: 0,
        };
        let builtin = UnknownCall {
            effect_id: crate::EffectId(5),
            tool: "shell".into(),
            summary: "shell: sleep 300".into(),
            started_at: 0,
            cut_at: 0,
        };
        assert!(unknown_effect_note(&[builtin]).contains("- `shell`: sleep 300 (started"));
        let note = unknown_effect_note(&[two.clone(), two]);
        assert!(note.contains("these earlier tool calls"), "{note}");
        assert!(note.contains("- `write_file`: {\"path\":\"a\"}"), "{note}");
    }

    #[test]
    fn a_settled_effect_cannot_change() {
        let done = EffectOutcome::Started
            .settle(EffectOutcome::Succeeded)
            .unwrap();
        assert!(done.settle(EffectOutcome::Failed).is_err());
        assert!(
            EffectOutcome::Unknown
                .settle(EffectOutcome::Succeeded)
                .is_err()
        );
        assert!(
            EffectOutcome::Started
                .settle(EffectOutcome::Started)
                .is_err()
        );
    }
}
