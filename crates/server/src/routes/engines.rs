//! Engines (ADR 0085): the switchable steps `GET/PUT /v1/settings/engine-steps` as
//! `{engine: {step: on}}`; the Engines panel `GET /v1/settings/engines` and Settings' default
//! `PUT /v1/settings/default-engine`; which engine a conversation runs, chosen or by default,
//! `GET/PUT /v1/sessions/:id/engine`; and the engine a job runs under, `GET /v1/tasks/:id/engine`.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use troupe_collab::engines::{
    DefaultEngine, EngineSteps, EnginesView, JobEngine, SessionEngine, SessionEngineView,
};
use troupe_core::{PlanId, SessionId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_engine_steps, put_engine_steps))
        .routes(routes!(get_engines))
        .routes(routes!(put_default_engine))
        .routes(routes!(get_session_engine, put_session_engine))
        .routes(routes!(get_job_engine))
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
    get, path = "/v1/settings/engines", tag = "sessions",
    responses(
        (status = 200, description = "Settings' default engine and each engine with its steps, the steps it leaves off and how many conversations run it", body = EnginesView),
    )
)]
async fn get_engines(State(state): State<AppState>) -> Result<Json<EnginesView>, ApiError> {
    Ok(Json(state.collab.engines()?))
}

#[utoipa::path(
    put, path = "/v1/settings/default-engine", tag = "sessions",
    request_body = DefaultEngine,
    responses(
        (status = 200, description = "The engines after the change: every conversation that never chose runs the new default", body = EnginesView),
        (status = 400, description = "Malformed body", body = ErrorBody),
        (status = 422, description = "engine: not one of video, general, coding (nothing changes)", body = ErrorBody),
    )
)]
async fn put_default_engine(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<DefaultEngine>,
) -> Result<Json<EnginesView>, ApiError> {
    Ok(Json(state.collab.set_default_engine(&req)?))
}

#[utoipa::path(
    get, path = "/v1/sessions/{id}/engine", tag = "sessions",
    params(("id" = i64, Path, description = "Session id")),
    responses(
        (status = 200, description = "The engine the conversation runs, and whether it chose it (else Settings' default)", body = SessionEngineView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such session", body = ErrorBody),
    )
)]
async fn get_session_engine(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SessionEngineView>, ApiError> {
    let session = path_id::<SessionId>(&id)?;
    Ok(Json(state.collab.session_engine(session)?))
}

#[utoipa::path(
    put, path = "/v1/sessions/{id}/engine", tag = "sessions",
    params(("id" = i64, Path, description = "Session id")),
    request_body = SessionEngine,
    responses(
        (status = 200, description = "The engine the conversation runs now", body = SessionEngineView),
        (status = 400, description = "Malformed body or id", body = ErrorBody),
        (status = 404, description = "No such session", body = ErrorBody),
        (status = 422, description = "engine: not one of video, general, coding", body = ErrorBody),
    )
)]
async fn put_session_engine(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(engine): ApiJson<SessionEngine>,
) -> Result<Json<SessionEngineView>, ApiError> {
    let session = path_id::<SessionId>(&id)?;
    Ok(Json(state.collab.set_session_engine(session, &engine)?))
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/engine", tag = "sessions",
    params(("id" = i64, Path, description = "Job (task) id")),
    responses(
        (status = 200, description = "The engine the job's calls run under: its conversation's choice, the one it was opened from, else Settings' default; why, the steps it leaves off and how many conversations run it", body = JobEngine),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
    )
)]
async fn get_job_engine(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<JobEngine>, ApiError> {
    Ok(Json(state.collab.job_engine(path_id::<PlanId>(&id)?)?))
}
