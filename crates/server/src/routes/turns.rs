//! Turns: what a Bot's turn did (model calls, shell commands), and the composer Stop in a
//! direct, which is a hold on the Bot's work there (digest A STOP-5).

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{path_id, query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use troupe_collab::{FileChange, JobTurnView, TurnView};
use troupe_core::{HoldId, PlanId, RunId, SessionId};
use troupe_store::CommandRecord;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_turns))
        .routes(routes!(stop_turn))
        .routes(routes!(get_turn))
        .routes(routes!(turn_commands))
        .routes(routes!(turn_files))
        .routes(routes!(job_turns))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TurnsQuery {
    /// The conversation whose turns to list (required).
    #[param(value_type = i64)]
    pub session_id: Option<String>,
    /// How many turns, newest first: 1 to 200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
}

/// Which direct's running turn to stop.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StopRequest {
    /// A person's direct (a group's work is stopped from its stop menu, `POST /v1/holds`).
    pub session_id: SessionId,
    /// Only this turn; without it, the Bot's running turn there.
    #[serde(default)]
    pub turn_id: Option<RunId>,
}

/// The turn the composer Stop ended, and the hold it made.
#[derive(Serialize, utoipa::ToSchema)]
pub struct StopAnswer {
    #[serde(flatten)]
    pub turn: TurnView,
    /// The hold on the Bot's work in the turn's job (`bot_plan`), or on the turn when it had
    /// no job; the person's next line there lifts it.
    pub hold_id: HoldId,
}

#[utoipa::path(
    get, path = "/v1/turns", tag = "turns",
    params(TurnsQuery),
    responses(
        (status = 200, description = "The conversation's turns, newest first", body = [TurnView]),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 422, description = "Missing or bad session_id, bad limit", body = ErrorBody),
    )
)]
async fn list_turns(
    State(state): State<AppState>,
    q: Result<Query<TurnsQuery>, QueryRejection>,
) -> Result<Json<Vec<TurnView>>, ApiError> {
    let q = query(q)?;
    let session = query_id::<SessionId>("session_id", q.session_id.as_deref())?
        .ok_or_else(|| ApiError::invalid("session_id: required"))?;
    let limit = query_number("limit", q.limit.as_deref(), 50, 1, 200)?;
    Ok(Json(state.collab.turns(session, limit)?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct JobTurnsQuery {
    /// Only turns older than this one (a turn id), for the next page.
    #[param(value_type = Option<i64>)]
    pub before: Option<String>,
    /// How many turns, newest first: 1 to 200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/turns", tag = "tasks",
    params(("id" = i64, Path, description = "Plan (job) id"), JobTurnsQuery),
    responses(
        (status = 200, description = "The turns of every Bot's work on the job and its tickets, newest first; a stopped one names the stop that ended it (`stopped_by`) and what it was doing then (`stopped_while`)", body = [JobTurnView]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
        (status = 422, description = "A bad before or limit", body = ErrorBody),
    )
)]
async fn job_turns(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<JobTurnsQuery>, QueryRejection>,
) -> Result<Json<Vec<JobTurnView>>, ApiError> {
    let id = path_id::<PlanId>(&id)?;
    let q = query(q)?;
    let before = query_id::<RunId>("before", q.before.as_deref())?;
    let limit = query_number("limit", q.limit.as_deref(), 50, 1, 200)?;
    Ok(Json(state.collab.job_turns(id, before, limit)?))
}

#[utoipa::path(
    get, path = "/v1/turns/{id}", tag = "turns",
    params(("id" = i64, Path, description = "Turn (run) id")),
    responses(
        (status = 200, description = "The turn with its model calls", body = TurnView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such turn", body = ErrorBody),
    )
)]
async fn get_turn(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TurnView>, ApiError> {
    Ok(Json(state.collab.turn(path_id::<RunId>(&id)?)?))
}

#[utoipa::path(
    get, path = "/v1/turns/{id}/files", tag = "turns",
    params(("id" = i64, Path, description = "Turn (run) id")),
    responses(
        (status = 200, description = "The files the turn wrote, edited or deleted (write_file, edit_file, delete_file), from the effect ledger, in order", body = [FileChange]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such turn", body = ErrorBody),
    )
)]
async fn turn_files(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<FileChange>>, ApiError> {
    Ok(Json(state.collab.file_changes(path_id::<RunId>(&id)?)?))
}

#[utoipa::path(
    get, path = "/v1/turns/{id}/commands", tag = "turns",
    params(("id" = i64, Path, description = "Turn (run) id")),
    responses(
        (status = 200, description = "The shell commands the turn ran", body = [CommandRecord]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such turn", body = ErrorBody),
    )
)]
async fn turn_commands(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<CommandRecord>>, ApiError> {
    Ok(Json(state.collab.commands(path_id::<RunId>(&id)?)?))
}

#[utoipa::path(
    post, path = "/v1/turns/stop", tag = "turns",
    request_body = StopRequest,
    responses(
        (status = 200, description = "The stopped turn and the hold that stopped it (its queued and running child tasks are cancelled)", body = StopAnswer),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 409, description = "Nothing is running (`not_running`), or the conversation is not a direct (`not_direct`)", body = ErrorBody),
        (status = 422, description = "Invalid values", body = ErrorBody),
    )
)]
async fn stop_turn(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<StopRequest>,
) -> Result<Json<StopAnswer>, ApiError> {
    state.collab.live_conversation(req.session_id)?;
    // The workflow layer's stop also cancels the child tasks the turn handed out.
    let stop = crate::routes::workflows::workflows(&state)
        .stop_session(req.session_id, req.turn_id)
        .await?;
    Ok(Json(StopAnswer {
        turn: state.collab.turn(stop.run.id)?,
        hold_id: stop.hold_id,
    }))
}
