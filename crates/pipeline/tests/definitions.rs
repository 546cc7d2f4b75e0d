//! Loading definitions folders: the shipped example loads clean; a broken folder reports every
//! problem at once.

mod common;

use std::path::Path;

use troupe_pipeline::defs::{Definitions, Disposition, Route};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_example_definitions_load_without_problems() {
    let defs = common::load(&common::example_defs_dir());
    assert_eq!(
        defs.operators
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        ["critic", "implement", "plan", "publish", "verify"]
    );
    let wf = defs.workflow("deliver").unwrap();
    assert_eq!(wf.first_operator(), Some("plan"));
    assert!(defs.operator("implement").unwrap().def.writes_source);
    assert_eq!(
        defs.routing.lookup("implement", "plan"),
        Some(&Route::Operator {
            target: "plan".into()
        })
    );
    assert_eq!(defs.routing.lookup("critic", "input"), Some(&Route::User));
    let sc = defs.stop_code("implement", "FORMAT_SKIPPED").unwrap();
    assert_eq!(sc.disposition, Disposition::Fallback);
    assert!(
        defs.stop_code("plan", "NON_FAST_FORWARD").is_some(),
        "shared codes are known to all"
    );
    assert!(
        defs.operator("plan")
            .unwrap()
            .output_schema("plan")
            .is_some()
    );
}

#[test]
fn the_scenario_fixture_loads_without_problems() {
    common::load(&common::fixture("scenario"));
}

#[test]
fn a_broken_folder_lists_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(&common::example_defs_dir(), root);
    let ops = root.join("operators");
    // A duplicate operator id.
    copy_dir(&ops.join("critic"), &ops.join("critic-copy"));
    // An invalid JSON Schema for an output.
    let verify = ops.join("verify/operator.json");
    let text = std::fs::read_to_string(&verify)
        .unwrap()
        .replace(r#""type": "boolean""#, r#""type": "truthy""#);
    std::fs::write(&verify, text).unwrap();
    // Malformed JSON, on line 3.
    std::fs::write(
        ops.join("publish/errors.json"),
        "{\n  \"codes\": {\n    \"X\": ,\n  }\n}\n",
    )
    .unwrap();
    // A new domain with no route, a route no code reaches, a route to an unknown operator.
    std::fs::write(
        ops.join("plan/errors.json"),
        r#"{"codes":{"PLAN_SCOPE_UNCLEAR":{"domain":"scope","disposition":"terminate","meaning":"m"},
            "PLAN_BUDGET_UNKNOWN":{"domain":"money","disposition":"terminate","meaning":"m"}}}"#,
    )
    .unwrap();
    let routing = std::fs::read_to_string(root.join("routing.json"))
        .unwrap()
        .replace(
            r#""environment": { "kind": "external" }"#,
            r#""environment": { "kind": "external" }, "weather": { "kind": "user" }, "checks2": { "kind": "operator", "target": "ghost" }"#,
        );
    std::fs::write(root.join("routing.json"), routing).unwrap();
    // An unknown operator in a workflow.
    std::fs::write(
        root.join("workflows/other.json"),
        r#"{"steps":[{"branches":[{"operator":"plan"},{"operator":"nobody"}]}]}"#,
    )
    .unwrap();

    let problems = Definitions::load(root).unwrap_err();
    let text = problems.to_string();
    for needle in [
        "duplicate operator id `critic`",
        "invalid JSON Schema",
        "operators/publish/errors.json:3:",
        "malformed JSON",
        "operator `plan` can stop in domain `money` (PLAN_BUDGET_UNKNOWN) but no route covers it",
        "route `verify` / `weather` is reached by no stop code",
        "targets unknown operator `ghost`",
        "step 1 names unknown operator `nobody`",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
}

#[test]
fn workflow_checks_catch_missing_producers_and_shared_write_roots() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(&common::example_defs_dir(), root);
    std::fs::write(
        root.join("workflows/bad.json"),
        r#"{"steps":[{"branches":[{"operator":"verify"}]},{"branches":[{"operator":"implement"},{"operator":"implement"}]}]}"#,
    )
    .unwrap();
    let problems = Definitions::load(root).unwrap_err();
    assert!(
        problems.mentions("requires `summary`, which no earlier step produces"),
        "{problems}"
    );
    assert!(problems.mentions("share a write root"), "{problems}");
    assert!(problems.mentions("requires `plan`"), "{problems}");
}

#[test]
fn a_missing_folder_and_typos_in_fields_are_problems() {
    assert!(Definitions::load(Path::new("/nonexistent/defs")).is_err());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(&common::example_defs_dir(), root);
    let p = root.join("operators/critic/operator.json");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("\"tools\"", "\"tool\"");
    std::fs::write(&p, text).unwrap();
    let problems = Definitions::load(root).unwrap_err();
    assert!(problems.mentions("unknown field `tool`"), "{problems}");
    assert!(
        problems.mentions("operators/critic/operator.json:"),
        "{problems}"
    );
}
