//! Reading and writing notes, shared by the HTTP API and the model-facing tools. Each write
//! re-checks the Blueprint rule and the base version inside its transaction.

use crate::notes::blueprint;
use crate::notes::policy::{WriteAction, WriteDecision, evaluate_write};
use crate::slot::blueprint_writes_allowed;
use crate::{WorkflowError, Workflows};
use serde::Deserialize;
use troupe_core::SessionId;
use troupe_store::{NewNote, Note, NoteEdit, NoteEditOutcome, NoteId, NoteKind, Store, StoreError};

pub const MAX_TITLE_CHARS: usize = 200;
pub const MAX_BODY_BYTES: usize = 256 * 1024;

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    /// Repairable input: nothing was written.
    #[error("{0}")]
    Invalid(String),
    /// A Blueprint write outside Plan: nothing was written.
    #[error("{0}")]
    PlanRequired(String),
    /// The note moved on since the version the edit was based on.
    #[error("note {} is at version {}, not {base}; read it again and redo the edit", .current.id, .current.version)]
    RevisionConflict { base: i64, current: Box<Note> },
    #[error("note {0} not found")]
    NotFound(NoteId),
    #[error("{0}")]
    Store(String),
}

impl From<StoreError> for NoteError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Invalid(m) => NoteError::Invalid(m),
            other => NoteError::Store(other.to_string()),
        }
    }
}

impl From<NoteError> for WorkflowError {
    fn from(e: NoteError) -> Self {
        match e {
            NoteError::Invalid(m) => WorkflowError::Invalid(m),
            NoteError::PlanRequired(m) => WorkflowError::conflict("plan_required", m),
            e @ NoteError::RevisionConflict { .. } => {
                WorkflowError::conflict("revision_conflict", e.to_string())
            }
            NoteError::NotFound(id) => WorkflowError::NotFound {
                what: "note",
                id: id.to_string(),
            },
            NoteError::Store(m) => WorkflowError::Store(StoreError::Corrupt(m)),
        }
    }
}

fn check_title(title: &str) -> Result<String, NoteError> {
    let t = title.trim();
    if t.is_empty() {
        return Err(NoteError::Invalid("title: required and non-empty".into()));
    }
    if t.chars().count() > MAX_TITLE_CHARS {
        return Err(NoteError::Invalid(format!(
            "title: at most {MAX_TITLE_CHARS} characters"
        )));
    }
    Ok(t.to_string())
}

fn check_body(body: &str) -> Result<(), NoteError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(NoteError::Invalid(format!(
            "body: at most {MAX_BODY_BYTES} bytes"
        )));
    }
    Ok(())
}

fn check_blueprint(kind: NoteKind, body: &str) -> Result<(), NoteError> {
    if kind != NoteKind::Blueprint {
        return Ok(());
    }
    blueprint::validate(body).map_err(|problems| {
        NoteError::Invalid(format!(
            "body: not a complete Blueprint ({}); it needs these sections as headings: {}",
            problems.join("; "),
            blueprint::SECTIONS.join(", ")
        ))
    })
}

fn decide(
    plan_active: bool,
    action: WriteAction,
    existing: Option<NoteKind>,
    requested: Option<NoteKind>,
) -> Result<(), NoteError> {
    match evaluate_write(plan_active, action, existing, requested) {
        WriteDecision::Allowed => Ok(()),
        WriteDecision::Blocked(reason) => Err(NoteError::PlanRequired(reason)),
    }
}

/// Create a note. `plan_active` is whether the writing session has Plan in its slot.
pub fn create_note(
    store: &Store,
    plan_active: bool,
    kind: NoteKind,
    title: &str,
    body: &str,
) -> Result<Note, NoteError> {
    let title = check_title(title)?;
    check_body(body)?;
    decide(plan_active, WriteAction::Create, None, Some(kind))?;
    check_blueprint(kind, body)?;
    Ok(store.write(|tx| {
        tx.create_note(&NewNote {
            kind,
            title: title.clone(),
            body: body.to_string(),
        })
    })?)
}

/// An edit: absent fields stay as they are.
#[derive(Clone, Debug, Default)]
pub struct NoteChange {
    pub base_version: i64,
    pub kind: Option<NoteKind>,
    pub title: Option<String>,
    pub body: Option<String>,
}

