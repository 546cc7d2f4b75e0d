//! The output contract of a task: what the parent gets back from the child's final reply. A
//! pure reading of the reply; no I/O.
//!
//! - `summary`: the reply's first paragraph, at most [`SUMMARY_CHARS`] characters.
//! - `final`: the whole reply, at most [`FINAL_MAX_BYTES`].
//! - `structured`: the reply must be one JSON value (bare, or in one fenced block) valid against
//!   the contract's JSON Schema; otherwise the child gets a repair turn saying what failed.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub const SUMMARY_CHARS: usize = 1000;
pub const FINAL_MAX_BYTES: usize = 64 * 1024;
/// Repair turns a structured reply may get before the task fails.
pub const MAX_REPAIRS: u32 = 3;
/// Schema violations named in one repair message, at most.
const LISTED_VIOLATIONS: usize = 5;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum OutputContract {
    Summary,
    Final,
    Structured { schema: Value },
}

/// What a final reply gives under a contract.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Accept {
        text: String,
        json: Option<Value>,
    },
    /// The reply does not satisfy the contract; says exactly what is wrong.
    Invalid(String),
}

pub const CONTRACT_DOC: &str = r#"{"kind":"summary"} (default) | {"kind":"final"} | {"kind":"structured","schema":{<JSON Schema>}}"#;

impl OutputContract {
    /// Read the `output` argument (absent: `summary`). A structured schema must compile.
    pub fn parse(v: Option<&Value>) -> Result<OutputContract, String> {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return Ok(OutputContract::Summary);
        };
        let c: OutputContract = serde_json::from_value(v.clone())
            .map_err(|e| format!("output: {e} (expected {CONTRACT_DOC})"))?;
        // serde does not refuse extra fields on the unit variants of a tagged enum.
        if let Some(extra) = v
            .as_object()
            .and_then(|o| o.keys().find(|k| *k != "kind" && *k != "schema"))
            .or_else(|| {
                (!matches!(c, OutputContract::Structured { .. }))
                    .then(|| {
                        v.as_object()
                            .and_then(|o| o.keys().find(|k| *k == "schema"))
                    })
                    .flatten()
            })
        {
            return Err(format!(
                "output.{extra}: not accepted for kind {} (expected {CONTRACT_DOC})",
                c.kind()
            ));
        }
        if let OutputContract::Structured { schema } = &c {
            if !schema.is_object() {
                return Err("output.schema: must be a JSON Schema object".into());
            }
            jsonschema::validator_for(schema)
                .map_err(|e| format!("output.schema: not a valid JSON Schema ({e})"))?;
        }
        Ok(c)
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(json!({"kind": "summary"}))
    }

    pub fn kind(&self) -> &'static str {
        match self {
            OutputContract::Summary => "summary",
            OutputContract::Final => "final",
            OutputContract::Structured { .. } => "structured",
        }
    }

    /// What the child is told about its final reply.
    pub fn instructions(&self) -> String {
        match self {
            OutputContract::Summary => format!(
                "When you are done, end with a final reply whose first paragraph (at most {SUMMARY_CHARS} characters) summarises the result: only that paragraph is returned."
            ),
            OutputContract::Final => {
                "When you are done, end with a final reply stating the result in full: that reply is returned as it is.".into()
            }
            OutputContract::Structured { schema } => format!(
                "When you are done, your final reply must be exactly one JSON value, with no prose around it, valid against this JSON Schema:\n{schema}"
            ),
        }
    }

    pub fn evaluate(&self, reply: &str) -> Verdict {
        let reply = reply.trim();
        if reply.is_empty() {
            return Verdict::Invalid("your final reply was empty".into());
        }
        match self {
            OutputContract::Summary => Verdict::Accept {
                text: first_paragraph(reply),
                json: None,
            },
            OutputContract::Final => Verdict::Accept {
                text: clip_bytes(reply, FINAL_MAX_BYTES),
                json: None,
            },
            OutputContract::Structured { schema } => structured(schema, reply),
        }
    }
}

