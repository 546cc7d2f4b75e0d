//! `routing.json`: for each operator and stop domain, where a blocked branch goes. Routing
//! keys only on the operator and the stop code's domain, never on prose.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::problem::Problem;

/// The operator key whose routes apply to every operator that has no route of its own for a
/// domain.
pub const ANY_OPERATOR: &str = "*";

/// Where a blocked branch goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Route {
    /// Run the named operator in the next step, then come back to the blocked operator with
    /// `resume` naming the blocked branch.
    Operator { target: String },
    /// Re-enter the same operator in the next step with `resume` naming the blocked branch.
    Resume,
    /// Stop for a person.
    User,
    /// Stop: the blocker is outside the runtime.
    External,
}

impl Route {
    /// The route's kind as written in `routing.json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Route::Operator { .. } => "operator",
            Route::Resume => "resume",
            Route::User => "user",
            Route::External => "external",
        }
    }

    /// Whether following it ends the session's progress (the session blocks).
    pub fn stops_session(&self) -> bool {
        matches!(self, Route::User | Route::External)
    }
}

/// The shape of `routing.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingTable {
    /// operator id (or `*`) → stop domain → route.
    pub routes: BTreeMap<String, BTreeMap<String, Route>>,
}

impl RoutingTable {
    /// The route for `operator` blocked in `domain`: its own first, then the `*` default.
    pub fn lookup(&self, operator: &str, domain: &str) -> Option<&Route> {
        self.routes
            .get(operator)
            .and_then(|m| m.get(domain))
            .or_else(|| self.routes.get(ANY_OPERATOR).and_then(|m| m.get(domain)))
    }

    /// Reads `routing.json` from the definitions folder (a missing file is a problem).
    pub(crate) fn load(defs_root: &Path, problems: &mut Vec<Problem>) -> Self {
        let shown = Path::new("routing.json");
        match std::fs::read_to_string(defs_root.join(shown)) {
            Ok(text) => match serde_json::from_str(&text) {
                Ok(table) => table,
                Err(e) => {
                    problems.push(Problem::from_serde(shown.to_path_buf(), &e));
                    Self::default()
                }
            },
            Err(e) => {
                problems.push(Problem::in_file(shown, format!("cannot be read: {e}")));
                Self::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_parse_by_kind_and_fall_back_to_the_default_operator() {
        let t: RoutingTable = serde_json::from_str(
            r#"{"routes":{"a":{"plan":{"kind":"operator","target":"p"}},"*":{"input":{"kind":"user"}}}}"#,
        )
        .unwrap();
        assert_eq!(
            t.lookup("a", "plan"),
            Some(&Route::Operator { target: "p".into() })
        );
        assert_eq!(t.lookup("a", "input"), Some(&Route::User));
        assert_eq!(t.lookup("a", "other"), None);
        assert!(
            serde_json::from_str::<RoutingTable>(r#"{"routes":{"a":{"x":{"kind":"operator"}}}}"#)
                .is_err()
        );
    }
}
