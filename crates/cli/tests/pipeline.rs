//! `troupe pipeline` end to end through the real binary: the documented example
//! (`crates/pipeline/examples/defs`, workflow `deliver`) with the scripted agents in
//! `crates/pipeline/examples/scripts`, on a real git repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pipeline_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pipeline")
}

struct Scratch {
    root: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let s = Self {
            root: tempfile::tempdir().unwrap(),
        };
        let repo = s.repo();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        for args in [
            &["init", "--quiet", "-b", "main"][..],
            &["config", "user.name", "Test"],
            &["config", "user.email", "test@example.invalid"],
            &["add", "."],
            &["commit", "--quiet", "-m", "start"],
        ] {
            s.git(args);
        }
        s
    }

    fn repo(&self) -> PathBuf {
        self.root.path().join("repo")
    }

    fn git(&self, args: &[&str]) -> String {
        std::fs::create_dir_all(self.repo()).unwrap();
        let out = Command::new("git")
            .args(args)
            .current_dir(self.repo())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn troupe(&self, args: &[&str]) -> Output {
        let home = self.root.path().join("home");
        Command::new(env!("CARGO_BIN_EXE_troupe"))
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env_remove("TROUPE_LOG")
            .arg("pipeline")
            .args(args)
            .output()
            .unwrap()
    }

    fn runner_flags(&self) -> Vec<String> {
        let p = pipeline_dir();
        vec![
            "--defs".into(),
            p.join("examples/defs").to_string_lossy().into_owned(),
            "--script-dir".into(),
            p.join("examples/scripts").to_string_lossy().into_owned(),
            "--source".into(),
            self.repo().to_string_lossy().into_owned(),
            "--data-dir".into(),
            self.root.path().join("data").to_string_lossy().into_owned(),
        ]
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_documented_example_runs_end_to_end_through_the_binary() {
    let s = Scratch::new();
    let defs = pipeline_dir().join("examples/defs");
    let out = s.troupe(&["validate", defs.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert!(text(&out.stdout).starts_with("ok: 5 operators"));

    let mut args = vec![
        "run".to_string(),
        "deliver".into(),
        "--set".into(),
        "goal=Add a greeting".into(),
    ];
    args.extend(s.runner_flags());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = s.troupe(&args);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stderr}\n{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains(" done"), "{}", text(&out.stdout));
    for line in [
        "step-1/parallel-1: waiting on exchange `critique`",
        "step-1/parallel-1: resumed after exchange `critique`",
        "step-2/parallel-1: committed the write set as ",
        "step-4/parallel-1: published `main` (fast-forward)",
        "session: done: the workflow finished",
    ] {
        assert!(stderr.contains(line), "missing `{line}` in:\n{stderr}");
    }
    assert!(s.git(&["show", "main:src/greeting.rs"]).contains("hello"));
    assert_eq!(s.git(&["status", "--porcelain"]), "");
    assert_eq!(s.git(&["branch", "--list", "session/*"]), "");

    let source = s.repo();
    let out = s.troupe(&["status", "--source", source.to_str().unwrap()]);
    assert!(out.status.success());
    // Nothing left, and the reason why: a done session is removed.
    let said = text(&out.stdout);
    assert!(said.contains("no sessions"), "{said}");
    assert!(
        said.contains("a session that ends done is removed"),
        "{said}"
    );
}

#[test]
fn a_blocked_session_shows_in_status_and_stops() {
    let s = Scratch::new();
    // Verify's environment is down: the session blocks (route external) and stays.
    let scripts = s.root.path().join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    for op in ["plan", "critic", "implement", "publish"] {
        std::fs::copy(
            pipeline_dir().join(format!("examples/scripts/{op}.json")),
            scripts.join(format!("{op}.json")),
        )
        .unwrap();
    }
    let response = serde_json::json!({"schemaVersion": 1, "operatorId": "verify", "step": 3,
        "parallel": 1, "status": "blocked", "stop": "CHECK_ENVIRONMENT_DOWN", "reason": "db down"});
    let verify = serde_json::json!({"name": "verify", "on_exhausted": "repeat_last", "steps": [
        {"tool_calls": [
            {"name": "write_file", "arguments": {"path": "step-3/parallel-1/response/response.md", "content": "down\n"}},
            {"name": "write_file", "arguments": {"path": "step-3/parallel-1/response/response.json", "content": response.to_string()}}
        ]},
        {"text": "Blocked."}
    ]});
    std::fs::write(scripts.join("verify.json"), verify.to_string()).unwrap();
    let mut args: Vec<String> = vec!["run".into(), "deliver".into()];
    args.extend(s.runner_flags());
    let i = args.iter().position(|a| a == "--script-dir").unwrap();
    args[i + 1] = scripts.to_string_lossy().into_owned();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = s.troupe(&args);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("CHECK_ENVIRONMENT_DOWN (route external)"),
        "{stdout}"
    );
    let id = stdout.split_whitespace().nth(1).unwrap().to_string();

    let source = s.repo();
    let src = source.to_str().unwrap();
    let out = s.troupe(&["status", "--source", src]);
    assert!(text(&out.stdout).contains(&format!("{id}  blocked  workflow deliver")));
    let out = s.troupe(&["status", &id, "--source", src]);
    let shown = text(&out.stdout);
    for part in [
        "status: blocked",
        "step-2/parallel-1  implement    done",
        "step-3/parallel-1  verify       blocked CHECK_ENVIRONMENT_DOWN",
        "leases: none",
        "budget: 3 of 24 steps; runs: implement 1/4, plan 1/4, verify 1/4",
        "source: session/",
    ] {
        assert!(shown.contains(part), "missing `{part}` in:\n{shown}");
    }
    let out = s.troupe(&["stop", &id, "--source", src]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = s.troupe(&["status", &id, "--source", src]);
    assert!(text(&out.stdout).contains("status: stopped"));
    assert_eq!(
        s.git(&["rev-list", "--count", "main"]),
        "1",
        "nothing published"
    );
}

#[test]
fn validate_lists_every_problem_and_exits_1() {
    let s = Scratch::new();
    let defs = s.root.path().join("defs");
    std::fs::create_dir_all(defs.join("operators/a")).unwrap();
    std::fs::write(
        defs.join("operators/a/operator.json"),
        r#"{ "id": "a", "profile": "x", "colour": "red" }"#,
    )
    .unwrap();
    std::fs::write(
        defs.join("routing.json"),
        r#"{ "routes": { "ghost": {} } }"#,
    )
    .unwrap();
    let out = s.troupe(&["validate", defs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let shown = text(&out.stdout);
    assert!(shown.contains("problem(s) in the definitions"), "{shown}");
    assert!(
        shown
            .lines()
            .filter(|l| l.trim_start().starts_with("- "))
            .count()
            >= 2,
        "{shown}"
    );
}
