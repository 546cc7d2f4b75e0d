//! The runner options `troupe pipeline run` records in the session folder
//! (`run-options.json`), so `resume` runs the session the same way without being told again:
//! the definitions folder, the models (script folder, endpoint flags, config file), the data
//! dir, the durability, the agent limit and the audit folder. Paths are recorded absolute.
//! API keys are never recorded, only the name of the variable that holds one.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use troupe_pipeline::session::Session;

use crate::pipeline_args::RunnerFlags;

/// What `run` was given (flags left out are `None`, so resume can tell "not given" apart).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Recorded {
    pub defs: Option<PathBuf>,
    pub script_dir: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    pub keep_audit: Option<PathBuf>,
    pub max_agents: Option<usize>,
    pub durability: Option<String>,
    /// The endpoint flags, as one choice: resume replaces them together or not at all.
    pub endpoint: Endpoint,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Endpoint {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub provider: Option<String>,
    pub script: Option<PathBuf>,
}

impl Endpoint {
    fn of(flags: &RunnerFlags) -> Self {
        Self {
            base_url: flags.base_url.clone(),
            model: flags.model.clone(),
            api_key_env: flags.api_key_env.clone(),
            provider: flags.provider.clone(),
            script: flags.script.clone(),
        }
    }

    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

fn absolute(p: &Option<PathBuf>) -> anyhow::Result<Option<PathBuf>> {
    p.as_deref()
        .map(|p| std::path::absolute(p).with_context(|| format!("cannot resolve {}", p.display())))
        .transpose()
}

impl Recorded {
    /// What to record for a run with `flags`.
    pub fn of(flags: &RunnerFlags) -> anyhow::Result<Self> {
        let mut endpoint = Endpoint::of(flags);
        endpoint.script = absolute(&endpoint.script)?;
        Ok(Self {
            defs: absolute(&flags.defs)?,
            script_dir: absolute(&flags.script_dir)?,
            config: absolute(&flags.config)?,
            data_dir: absolute(&flags.data_dir)?,
            keep_audit: absolute(&flags.keep_audit)?,
            max_agents: flags.max_agents,
            durability: flags.durability.map(|d| d.to_string()),
            endpoint,
        })
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plain fields serialize")
    }

    /// What the session recorded at `run`; the default (nothing) for a session without it.
    pub fn read(session: &Session) -> anyhow::Result<Self> {
        let path = session.run_options_path();
        match session.run_options()? {
            None => Ok(Self::default()),
            Some(v) => serde_json::from_value(v).with_context(|| format!("{}", path.display())),
        }
    }

