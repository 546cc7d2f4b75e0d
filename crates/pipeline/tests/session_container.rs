//! The session folder on disk: its id, layout, manifest and atomic writes.

mod common;

use common::{Harness, fixture};
use troupe_core::ManualClock;
use troupe_pipeline::gate::{Shipped, check_shipped};
use troupe_pipeline::session::{Budget, NewSession, Session, SessionError, SessionStatus};

#[test]
fn create_names_the_session_by_time_project_and_first_operator() {
    let source = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(common::START_MS);
    let new = NewSession {
        project: "Shop Front".into(),
        workflow: "deliver".into(),
        first_operator: "plan".into(),
        budget: Budget::default(),
        requirements: Default::default(),
    };
    let s = Session::create(source.path(), &new, &clock).unwrap();
    assert_eq!(s.id(), "20260314-092653-shop-front-plan");
    assert_eq!(
        s.root(),
        source
            .path()
            .join(".worktrees/sessions/20260314-092653-shop-front-plan")
    );
    assert_eq!(s.state().started_at, "2026-03-14T09:26:53Z");
    assert_eq!(s.state().status, SessionStatus::Running);
    assert_eq!(
        s.state().budget,
        Budget {
            max_steps: 24,
            max_same_operator: 4
        }
    );
    // The .worktrees folder ignores itself, so the person's checkout stays clean.
    assert_eq!(
        std::fs::read_to_string(source.path().join(".worktrees/.gitignore")).unwrap(),
        "*\n"
    );
    // A second session in the same second gets a suffix.
    let again = Session::create(source.path(), &new, &clock).unwrap();
    assert_eq!(again.id(), "20260314-092653-shop-front-plan-2");
}

#[test]
fn branches_are_laid_out_as_the_seed_describes_and_hashed_in_the_manifest() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    let branch = h.session.root().join("step-1/parallel-1");
    for p in [
        "request/request.json",
        "response/data",
        "response/artifacts",
    ] {
        assert!(branch.join(p).exists(), "{p}");
    }
    let state = h.session.state();
    assert_eq!(state.chain.len(), 1);
    assert_eq!(state.steps[&Harness::key(1, 1)], "survey");
    let hash = &state.request_hashes["step-1/parallel-1"];
    assert_eq!(
        hash,
        &troupe_pipeline::sha256_file(&branch.join("request/request.json")).unwrap()
    );
    assert!(state.input_hashes.contains_key("step-1/parallel-1"));
    assert_eq!(
        state.leases["step-1/parallel-1"].holds,
        vec!["response:step-1/parallel-1".to_string()]
    );

    // The manifest on disk fits its shipped schema and reads back equal.
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(h.session.state_path()).unwrap()).unwrap();
    assert!(check_shipped(Shipped::State, &value).is_empty());
    let reopened = Session::open_dir(h.session.root()).unwrap();
    assert_eq!(reopened.state(), h.session.state());
    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(h.session.root())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_missing_session_is_session_missing_and_a_bad_manifest_is_refused() {
    let source = tempfile::tempdir().unwrap();
    let err = Session::open(source.path(), "20260101-000000-x-y").unwrap_err();
    assert!(matches!(err, SessionError::Missing(_)));
    assert!(err.to_string().starts_with("SESSION_MISSING"));

    let h = Harness::new(&fixture("scenario"), "fan");
    let text = std::fs::read_to_string(h.session.state_path())
        .unwrap()
        .replace("\"running\"", "\"paused\"");
    std::fs::write(h.session.state_path(), text).unwrap();
    let SessionError::Invalid(refusals) = Session::open_dir(h.session.root()).unwrap_err() else {
        panic!("expected a refusal")
    };
    assert!(refusals.names("status"), "{refusals}");
}
