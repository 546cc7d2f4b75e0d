//! Starting, reading and cancelling BlueprintLoops (`/v1/blueprint-loops`). Creating a loop is
//! two transactions — the armed record with its note link, then the start (the session bound,
//! a Plan or Light Loop slot cleared, the first prompt queued) — so a start that fails leaves
//! the record as `failed` with the reason rather than nothing at all.

use crate::blueprint_loop::commit::{self, AfterCommit};
use crate::blueprint_loop::machine::{self, Event};
use crate::blueprint_loop::texts::AUDIT_AGENT;
use crate::blueprint_loop::worktree;
use crate::controls::{self, SlotFacts, SlotRequest};
use crate::service::apply_in_tx;
use crate::slot::WorkflowSlot;
use crate::{WorkflowError, Workflows};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use troupe_core::blueprint_loop::{BlueprintLoop, BlueprintLoopId, RunMode};
use troupe_core::{SessionId, ThreadId};
use troupe_store::{NewBlueprintLoop, NoteId, NoteKind, StoreError, Tx};

/// `POST /v1/blueprint-loops`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewBlueprintLoopRequest {
    /// The session the loop is started from (and, in `current` mode, runs in).
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// The Blueprint note.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub note_id: NoteId,
    /// The version the caller read; refused with 409 if the note has moved on.
    #[serde(default)]
    pub note_version: Option<i64>,
    /// `current` (default), `new` or `worktree`.
    #[serde(default)]
    pub run_mode: Option<String>,
    /// The run-specific instruction given with the Blueprint.
    #[serde(default)]
    pub instruction: Option<String>,
    /// Rejections allowed before the loop fails as `iteration_exhausted`; none: unlimited.
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// Model calls of the execution session the loop may make before it pauses (0: unlimited;
    /// default from the config, 200 unless set). The auditor's calls do not count.
    #[serde(default)]
    pub max_model_calls: Option<u32>,
}

/// A loop as the API shows it: the record and the sessions it runs in.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct BlueprintLoopView {
    #[serde(flatten)]
    pub record: BlueprintLoop,
    /// The execution session (the conversation the executor works in).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub session_id: Option<SessionId>,
    pub execution_running: bool,
    pub audit_running: bool,
}

fn parse_mode(raw: Option<&str>) -> Result<RunMode, WorkflowError> {
    match raw.map(str::trim) {
        None | Some("current") => Ok(RunMode::Current),
        Some("new") => Ok(RunMode::New),
        Some("worktree") => Ok(RunMode::Worktree),
        Some(other) => Err(WorkflowError::invalid(format!(
            "run_mode: unknown mode '{other}' (expected current, new or worktree)"
        ))),
    }
}

/// The Blueprint has no active loop (`already_active` otherwise). Checked before a session or
/// worktree is made, and again in the transaction that writes the loop.
fn check_note_free(tx: &Tx<'_>, note: i64) -> Result<(), WorkflowError> {
    match tx.active_loop_of_note(note)? {
        None => Ok(()),
        Some(l) => Err(WorkflowError::conflict(
            "already_active",
            format!(
                "note_{note} already has an active BlueprintLoop ({}, {}, thread {})",
                l.id,
                l.status.as_str(),
                l.thread_id
            ),
        )),
    }
}

/// The executing session runs no other loop (`blueprint_loop_active` otherwise).
fn check_thread_free(tx: &Tx<'_>, thread: ThreadId) -> Result<(), WorkflowError> {
    match tx.active_loop_of_thread(thread)? {
        None => Ok(()),
        Some(l) => Err(WorkflowError::conflict(
            "blueprint_loop_active",
            format!(
                "this session already runs BlueprintLoop {} ({})",
                l.id,
                l.status.as_str()
            ),
        )),
    }
}

