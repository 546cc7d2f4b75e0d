//! Routines (seed 003: the morning brief): the person lists, makes, changes, pauses, runs now
//! and deletes a Bot's work on a schedule. Each run is a ticket of the routine's standing job
//! (`/v1/tasks/{plan_id}`).

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::query_id;
use crate::routes::sessions::query;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use troupe_collab::routines::{NewRoutineRequest, RoutinePatchRequest, RoutineView};
use troupe_core::{BotId, SessionId};
use troupe_store::Routine;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_routines, create_routine))
        .routes(routes!(get_routine, patch_routine, delete_routine))
        .routes(routes!(run_routine))
}

fn routines_id(raw: &str) -> Result<i64, ApiError> {
    raw.trim()
        .parse::<i64>()
        .map_err(|_| ApiError::bad_request(format!("path id: '{raw}' is not a routine id")))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RoutineQuery {
    /// Only this Bot's routines.
    #[param(value_type = Option<i64>)]
    pub bot_id: Option<String>,
    /// Only the routines speaking in this conversation.
    #[param(value_type = Option<i64>)]
    pub session_id: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/routines", tag = "routines",
    params(RoutineQuery),
    responses(
        (status = 200, description = "Routines by Bot and name, each with its next run and newest runs", body = [RoutineView]),
        (status = 404, description = "No such Bot or conversation", body = ErrorBody),
        (status = 422, description = "A bad id or an unknown parameter", body = ErrorBody),
    )
)]
async fn list_routines(
    State(state): State<AppState>,
    q: Result<Query<RoutineQuery>, QueryRejection>,
) -> Result<Json<Vec<RoutineView>>, ApiError> {
    let q = query(q)?;
    let bot = query_id::<BotId>("bot_id", q.bot_id.as_deref())?;
    let session = query_id::<SessionId>("session_id", q.session_id.as_deref())?;
    Ok(Json(state.collab.routines(bot, session)?))
}

#[utoipa::path(
    post, path = "/v1/routines", tag = "routines",
    request_body = NewRoutineRequest,
    responses(
        (status = 201, description = "The routine, active, with its first run's time; its standing job is open in the conversation", body = RoutineView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 409, description = "routine_taken: the Bot has a routine of this name", body = ErrorBody),
        (status = 422, description = "An unknown or archived Bot, a conversation it is not in (or a Bot↔Bot direct), an empty or too long name or instruction, a schedule that does not repeat or repeats within 15 minutes, or 20 routines already", body = ErrorBody),
    )
)]
async fn create_routine(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<NewRoutineRequest>,
) -> Result<(StatusCode, Json<RoutineView>), ApiError> {
    Ok((StatusCode::CREATED, Json(state.collab.create_routine(req)?)))
}

#[utoipa::path(
    get, path = "/v1/routines/{id}", tag = "routines",
    params(("id" = i64, Path, description = "Routine id")),
    responses(
        (status = 200, description = "The routine", body = RoutineView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such routine", body = ErrorBody),
    )
)]
async fn get_routine(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RoutineView>, ApiError> {
    Ok(Json(state.collab.routine(routines_id(&id)?)?))
}

#[utoipa::path(
    patch, path = "/v1/routines/{id}", tag = "routines",
    params(("id" = i64, Path, description = "Routine id")),
    request_body = RoutinePatchRequest,
    responses(
        (status = 200, description = "The routine as changed", body = RoutineView),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such routine", body = ErrorBody),
        (status = 409, description = "routine_taken: the Bot has another routine of the new name", body = ErrorBody),
        (status = 422, description = "A bad name, instruction, schedule or status", body = ErrorBody),
    )
)]
async fn patch_routine(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<RoutinePatchRequest>,
) -> Result<Json<RoutineView>, ApiError> {
    Ok(Json(state.collab.patch_routine(routines_id(&id)?, req)?))
}

#[utoipa::path(
    delete, path = "/v1/routines/{id}", tag = "routines",
    params(("id" = i64, Path, description = "Routine id")),
    responses(
        (status = 200, description = "The routine deleted: no more runs; its standing job is closed (done) with its tickets kept", body = Routine),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such routine", body = ErrorBody),
    )
)]
async fn delete_routine(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Routine>, ApiError> {
    Ok(Json(state.collab.delete_routine(routines_id(&id)?)?))
}

#[utoipa::path(
    post, path = "/v1/routines/{id}/run", tag = "routines",
    params(("id" = i64, Path, description = "Routine id")),
    responses(
        (status = 200, description = "A run opened now (a new ticket; the Bot is woken on it); the schedule is unchanged", body = RoutineView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such routine", body = ErrorBody),
        (status = 409, description = "held: a stop covers its Bot; run_going: its last run is still going; archived: its Bot is archived or left the conversation", body = ErrorBody),
    )
)]
async fn run_routine(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RoutineView>, ApiError> {
    Ok(Json(state.collab.run_routine_now(routines_id(&id)?)?))
}
