//! The documented example (`examples/defs`, workflow `deliver`) end to end with scripted
//! agents and a real git repository: plan (with a critique exchange) → implement on the
//! session branch → verify → publish.

mod common;

use std::path::Path;

use troupe_core::ManualClock;
use troupe_pipeline::gate::{check_request, check_response};
use troupe_pipeline::git::{
    Git, PublishOutcome, changes_markdown, commit_write_set, create_worktree, freeze_source,
    publish, remove_worktree,
};
use troupe_pipeline::route::{Effect, Router};
use troupe_pipeline::session::{
    BranchKey, Budget, NewSession, Response, Session, SessionStatus, SourceRecord,
};

fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Gate, route and commit one response; gate every request the transition opens.
fn settle(
    defs: &troupe_pipeline::defs::Definitions,
    s: &mut Session,
    clock: &ManualClock,
    r: &Response,
) -> Vec<Effect> {
    s.write_response(r, "Scripted answer.\n").unwrap();
    let checked = check_response(defs, s, r.branch(), None).unwrap_or_else(|e| panic!("{e}"));
    let router = Router::new(defs, defs.workflow("deliver").unwrap());
    let t = router.route(s.state(), r.branch(), &checked).unwrap();
    let effects = s.commit(t, clock).unwrap();
    for e in &effects {
        if let Effect::OpenBranch { request } = e {
            check_request(defs, s, request.branch(), None).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    effects
}

#[test]
fn the_deliver_example_runs_end_to_end() {
    let defs = common::load(&common::example_defs_dir());
    let repo = tempfile::tempdir().unwrap();
    let source = repo.path();
    let git = Git::new(source);
    git.run(&["init", "--quiet", "-b", "main"]).unwrap();
    git.run(&["config", "user.name", "Test"]).unwrap();
    git.run(&["config", "user.email", "test@example.invalid"])
        .unwrap();
    write(source, "src/lib.rs", "pub fn a() {}\n");
    git.run(&["add", "."]).unwrap();
    git.run(&["commit", "--quiet", "-m", "start"]).unwrap();

    // create: freeze the head, make the manifest and the session worktree before any agent.
    let clock = ManualClock::new(common::START_MS);
    let (target, head) = freeze_source(source).unwrap();
    let mut s = Session::create(
        source,
        &NewSession {
            project: "demo".into(),
            workflow: "deliver".into(),
            first_operator: "plan".into(),
            budget: Budget::default(),
            requirements: Default::default(),
        },
        &clock,
    )
    .unwrap();
    let wt = create_worktree(source, s.id(), &head).unwrap();
    let mut state = s.state().clone();
    state.source = Some(SourceRecord {
        target,
        frozen_head: head.clone(),
        session_branch: wt.branch.clone(),
        worktree: Some(wt.path.to_string_lossy().into_owned()),
        head: head.clone(),
        commits: vec![],
        identity: None,
    });
    s.save(state, &clock).unwrap();
    let router = Router::new(&defs, defs.workflow("deliver").unwrap());
    let effects = s.commit(router.start(s.state()).unwrap(), &clock).unwrap();
    assert!(
        matches!(&effects[0], Effect::OpenBranch { request } if request.head.as_deref() == Some(head.as_str()))
    );
    check_request(&defs, &s, BranchKey::new(1, 1), None).unwrap();

    // plan: writes its plan, waits on a critique, then finishes.
    let k1 = BranchKey::new(1, 1);
    let plan = r#"{"goal":"add b","tasks":[{"title":"add fn b","files":["src/lib.rs"]}]}"#;
    s.write_branch_file(k1, None, "response/data/plan.json", plan.as_bytes())
        .unwrap();
    let waiting = Response::waiting("plan", k1, "critique", "critique")
        .with_field("plan", "response/data/plan.json");
    let effects = settle(&defs, &mut s, &clock, &waiting);
    assert!(
        matches!(&effects[0], Effect::RunExchange { request, .. } if request.operator_id == "critic")
    );
    check_request(&defs, &s, k1, Some("critique")).unwrap();
    s.write_branch_file(
        k1,
        None,
        "critique/response/data/critique.json",
        br#"{"verdict":"sound"}"#,
    )
    .unwrap();
    let mut critique =
        Response::done("critic", k1).with_field("critique", "critique/response/data/critique.json");
    critique.exchange = Some("critique".into());
    s.write_response(&critique, "Sound.\n").unwrap();
    check_response(&defs, &s, k1, Some("critique")).unwrap();
    let done = Response::done("plan", k1).with_field("plan", "response/data/plan.json");
    let effects = settle(&defs, &mut s, &clock, &done);
    let Effect::OpenBranch { request } = effects
        .iter()
        .find(|e| matches!(e, Effect::OpenBranch { .. }))
        .unwrap()
    else {
        unreachable!()
    };
    assert_eq!(
        request.inputs["plan"],
        "step-1/parallel-1/response/data/plan.json"
    );
    assert_eq!(
        s.state().leases["step-2/parallel-1"].holds,
        ["response:step-2/parallel-1", "source:src", "source:tests"]
    );

    // implement: writes source in the worktree; the runner commits the declared write set once.
    let k2 = BranchKey::new(2, 1);
    write(&wt.path, "src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    let op = defs.operator("implement").unwrap();
    let commit = commit_write_set(
        &wt.path,
        op,
        &["src/lib.rs".into()],
        &head,
        "implement: add fn b",
    )
    .unwrap()
    .unwrap();
    s.write_branch_file(
        k2,
        None,
        "response/changes.md",
        changes_markdown(&commit).as_bytes(),
    )
    .unwrap();
    s.write_branch_file(
        k2,
        None,
        "response/data/summary.json",
        br#"{"changed":["src/lib.rs"]}"#,
    )
    .unwrap();
    let mut state = s.state().clone();
    let src = state.source.as_mut().unwrap();
    src.head = commit.commit.clone();
    src.commits.push(commit.commit.clone());
    s.save(state, &clock).unwrap();
    let mut implemented =
        Response::done("implement", k2).with_field("summary", "response/data/summary.json");
    implemented.writes = vec!["src/lib.rs".into()];
    implemented.commits = vec![commit.commit.clone()];
    implemented
        .fallbacks
        .push(troupe_pipeline::session::Fallback {
            code: "FORMAT_SKIPPED".into(),
            note: None,
        });
    let effects = settle(&defs, &mut s, &clock, &implemented);
    let Some(Effect::OpenBranch { request }) = effects
        .iter()
        .find(|e| matches!(e, Effect::OpenBranch { .. }))
    else {
        panic!("{effects:?}")
    };
    assert_eq!(
        request.head.as_deref(),
        Some(commit.commit.as_str()),
        "verify is pinned at what was written"
    );
    assert_eq!(
        request.inputs["summary"],
        "step-2/parallel-1/response/data/summary.json"
    );

    // verify, then publish (fast-forward: the person's branch has not moved).
    let k3 = BranchKey::new(3, 1);
    let report = format!(
        r#"{{"head":"{}","checks":[{{"command":"cargo test","passed":true}}]}}"#,
        commit.commit
    );
    s.write_branch_file(k3, None, "response/data/report.json", report.as_bytes())
        .unwrap();
    settle(
        &defs,
        &mut s,
        &clock,
        &Response::done("verify", k3).with_field("report", "response/data/report.json"),
    );

    let k4 = BranchKey::new(4, 1);
    let out = publish(
        source,
        &wt.branch,
        "main",
        Some(&wt.path),
        "publish session",
    )
    .unwrap();
    assert_eq!(
        out,
        PublishOutcome::FastForward {
            from: head.clone(),
            to: commit.commit.clone()
        }
    );
    let receipt = format!(
        r#"{{"target":"main","commit":"{}","mode":"fast-forward"}}"#,
        commit.commit
    );
    s.write_branch_file(k4, None, "response/data/receipt.json", receipt.as_bytes())
        .unwrap();
    let effects = settle(
        &defs,
        &mut s,
        &clock,
        &Response::done("publish", k4).with_field("receipt", "response/data/receipt.json"),
    );
    assert!(effects.contains(&Effect::Finish));

    // done: leases released; worktree and branch removed.
    assert_eq!(s.state().status, SessionStatus::Done);
    assert!(s.state().leases.is_empty());
    assert_eq!(s.state().fallbacks[&k2][0].code, "FORMAT_SKIPPED");
    remove_worktree(source, &wt).unwrap();
    assert_eq!(git.rev("main").unwrap(), commit.commit);
    assert_eq!(git.run(&["status", "--porcelain"]).unwrap(), "");
}
