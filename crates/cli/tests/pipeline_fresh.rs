//! `troupe pipeline` as a new user meets it, through the real binary and real git: a machine
//! with no git identity, a git command that fails under a step, and a `resume` that is not
//! told the options again. The README's example (`crates/pipeline/examples/defs`, workflow
//! `deliver`, scripted agents in `crates/pipeline/examples/scripts`) throughout.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pipeline/examples")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

struct Scratch {
    root: tempfile::TempDir,
}

impl Scratch {
    /// A repository with one commit on `main`. `identity` writes a `user.name` and
    /// `user.email` into the repository's own config; without it the repository has none (the
    /// first commit names its author on the command line only).
    fn new(identity: bool) -> Self {
        let s = Self {
            root: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(s.repo().join("src")).unwrap();
        std::fs::create_dir_all(s.home()).unwrap();
        std::fs::write(s.repo().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        s.git(&["init", "--quiet", "-b", "main"]);
        if identity {
            s.git(&["config", "user.name", "Pat Person"]);
            s.git(&["config", "user.email", "pat@example.invalid"]);
        }
        s.git(&["add", "."]);
        s.git(&[
            "-c",
            "user.name=Setup",
            "-c",
            "user.email=setup@example.invalid",
            "commit",
            "--quiet",
            "-m",
            "start",
        ]);
        s
    }

    fn repo(&self) -> PathBuf {
        self.root.path().join("repo")
    }

    /// An empty home: no `.gitconfig`, no troupe config.
    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// The test's own git, in the repository (the machine's configuration applies).
    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.repo())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        text(&out.stdout).trim().to_string()
    }

    /// A command whose git sees only the repository's own configuration: an empty HOME, no
    /// system or global file, none of git's identity variables. CI gives the machine a global
    /// identity; this child cannot see it.
    fn isolated(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let home = self.home();
        let mut c = Command::new(program);
        c.env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("TROUPE_LOG");
        for var in [
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
            "EMAIL",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_PARAMETERS",
        ] {
            c.env_remove(var);
        }
        c
    }

    fn troupe(&self, args: &[String]) -> Output {
        self.isolated(env!("CARGO_BIN_EXE_troupe"))
            .arg("pipeline")
            .args(args)
            .output()
            .unwrap()
    }

    fn scripts(&self) -> PathBuf {
        self.root.path().join("scripts")
    }

    /// The example's scripts, copied so a test can change one.
    fn copy_scripts(&self) {
        std::fs::create_dir_all(self.scripts()).unwrap();
        for op in ["plan", "critic", "implement", "verify", "publish"] {
            let name = format!("{op}.json");
            std::fs::copy(
                examples().join("scripts").join(&name),
                self.scripts().join(&name),
            )
            .unwrap();
        }
    }

    /// `run deliver` as the README gives it, with a data dir and an audit folder of its own.
    fn run_args(&self, scripts: &Path) -> Vec<String> {
        [
            "run",
            "deliver",
            "--set",
            "goal=Add a greeting",
            "--defs",
            &path_str(&examples().join("defs")),
            "--script-dir",
            &path_str(scripts),
            "--source",
            &path_str(&self.repo()),
            "--data-dir",
            &path_str(&self.root.path().join("data")),
            "--keep-audit",
            &path_str(&self.root.path().join("audit")),
        ]
        .map(String::from)
        .to_vec()
    }

    fn state(&self, dir: &Path) -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join("state.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn session_dir(&self, id: &str) -> PathBuf {
        self.repo().join(".worktrees/sessions").join(id)
    }

    /// A pre-commit hook that refuses every commit with a message.
    fn refuse_commits(&self) {
        self.hook(
            "pre-commit",
            "echo 'pre-commit: the tree is frozen for the release' >&2; exit 1",
        );
    }