impl Workflows {
    pub async fn create_blueprint_loop(
        &self,
        req: NewBlueprintLoopRequest,
    ) -> Result<BlueprintLoopView, WorkflowError> {
        let mode = parse_mode(req.run_mode.as_deref())?;
        if req.max_iterations == Some(0) {
            return Err(WorkflowError::invalid("max_iterations: must be at least 1"));
        }
        let instruction = req
            .instruction
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let note = match self.store().read(|tx| tx.find_note(req.note_id))? {
            Some(n) => n,
            None => {
                return Err(WorkflowError::invalid(format!(
                    "note_id: {} does not exist",
                    req.note_id
                )));
            }
        };
        if note.kind != NoteKind::Blueprint {
            return Err(WorkflowError::invalid(format!(
                "note_id: {} is a plain note, not a Blueprint",
                note.id
            )));
        }
        if let Some(v) = req.note_version
            && v != note.version
        {
            return Err(WorkflowError::conflict(
                "note_version_mismatch",
                format!(
                    "note_version: {} is at version {}, not {v}; read it again",
                    note.id, note.version
                ),
            ));
        }
        let origin = self.collab.direct_thread(req.session_id)?;
        // Checked before a session or worktree is made; checked again when the loop is written.
        let (origin_thread, free) = self.store().read(|tx| {
            let mut free = check_note_free(tx, note.id.0);
            if mode == RunMode::Current && free.is_ok() {
                free = check_thread_free(tx, origin);
            }
            Ok((tx.thread(origin)?, free))
        })?;
        free?;
        let (thread, worktree) = match mode {
            RunMode::Current => (origin, None),
            RunMode::New | RunMode::Worktree => {
                let ws = PathBuf::from(&origin_thread.workspace);
                let (dir, wt) = if mode == RunMode::Worktree {
                    let p = worktree::create(&ws, note.id.0, self.store().now()).await?;
                    (p.clone(), Some(p.display().to_string()))
                } else {
                    (ws, None)
                };
                let session = self.store().read(|tx| tx.session(req.session_id))?;
                let bot = *session
                    .bot_ids
                    .first()
                    .ok_or_else(|| WorkflowError::invalid("the session has no Bot"))?;
                let view = self.collab.create_session_in(
                    bot,
                    &format!("Blueprint: {}", note.title),
                    &dir,
                )?;
                (self.collab.direct_thread(view.session.id)?, wt)
            }
        };
        let engine = self.engine().clone();
        let limits = crate::guard::limits_for(engine.config().loops, req.max_model_calls);
        let new = NewBlueprintLoop {
            note_id: note.id.0,
            note_version: note.version,
            title: note.title.clone(),
            thread_id: thread,
            origin_thread_id: origin,
            audit_agent: AUDIT_AGENT.into(),
            run_mode: mode,
            user_prompt: instruction,
            max_iterations: req.max_iterations,
            worktree,
            source: troupe_core::blueprint_loop::LoopSource::User,
            source_digest: None,
        };
        // Armed: the record and the note's run count, or a clear refusal and nothing written.
        let armed = self.store().write(|tx| {
            if let Err(e) =
                check_note_free(tx, note.id.0).and_then(|()| check_thread_free(tx, thread))
            {
                return Ok(Err(e));
            }
            let t = tx.thread(thread)?;
            let facts = SlotFacts {
                slot: WorkflowSlot::of(t.workflow.as_ref()),
                running: t.lease.holder.is_some() || engine.is_running(thread),
                blueprint_loop_active: false,
            };
            // A user loop replaces Plan or a Light Loop, only while idle; never another kind.
            let cleared = match &facts.slot {
                None => None,
                Some(WorkflowSlot::Plan | WorkflowSlot::LightLoop(_)) => {
                    match controls::decide(&facts, SlotRequest::Disable) {
                        Ok(tr) => Some(tr),
                        Err(r) => return Ok(Err(r.into())),
                    }
                }
                Some(other) => {
                    return Ok(Err(WorkflowError::conflict(
                        "workflow_active",
                        format!(
                            "workflow '{}' is active on this session; a BlueprintLoop cannot replace it",
                            other.kind()
                        ),
                    )));
                }
            };
            if facts.running {
                return Ok(Err(WorkflowError::conflict(
                    "session_running",
                    "the session is running; start a BlueprintLoop while it is idle (stop it or wait)",
                )));
            }
            if let Some(tr) = cleared {
                let instructions = facts
                    .slot
                    .as_ref()
                    .and_then(WorkflowSlot::light_loop)
                    .map(|ll| ll.instructions.clone())
                    .unwrap_or_default();
                apply_in_tx(tx, thread, &instructions, &tr.effects)?;
                tx.set_workflow(thread, None)?;
            }
            let created = tx.create_blueprint_loop(&new)?;
            tx.start_loop_guard(thread, &created.id.guard_ref(), limits)?;
            Ok(Ok(created))
        })??;
        let started = self.store().write(|tx| {
            let l = tx.blueprint_loop(armed.id)?;
            let step =
                machine::step(&l, Event::Start).map_err(|e| StoreError::Invalid(e.to_string()))?;
            commit::commit(tx, &l, &step)
        });
        if let Err(e) = started {
            self.store().write(|tx| {
                let l = tx.blueprint_loop(armed.id)?;
                let step = machine::step(
                    &l,
                    Event::StartFailed {
                        error: e.to_string(),
                    },
                )
                .map_err(|e| StoreError::Invalid(e.to_string()))?;
                commit::commit(tx, &l, &step)
            })?;
            return self.blueprint_loop_view(armed.id);
        }
        self.engine()
            .request_drive(thread, "blueprint_loop_start", false)
            .await?;
        self.blueprint_loop_view(armed.id)
    }

