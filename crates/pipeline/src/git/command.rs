//! Running `git` as a child process with a clean environment: no inherited `GIT_DIR` or index
//! (as when called from a hook), C locale, no prompts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[from] std::io::Error),
    #[error("git {args} failed ({code}): {stderr}")]
    Failed {
        args: String,
        code: i32,
        stderr: String,
    },
}

/// `git -C <dir>`, with `-c key=value` settings for this command only.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    config: Vec<String>,
}

impl Git {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            config: Vec::new(),
        }
    }

    /// Every command this runs gets `-c key=value` (nothing is written to a config file).
    pub fn with_config(mut self, key: &str, value: &str) -> Self {
        self.config.push(format!("{key}={value}"));
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("git");
        c.arg("-C").arg(&self.dir);
        for setting in &self.config {
            c.arg("-c").arg(setting);
        }
        c.args(args);
        for var in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_COMMON_DIR",
            "GIT_PREFIX",
        ] {
            c.env_remove(var);
        }
        c.env("LC_ALL", "C").env("GIT_TERMINAL_PROMPT", "0");
        c.stdin(std::process::Stdio::null());
        c
    }

    /// Runs git and returns its output whatever its exit status.
    pub fn output(&self, args: &[&str]) -> Result<Output, GitError> {
        Ok(self.command(args).output()?)
    }

    /// Runs git, requiring success; returns stdout without its trailing newline.
    pub fn run(&self, args: &[&str]) -> Result<String, GitError> {
        let out = self.output(args)?;
        if !out.status.success() {
            return Err(GitError::Failed {
                args: self.shown(args),
                code: out.status.code().unwrap_or(-1),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    }

    /// The command as a person would type it (without `-C`), for error messages.
    fn shown(&self, args: &[&str]) -> String {
        let settings = self.config.iter().flat_map(|s| ["-c", s.as_str()]);
        settings
            .chain(args.iter().copied())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether git exits 0.
    pub fn succeeds(&self, args: &[&str]) -> Result<bool, GitError> {
        Ok(self.output(args)?.status.success())
    }

    /// The commit a revision names.
    pub fn rev(&self, rev: &str) -> Result<String, GitError> {
        self.run(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])
    }

    /// The paths `git status` reports as changed (tracked or untracked), `/`-separated,
    /// leaving out the ignored `.worktrees/` folder.
    pub fn changed_paths(&self) -> Result<Vec<String>, GitError> {
        let out = self.run(&[
            "status",
            "--porcelain=v1",
            "-z",
            "--no-renames",
            "--untracked-files=all",
            "--",
            ".",
            ":(exclude).worktrees",
        ])?;
        Ok(out
            .split('\0')
            .filter(|e| e.len() > 3)
            .map(|e| e[3..].to_string())
            .collect())
    }
}
