//! Source writes and publish against real git repositories in temporary folders.

mod common;

use std::path::Path;

use troupe_pipeline::git::{
    Git, IdentityOrigin, PublishOutcome, changes_markdown, commit_write_set, create_worktree,
    freeze_source, publish, remove_worktree,
};

/// A repository with identity set in its own config (CI has no global one) and one commit on
/// `main`.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let git = Git::new(dir.path());
    git.run(&["init", "--quiet", "-b", "main"]).unwrap();
    for (k, v) in [
        ("user.name", "Test"),
        ("user.email", "test@example.invalid"),
        ("commit.gpgsign", "false"),
    ] {
        git.run(&["config", k, v]).unwrap();
    }
    write(dir.path(), "src/lib.rs", "pub fn a() {}\n");
    write(dir.path(), "README.md", "demo\n");
    git.run(&["add", "."]).unwrap();
    git.run(&["commit", "--quiet", "-m", "start"]).unwrap();
    dir
}

fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn implement() -> troupe_pipeline::defs::Operator {
    common::load(&common::example_defs_dir())
        .operator("implement")
        .unwrap()
        .clone()
}

/// The person's checkout as it looks from outside: HEAD, the target's tip, and status.
fn person_view(source: &Path) -> (String, String, String) {
    let git = Git::new(source);
    (
        git.run(&["symbolic-ref", "HEAD"]).unwrap(),
        git.rev("main").unwrap(),
        git.run(&["status", "--porcelain"]).unwrap(),
    )
}

struct Prepared {
    repo: tempfile::TempDir,
    wt: troupe_pipeline::git::SessionWorktree,
    head: String,
}

