//! `--durability` and the config file's `durability` reach SQLite: each command that opens the
//! store is built from its parsed command line, and `PRAGMA synchronous` is read back on the
//! store's writer connection (2 = FULL, 1 = NORMAL).

use clap::Parser;
use std::path::{Path, PathBuf};
use troupe_store::Durability;

use crate::args::{Cli, Command};
use crate::pipeline_args::PipelineCommand;

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let s = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::write(s.path("script.json"), r#"{"steps": [{"text": "ok"}]}"#).unwrap();
        s
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A config file saying `durability` (or nothing).
    fn config(&self, durability: Option<&str>) -> PathBuf {
        let path = self.path("config.toml");
        let text = durability
            .map(|d| format!("durability = \"{d}\"\n"))
            .unwrap_or_default();
        std::fs::write(&path, text).unwrap();
        path
    }
}

fn parse(args: &[&str]) -> Command {
    Cli::try_parse_from(std::iter::once("troupe").chain(args.iter().copied()))
        .unwrap()
        .command
}

/// Every combination of file and flag, with the level SQLite must report.
const CASES: [(Option<&str>, Option<&str>, i64); 5] = [
    (None, None, 2),
    (Some("normal"), None, 1),
    (None, Some("normal"), 1),
    (Some("normal"), Some("full"), 2),
    (Some("full"), Some("normal"), 1),
];

fn with_flag(mut args: Vec<String>, flag: Option<&str>) -> Vec<String> {
    if let Some(f) = flag {
        args.extend(["--durability".into(), f.into()]);
    }
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[tokio::test]
async fn exec_opens_the_store_with_the_flag_over_the_file() {
    for (file, flag, level) in CASES {
        let s = Scratch::new();
        let args = with_flag(
            vec![
                "exec".into(),
                "--data-dir".into(),
                text(&s.path("data")),
                "--config".into(),
                text(&s.config(file)),
                "--script".into(),
                text(&s.path("script.json")),
                "a task".into(),
            ],
            flag,
        );
        let Command::Exec(exec) = parse(&strs(&args)) else {
            panic!("not exec")
        };
        let engine = crate::exec::build_engine(&exec).unwrap();
        assert_eq!(
            engine.store().synchronous().unwrap(),
            level,
            "file {file:?}, flag {flag:?}"
        );
    }
}

#[tokio::test]
async fn pipeline_run_opens_the_store_with_the_flag_over_the_file() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pipeline/examples");
    for (file, flag, level) in CASES {
        let s = Scratch::new();
        let args = with_flag(
            vec![
                "pipeline".into(),
                "run".into(),
                "deliver".into(),
                "--defs".into(),
                text(&examples.join("defs")),
                "--script-dir".into(),
                text(&examples.join("scripts")),
                "--data-dir".into(),
                text(&s.path("data")),
                "--config".into(),
                text(&s.config(file)),
            ],
            flag,
        );
        let Command::Pipeline(p) = parse(&strs(&args)) else {
            panic!("not pipeline")
        };
        let PipelineCommand::Run(run) = p.command else {
            panic!("not run")
        };
        let mut options = troupe_pipeline::runner::RunOptions::default();
        let runner = crate::pipeline::build_runner(&run.common, &mut options).unwrap();
        assert_eq!(
            runner.engine().store().synchronous().unwrap(),
            level,
            "file {file:?}, flag {flag:?}"
        );
    }
}

#[test]
fn serve_passes_the_flag_over_the_file_to_the_daemon() {
    for (file, flag, level) in CASES {
        let s = Scratch::new();
        let args = with_flag(
            vec![
                "serve".into(),
                "--data-dir".into(),
                text(&s.path("data")),
                "--config".into(),
                text(&s.config(file)),
            ],
            flag,
        );
        let Command::Serve(serve) = parse(&strs(&args)) else {
            panic!("not serve")
        };
        let opts = crate::serve::options(serve).unwrap();
        assert_eq!(opts.durability.synchronous_level(), level);
        // What the daemon opens with those options.
        let store = troupe_server::bootstrap::open_store(
            &opts.data_dir,
            opts.database.as_deref(),
            opts.durability,
        )
        .unwrap();
        assert_eq!(
            store.synchronous().unwrap(),
            level,
            "file {file:?}, flag {flag:?}"
        );
    }
}

#[test]
fn a_bad_durability_flag_is_refused_with_the_choices() {
    for cmd in [
        &["exec", "--durability", "fast", "task"][..],
        &["serve", "--durability", "fast"],
        &[
            "pipeline",
            "resume",
            "s",
            "--defs",
            "d",
            "--durability",
            "fast",
        ],
    ] {
        let e = Cli::try_parse_from(std::iter::once("troupe").chain(cmd.iter().copied()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--durability"), "{e}");
        assert!(
            e.contains("durability must be \"full\"") && e.contains("not \"fast\""),
            "{e}"
        );
    }
    assert_eq!(Durability::default(), Durability::Full);
}