    /// `given` (resume's flags) over what was recorded: each flag given replaces its recorded
    /// value; any endpoint flag given replaces the recorded endpoint flags as a whole. Returns
    /// the flags to run with and the recorded options reused, for the person to see.
    pub fn under(&self, mut given: RunnerFlags) -> anyhow::Result<(RunnerFlags, Vec<String>)> {
        let mut reused = Vec::new();
        let mut path = |slot: &mut Option<PathBuf>, recorded: &Option<PathBuf>, flag: &str| {
            if slot.is_none()
                && let Some(r) = recorded
            {
                reused.push(format!("{flag} {}", r.display()));
                *slot = Some(r.clone());
            }
        };
        path(&mut given.defs, &self.defs, "--defs");
        path(&mut given.script_dir, &self.script_dir, "--script-dir");
        path(&mut given.config, &self.config, "--config");
        path(&mut given.data_dir, &self.data_dir, "--data-dir");
        path(&mut given.keep_audit, &self.keep_audit, "--keep-audit");
        if given.max_agents.is_none()
            && let Some(n) = self.max_agents
        {
            reused.push(format!("--max-agents {n}"));
            given.max_agents = Some(n);
        }
        if given.durability.is_none()
            && let Some(d) = &self.durability
        {
            let d = d
                .parse()
                .with_context(|| "the recorded durability".to_string())?;
            reused.push(format!("--durability {d}"));
            given.durability = Some(d);
        }
        if Endpoint::of(&given).is_empty() && !self.endpoint.is_empty() {
            let e = &self.endpoint;
            for (flag, v) in [
                ("--base-url", &e.base_url),
                ("--model", &e.model),
                ("--api-key-env", &e.api_key_env),
                ("--provider", &e.provider),
            ] {
                if let Some(v) = v {
                    reused.push(format!("{flag} {v}"));
                }
            }
            if let Some(s) = &e.script {
                reused.push(format!("--script {}", s.display()));
            }
            given.base_url = e.base_url.clone();
            given.model = e.model.clone();
            given.api_key_env = e.api_key_env.clone();
            given.provider = e.provider.clone();
            given.script = e.script.clone();
        }
        Ok((given, reused))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use crate::pipeline_args::PipelineCommand;
    use clap::Parser;
    use std::path::Path;

    fn resume_flags(extra: &[&str]) -> RunnerFlags {
        let args = ["troupe", "pipeline", "resume", "s"].iter().chain(extra);
        let Command::Pipeline(p) = Cli::try_parse_from(args).unwrap().command else {
            panic!("not pipeline")
        };
        let PipelineCommand::Resume(r) = p.command else {
            panic!("not resume")
        };
        r.common
    }

    fn recorded() -> Recorded {
        Recorded {
            defs: Some("/defs".into()),
            script_dir: Some("/scripts".into()),
            data_dir: Some("/data".into()),
            max_agents: Some(2),
            durability: Some("normal".into()),
            endpoint: Endpoint {
                base_url: Some("http://127.0.0.1:11434/v1".into()),
                model: Some("qwen".into()),
                ..Endpoint::default()
            },
            ..Recorded::default()
        }
    }

    #[test]
    fn resume_without_flags_runs_as_recorded() {
        let (flags, reused) = recorded().under(resume_flags(&[])).unwrap();
        assert_eq!(flags.defs.as_deref(), Some(Path::new("/defs")));
        assert_eq!(flags.script_dir.as_deref(), Some(Path::new("/scripts")));
        assert_eq!(flags.max_agents, Some(2));
        assert_eq!(flags.durability, Some(troupe_store::Durability::Normal));
        assert_eq!(flags.model.as_deref(), Some("qwen"));
        assert!(reused.contains(&"--defs /defs".to_string()), "{reused:?}");
        assert!(reused.contains(&"--model qwen".to_string()), "{reused:?}");
    }

    #[test]
    fn a_flag_given_to_resume_replaces_its_recorded_value() {
        let given = resume_flags(&[
            "--defs",
            "/other",
            "--durability",
            "full",
            "--script",
            "/s.json",
        ]);
        let (flags, reused) = recorded().under(given).unwrap();
        assert_eq!(flags.defs.as_deref(), Some(Path::new("/other")));
        assert_eq!(flags.durability, Some(troupe_store::Durability::Full));
        // One endpoint flag given replaces the recorded endpoint flags together.
        assert_eq!(flags.script.as_deref(), Some(Path::new("/s.json")));
        assert_eq!((flags.base_url, flags.model), (None, None));
        assert!(
            !reused.iter().any(|r| r.starts_with("--defs")),
            "{reused:?}"
        );
        // What was not given is still as recorded.
        assert_eq!(flags.script_dir.as_deref(), Some(Path::new("/scripts")));
    }

    #[test]
    fn recorded_paths_are_absolute() {
        let Command::Pipeline(p) = Cli::try_parse_from([
            "troupe", "pipeline", "run", "deliver", "--defs", "rel/defs", "--script", "s.json",
        ])
        .unwrap()
        .command
        else {
            panic!("not pipeline")
        };
        let PipelineCommand::Run(run) = p.command else {
            panic!("not run")
        };
        let r = Recorded::of(&run.common).unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(r.defs, Some(cwd.join("rel/defs")));
        assert_eq!(r.endpoint.script, Some(cwd.join("s.json")));
        let back: Recorded = serde_json::from_value(r.to_json()).unwrap();
        assert_eq!(back, r);
    }
}
