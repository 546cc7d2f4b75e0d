//! Versioned notes; a Blueprint is a note of kind `blueprint`, written only from a session with
//! Plan active.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::workflows::workflows;
use crate::routes::{path_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use troupe_store::{Note, NoteId};
use troupe_workflows::notes::service::parse_kind;
use troupe_workflows::{NewNoteRequest, NotePatchRequest};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_notes, create_note))
        .routes(routes!(get_note, patch_note))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NotesQuery {
    /// Words to find in the title or body.
    pub q: Option<String>,
    /// `note` or `blueprint`.
    pub kind: Option<String>,
    /// How many, most recently updated first: 1 to 200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/notes", tag = "notes",
    params(NotesQuery),
    responses(
        (status = 200, description = "Notes, most recently updated first", body = [Note]),
        (status = 422, description = "Bad kind or limit", body = ErrorBody),
    )
)]
async fn list_notes(
    State(state): State<AppState>,
    q: Result<Query<NotesQuery>, QueryRejection>,
) -> Result<Json<Vec<Note>>, ApiError> {
    let q = query(q)?;
    let limit = query_number("limit", q.limit.as_deref(), 50, 1, 200)?;
    let kind = parse_kind(q.kind.as_deref())?;
    Ok(Json(workflows(&state).notes(
        q.q.as_deref(),
        kind,
        limit,
    )?))
}

#[utoipa::path(
    post, path = "/v1/notes", tag = "notes",
    request_body = NewNoteRequest,
    responses(
        (status = 201, description = "The new note, at version 1", body = Note),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 409, description = "A Blueprint needs Plan active on session_id (`plan_required`)", body = ErrorBody),
        (status = 422, description = "Empty title, unknown kind or session, a Blueprint without its eight sections", body = ErrorBody),
    )
)]
async fn create_note(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<NewNoteRequest>,
) -> Result<(StatusCode, Json<Note>), ApiError> {
    Ok((
        StatusCode::CREATED,
        Json(workflows(&state).create_note(req)?),
    ))
}

#[utoipa::path(
    get, path = "/v1/notes/{id}", tag = "notes",
    params(("id" = i64, Path, description = "Note id")),
    responses(
        (status = 200, description = "The note", body = Note),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such note", body = ErrorBody),
    )
)]
async fn get_note(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Note>, ApiError> {
    Ok(Json(workflows(&state).note(path_id::<NoteId>(&id)?)?))
}

#[utoipa::path(
    patch, path = "/v1/notes/{id}", tag = "notes",
    params(("id" = i64, Path, description = "Note id")),
    request_body = NotePatchRequest,
    responses(
        (status = 200, description = "The note at its next version", body = Note),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such note", body = ErrorBody),
        (status = 409, description = "A stale version (`revision_conflict`), or a Blueprint edit without Plan active on session_id (`plan_required`)", body = ErrorBody),
        (status = 422, description = "Nothing to change, empty title, unknown kind or session, a Blueprint without its eight sections", body = ErrorBody),
    )
)]
async fn patch_note(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<NotePatchRequest>,
) -> Result<Json<Note>, ApiError> {
    let id = path_id::<NoteId>(&id)?;
    Ok(Json(workflows(&state).update_note(id, req)?))
}