fn structured(schema: &Value, reply: &str) -> Verdict {
    let body = unfence(reply);
    let value: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Invalid(format!("your final reply is not one JSON value ({e})"));
        }
    };
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        // Checked when the task was created; a schema that stopped compiling is not the
        // child's fault, but nothing can satisfy it either.
        Err(e) => return Verdict::Invalid(format!("the output schema does not compile ({e})")),
    };
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() { "/".into() } else { path };
            format!("at {at}: {e}")
        })
        .collect();
    if errors.is_empty() {
        return Verdict::Accept {
            text: body.to_string(),
            json: Some(value),
        };
    }
    let mut listed = errors
        .iter()
        .take(LISTED_VIOLATIONS)
        .cloned()
        .collect::<Vec<_>>();
    if errors.len() > LISTED_VIOLATIONS {
        listed.push(format!("…and {} more", errors.len() - LISTED_VIOLATIONS));
    }
    Verdict::Invalid(format!(
        "your final reply does not match the output schema: {}",
        listed.join("; ")
    ))
}

/// The inside of one fenced block (```json … ```), or the text itself.
fn unfence(reply: &str) -> &str {
    let Some(rest) = reply.strip_prefix("```") else {
        return reply;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return reply;
    };
    // Drop the info string (`json`) on the opening line.
    match body.split_once('\n') {
        Some((_, inner)) => inner.trim(),
        None => body.trim(),
    }
}

fn first_paragraph(text: &str) -> String {
    let para = text
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty())
        .unwrap_or(text);
    if para.chars().count() <= SUMMARY_CHARS {
        return para.to_string();
    }
    let mut out: String = para.chars().take(SUMMARY_CHARS - 1).collect();
    out.push('…');
    out
}

fn clip_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The repair turn a child gets when its reply missed the contract.
pub fn repair_text(problem: &str, attempt: u32, contract: &OutputContract) -> String {
    format!(
        "[Task output repair {attempt} of {MAX_REPAIRS}] The task is not finished: {problem}.\n{}",
        contract.instructions()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> OutputContract {
        OutputContract::parse(Some(&json!({
            "kind": "structured",
            "schema": {
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"],
                "additionalProperties": false
            }
        })))
        .unwrap()
    }

    #[test]
    fn the_default_contract_is_a_summary_of_the_first_paragraph() {
        let c = OutputContract::parse(None).unwrap();
        assert_eq!(c, OutputContract::Summary);
        assert_eq!(
            c.evaluate("\n\nThree files changed.\n\nDetails follow here."),
            Verdict::Accept {
                text: "Three files changed.".into(),
                json: None
            }
        );
        let long = "x".repeat(SUMMARY_CHARS + 50);
        let Verdict::Accept { text, .. } = c.evaluate(&long) else {
            panic!()
        };
        assert_eq!(text.chars().count(), SUMMARY_CHARS);
    }

    #[test]
    fn final_returns_the_whole_reply() {
        let c = OutputContract::parse(Some(&json!({"kind": "final"}))).unwrap();
        assert_eq!(
            c.evaluate("a\n\nb"),
            Verdict::Accept {
                text: "a\n\nb".into(),
                json: None
            }
        );
        assert!(matches!(c.evaluate("  "), Verdict::Invalid(_)));
    }

    #[test]
    fn structured_accepts_valid_json_bare_or_fenced() {
        let c = schema();
        for reply in [r#"{"count": 3}"#, "```json\n{\"count\": 3}\n```"] {
            assert_eq!(
                c.evaluate(reply),
                Verdict::Accept {
                    text: r#"{"count": 3}"#.into(),
                    json: Some(json!({"count": 3}))
                },
                "{reply}"
            );
        }
    }

    #[test]
    fn structured_names_what_failed() {
        let c = schema();
        let Verdict::Invalid(e) = c.evaluate("three") else {
            panic!()
        };
        assert!(e.contains("not one JSON value"), "{e}");
        let Verdict::Invalid(e) = c.evaluate(r#"{"count": "3"}"#) else {
            panic!()
        };
        assert!(e.contains("at /count") && e.contains("integer"), "{e}");
        let Verdict::Invalid(e) = c.evaluate("{}") else {
            panic!()
        };
        assert!(e.contains("count"), "{e}");
    }

    #[test]
    fn bad_contracts_are_refused_with_the_contract() {
        for bad in [
            json!({"kind": "essay"}),
            json!({"kind": "structured"}),
            json!({"kind": "structured", "schema": "object"}),
            json!({"kind": "structured", "schema": {"type": "nonsense"}}),
            json!({"kind": "final", "schema": {}}),
        ] {
            let e = OutputContract::parse(Some(&bad)).unwrap_err();
            assert!(e.starts_with("output"), "{e}");
        }
    }
}
