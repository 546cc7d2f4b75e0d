//! Switchable engine steps (ADR 0085): `GET/PUT /v1/settings/engine-steps` as
//! `{engine: {step: on}}` (the scribe is on in the video engine, off in general and coding by
//! default), and which engine a conversation runs, `GET/PUT /v1/sessions/:id/engine`.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use troupe_collab::scribe::settings::{EngineSteps, SessionEngine};
use troupe_core::SessionId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_engine_steps, put_engine_steps))
        .routes(routes!(get_session_engine, put_session_engine))
}

#[utoipa::path(
    get, path = "/v1/settings/engine-steps", tag = "sessions",
    responses(
        (status = 200, description = "Every engine's switchable steps: {\"video\": {\"scribe\": true}, …}", body = Object),
    )
)]
async fn get_engine_steps(State(state): State<AppState>) -> Result<Json<EngineSteps>, ApiError> {
    Ok(Json(state.collab.engine_steps()?))
}

#[utoipa::path(
    put, path = "/v1/settings/engine-steps", tag = "sessions",
    request_body(content = Object, description = "The steps to switch, as {engine: {step: bool}}"),
    responses(
        (status = 200, description = "Every engine's steps after the change", body = Object),
        (status = 400, description = "Malformed body", body = ErrorBody),
        (status = 422, description = "An unknown engine or step, or a value that is not true or false (nothing changes)", body = ErrorBody),
    )
)]
async fn put_engine_steps(
    State(state): State<AppState>,
    ApiJson(patch): ApiJson<EngineSteps>,
) -> Result<Json<EngineSteps>, ApiError> {
    Ok(Json(state.collab.set_engine_steps(&patch)?))
}

#[utoipa::path(
    get, path = "/v1/sessions/{id}/engine", tag = "sessions",
    params(("id" = i64, Path, description = "Session id")),
    responses(
        (status = 200, description = "The engine the conversation runs", body = SessionEngine),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such session", body = ErrorBody),
    )
)]
async fn get_session_engine(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SessionEngine>, ApiError> {
    let session = path_id::<SessionId>(&id)?;
    Ok(Json(state.collab.session_engine(session)?))
}

#[utoipa::path(
    put, path = "/v1/sessions/{id}/engine", tag = "sessions",
    params(("id" = i64, Path, description = "Session id")),
    request_body = SessionEngine,
    responses(
        (status = 200, description = "The engine the conversation runs now", body = SessionEngine),
        (status = 400, description = "Malformed body or id", body = ErrorBody),
        (status = 404, description = "No such session", body = ErrorBody),
        (status = 422, description = "engine: not one of video, general, coding", body = ErrorBody),
    )
)]
async fn put_session_engine(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(engine): ApiJson<SessionEngine>,
) -> Result<Json<SessionEngine>, ApiError> {
    let session = path_id::<SessionId>(&id)?;
    Ok(Json(state.collab.set_session_engine(session, &engine)?))
}
