//! Harness for runner tests: a real engine on a temporary store, scripted agents (script files
//! whose steps call `write_file`), and real git repositories.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use troupe_core::thread::EndpointSpec;
use troupe_core::{ManualClock, SystemClock};
use troupe_engine::{Engine, RoleTable};
use troupe_pipeline::defs::Definitions;
use troupe_pipeline::git::Git;
use troupe_pipeline::runner::{self, Outcome, RunOptions, Runner};
use troupe_store::Store;

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture_defs() -> PathBuf {
    crate_dir().join("tests/fixtures/scenario")
}

pub fn example_defs() -> PathBuf {
    crate_dir().join("examples/defs")
}

pub fn example_script(op: &str) -> Value {
    let text =
        std::fs::read_to_string(crate_dir().join(format!("examples/scripts/{op}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A `write_file` call; a non-string `content` is written as pretty JSON.
pub fn write(path: &str, content: impl Into<Value>) -> Value {
    let content = match content.into() {
        Value::String(s) => s,
        other => serde_json::to_string_pretty(&other).unwrap() + "\n",
    };
    json!({"name": "write_file", "arguments": {"path": path, "content": content}})
}

/// A response document for `branch` (`step-N/parallel-M`) with `extra` laid over it.
pub fn response(op: &str, branch: &str, status: &str, extra: Value) -> Value {
    let (s, p) = branch.split_once('/').unwrap();
    let step: u32 = s.trim_start_matches("step-").parse().unwrap();
    let parallel: u32 = p.trim_start_matches("parallel-").parse().unwrap();
    let mut r = json!({"schemaVersion": 1, "operatorId": op, "step": step, "parallel": parallel,
                        "status": status});
    if let (Some(o), Some(e)) = (r.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    r
}

/// The calls that answer `branch`: each data file, `response.md`, then `response.json`.
pub fn answer(branch: &str, files: &[(&str, Value)], response: Value) -> Vec<Value> {
    let mut calls: Vec<Value> = files
        .iter()
        .map(|(p, c)| write(&format!("{branch}/{p}"), c.clone()))
        .collect();
    calls.push(write(
        &format!("{branch}/response/response.md"),
        "Scripted.\n",
    ));
    calls.push(write(&format!("{branch}/response/response.json"), response));
    calls
}

/// A script: `first` answers the first task; each rule answers a later task containing its
/// phrase. Every turn then ends with a short text.
pub fn script(first: Vec<Value>, rules: Vec<(&str, Vec<Value>)>) -> Value {
    json!({
        "name": "test",
        "steps": [{"text": "", "tool_calls": first}, {"text": "Answer written."}],
        "on_exhausted": "repeat_last",
        "rules": rules.into_iter().map(|(phrase, calls)| json!({
            "when_user_contains": phrase, "reply": {"text": "", "tool_calls": calls}
        })).collect::<Vec<_>>(),
    })
}

/// A step whose model call hangs (the process "crashes" while it waits).
pub fn hanging_script(first: Vec<Value>) -> Value {
    json!({
        "name": "hang",
        "steps": [{"text": "", "tool_calls": first}, {"text": "late", "delay_ms": 600000}],
    })
}

pub struct Rig {
    pub source: tempfile::TempDir,
    pub data: tempfile::TempDir,
    pub defs_dir: PathBuf,
    pub scripts: BTreeMap<String, Value>,
    pub options: RunOptions,
    pub events: Arc<Mutex<Vec<String>>>,
}

impl Rig {
    pub fn new(defs_dir: PathBuf) -> Self {
        Self {
            source: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
            defs_dir,
            scripts: BTreeMap::new(),
            options: RunOptions::default(),
            events: Arc::default(),
        }
    }

    /// The source folder as a git repository on `main` with one commit.
    pub fn with_repo(self) -> Self {
        let git = self.git();
        git.run(&["init", "--quiet", "-b", "main"]).unwrap();
        git.run(&["config", "user.name", "Test"]).unwrap();
        git.run(&["config", "user.email", "test@example.invalid"])
            .unwrap();
        self.commit_file("src/lib.rs", "pub fn a() {}\n", "start");
        self
    }

    pub fn git(&self) -> Git {
        Git::new(self.source.path())
    }

    pub fn commit_file(&self, path: &str, text: &str, message: &str) -> String {
        let p = self.source.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        let git = self.git();
        git.run(&["add", path]).unwrap();
        git.run(&["commit", "--quiet", "-m", message]).unwrap();
        git.rev("HEAD").unwrap()
    }

    pub fn script(mut self, op: &str, script: Value) -> Self {
        self.scripts.insert(op.to_string(), script);
        self
    }

    /// A runner on a fresh engine (what a new process builds).
    pub fn runner(&self) -> Runner {
        let defs = Definitions::load(&self.defs_dir).unwrap_or_else(|p| panic!("{p}"));
        let store = Store::open(self.data.path().join("troupe.db"), Arc::new(SystemClock)).unwrap();
        let roles = RoleTable::new(Arc::new(|_| None));
        let (builder, leases) = runner::install(Engine::builder(store, Arc::new(roles)));
        let engine = builder.build();
        let mut options = self.options.clone();
        let dir = self.data.path().join("scripts");
        std::fs::create_dir_all(&dir).unwrap();
        for (op, script) in &self.scripts {
            let path = dir.join(format!("{op}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(script).unwrap()).unwrap();
            options.endpoints.insert(
                op.clone(),
                EndpointSpec {
                    kind: "scripted".into(),
                    base_url: None,
                    model: "scripted".into(),
                    api_key_env: None,
                    script: Some(path.to_string_lossy().into_owned()),
                    takes_pictures: false,
                    thinking_levels: Vec::new(),
                    max_output_tokens: None,
                },
            );
        }
        let events = self.events.clone();
        Runner::new(
            defs,
            engine,
            leases,
            Arc::new(ManualClock::new(1_773_480_413_000)),
            options,
        )
        .with_observer(Arc::new(move |e| {
            events.lock().unwrap().push(e.to_string())
        }))
    }

    pub async fn start(&self, workflow: &str) -> Outcome {
        self.runner()
            .start(self.source.path(), workflow, Default::default())
            .await
            .unwrap_or_else(|e| panic!("{e}\n{}", self.log()))
    }

    pub async fn resume(&self, id: &str) -> Outcome {
        self.runner()
            .resume(self.source.path(), id)
            .await
            .unwrap_or_else(|e| panic!("{e}\n{}", self.log()))
    }

    pub fn log(&self) -> String {
        self.events.lock().unwrap().join("\n")
    }

    pub fn read(&self, root: &Path, rel: &str) -> Value {
        let text = std::fs::read_to_string(root.join(rel))
            .unwrap_or_else(|e| panic!("{rel}: {e}\n{}", self.log()));
        serde_json::from_str(&text).unwrap()
    }

    pub fn state(&self, out: &Outcome) -> Value {
        self.read(&out.root, "state.json")
    }
}

// The scenario definitions' `fan` workflow with scripted operators.

pub fn survey_done(branch: &str) -> Vec<Value> {
    answer(
        branch,
        &[("response/data/findings.json", json!({"items": ["a", "b"]}))],
        response(
            "survey",
            branch,
            "done",
            json!({"fields": {"findings": "response/data/findings.json"}}),
        ),
    )
}

pub fn side_done(op: &str, branch: &str) -> Vec<Value> {
    let file = format!("response/data/{op}.md");
    answer(
        branch,
        &[(file.as_str(), Value::String(format!("{op} side\n")))],
        response(op, branch, "done", json!({"fields": {op: file}})),
    )
}

pub fn blocked(op: &str, branch: &str, stop: &str) -> Vec<Value> {
    answer(
        branch,
        &[],
        response(
            op,
            branch,
            "blocked",
            json!({"stop": stop, "reason": "scripted"}),
        ),
    )
}

pub fn merge_done(branch: &str) -> Vec<Value> {
    answer(
        branch,
        &[("response/data/merged.md", Value::String("merged\n".into()))],
        response(
            "merge",
            branch,
            "done",
            json!({"fields": {"merged": "response/data/merged.md"}}),
        ),
    )
}

/// The fan workflow where every operator simply succeeds.
pub fn plain_fan() -> Rig {
    Rig::new(fixture_defs())
        .script("survey", script(survey_done("step-1/parallel-1"), vec![]))
        .script(
            "left",
            script(side_done("left", "step-2/parallel-1"), vec![]),
        )
        .script(
            "right",
            script(side_done("right", "step-2/parallel-2"), vec![]),
        )
        .script("merge", script(merge_done("step-3/parallel-1"), vec![]))
}

pub fn audit(rig: &mut Rig) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    rig.options.keep_audit = Some(dir.path().to_path_buf());
    dir
}

pub fn find_session(rig: &Rig) -> Option<std::path::PathBuf> {
    let dir = rig.source.path().join(".worktrees/sessions");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
}
