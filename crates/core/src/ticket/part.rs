//! A ticket's part (digest B §1.4, T15–T16): a shot or chapter laid out by the lead or the
//! user, never guessed from file names. Each hand-over naming it counts one attempt and
//! records its current file; "Blocked" is read from the ceiling counters, not a stage.

use serde::{Deserialize, Serialize};
use std::fmt;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartStage {
    InProgress,
    Submitted,
    Approved,
    Rework,
}

impl PartStage {
    pub const ALL: [PartStage; 4] = [
        PartStage::InProgress,
        PartStage::Submitted,
        PartStage::Approved,
        PartStage::Rework,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PartStage::InProgress => "in_progress",
            PartStage::Submitted => "submitted",
            PartStage::Approved => "approved",
            PartStage::Rework => "rework",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        PartStage::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                format!("part stage '{s}' is not one of in_progress, submitted, approved, rework")
            })
    }
}

impl fmt::Display for PartStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What moves a part: a hand-over covering it (naming it, or naming no parts at all), and
/// the decision on that hand-over.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PartEvent {
    HandedOver,
    Approved,
    /// A reject, a failing gate after a hand-over, or the user finding fault (also on an
    /// approved part: CP3 sends back the parts the line is filed under).
    SentBack,
}

/// The part's stage after `event`: `in_progress → submitted → approved | rework`, a new
/// hand-over from rework or approved, and a complaint on an approved part.
pub fn next_part_stage(from: PartStage, event: PartEvent) -> Result<PartStage, String> {
    use PartStage::*;
    match (from, event) {
        (_, PartEvent::HandedOver) => Ok(Submitted),
        (Submitted, PartEvent::Approved) => Ok(Approved),
        (Submitted | Approved, PartEvent::SentBack) => Ok(Rework),
        _ => Err(format!("a part at stage {from} cannot take {event:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PartStage::*;

    #[test]
    fn part_stage_table() {
        let cases = [
            (InProgress, PartEvent::HandedOver, Some(Submitted)),
            (InProgress, PartEvent::Approved, None),
            (InProgress, PartEvent::SentBack, None),
            (Submitted, PartEvent::HandedOver, Some(Submitted)),
            (Submitted, PartEvent::Approved, Some(Approved)),
            (Submitted, PartEvent::SentBack, Some(Rework)),
            (Approved, PartEvent::HandedOver, Some(Submitted)),
            (Approved, PartEvent::Approved, None),
            (Approved, PartEvent::SentBack, Some(Rework)),
            (Rework, PartEvent::HandedOver, Some(Submitted)),
            (Rework, PartEvent::Approved, None),
            (Rework, PartEvent::SentBack, None),
        ];
        for (from, event, want) in cases {
            match want {
                Some(to) => assert_eq!(next_part_stage(from, event), Ok(to)),
                None => assert!(
                    next_part_stage(from, event)
                        .unwrap_err()
                        .contains(from.as_str())
                ),
            }
        }
    }

    #[test]
    fn stored_values_round_trip() {
        for p in PartStage::ALL {
            assert_eq!(PartStage::parse(p.as_str()), Ok(p));
            assert_eq!(
                serde_json::to_string(&p).unwrap(),
                format!("\"{}\"", p.as_str())
            );
        }
        assert!(
            PartStage::parse("blocked")
                .unwrap_err()
                .contains("'blocked'")
        );
    }
}
