//! An operator: one kind of agent in a pipeline, defined by `operators/<id>/operator.json`
//! (what it runs on, what it may touch, what it consumes and produces), `operator.md` (its
//! prompt) and an optional `errors.json` (its own stop codes).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::problem::Problem;

/// A kind the operator consumes, found by the runner in the nearest earlier branch that
/// recorded it in its `fields`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InputDecl {
    #[serde(default)]
    pub required: bool,
}

/// A kind the operator produces: one entry of its response's `fields`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutputDecl {
    /// Whether a `done` response must record it.
    #[serde(default)]
    pub required: bool,
    /// The path, relative to the branch, the field must name (any path under `response/`
    /// when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A JSON Schema the file the field names must satisfy (the file is then read as JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// The shape of `operator.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OperatorFile {
    pub id: String,
    /// The model profile (a role name) the operator's agent runs on.
    pub profile: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Tools the agent may use.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Whether it writes source, on the session branch of the checkout.
    #[serde(default)]
    pub writes_source: bool,
    /// The folders (relative to the checkout) a source-writing operator may change.
    #[serde(default)]
    pub write_roots: Vec<String>,
    /// Whether it publishes the session branch.
    #[serde(default)]
    pub publishes: bool,
    #[serde(default)]
    pub inputs: BTreeMap<String, InputDecl>,
    #[serde(default)]
    pub outputs: BTreeMap<String, OutputDecl>,
    /// Nested exchanges it may wait on: the `awaiting.kind` it names → the operator that
    /// answers it.
    #[serde(default)]
    pub exchanges: BTreeMap<String, String>,
}

/// A loaded operator: its definition, its prompt and its compiled output schemas.
#[derive(Debug, Clone)]
pub struct Operator {
    pub def: OperatorFile,
    /// The text of `operator.md`.
    pub prompt: String,
    /// The folder it was loaded from, relative to the definitions folder.
    pub folder: String,
    schemas: BTreeMap<String, Arc<jsonschema::Validator>>,
}

impl Operator {
    pub fn id(&self) -> &str {
        &self.def.id
    }

    /// The compiled schema of output `kind`, when it declares one.
    pub fn output_schema(&self, kind: &str) -> Option<&jsonschema::Validator> {
        self.schemas.get(kind).map(Arc::as_ref)
    }

    /// Whether `path` (relative to the checkout, `/`-separated) lies under a write root.
    pub fn may_write(&self, path: &str) -> bool {
        self.def
            .write_roots
            .iter()
            .any(|root| within_root(root, path))
    }

    /// Reads `operators/<folder>/`; every problem found goes to `problems`.
    pub(crate) fn load(
        defs_root: &Path,
        folder: &str,
        problems: &mut Vec<Problem>,
    ) -> Option<Self> {
        let dir = defs_root.join("operators").join(folder);
        let shown = Path::new("operators").join(folder);
        let json_shown = shown.join("operator.json");
        let def: OperatorFile = match std::fs::read_to_string(dir.join("operator.json")) {
            Ok(text) => match serde_json::from_str(&text) {
                Ok(def) => def,
                Err(e) => {
                    problems.push(Problem::from_serde(json_shown, &e));
                    return None;
                }
            },
            Err(e) => {
                problems.push(Problem::in_file(json_shown, format!("cannot be read: {e}")));
                return None;
            }
        };
        let prompt = match std::fs::read_to_string(dir.join("operator.md")) {
            Ok(text) if !text.trim().is_empty() => text,
            Ok(_) => {
                problems.push(Problem::in_file(
                    shown.join("operator.md"),
                    "the prompt is empty",
                ));
                String::new()
            }
            Err(_) => {
                problems.push(Problem::in_file(
                    shown.join("operator.md"),
                    "the prompt file is missing",
                ));
                String::new()
            }
        };
        check_shape(&def, &json_shown, problems);
        let mut schemas = BTreeMap::new();
        for (kind, out) in &def.outputs {
            let Some(schema) = &out.schema else { continue };
            match jsonschema::validator_for(schema) {
                Ok(v) => {
                    schemas.insert(kind.clone(), Arc::new(v));
                }
                Err(e) => problems.push(Problem::in_file(
                    json_shown.clone(),
                    format!("output `{kind}` has an invalid JSON Schema: {e}"),
                )),
            }
        }
        Some(Self {
            def,
            prompt,
            folder: folder.to_string(),
            schemas,
        })
    }
}

/// Whether `path` is `root` itself or lies below it; both are checkout-relative.
pub fn within_root(root: &str, path: &str) -> bool {
    let root = root.trim_matches('/');
    let path = path.trim_start_matches("./");
    if root.is_empty() || root == "." {
        return true;
    }
    path == root
        || path
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Whether two write roots overlap (one lies within the other).
pub fn roots_overlap(a: &str, b: &str) -> bool {
    within_root(a, b.trim_matches('/')) || within_root(b, a.trim_matches('/'))
}

/// Whether `p` is a plain relative path: no `..`, not absolute, not empty.
pub fn is_plain_relative(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.contains('\\')
        && p.split('/').all(|seg| !seg.is_empty() && seg != "..")
}

fn check_shape(def: &OperatorFile, shown: &Path, problems: &mut Vec<Problem>) {
    let mut say = |m: String| problems.push(Problem::in_file(shown.to_path_buf(), m));
    if def.id.trim().is_empty() {
        say("`id` is empty".into());
    }
    if def.profile.trim().is_empty() {
        say("`profile` is empty".into());
    }
    if def.writes_source && def.write_roots.is_empty() {
        say("`writesSource` is true but `writeRoots` is empty".into());
    }
    if !def.writes_source && !def.write_roots.is_empty() {
        say("`writeRoots` is set but `writesSource` is false".into());
    }
    for root in &def.write_roots {
        if root != "." && !is_plain_relative(root.trim_end_matches('/')) {
            say(format!("write root `{root}` is not a plain relative path"));
        }
    }
    for (kind, out) in &def.outputs {
        if let Some(path) = &out.path
            && !(is_plain_relative(path) && path.starts_with("response/"))
        {
            say(format!(
                "output `{kind}` path `{path}` must be a relative path under `response/`"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_contain_paths_below_them_only() {
        assert!(within_root("src", "src/lib.rs"));
        assert!(within_root("src/", "src"));
        assert!(!within_root("src", "srcs/lib.rs"));
        assert!(within_root(".", "anything"));
        assert!(roots_overlap("src", "src/a"));
        assert!(!roots_overlap("src", "docs"));
        assert!(!is_plain_relative("../x"));
        assert!(!is_plain_relative("/etc"));
    }
}
