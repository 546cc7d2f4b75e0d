//! The documented example (`examples/defs`, workflow `deliver`) run by the runner with the
//! scripted agents in `examples/scripts/` on real git repositories: plan (with a critique
//! exchange) → implement on the session branch → verify → publish; then publish with a merge
//! commit, publish refused on a conflict, and the source rules a writer can break.

mod support;

use serde_json::{Value, json};
use support::{Rig, answer, audit, example_defs, example_script, response, script, write};
use troupe_pipeline::session::SessionStatus;

fn deliver() -> Rig {
    let mut rig = Rig::new(example_defs()).with_repo();
    for op in ["plan", "critic", "implement", "verify", "publish"] {
        rig = rig.script(op, example_script(op));
    }
    rig
}

#[tokio::test]
async fn the_deliver_example_runs_end_to_end_and_fast_forwards() {
    let mut rig = deliver();
    let kept = audit(&mut rig);
    let start = rig.git().rev("main").unwrap();
    let out = rig.start("deliver").await;
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());

    let git = rig.git();
    let main = git.rev("main").unwrap();
    assert_ne!(main, start);
    assert_eq!(
        git.run(&["rev-parse", "main^"]).unwrap(),
        start,
        "a fast-forward"
    );
    assert!(
        git.run(&["show", "main:src/greeting.rs"])
            .unwrap()
            .contains("hello")
    );
    assert_eq!(
        git.run(&["symbolic-ref", "HEAD"]).unwrap(),
        "refs/heads/main"
    );
    assert_eq!(git.run(&["status", "--porcelain"]).unwrap(), "");
    assert!(
        rig.source.path().join("src/greeting.rs").exists(),
        "the person's checkout moved"
    );
    assert_eq!(
        git.run(&["branch", "--list", "session/*"]).unwrap(),
        "",
        "branch removed"
    );
    assert!(!out.root.exists());

    let copy = kept.path().join(&out.session_id);
    let implemented = rig.read(&copy, "step-2/parallel-1/response/response.json");
    assert_eq!(implemented["commits"], json!([main]));
    let changes =
        std::fs::read_to_string(copy.join("step-2/parallel-1/response/changes.md")).unwrap();
    assert!(
        changes.contains("`src/greeting.rs`") && changes.contains(&main),
        "{changes}"
    );
    let state = rig.read(&copy, "state.json");
    assert_eq!(state["source"]["commits"], json!([main]));
    let verify = rig.read(&copy, "step-3/parallel-1/request/request.json");
    assert_eq!(verify["head"], main, "verify is pinned at what was written");
    assert!(
        !copy.join("checkout").exists(),
        "the audit copy leaves the checkout out"
    );
    let log = rig.log();
    assert!(
        log.contains("step-1/parallel-1/critique: answered"),
        "{log}"
    );
    assert!(
        log.contains("step-4/parallel-1: published `main` (fast-forward)"),
        "{log}"
    );
}

/// Verify blocks on its environment (external) once; re-entered, it passes in step 4, and
/// publish runs in step 5.
fn deliver_with_a_pause() -> Rig {
    let b3 = "step-3/parallel-1";
    let down = answer(
        b3,
        &[],
        response(
            "verify",
            b3,
            "blocked",
            json!({"stop": "CHECK_ENVIRONMENT_DOWN", "reason": "the test database is down"}),
        ),
    );
    let b4 = "step-4/parallel-1";
    let report = json!({"head": "pinned", "checks": [{"command": "cargo test", "passed": true}]});
    let passed = answer(
        b4,
        &[("response/data/report.json", report)],
        response(
            "verify",
            b4,
            "done",
            json!({"fields": {"report": "response/data/report.json"}}),
        ),
    );
    let b5 = "step-5/parallel-1";
    let receipt = json!({"target": "main", "commit": "see the task", "mode": "merge"});
    let published = answer(
        b5,
        &[("response/data/receipt.json", receipt)],
        response(
            "publish",
            b5,
            "done",
            json!({"fields": {"receipt": "response/data/receipt.json"}}),
        ),
    );
    deliver()
        .script(
            "verify",
            script(
                down,
                vec![("This branch resumes step-3/parallel-1", passed)],
            ),
        )
        .script("publish", script(published, vec![]))
}