    fn hook(&self, name: &str, body: &str) {
        let hook = self.repo().join(".git/hooks").join(name);
        std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
        std::fs::write(&hook, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The session id in `session ID done|blocked …`.
fn session_id(stdout: &str) -> String {
    stdout.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn pipeline_example_runs_without_git_identity() {
    let s = Scratch::new(false);
    // The child's git truly has no identity.
    let asked = s
        .isolated("git")
        .args(["config", "user.name"])
        .current_dir(s.repo())
        .output()
        .unwrap();
    assert_eq!(asked.status.code(), Some(1), "{asked:?}");

    let out = s.troupe(&s.run_args(&examples().join("scripts")));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains(" done"), "{stdout}");
    assert!(s.git(&["show", "main:src/greeting.rs"]).contains("hello"));
    // The commit is Troupe's, and nobody's configuration was written to say so.
    assert_eq!(
        s.git(&["log", "-1", "--format=%an <%ae> / %cn <%ce>", "main"]),
        "Troupe <troupe@localhost.invalid> / Troupe <troupe@localhost.invalid>"
    );
    let config = std::fs::read_to_string(s.repo().join(".git/config")).unwrap();
    assert!(!config.contains("[user]"), "{config}");
    assert!(!s.home().join(".gitconfig").exists());
    // The session manifest (in its audit copy) records whose identity it used.
    let id = session_id(&stdout);
    let state = s.state(&s.root.path().join("audit").join(&id));
    assert_eq!(
        state["source"]["identity"],
        serde_json::json!({"name": "Troupe", "email": "troupe@localhost.invalid", "origin": "troupe"})
    );
}

#[test]
fn pipeline_commits_are_the_persons_when_git_names_them() {
    let s = Scratch::new(true);
    let out = s.troupe(&s.run_args(&examples().join("scripts")));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        s.git(&["log", "-1", "--format=%an <%ae>", "main"]),
        "Pat Person <pat@example.invalid>"
    );
    let state = s.state(
        &s.root
            .path()
            .join("audit")
            .join(session_id(&text(&out.stdout))),
    );
    assert_eq!(state["source"]["identity"]["origin"], "person");
    assert_eq!(state["source"]["identity"]["name"], "Pat Person");
}

#[test]
fn git_failure_blocks_session_with_reason() {
    let s = Scratch::new(true);
    s.refuse_commits();
    let out = s.troupe(&s.run_args(&examples().join("scripts")));
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("blocked at step-2/parallel-1 with GIT_FAILED (route user)"),
        "{stdout}"
    );
    let id = session_id(&stdout);

    let source = path_str(&s.repo());
    let listed = text(
        &s.troupe(&["status".into(), "--source".into(), source.clone()])
            .stdout,
    );
    assert!(
        listed.contains(&format!("{id}  blocked  workflow deliver")),
        "{listed}"
    );
    let shown = text(
        &s.troupe(&["status".into(), id.clone(), "--source".into(), source])
            .stdout,
    );
    for part in [
        "status: blocked",
        "stopped at step-2/parallel-1: GIT_FAILED (route user): git commit",
        "failed (1): pre-commit: the tree is frozen for the release",
        "step-2/parallel-1  implement    blocked GIT_FAILED",
        "leases: none",
    ] {
        assert!(shown.contains(part), "missing `{part}` in:\n{shown}");
    }
    // The agent's answer is kept for the retry; nothing was committed or published.
    let response = s
        .session_dir(&id)
        .join("step-2/parallel-1/response/response.json");
    assert!(response.is_file());
    let state = s.state(&s.session_dir(&id));
    assert_eq!(state["source"]["commits"], serde_json::json!([]));
    assert_eq!(
        s.git(&["rev-list", "--count", "main"]),
        "1",
        "nothing published"
    );
}

#[test]
fn a_git_failure_making_the_session_checkout_blocks_the_session_with_reason() {
    let s = Scratch::new(true);
    // `git worktree add` runs post-checkout and fails with it.
    s.hook(
        "post-checkout",
        "echo 'post-checkout: no new worktrees' >&2; exit 1",
    );
    let out = s.troupe(&s.run_args(&examples().join("scripts")));
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let id = session_id(&stdout);
    let shown = text(
        &s.troupe(&["status".into(), id, "--source".into(), path_str(&s.repo())])
            .stdout,
    );
    for part in [
        "status: blocked",
        "stopped: GIT_FAILED (route user): git worktree add",
        "post-checkout: no new worktrees",
    ] {
        assert!(shown.contains(part), "missing `{part}` in:\n{shown}");
    }
}

#[test]
fn a_session_blocked_by_git_resumes_at_the_failed_step_once_the_cause_is_gone() {
    let s = Scratch::new(true);
    s.refuse_commits();
    let out = s.troupe(&s.run_args(&examples().join("scripts")));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let id = session_id(&text(&out.stdout));

    std::fs::remove_file(s.repo().join(".git/hooks/pre-commit")).unwrap();
    let source = path_str(&s.repo());
    let out = s.troupe(&["resume".into(), id.clone(), "--source".into(), source]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // The same step, from the answer on disk: the agent did not run again, no new step.
    for line in [
        "step-2/parallel-1: a response is on disk: gating and routing it",
        "step-2/parallel-1: committed the write set as ",
        "step-4/parallel-1: published `main` (fast-forward)",
    ] {
        assert!(stderr.contains(line), "missing `{line}` in:\n{stderr}");
    }
    assert!(!stderr.contains("step-2/parallel-1: agent"), "{stderr}");
    assert!(s.git(&["show", "main:src/greeting.rs"]).contains("hello"));
    let audit = s.state(&s.root.path().join("audit").join(&id));
    assert_eq!(audit["chain"].as_array().unwrap().len(), 4, "{audit}");
}

#[test]
fn resume_reuses_recorded_options() {
    let s = Scratch::new(true);
    s.copy_scripts();
    // Verify waits (its model pauses), so the run can be interrupted with verify open.
    let stalled =
        serde_json::json!({"name": "verify", "steps": [{"delay_ms": 600_000, "text": "…"}]});
    let verify = s.scripts().join("verify.json");
    std::fs::write(&verify, stalled.to_string()).unwrap();
    let mut child = s
        .isolated(env!("CARGO_BIN_EXE_troupe"))
        .arg("pipeline")
        .args(s.run_args(&s.scripts()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut id = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("session: ")
            && let Some((sid, _)) = rest.split_once(" started in ")
        {
            id = Some(sid.to_string());
        }
        if line.contains("step-3/parallel-1: agent") && line.contains("runs `verify`") {
            break;
        }
    }
    let id = id.expect("the session was named");
    // SAFETY: kill sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    lines.for_each(drop);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(s.state(&s.session_dir(&id))["status"], "running");

    // The person fixes verify's model and resumes, naming only the session and checkout.
    std::fs::copy(examples().join("scripts/verify.json"), &verify).unwrap();
    let out = s.troupe(&[
        "resume".into(),
        id.clone(),
        "--source".into(),
        path_str(&s.repo()),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for reused in [
        format!("--defs {}", examples().join("defs").display()),
        format!("--script-dir {}", s.scripts().display()),
        format!("--data-dir {}", s.root.path().join("data").display()),
        format!("--keep-audit {}", s.root.path().join("audit").display()),
    ] {
        assert!(stderr.contains(&reused), "missing `{reused}` in:\n{stderr}");
    }
    assert!(stdout.contains(&format!("session {id} done")), "{stdout}");
    assert!(s.git(&["show", "main:src/greeting.rs"]).contains("hello"));
    // The recorded audit folder got the copy.
    assert!(
        s.root
            .path()
            .join("audit")
            .join(&id)
            .join("state.json")
            .is_file()
    );
}
