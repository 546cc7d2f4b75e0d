//! Helpers shared by the `troupe` binary tests: temp dirs, script files, running the binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tempfile::TempDir;
use troupe_store::Store;

/// A scratch area: a workspace, a data dir, a home with no config, and script files.
pub struct Scratch {
    pub root: TempDir,
    pub workspace: PathBuf,
    pub data: PathBuf,
    pub home: PathBuf,
}

impl Scratch {
    pub fn new() -> Scratch {
        let root = tempfile::tempdir().expect("temp dir");
        let workspace = root.path().join("ws");
        let data = root.path().join("data");
        let home = root.path().join("home");
        for d in [&workspace, &data, &home] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        Scratch {
            root,
            workspace,
            data,
            home,
        }
    }

    /// Write a file under the scratch root and return its path.
    pub fn file(&self, name: &str, content: &str) -> PathBuf {
        let path = self.root.path().join(name);
        std::fs::write(&path, content).expect("write file");
        path
    }

    /// Write a script file for the scripted provider.
    pub fn script(&self, steps: serde_json::Value) -> PathBuf {
        let script = serde_json::json!({ "name": "test", "steps": steps });
        self.file("script.json", &script.to_string())
    }

    /// `troupe exec` with the data dir and workspace set, and a home without a config file.
    pub fn exec(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_troupe"));
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env_remove("TROUPE_LOG")
            .arg("exec")
            .arg("--data-dir")
            .arg(&self.data)
            .arg("--workspace")
            .arg(&self.workspace);
        cmd
    }

    pub fn db(&self) -> PathBuf {
        self.data.join("troupe.db")
    }

    /// The same database the binary uses, opened from the test process.
    pub fn store(&self) -> Store {
        Store::open(self.db(), Arc::new(troupe_core::SystemClock)).expect("open store")
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Poll `cond` until it holds, failing the test after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether a process is gone: no /proc entry, or a zombie nobody reaps.
pub fn process_gone(pid: i32) -> bool {
    let stat = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s,
        Err(_) => return true,
    };
    // The state follows the parenthesised command name.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or("");
    state == "Z" || state == "X"
}

pub fn read_to_string(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}
