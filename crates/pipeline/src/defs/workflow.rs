//! A workflow: a named chain of steps, each step one or more parallel branches naming an
//! operator, with presets for the branch's request. Stored as `workflows/<name>.json`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::problem::Problem;

/// One parallel branch of a workflow step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchDef {
    pub operator: String,
    /// Preset `requirements` for the branch's request; values set when a run starts
    /// (`--set key=value`) are laid over them.
    #[serde(default)]
    pub requirements: serde_json::Map<String, serde_json::Value>,
}

/// One step of a workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepDef {
    pub branches: Vec<BranchDef>,
}

/// The shape of `workflows/<name>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Workflow {
    /// The file's stem; not written in the file.
    #[serde(skip)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub steps: Vec<StepDef>,
}

impl Workflow {
    /// The operator of the first branch of the first step, which names the session.
    pub fn first_operator(&self) -> Option<&str> {
        self.steps
            .first()
            .and_then(|s| s.branches.first())
            .map(|b| b.operator.as_str())
    }

    /// Reads one workflow file.
    pub(crate) fn load(path: &Path, name: &str, problems: &mut Vec<Problem>) -> Option<Self> {
        let shown = Path::new("workflows").join(format!("{name}.json"));
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                problems.push(Problem::in_file(shown, format!("cannot be read: {e}")));
                return None;
            }
        };
        match serde_json::from_str::<Workflow>(&text) {
            Ok(mut wf) => {
                wf.name = name.to_string();
                if wf.steps.is_empty() {
                    problems.push(Problem::in_file(shown.clone(), "the workflow has no steps"));
                }
                for (i, step) in wf.steps.iter().enumerate() {
                    if step.branches.is_empty() {
                        problems.push(Problem::in_file(
                            shown.clone(),
                            format!("step {} has no branches", i + 1),
                        ));
                    }
                }
                Some(wf)
            }
            Err(e) => {
                problems.push(Problem::from_serde(shown, &e));
                None
            }
        }
    }
}