#[tokio::test]
async fn publish_merges_when_the_target_moved_without_conflict_and_reruns_the_gates() {
    let rig = deliver_with_a_pause();
    let out = rig.start("deliver").await;
    assert_eq!(out.status, SessionStatus::Blocked, "{}", rig.log());
    assert_eq!(out.stopped.as_ref().unwrap().route, "external");

    let moved = rig.commit_file("docs/notes.md", "meanwhile\n", "the person works on");
    let out = rig.resume(&out.session_id).await;
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());
    let git = rig.git();
    let parents = git
        .run(&["rev-list", "--parents", "-n", "1", "main"])
        .unwrap();
    assert_eq!(parents.split(' ').count(), 3, "a merge commit: {parents}");
    assert!(parents.contains(&moved));
    assert!(git.run(&["show", "main:src/greeting.rs"]).is_ok());
    assert!(git.run(&["show", "main:docs/notes.md"]).is_ok());
    assert_eq!(git.run(&["status", "--porcelain"]).unwrap(), "");
    assert!(
        rig.log().contains("published `main` (merge)"),
        "{}",
        rig.log()
    );
}

#[tokio::test]
async fn publish_on_a_conflict_is_non_fast_forward_and_the_persons_branch_is_untouched() {
    let rig = deliver_with_a_pause();
    let out = rig.start("deliver").await;
    assert_eq!(out.status, SessionStatus::Blocked, "{}", rig.log());
    let theirs = rig.commit_file("src/greeting.rs", "// mine\n", "the person wrote it too");

    let out = rig.resume(&out.session_id).await;
    assert_eq!(out.status, SessionStatus::Blocked, "{}", rig.log());
    let stopped = out.stopped.unwrap();
    assert_eq!(stopped.stop.as_deref(), Some("NON_FAST_FORWARD"));
    assert_eq!(stopped.route, "user");
    let git = rig.git();
    assert_eq!(git.rev("main").unwrap(), theirs);
    assert_eq!(
        git.run(&["symbolic-ref", "HEAD"]).unwrap(),
        "refs/heads/main"
    );
    assert_eq!(git.run(&["status", "--porcelain"]).unwrap(), "");
    let text = std::fs::read_to_string(rig.source.path().join("src/greeting.rs")).unwrap();
    assert_eq!(text, "// mine\n");
    assert!(
        out.root.join("checkout").exists(),
        "the session stays for a person"
    );
}

#[tokio::test]
async fn a_writer_outside_its_roots_is_refused_and_an_undeclared_write_blocks() {
    let b2 = "step-2/parallel-1";
    let mut calls: Vec<Value> = vec![
        write("checkout/README.md", "not mine to write\n"),
        write("checkout/src/extra.rs", "// not declared\n"),
        write("checkout/src/greeting.rs", "pub fn greeting() {}\n"),
    ];
    calls.extend(answer(
        b2,
        &[("response/data/summary.json", json!({"changed": ["src/greeting.rs"]}))],
        response(
            "implement",
            b2,
            "done",
            json!({"fields": {"summary": "response/data/summary.json"}, "writes": ["src/greeting.rs"]}),
        ),
    ));
    let rig = deliver().script("implement", script(calls, vec![]));
    let out = rig.start("deliver").await;
    assert_eq!(out.status, SessionStatus::Blocked, "{}", rig.log());
    let stopped = out.stopped.unwrap();
    assert_eq!(
        stopped.stop.as_deref(),
        Some("UNDECLARED_WRITE"),
        "{stopped:?}"
    );
    assert!(
        !out.root.join("checkout/README.md").exists(),
        "the lease guard refused it"
    );
    let r = rig.read(&out.root, "step-2/parallel-1/response/response.json");
    assert!(r["reason"].as_str().unwrap().contains("src/extra.rs"));
    let git = rig.git();
    assert_eq!(
        git.run(&["rev-list", "--count", "main"]).unwrap(),
        "1",
        "nothing committed"
    );
}
