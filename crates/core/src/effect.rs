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

#[cfg(test)]
mod tests {
    use super::*;

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