    pub fn blueprint_loop_view(
        &self,
        id: BlueprintLoopId,
    ) -> Result<BlueprintLoopView, WorkflowError> {
        let (record, session) = self.store().read(|tx| {
            let l = tx.blueprint_loop(id)?;
            let s = tx.thread_session(l.thread_id)?.map(|(s, _)| s);
            Ok((l, s))
        })?;
        Ok(BlueprintLoopView {
            execution_running: self.engine().is_running(record.thread_id),
            audit_running: record
                .audit_thread_id
                .is_some_and(|a| self.engine().is_running(a)),
            session_id: session,
            record,
        })
    }

    pub fn blueprint_loops(
        &self,
        active_only: bool,
        limit: u32,
    ) -> Result<Vec<BlueprintLoopView>, WorkflowError> {
        let ids: Vec<BlueprintLoopId> = self
            .store()
            .read(|tx| tx.blueprint_loops(active_only, limit))?
            .into_iter()
            .map(|l| l.id)
            .collect();
        ids.into_iter()
            .map(|id| self.blueprint_loop_view(id))
            .collect()
    }

    /// The domain cancel path (route and Abandon): `cancelled` with "stopped by user request",
    /// bindings cleared, then live work stopped. Idempotent: an ended loop is returned as is.
    pub async fn cancel_blueprint_loop(
        &self,
        id: BlueprintLoopId,
    ) -> Result<(BlueprintLoopView, bool), WorkflowError> {
        let after: Option<AfterCommit> = self.store().write(|tx| {
            let l = tx.blueprint_loop(id)?;
            let step =
                machine::step(&l, Event::Cancel).map_err(|e| StoreError::Invalid(e.to_string()))?;
            if step.ack != machine::Ack::Recorded {
                return Ok(None);
            }
            Ok(Some(commit::commit(tx, &l, &step)?))
        })?;
        let changed = after.is_some();
        if let Some(a) = after {
            // The auditor's task is cancelled; the execution session's turn is stopped.
            for t in a.abort {
                self.stop_work(t).await;
            }
        }
        Ok((self.blueprint_loop_view(id)?, changed))
    }
}
