//! Shared test harness: a temporary source folder, a session, and scripted agents that write
//! files and a response, pass the gates, and route.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use troupe_core::ManualClock;
use troupe_pipeline::defs::Definitions;
use troupe_pipeline::gate::{Refusals, check_request, check_response};
use troupe_pipeline::route::{Effect, Router};
use troupe_pipeline::session::{BranchKey, Budget, NewSession, Response, Session};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn example_defs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/defs")
}

pub fn load(dir: &Path) -> Definitions {
    Definitions::load(dir).unwrap_or_else(|p| panic!("{p}"))
}

/// 2026-03-14T09:26:53Z
pub const START_MS: i64 = 1_773_480_413_000;

pub struct Harness {
    pub source: tempfile::TempDir,
    pub defs: Definitions,
    pub workflow: String,
    pub session: Session,
    pub clock: ManualClock,
}

impl Harness {
    pub fn new(defs_dir: &Path, workflow: &str) -> Self {
        Self::with_budget(defs_dir, workflow, Budget::default())
    }

    pub fn with_budget(defs_dir: &Path, workflow: &str, budget: Budget) -> Self {
        let defs = load(defs_dir);
        let source = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(START_MS);
        let first = defs
            .workflow(workflow)
            .unwrap()
            .first_operator()
            .unwrap()
            .to_string();
        let session = Session::create(
            source.path(),
            &NewSession {
                project: "demo".into(),
                workflow: workflow.into(),
                first_operator: first,
                budget,
                requirements: Default::default(),
            },
            &clock,
        )
        .unwrap();
        Self {
            source,
            defs,
            workflow: workflow.into(),
            session,
            clock,
        }
    }

    fn router(&self) -> Router<'_> {
        Router::new(&self.defs, self.defs.workflow(&self.workflow).unwrap())
    }

    /// Opens the first step; every request it writes passes the request gate.
    pub fn start(&mut self) -> Vec<Effect> {
        let t = self.router().start(self.session.state()).unwrap();
        let effects = self.session.commit(t, &self.clock).unwrap();
        self.gate_requests(&effects);
        effects
    }

    fn gate_requests(&self, effects: &[Effect]) {
        for e in effects {
            match e {
                Effect::OpenBranch { request } => {
                    check_request(&self.defs, &self.session, request.branch(), None)
                        .unwrap_or_else(|r| {
                            panic!("request gate refused {}: {r}", request.branch())
                        });
                }
                Effect::RunExchange {
                    branch, exchange, ..
                } => {
                    check_request(&self.defs, &self.session, *branch, Some(exchange))
                        .unwrap_or_else(|r| {
                            panic!("request gate refused {branch}/{exchange}: {r}")
                        });
                }
                _ => {}
            }
        }
    }

    /// A scripted agent: writes `files` (paths relative to the branch) and the response, then
    /// the response gate, routing and the commit of the transition. A refusal routes nothing.
    pub fn answer(
        &mut self,
        response: Response,
        files: &[(&str, &str)],
    ) -> Result<Vec<Effect>, Refusals> {
        let key = response.branch();
        for (path, text) in files {
            self.session
                .write_branch_file(key, None, path, text.as_bytes())
                .unwrap();
        }
        self.session
            .write_response(&response, "Scripted.\n")
            .unwrap();
        let checked = check_response(&self.defs, &self.session, key, None)?;
        let t = self
            .router()
            .route(self.session.state(), key, &checked)
            .unwrap();
        let effects = self.session.commit(t, &self.clock).unwrap();
        self.gate_requests(&effects);
        Ok(effects)
    }

    /// A scripted exchange agent: writes its files and response and passes the response gate.
    pub fn answer_exchange(
        &mut self,
        key: BranchKey,
        exchange: &str,
        response: Response,
        files: &[(&str, &str)],
    ) {
        for (path, text) in files {
            self.session
                .write_branch_file(key, None, path, text.as_bytes())
                .unwrap();
        }
        self.session
            .write_response(&response, "Exchange.\n")
            .unwrap();
        check_response(&self.defs, &self.session, key, Some(exchange))
            .unwrap_or_else(|r| panic!("{r}"));
    }

    pub fn key(step: u32, parallel: u32) -> BranchKey {
        BranchKey::new(step, parallel)
    }
}

/// The branches an effect list opens, with their operators.
pub fn opened(effects: &[Effect]) -> Vec<(String, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::OpenBranch { request } => {
                Some((request.branch().to_string(), request.operator_id.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The request an effect list opens for `key`.
pub fn request_for(effects: &[Effect], key: BranchKey) -> troupe_pipeline::session::Request {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::OpenBranch { request } if request.branch() == key => Some(request.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no request for {key} in {effects:?}"))
}
