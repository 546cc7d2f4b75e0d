//! How a person's line is handled once read (§15.1, ADR 0070): only the model reader's
//! reading is carried out, and only a line that is nothing but a stop is executed by the app.
//! A go-on is filed and goes to the Bot; a stop with more words only gets buttons.

use crate::reading::user::{Control, UserReading};
use serde::{Deserialize, Serialize};

/// A button under a line read as possibly control.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlAction {
    Stop,
    Continue,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlHandling {
    /// A pure stop: the holds its words and place name are made at once; not filed, no turn,
    /// no organizer, no line.
    ExecuteStop,
    /// Filed, lifts what keeps the addressed Bots from that job, delivered (HOLD-L11).
    GoOn,
    /// A line for the Bot that lifts nothing (§16, HOLD-L5).
    StatusQuestion,
    /// Delivered as usual with these buttons; nothing executed.
    PossibleControl {
        offer: Vec<ControlAction>,
    },
    Ordinary,
}

impl ControlHandling {
    /// `LineFacts::go_on` for the filed line.
    pub fn go_on(&self) -> bool {
        matches!(self, ControlHandling::GoOn)
    }

    /// `LineFacts::has_control_buttons`: such a line acts only through them (STOP-8).
    pub fn has_buttons(&self) -> bool {
        matches!(self, ControlHandling::PossibleControl { .. })
    }

    /// `LineFacts::status_question`.
    pub fn status_question(&self) -> bool {
        matches!(self, ControlHandling::StatusQuestion)
    }
}

/// The handling of a reading. `by_model` is false when the word lists read the line (reader
/// unset, failing or late): then nothing is carried out (CL-1) and the line goes to the Bot
/// as said, an ordinary line. A listed go-on is not one either: words must never lift what
/// only a reading may (a "continue naming everything" would lift every stop), and a listed
/// status question would keep a line that may carry an instruction from lifting (SQ-4).
pub fn control_handling(reading: &UserReading, by_model: bool) -> ControlHandling {
    if !by_model {
        return ControlHandling::Ordinary;
    }
    match reading.control {
        Control::Stop if reading.only_control => ControlHandling::ExecuteStop,
        // A request with a stop in it must not be swallowed (CL-3).
        Control::Stop => ControlHandling::PossibleControl {
            offer: vec![ControlAction::Stop],
        },
        Control::GoOn => ControlHandling::GoOn,
        Control::Both => ControlHandling::PossibleControl {
            offer: vec![ControlAction::Stop, ControlAction::Continue],
        },
        // Control wins over a status question: a line with an instruction is not one (SQ-4).
        Control::Neither if reading.status_question => ControlHandling::StatusQuestion,
        Control::Neither => ControlHandling::Ordinary,
    }
}

/// The buttons to draw now: Continue only while a stop it would lift still holds what the
/// line names (§15.1, hidden once lifted).
pub fn visible_offer(offer: &[ControlAction], continue_would_lift: bool) -> Vec<ControlAction> {
    offer
        .iter()
        .copied()
        .filter(|a| *a != ControlAction::Continue || continue_would_lift)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ControlAction::{Continue, Stop};

    fn read(control: Control, only_control: bool, status_question: bool) -> UserReading {
        UserReading {
            control,
            only_control,
            status_question,
            objections: vec![],
            let_through: vec![],
            objected_to: vec![],
        }
    }

    #[test]
    fn control_reading_table() {
        let rows: [(&str, UserReading, ControlHandling); 8] = [
            // pure stop: "stop", "can you stop for a moment?", "you haven't stopped"
            (
                "stop",
                read(Control::Stop, true, false),
                ControlHandling::ExecuteStop,
            ),
            // go-on: 「继续」, and "continue with episode 2, …" with more words
            (
                "继续",
                read(Control::GoOn, true, false),
                ControlHandling::GoOn,
            ),
            (
                "continue with episode 2, brighter",
                read(Control::GoOn, false, false),
                ControlHandling::GoOn,
            ),
            // status question: "has it stopped?" reads as control neither
            (
                "has it stopped?",
                read(Control::Neither, false, true),
                ControlHandling::StatusQuestion,
            ),
            // stop + other words: Stop button only
            (
                "先停,把第三镜换成夜景",
                read(Control::Stop, false, false),
                ControlHandling::PossibleControl { offer: vec![Stop] },
            ),
            // stop and go-on: Stop and Continue
            (
                "今天先停,明天继续",
                read(Control::Both, false, false),
                ControlHandling::PossibleControl {
                    offer: vec![Stop, Continue],
                },
            ),
            // not control: "stop if it gets stuck", "Reviewer: stop"
            (
                "stop if it gets stuck",
                read(Control::Neither, false, false),
                ControlHandling::Ordinary,
            ),
            // 算了 alone: a line for the Bot, no buttons
            (
                "算了",
                read(Control::Neither, false, false),
                ControlHandling::Ordinary,
            ),
        ];
        for (line, reading, want) in rows {
            assert_eq!(control_handling(&reading, true), want, "{line}");
        }

        // A stop that also asks is still a stop, not a status question.
        let asks = read(Control::Stop, false, true);
        assert!(control_handling(&asks, true).has_buttons());
    }

    #[test]
    fn control_reading_table_word_lists_execute_nothing() {
        // CL-1: whatever the lists found, the line is an ordinary line for the Bot.
        for reading in [
            read(Control::Stop, true, false),
            read(Control::GoOn, true, false),
            read(Control::Both, false, false),
            read(Control::Neither, false, true),
        ] {
            let h = control_handling(&reading, false);
            assert_eq!(h, ControlHandling::Ordinary);
            assert!(!h.go_on() && !h.has_buttons() && !h.status_question());
        }
    }

    #[test]
    fn control_reading_table_continue_shows_only_while_it_would_lift() {
        let both = [Stop, Continue];
        assert_eq!(visible_offer(&both, true), vec![Stop, Continue]);
        assert_eq!(visible_offer(&both, false), vec![Stop]);
        assert_eq!(
            serde_json::to_value(both).unwrap(),
            serde_json::json!(["stop", "continue"])
        );
    }
}
