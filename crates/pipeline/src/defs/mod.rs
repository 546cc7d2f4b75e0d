//! Definitions: the folder the user owns that says what a pipeline may run.
//!
//! ```text
//! <defs>/
//!   errors.json                  optional: shared stop codes added to the shipped registry
//!   routing.json                 operator → stop domain → route
//!   operators/<id>/operator.json
//!   operators/<id>/operator.md   the operator's prompt
//!   operators/<id>/errors.json   optional: the operator's own stop codes
//!   workflows/<name>.json        named chains of steps
//! ```
//!
//! [`Definitions::load`] reads all of it and reports every problem it finds, not just the
//! first. The format is documented in the crate's README.

mod check;
mod operator;
mod problem;
mod routing;
mod stop_code;
mod workflow;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use operator::{
    InputDecl, Operator, OperatorFile, OutputDecl, is_plain_relative, roots_overlap, within_root,
};
pub use problem::{Problem, Problems};
pub use routing::{ANY_OPERATOR, Route, RoutingTable};
pub use stop_code::{
    Disposition, SHARED_STOP_CODES, Scope, StopCode, StopCodeFile, StopRegistry, is_code_name,
};
pub use workflow::{BranchDef, StepDef, Workflow};

/// A definitions folder, loaded and checked.
#[derive(Debug, Clone)]
pub struct Definitions {
    pub root: PathBuf,
    pub operators: BTreeMap<String, Operator>,
    pub stop_codes: StopRegistry,
    pub routing: RoutingTable,
    pub workflows: BTreeMap<String, Workflow>,
}

impl Definitions {
    /// Loads and checks the folder at `root`. On failure the error lists every problem found.
    pub fn load(root: &Path) -> Result<Self, Problems> {
        let mut problems = Vec::new();
        if !root.is_dir() {
            return Err(Problems(vec![Problem::general(format!(
                "{} is not a folder",
                root.display()
            ))]));
        }

        let mut stop_codes = StopRegistry::builtin();
        let shared_file =
            StopCodeFile::read_optional(&root.join("errors.json"), "errors.json".into())
                .unwrap_or_else(|p| {
                    problems.push(p);
                    StopCodeFile::default()
                });
        check_code_names(&shared_file, Path::new("errors.json"), &mut problems);
        stop_codes.merge_shared(shared_file.codes);

        let operators = load_operators(root, &mut stop_codes, &mut problems);
        let routing = RoutingTable::load(root, &mut problems);
        let workflows = load_workflows(root, &mut problems);

        let defs = Self {
            root: root.to_path_buf(),
            operators,
            stop_codes,
            routing,
            workflows,
        };
        check::cross_check(&defs, &mut problems);
        if problems.is_empty() {
            Ok(defs)
        } else {
            Err(Problems(problems))
        }
    }

    pub fn operator(&self, id: &str) -> Option<&Operator> {
        self.operators.get(id)
    }

    pub fn workflow(&self, name: &str) -> Option<&Workflow> {
        self.workflows.get(name)
    }

    /// The stop code `code` as `operator` may report it (its own, then shared).
    pub fn stop_code(&self, operator: &str, code: &str) -> Option<&StopCode> {
        self.stop_codes.lookup(operator, code)
    }
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.sort();
    out
}

fn load_operators(
    root: &Path,
    stop_codes: &mut StopRegistry,
    problems: &mut Vec<Problem>,
) -> BTreeMap<String, Operator> {
    let mut operators: BTreeMap<String, Operator> = BTreeMap::new();
    let dir = root.join("operators");
    if !dir.is_dir() {
        problems.push(Problem::general("the `operators/` folder is missing"));
        return operators;
    }
    for path in sorted_entries(&dir) {
        if !path.is_dir() {
            continue;
        }
        let folder = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Some(op) = Operator::load(root, &folder, problems) else {
            continue;
        };
        if let Some(first) = operators.get(op.id()) {
            problems.push(Problem::in_file(
                Path::new("operators").join(&folder).join("operator.json"),
                format!(
                    "duplicate operator id `{}` (also defined in operators/{})",
                    op.id(),
                    first.folder
                ),
            ));
            continue;
        }
        let shown = Path::new("operators").join(&folder).join("errors.json");
        let own = StopCodeFile::read_optional(&path.join("errors.json"), shown.clone())
            .unwrap_or_else(|p| {
                problems.push(p);
                StopCodeFile::default()
            });
        check_code_names(&own, &shown, problems);
        for code in own.codes.keys() {
            if stop_codes.shared(code).is_some() {
                problems.push(Problem::in_file(
                    shown.clone(),
                    format!("`{code}` is already a shared stop code; give the operator's own code another name"),
                ));
            }
        }
        stop_codes.set_own(op.id(), own.codes);
        operators.insert(op.id().to_string(), op);
    }
    if operators.is_empty()
        && !problems
            .iter()
            .any(|p| p.to_string().contains("operators/"))
    {
        problems.push(Problem::general(
            "the `operators/` folder defines no operator",
        ));
    }
    operators
}

fn load_workflows(root: &Path, problems: &mut Vec<Problem>) -> BTreeMap<String, Workflow> {
    let mut workflows = BTreeMap::new();
    let dir = root.join("workflows");
    if !dir.is_dir() {
        problems.push(Problem::general("the `workflows/` folder is missing"));
        return workflows;
    }
    for path in sorted_entries(&dir) {
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if let Some(wf) = Workflow::load(&path, &name, problems) {
            workflows.insert(name, wf);
        }
    }
    workflows
}

fn check_code_names(file: &StopCodeFile, shown: &Path, problems: &mut Vec<Problem>) {
    for (code, def) in &file.codes {
        if !is_code_name(code) {
            problems.push(Problem::in_file(
                shown.to_path_buf(),
                format!("stop code `{code}` must be written in UPPER_SNAKE_CASE"),
            ));
        }
        if def.domain.trim().is_empty() {
            problems.push(Problem::in_file(
                shown.to_path_buf(),
                format!("stop code `{code}` has an empty domain"),
            ));
        }
    }
}