/// A session worktree with one committed write set.
fn prepared(id: &str) -> Prepared {
    let repo = repo();
    let (target, head) = freeze_source(repo.path()).unwrap();
    assert_eq!(target, "main");
    let wt = create_worktree(repo.path(), id, &head).unwrap();
    write(&wt.path, "src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    write(&wt.path, "tests/b.rs", "#[test] fn b() {}\n");
    let c = commit_write_set(
        &wt.path,
        &implement(),
        &["src/lib.rs".into(), "tests/b.rs".into()],
        &head,
        "implement b",
    )
    .unwrap()
    .unwrap();
    assert_eq!(c.parent, head);
    Prepared { repo, wt, head }
}

#[test]
fn the_write_set_is_committed_once_on_the_session_branch_with_changes_md() {
    let p = prepared("s1");
    let source = p.repo.path();
    assert_eq!(p.wt.branch, "session/s1");
    let git = Git::new(&p.wt.path);
    assert_eq!(
        git.run(&["rev-list", "--count", &format!("{}..HEAD", p.head)])
            .unwrap(),
        "1"
    );
    let files = git
        .run(&["show", "--name-only", "--format=", "HEAD"])
        .unwrap();
    assert_eq!(files, "src/lib.rs\ntests/b.rs");
    // The person's checkout did not move and shows no changes (the .worktrees folder is ignored).
    assert_eq!(
        person_view(source),
        ("refs/heads/main".into(), p.head.clone(), String::new())
    );

    // changes.md names every path with before/after hashes and the commit.
    write(&p.wt.path, "src/lib.rs", "pub fn c() {}\n");
    let c = commit_write_set(
        &p.wt.path,
        &implement(),
        &["src/lib.rs".into()],
        &git.rev("HEAD").unwrap(),
        "c",
    )
    .unwrap()
    .unwrap();
    // The repository names the person: the commit is theirs, and says so.
    assert_eq!(c.identity.origin, IdentityOrigin::Person);
    assert_eq!(c.identity.name, "Test");
    assert_eq!(
        git.run(&["log", "-1", "--format=%an <%ae>"]).unwrap(),
        "Test <test@example.invalid>"
    );
    let md = changes_markdown(&c);
    assert!(md.contains(&c.commit));
    assert!(md.contains("`src/lib.rs`"));
    assert!(md.contains(&troupe_pipeline::sha256_bytes(b"pub fn c() {}\n")));
    assert!(md.contains(&troupe_pipeline::sha256_bytes(
        b"pub fn a() {}\npub fn b() {}\n"
    )));
}

#[test]
fn writes_outside_the_roots_or_undeclared_block_and_commit_nothing() {
    let repo = repo();
    let (_, head) = freeze_source(repo.path()).unwrap();
    let wt = create_worktree(repo.path(), "s2", &head).unwrap();
    write(&wt.path, "README.md", "changed\n");
    let err =
        commit_write_set(&wt.path, &implement(), &["README.md".into()], &head, "m").unwrap_err();
    assert_eq!(err.code(), Some("WRITE_OUTSIDE_ROOTS"));
    let err =
        commit_write_set(&wt.path, &implement(), &["src/lib.rs".into()], &head, "m").unwrap_err();
    assert_eq!(
        err.code(),
        Some("WRITE_OUTSIDE_ROOTS"),
        "an undeclared change outside the roots"
    );
    std::fs::write(wt.path.join("README.md"), "demo\n").unwrap();
    write(&wt.path, "src/extra.rs", "\n");
    let err =
        commit_write_set(&wt.path, &implement(), &["src/lib.rs".into()], &head, "m").unwrap_err();
    assert_eq!(err.code(), Some("UNDECLARED_WRITE"));
    let err = commit_write_set(
        &wt.path,
        &implement(),
        &["src/extra.rs".into()],
        "0".repeat(40).as_str(),
        "m",
    )
    .unwrap_err();
    assert_eq!(err.code(), Some("SOURCE_DRIFT"));
    assert_eq!(
        Git::new(&wt.path).rev("HEAD").unwrap(),
        head,
        "nothing was committed"
    );
}

#[test]
fn a_dirty_person_checkout_blocks() {
    let repo = repo();
    write(repo.path(), "src/lib.rs", "// edited by a person\n");
    assert_eq!(
        freeze_source(repo.path()).unwrap_err().code(),
        Some("DIRTY_CHECKOUT")
    );

    let p = prepared("s3");
    write(p.repo.path(), "notes.txt", "untracked\n");
    let err = publish(
        p.repo.path(),
        &p.wt.branch,
        "main",
        Some(&p.wt.path),
        "merge",
    )
    .unwrap_err();
    assert_eq!(err.code(), Some("DIRTY_CHECKOUT"));
    assert_eq!(Git::new(p.repo.path()).rev("main").unwrap(), p.head);
}

#[test]
fn publish_fast_forwards_when_the_target_has_not_moved() {
    let p = prepared("s4");
    let tip = Git::new(&p.wt.path).rev("HEAD").unwrap();
    let out = publish(
        p.repo.path(),
        &p.wt.branch,
        "main",
        Some(&p.wt.path),
        "merge",
    )
    .unwrap();
    assert_eq!(
        out,
        PublishOutcome::FastForward {
            from: p.head.clone(),
            to: tip.clone()
        }
    );
    let (head, main, status) = person_view(p.repo.path());
    assert_eq!(
        (head.as_str(), main.as_str(), status.as_str()),
        ("refs/heads/main", tip.as_str(), "")
    );
    assert!(
        std::fs::read_to_string(p.repo.path().join("src/lib.rs"))
            .unwrap()
            .contains("fn b")
    );
    // Publishing again has nothing to do; cleanup removes the worktree and branch.
    let again = publish(
        p.repo.path(),
        &p.wt.branch,
        "main",
        Some(&p.wt.path),
        "merge",
    )
    .unwrap();
    assert_eq!(again, PublishOutcome::UpToDate { commit: tip });
    remove_worktree(p.repo.path(), &p.wt).unwrap();
    assert!(!p.wt.path.exists());
    assert!(
        Git::new(p.repo.path())
            .rev("refs/heads/session/s4")
            .is_err()
    );
}

#[test]
fn publish_makes_a_merge_commit_when_the_target_moved_without_conflict() {
    let p = prepared("s5");
    let source = p.repo.path();
    let git = Git::new(source);
    write(source, "docs/guide.md", "guide\n");
    git.run(&["add", "docs/guide.md"]).unwrap();
    git.run(&["commit", "--quiet", "-m", "person's work"])
        .unwrap();
    let moved = git.rev("main").unwrap();

    let out = publish(
        source,
        &p.wt.branch,
        "main",
        Some(&p.wt.path),
        "merge session",
    )
    .unwrap();
    let PublishOutcome::MergedOnSession {
        merge_commit,
        rerun_gates,
        identity,
    } = out
    else {
        panic!("{out:?}")
    };
    assert!(
        rerun_gates,
        "the caller re-runs the gates on the merge result"
    );
    // The repository names the person, so the merge is theirs.
    assert_eq!(identity.origin, IdentityOrigin::Person);
    assert_eq!(
        (identity.name.as_str(), identity.email.as_str()),
        ("Test", "test@example.invalid")
    );
    // The merge sits on the session branch; the person's branch has not moved yet.
    assert_eq!(git.rev("main").unwrap(), moved);
    assert_eq!(Git::new(&p.wt.path).rev("HEAD").unwrap(), merge_commit);
    let parents = git
        .run(&["rev-list", "--parents", "-n", "1", &merge_commit])
        .unwrap();
    assert_eq!(parents.split(' ').count(), 3);
    assert!(p.wt.path.join("docs/guide.md").is_file());

    // After the gates pass on it, publishing again fast-forwards the target to the merge.
    let out = publish(
        source,
        &p.wt.branch,
        "main",
        Some(&p.wt.path),
        "merge session",
    )
    .unwrap();
    assert_eq!(
        out,
        PublishOutcome::FastForward {
            from: moved,
            to: merge_commit.clone()
        }
    );
    assert_eq!(person_view(source).1, merge_commit);
}

#[test]
fn a_conflict_is_non_fast_forward_and_leaves_the_person_untouched() {
    let p = prepared("s6");
    let source = p.repo.path();
    let git = Git::new(source);
    write(source, "src/lib.rs", "pub fn person() {}\n");
    git.run(&["commit", "--quiet", "-am", "person's conflicting work"])
        .unwrap();
    let before = person_view(source);
    let session_tip = git.rev(&p.wt.branch).unwrap();

    let err = publish(source, &p.wt.branch, "main", Some(&p.wt.path), "merge").unwrap_err();
    assert_eq!(err.code(), Some("NON_FAST_FORWARD"));
    assert_eq!(person_view(source), before);
    assert_eq!(
        std::fs::read_to_string(source.join("src/lib.rs")).unwrap(),
        "pub fn person() {}\n"
    );
    assert_eq!(git.rev(&p.wt.branch).unwrap(), session_tip);
    assert!(!source.join(".git/MERGE_HEAD").exists());
    assert_eq!(
        Git::new(&p.wt.path)
            .run(&["status", "--porcelain"])
            .unwrap(),
        ""
    );
}

#[test]
fn a_missing_target_is_target_missing() {
    let p = prepared("s7");
    let err = publish(p.repo.path(), &p.wt.branch, "release", None, "merge").unwrap_err();
    assert_eq!(err.code(), Some("TARGET_MISSING"));
}
