//! Creating, opening and writing a session folder. Every write is atomic (temporary file, then
//! rename), and the manifest is saved only after the files it names are on disk, so a crash
//! leaves either the previous manifest or the new one, never one naming missing files.

use std::path::{Path, PathBuf};

use troupe_core::Clock;

use super::branch::BranchKey;
use super::request::Request;
use super::response::Response;
use super::state::{Budget, SessionState};
use crate::fsutil::{JsonReadError, read_json_value, write_atomic, write_json_atomic};
use crate::gate::{Refusals, Shipped, check_shipped};
use crate::hash::{canonical_json, sha256_bytes};
use crate::route::{Effect, Transition};
use crate::stamp::{iso_utc, session_stamp};

/// The folder under the source checkout that holds sessions and session worktrees.
pub const WORKTREES_DIR: &str = ".worktrees";
/// Sessions live here, under the source checkout.
pub const SESSIONS_DIR: &str = ".worktrees/sessions";
/// The run options a front end recorded, in the session folder.
pub const RUN_OPTIONS_FILE: &str = "run-options.json";

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The folder or its manifest is gone: stop code `SESSION_MISSING`.
    #[error("SESSION_MISSING: {0}")]
    Missing(String),
    /// The manifest does not fit its schema.
    #[error("state.json is refused: {0}")]
    Invalid(Refusals),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What a new session needs.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub project: String,
    pub workflow: String,
    pub first_operator: String,
    pub budget: Budget,
    pub requirements: serde_json::Map<String, serde_json::Value>,
}

/// `<yyyymmdd-HHMMss>-<project>-<first operator>`, with the names reduced to
/// `[a-z0-9._-]`.
pub fn session_id(epoch_ms: i64, project: &str, first_operator: &str) -> String {
    format!(
        "{}-{}-{}",
        session_stamp(epoch_ms),
        slug(project),
        slug(first_operator)
    )
}

fn slug(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    out = out.trim_matches('-').to_string();
    if out.is_empty() { "x".to_string() } else { out }
}

/// An open session folder and its manifest.
#[derive(Debug, Clone)]
pub struct Session {
    root: PathBuf,
    state: SessionState,
}

