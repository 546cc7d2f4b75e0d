//! Stop codes: what an operator reports when it cannot finish, and the registry that knows
//! each code's domain (what routing keys on) and disposition (whether it blocks at all).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::problem::Problem;

/// The registry shipped with Troupe; the definitions folder's root `errors.json` adds to it.
pub const SHARED_STOP_CODES: &str = include_str!("../../stop-codes.json");

/// What a stop code does to its branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Disposition {
    /// The branch blocks and the session follows the route of the code's domain.
    Terminate,
    /// The branch never blocks: the code is recorded under `fallbacks` and work continues.
    Fallback,
}

/// Who may raise a shared code, which decides the operators whose routes must cover its domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Any operator may report it.
    #[default]
    Operator,
    /// Raised for operators that write source or publish (the runner's git steps).
    Source,
    /// Raised for operators that publish.
    Publish,
    /// Raised by the runner about the session itself; always stops for a person, never routed.
    Session,
}

/// One stop code as the registry knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StopCode {
    pub domain: String,
    pub disposition: Disposition,
    #[serde(default)]
    pub scope: Scope,
    pub meaning: String,
    /// How to resume after it.
    #[serde(default)]
    pub resume: String,
}

/// The shape of an `errors.json` file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopCodeFile {
    pub codes: BTreeMap<String, StopCode>,
}

impl StopCodeFile {
    /// Parses an errors.json text; `shown` is the path problems name.
    pub(crate) fn parse(text: &str, shown: &Path) -> Result<Self, Problem> {
        serde_json::from_str(text).map_err(|e| Problem::from_serde(shown.to_path_buf(), &e))
    }

    /// Reads an optional errors.json: a missing file is an empty one.
    pub(crate) fn read_optional(path: &Path, shown: PathBuf) -> Result<Self, Problem> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, &shown),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(Problem::in_file(shown, format!("cannot be read: {e}"))),
        }
    }
}

/// Whether `code` is written as a stop code must be: `UPPER_SNAKE_CASE`.
pub fn is_code_name(code: &str) -> bool {
    !code.is_empty()
        && code.starts_with(|c: char| c.is_ascii_uppercase())
        && code
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The shared codes plus each operator's own.
#[derive(Debug, Clone, Default)]
pub struct StopRegistry {
    shared: BTreeMap<String, StopCode>,
    own: BTreeMap<String, BTreeMap<String, StopCode>>,
}

impl StopRegistry {
    /// The registry shipped with Troupe, alone.
    pub fn builtin() -> Self {
        let file: StopCodeFile =
            serde_json::from_str(SHARED_STOP_CODES).expect("the shipped stop-codes.json parses");
        Self {
            shared: file.codes,
            own: BTreeMap::new(),
        }
    }

    /// Adds (or, for a code the folder redefines, replaces) shared codes.
    pub(crate) fn merge_shared(&mut self, codes: BTreeMap<String, StopCode>) {
        self.shared.extend(codes);
    }

    /// Records an operator's own codes.
    pub(crate) fn set_own(&mut self, operator: &str, codes: BTreeMap<String, StopCode>) {
        self.own.insert(operator.to_string(), codes);
    }

    /// Looks `code` up for `operator`: its own codes first, then the shared registry.
    pub fn lookup(&self, operator: &str, code: &str) -> Option<&StopCode> {
        self.own
            .get(operator)
            .and_then(|codes| codes.get(code))
            .or_else(|| self.shared.get(code))
    }

    /// A shared code by name.
    pub fn shared(&self, code: &str) -> Option<&StopCode> {
        self.shared.get(code)
    }

    /// Every shared code.
    pub fn shared_codes(&self) -> &BTreeMap<String, StopCode> {
        &self.shared
    }

    /// An operator's own codes (empty when it has none).
    pub fn own_codes(&self, operator: &str) -> impl Iterator<Item = (&String, &StopCode)> {
        self.own.get(operator).into_iter().flat_map(|m| m.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_registry_holds_the_session_codes() {
        let r = StopRegistry::builtin();
        for code in [
            "INVALID_INPUT",
            "NO_PROGRESS",
            "BUDGET_EXHAUSTED",
            "SOURCE_DRIFT",
            "NON_FAST_FORWARD",
            "SESSION_MISSING",
            "GIT_FAILED",
        ] {
            assert!(r.shared(code).is_some(), "{code}");
            assert!(is_code_name(code));
        }
        assert_eq!(r.shared("NO_PROGRESS").unwrap().scope, Scope::Session);
        assert_eq!(r.shared("GIT_FAILED").unwrap().scope, Scope::Session);
        assert!(!is_code_name("lower_case"));
    }
}
