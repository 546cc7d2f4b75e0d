//! Conversations ("sessions") and their lines.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::{path_id, query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use troupe_collab::{NewSessionRequest, SessionView};
use troupe_core::conversation::SessionMessage;
use troupe_core::{SessionId, SessionMessageId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_sessions, create_session))
        .routes(routes!(get_session))
        .routes(routes!(list_lines, post_line))
}

/// A person's line.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLine {
    pub body: String,
    /// The line this one answers, in the same conversation.
    #[serde(default)]
    pub parent_id: Option<SessionMessageId>,
}

/// Query parameters are read as text and checked here, so a bad one is a 422 that names it.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SessionsQuery {
    /// How many conversations, newest first: 1 to 200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LinesQuery {
    /// Only lines after this line id.
    #[param(value_type = Option<i64>)]
    pub after: Option<String>,
    /// How many lines, oldest first: 1 to 1000 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
}

pub(crate) fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(v)| v)
        .map_err(|e| ApiError::invalid(format!("query: {}", e.body_text())))
}

#[utoipa::path(
    post, path = "/v1/sessions", tag = "sessions",
    request_body = NewSessionRequest,
    responses(
        (status = 201, description = "The new conversation", body = SessionView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 422, description = "Unknown kind, not exactly one Bot, unknown or archived Bot, a folder that is not an existing directory", body = ErrorBody),
    )
)]
async fn create_session(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<NewSessionRequest>,
) -> Result<(StatusCode, Json<SessionView>), ApiError> {
    Ok((StatusCode::CREATED, Json(state.collab.create_session(req)?)))
}

#[utoipa::path(
    get, path = "/v1/sessions", tag = "sessions",
    params(SessionsQuery),
    responses(
        (status = 200, description = "Conversations, newest first", body = [SessionView]),
        (status = 422, description = "Bad limit", body = ErrorBody),
    )
)]
async fn list_sessions(
    State(state): State<AppState>,
    q: Result<Query<SessionsQuery>, QueryRejection>,
) -> Result<Json<Vec<SessionView>>, ApiError> {
    let q = query(q)?;
    let limit = query_number("limit", q.limit.as_deref(), 50, 1, 200)?;
    Ok(Json(state.collab.sessions(limit)?))
}

#[utoipa::path(
    get, path = "/v1/sessions/{id}", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id")),
    responses(
        (status = 200, description = "The conversation, with whether its Bot is working or paused", body = SessionView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
    )
)]
async fn get_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SessionView>, ApiError> {
    Ok(Json(state.collab.session_view(path_id::<SessionId>(&id)?)?))
}

#[utoipa::path(
    post, path = "/v1/sessions/{id}/messages", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id")),
    request_body = NewLine,
    responses(
        (status = 201, description = "The person's line, stored (`routing: reading`); it is read and routed next, and its events say when", body = SessionMessage),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 409, description = "The conversation is archived (`archived`), or a Boss worker whose root is the only entry (`boss_worker`)", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 422, description = "Empty body or bad parent_id", body = ErrorBody),
    )
)]
async fn post_line(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(line): ApiJson<NewLine>,
) -> Result<(StatusCode, Json<SessionMessage>), ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    crate::routes::boss::refuse_worker(&state, id)?;
    // 201 once stored: reading and routing go on without the request (TURN-10), and the
    // line's events tell how far they got.
    let line = state.collab.accept_line(id, line.body, line.parent_id)?;
    Ok((StatusCode::CREATED, Json(line)))
}

#[utoipa::path(
    get, path = "/v1/sessions/{id}/messages", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id"), LinesQuery),
    responses(
        (status = 200, description = "Lines, oldest first", body = [SessionMessage]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 422, description = "Bad after or limit", body = ErrorBody),
    )
)]
async fn list_lines(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<LinesQuery>, QueryRejection>,
) -> Result<Json<Vec<SessionMessage>>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    let q = query(q)?;
    let after = query_id::<SessionMessageId>("after", q.after.as_deref())?;
    let limit = query_number("limit", q.limit.as_deref(), 100, 1, 1000)?;
    Ok(Json(state.collab.lines(id, after, limit)?))
}