pub fn update_note(
    store: &Store,
    plan_active: bool,
    id: NoteId,
    change: NoteChange,
) -> Result<Note, NoteError> {
    let title = change.title.as_deref().map(check_title).transpose()?;
    if let Some(b) = &change.body {
        check_body(b)?;
    }
    if change.kind.is_none() && title.is_none() && change.body.is_none() {
        return Err(NoteError::Invalid(
            "nothing to change: give title, body or kind".into(),
        ));
    }
    store.write(|tx| {
        let Some(current) = tx.find_note(id)? else {
            return Ok(Err(NoteError::NotFound(id)));
        };
        if let Err(e) = decide(
            plan_active,
            WriteAction::Update,
            Some(current.kind),
            change.kind,
        ) {
            return Ok(Err(e));
        }
        if current.version != change.base_version {
            return Ok(Err(NoteError::RevisionConflict {
                base: change.base_version,
                current: Box::new(current),
            }));
        }
        let kind = change.kind.unwrap_or(current.kind);
        let body = change.body.as_deref().unwrap_or(&current.body);
        if let Err(e) = check_blueprint(kind, body) {
            return Ok(Err(e));
        }
        let edit = NoteEdit {
            base_version: change.base_version,
            kind: change.kind,
            title: title.clone(),
            body: change.body.clone(),
        };
        Ok(match tx.edit_note(id, &edit)? {
            NoteEditOutcome::Updated(n) => Ok(n),
            NoteEditOutcome::Stale { current } => Err(NoteError::RevisionConflict {
                base: change.base_version,
                current: Box::new(current),
            }),
        })
    })?
}

pub fn read_note(store: &Store, id: NoteId) -> Result<Note, NoteError> {
    store
        .read(|tx| tx.find_note(id))?
        .ok_or(NoteError::NotFound(id))
}

pub fn search_notes(
    store: &Store,
    query: Option<&str>,
    kind: Option<NoteKind>,
    limit: u32,
) -> Result<Vec<Note>, NoteError> {
    let q = query.map(str::trim).filter(|q| !q.is_empty());
    Ok(store.read(|tx| tx.notes(q, kind, limit))?)
}

/// `POST /v1/notes`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewNoteRequest {
    /// `note` (default) or `blueprint`.
    #[serde(default)]
    pub kind: Option<String>,
    pub title: String,
    #[serde(default)]
    pub body: String,
    /// The session writing it; a Blueprint needs Plan active there.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub session_id: Option<SessionId>,
}

/// `PATCH /v1/notes/:id`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotePatchRequest {
    /// The version this edit is based on; a stale one is refused (`revision_conflict`).
    pub version: i64,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    /// The session writing it; editing a Blueprint needs Plan active there.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub session_id: Option<SessionId>,
}

pub fn parse_kind(raw: Option<&str>) -> Result<Option<NoteKind>, WorkflowError> {
    raw.map(|k| {
        k.trim()
            .parse::<NoteKind>()
            .map_err(|m| WorkflowError::invalid(format!("kind: {m}")))
    })
    .transpose()
}

impl Workflows {
    /// Whether the named session has Plan active; no session means no Plan.
    fn plan_active_for(&self, session: Option<SessionId>) -> Result<bool, WorkflowError> {
        let Some(session) = session else {
            return Ok(false);
        };
        let thread = match self.collab.direct_thread(session) {
            Err(troupe_collab::CollabError::NotFound { .. }) => {
                return Err(WorkflowError::invalid(format!(
                    "session_id: session {session} does not exist"
                )));
            }
            other => other?,
        };
        let t = self.store().read(|tx| tx.thread(thread))?;
        Ok(blueprint_writes_allowed(t.workflow.as_ref()))
    }

    pub fn create_note(&self, req: NewNoteRequest) -> Result<Note, WorkflowError> {
        let kind = parse_kind(req.kind.as_deref())?.unwrap_or(NoteKind::Note);
        let plan = self.plan_active_for(req.session_id)?;
        Ok(create_note(
            self.store(),
            plan,
            kind,
            &req.title,
            &req.body,
        )?)
    }

    pub fn update_note(&self, id: NoteId, req: NotePatchRequest) -> Result<Note, WorkflowError> {
        let kind = parse_kind(req.kind.as_deref())?;
        let plan = self.plan_active_for(req.session_id)?;
        let change = NoteChange {
            base_version: req.version,
            kind,
            title: req.title,
            body: req.body,
        };
        Ok(update_note(self.store(), plan, id, change)?)
    }

    pub fn note(&self, id: NoteId) -> Result<Note, WorkflowError> {
        Ok(read_note(self.store(), id)?)
    }

    pub fn notes(
        &self,
        query: Option<&str>,
        kind: Option<NoteKind>,
        limit: u32,
    ) -> Result<Vec<Note>, WorkflowError> {
        Ok(search_notes(self.store(), query, kind, limit)?)
    }
}
