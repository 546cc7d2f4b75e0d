//! What the two reviewed loops (Light Loop, BlueprintLoop) share about a verdict: the
//! rejection a reviewer gives, how its items are cleaned and checked, how lists read in texts,
//! and how the verdict tools' arguments are parsed. Pure; each loop's machine decides what a
//! verdict does.

use crate::tool_results::args;
use serde::Deserialize;
use troupe_engine::extension::ToolReply;

/// A reviewer's rejection; also the `…_reject` tools' arguments.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rejection {
    pub reason: String,
    pub remaining: Vec<String>,
    pub instructions: String,
    #[serde(default)]
    pub completed: Vec<String>,
}

impl Rejection {
    /// Trimmed, with blank items dropped; refused (a repairable argument error) when the reason
    /// or instructions are blank or nothing remains to do.
    pub fn validated(self) -> Result<Rejection, String> {
        if self.reason.trim().is_empty() || self.instructions.trim().is_empty() {
            return Err("reason and instructions: both required and non-empty".into());
        }
        let remaining = clean(self.remaining);
        if remaining.is_empty() {
            return Err(
                "remaining: list at least one item still to do, each marked BLOCKING or NON-BLOCKING"
                    .into(),
            );
        }
        Ok(Rejection {
            reason: self.reason.trim().to_string(),
            remaining,
            instructions: self.instructions.trim().to_string(),
            completed: clean(self.completed),
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveArgs {
    summary: String,
}

/// A verdict tool's parsed arguments.
pub enum VerdictArgs {
    Approve { summary: String },
    Reject(Rejection),
}

/// Parse the arguments of the approve (or reject) tool, or the repairable error naming the
/// tool's contract.
pub fn parse_verdict(
    approve: bool,
    raw: &str,
    approve_contract: &str,
    reject_contract: &str,
) -> Result<VerdictArgs, ToolReply> {
    if approve {
        args::<ApproveArgs>(raw, approve_contract)
            .map(|a| VerdictArgs::Approve { summary: a.summary })
    } else {
        args::<Rejection>(raw, reject_contract).map(VerdictArgs::Reject)
    }
}

// Shared with the ticket reviewer of Deliverables (troupe-core's review rules).
pub use troupe_core::review::{bullets, clean};

#[cfg(test)]
mod tests {
    use super::*;

    fn r(reason: &str, remaining: &[&str], instructions: &str) -> Rejection {
        Rejection {
            reason: reason.into(),
            remaining: remaining.iter().map(|s| s.to_string()).collect(),
            instructions: instructions.into(),
            completed: vec![" ".into(), " done ".into()],
        }
    }

    #[test]
    fn a_rejection_is_trimmed_and_needs_a_reason_instructions_and_something_remaining() {
        let ok = r(" tests fail ", &["  ", " BLOCKING: x "], " fix x ")
            .validated()
            .unwrap();
        assert_eq!(ok.reason, "tests fail");
        assert_eq!(ok.remaining, ["BLOCKING: x"]);
        assert_eq!(ok.instructions, "fix x");
        assert_eq!(ok.completed, ["done"]);
        assert!(
            r(" ", &["x"], "i")
                .validated()
                .unwrap_err()
                .contains("reason")
        );
        assert!(
            r("r", &["x"], " ")
                .validated()
                .unwrap_err()
                .contains("instructions")
        );
        assert!(
            r("r", &[" "], "i")
                .validated()
                .unwrap_err()
                .contains("remaining")
        );
    }

    #[test]
    fn verdict_arguments_are_parsed_or_refused_with_the_contract() {
        assert!(matches!(
            parse_verdict(true, r#"{"summary": "ok"}"#, "A", "R"),
            Ok(VerdictArgs::Approve { summary }) if summary == "ok"
        ));
        let Err(refused) = parse_verdict(false, r#"{"reason": "x"}"#, "A", "R-CONTRACT") else {
            panic!("a reject without remaining and instructions must be refused");
        };
        assert!(refused.is_error && refused.content.contains("R-CONTRACT"));
    }
}