impl Session {
    /// Creates the session folder under `source` and writes its first manifest. Two sessions
    /// started in the same second get `-2`, `-3`… after the id.
    pub fn create(
        source: &Path,
        new: &NewSession,
        clock: &dyn Clock,
    ) -> Result<Self, SessionError> {
        let now = clock.now_ms();
        let base = session_id(now, &new.project, &new.first_operator);
        let sessions = source.join(SESSIONS_DIR);
        std::fs::create_dir_all(&sessions)?;
        ignore_worktrees_folder(source)?;
        let mut id = base.clone();
        let mut n = 1;
        let root = loop {
            let candidate = sessions.join(&id);
            match std::fs::create_dir(&candidate) {
                Ok(()) => break candidate,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    n += 1;
                    id = format!("{base}-{n}");
                }
                Err(e) => return Err(e.into()),
            }
        };
        let mut state = SessionState::new(
            id,
            new.project.clone(),
            new.workflow.clone(),
            iso_utc(now),
            new.budget,
        );
        state.requirements = new.requirements.clone();
        let session = Self { root, state };
        write_json_atomic(&session.state_path(), &session.state)?;
        Ok(session)
    }

    /// Opens the session `id` under `source`.
    pub fn open(source: &Path, id: &str) -> Result<Self, SessionError> {
        Self::open_dir(&source.join(SESSIONS_DIR).join(id))
    }

    /// Opens a session folder, checking its manifest against the shipped schema.
    pub fn open_dir(root: &Path) -> Result<Self, SessionError> {
        let path = root.join("state.json");
        let value = match read_json_value(&path) {
            Ok(v) => v,
            Err(JsonReadError::Missing(p)) => {
                return Err(SessionError::Missing(format!("{} is missing", p.display())));
            }
            Err(JsonReadError::Io(p, e)) => {
                return Err(SessionError::Missing(format!(
                    "{} cannot be read: {e}",
                    p.display()
                )));
            }
            Err(JsonReadError::Syntax { line, message, .. }) => {
                return Err(SessionError::Invalid(Refusals(vec![
                    crate::gate::Refusal::new(
                        "state.json",
                        format!("malformed JSON at line {line}: {message}"),
                    ),
                ])));
            }
        };
        let refusals = check_shipped(Shipped::State, &value);
        if !refusals.is_empty() {
            return Err(SessionError::Invalid(Refusals(refusals)));
        }
        let state: SessionState = serde_json::from_value(value).map_err(|e| {
            SessionError::Invalid(Refusals(vec![crate::gate::Refusal::new(
                "state.json",
                e.to_string(),
            )]))
        })?;
        Ok(Self {
            root: root.to_path_buf(),
            state,
        })
    }

    pub fn id(&self) -> &str {
        &self.state.id
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn state(&self) -> &SessionState {
        &self.state
    }

    pub fn state_path(&self) -> PathBuf {
        self.root.join("state.json")
    }

    /// Replaces the manifest and saves it atomically. A `stoppedAt` without a time gets the
    /// clock's.
    pub fn save(&mut self, mut state: SessionState, clock: &dyn Clock) -> std::io::Result<()> {
        if let Some(stopped) = state.stopped_at.as_mut()
            && stopped.at.is_none()
        {
            stopped.at = Some(iso_utc(clock.now_ms()));
        }
        write_json_atomic(&self.state_path(), &state)?;
        self.state = state;
        Ok(())
    }

    /// `run-options.json`: how the session was started, as the front end that started it
    /// records it (the runner never reads it), so a later `resume` can run it the same way.
    pub fn run_options_path(&self) -> PathBuf {
        self.root.join(RUN_OPTIONS_FILE)
    }

    pub fn write_run_options(&self, options: &serde_json::Value) -> std::io::Result<()> {
        write_json_atomic(&self.run_options_path(), options)
    }

    /// The recorded run options; `None` when the session has none (started without them).
    pub fn run_options(&self) -> std::io::Result<Option<serde_json::Value>> {
        match read_json_value(&self.run_options_path()) {
            Ok(v) => Ok(Some(v)),
            Err(JsonReadError::Missing(_)) => Ok(None),
            Err(JsonReadError::Io(p, e)) => Err(std::io::Error::other(format!(
                "{} cannot be read: {e}",
                p.display()
            ))),
            Err(JsonReadError::Syntax {
                path, line, column, ..
            }) => Err(std::io::Error::other(format!(
                "{} is not JSON (line {line}, column {column})",
                path.display()
            ))),
        }
    }

    /// `step-N/parallel-M/`.
    pub fn branch_dir(&self, key: BranchKey) -> PathBuf {
        self.root.join(key.to_string())
    }

    /// The folder holding `request/` and `response/`: the branch, or its exchange.
    pub fn exchange_dir(&self, key: BranchKey, exchange: Option<&str>) -> PathBuf {
        match exchange {
            Some(x) => self.branch_dir(key).join(x),
            None => self.branch_dir(key),
        }
    }

    pub fn request_path(&self, key: BranchKey, exchange: Option<&str>) -> PathBuf {
        self.exchange_dir(key, exchange)
            .join("request")
            .join("request.json")
    }

    pub fn response_dir(&self, key: BranchKey, exchange: Option<&str>) -> PathBuf {
        self.exchange_dir(key, exchange).join("response")
    }

    pub fn response_path(&self, key: BranchKey, exchange: Option<&str>) -> PathBuf {
        self.response_dir(key, exchange).join("response.json")
    }

    /// Writes a request and its empty response folders, and returns the request's sha256 and
    /// input hash (what it consumes: operator, exchange, requirements, head and the content of
    /// every input). Does not save the manifest.
    pub fn write_request(&self, request: &Request) -> std::io::Result<(String, String)> {
        let key = request.branch();
        let exchange = request.exchange.as_deref();
        let response = self.response_dir(key, exchange);
        std::fs::create_dir_all(response.join("data"))?;
        std::fs::create_dir_all(response.join("artifacts"))?;
        let mut bytes = serde_json::to_vec_pretty(request).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        write_atomic(&self.request_path(key, exchange), &bytes)?;
        Ok((sha256_bytes(&bytes), self.input_hash(request)))
    }

    fn input_hash(&self, request: &Request) -> String {
        let inputs: serde_json::Map<String, serde_json::Value> = request
            .inputs
            .iter()
            .map(|(kind, path)| {
                let content = std::fs::read(self.root.join(path))
                    .map(|b| sha256_bytes(&b))
                    .unwrap_or_else(|_| "missing".to_string());
                (
                    kind.clone(),
                    serde_json::json!({"path": path, "content": content}),
                )
            })
            .collect();
        let consumed = serde_json::json!({
            "operatorId": request.operator_id,
            "exchange": request.exchange,
            "requirements": request.requirements,
            "head": request.head,
            "inputs": inputs,
        });
        sha256_bytes(canonical_json(&consumed).as_bytes())
    }

    /// Carries out the file side of a routing transition: writes every request it opens,
    /// records their hashes in the new manifest, then saves the manifest. Returns the effects
    /// left for the runner (running agents, exchanges, releasing leases). Writing the same
    /// transition again after a crash writes the same files.
    pub fn commit(
        &mut self,
        transition: Transition,
        clock: &dyn Clock,
    ) -> std::io::Result<Vec<Effect>> {
        let Transition { mut state, effects } = transition;
        for effect in &effects {
            let request = match effect {
                Effect::OpenBranch { request } | Effect::RunExchange { request, .. } => request,
                _ => continue,
            };
            let (sha, input) = self.write_request(request)?;
            state.request_hashes.insert(request.hash_key(), sha);
            state.input_hashes.insert(request.hash_key(), input);
        }
        self.save(state, clock)?;
        Ok(effects)
    }

    /// Reads a request.
    pub fn read_request(
        &self,
        key: BranchKey,
        exchange: Option<&str>,
    ) -> Result<Request, Refusals> {
        let value = crate::gate::read_for_gate(&self.request_path(key, exchange), "request.json")?;
        serde_json::from_value(value).map_err(|e| {
            Refusals(vec![crate::gate::Refusal::new(
                "request.json",
                e.to_string(),
            )])
        })
    }

    /// Writes a response and its `response.md` (what a scripted agent, or the runner recording
    /// a stop of its own, does).
    pub fn write_response(&self, response: &Response, markdown: &str) -> std::io::Result<()> {
        let key = response.branch();
        let exchange = response.exchange.as_deref();
        let dir = self.response_dir(key, exchange);
        write_json_atomic(&dir.join("response.json"), response)?;
        write_atomic(&dir.join("response.md"), markdown.as_bytes())
    }

    /// Writes a file under the branch (or exchange) folder, e.g. `response/data/plan.json`.
    pub fn write_branch_file(
        &self,
        key: BranchKey,
        exchange: Option<&str>,
        path: &str,
        bytes: &[u8],
    ) -> std::io::Result<()> {
        write_atomic(&self.exchange_dir(key, exchange).join(path), bytes)
    }
}

/// Makes `<source>/.worktrees/` ignore itself, so sessions and session worktrees never show
/// as changes in the person's checkout.
fn ignore_worktrees_folder(source: &Path) -> std::io::Result<()> {
    let path = source.join(WORKTREES_DIR).join(".gitignore");
    if !path.exists() {
        write_atomic(&path, b"*\n")?;
    }
    Ok(())
}
