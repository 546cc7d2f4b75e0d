//! Lattice Runs: a session's current Run, the Runs listed and read, and the person's three
//! controls — resume, approve, cancel. There is no pause route: a Run pauses on its own
//! (budget, a failed loop, leaving Lattice), never on request. Enabling and disabling go
//! through the session's workflow (`POST /v1/sessions/{id}/workflow`, `kind: "lattice"`).

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::workflows::workflows;
use crate::routes::{path_id, query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use troupe_core::{LatticeRunId, SessionId};
use troupe_workflows::LatticeView;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(session_lattice))
        .routes(routes!(list_runs))
        .routes(routes!(get_run))
        .routes(routes!(resume_run))
        .routes(routes!(approve_run))
        .routes(routes!(cancel_run))
}

#[utoipa::path(
    get, path = "/v1/sessions/{id}/lattice", tag = "lattice",
    params(("id" = i64, Path, description = "Conversation id")),
    responses(
        (status = 200, description = "The session's current Run (any status), its Pathway split into history, current and editable future", body = LatticeView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation, or no Lattice Run on it", body = ErrorBody),
    )
)]
async fn session_lattice(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<LatticeView>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    workflows(&state)
        .lattice_current(id)?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("no Lattice run on session {id}")))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunsQuery {
    /// Only this conversation's Runs (`ses_N` or `N`); without it, every Run.
    #[param(value_type = Option<i64>)]
    pub session_id: Option<String>,
    /// How many, newest first: 1 to 200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/lattice/runs", tag = "lattice",
    params(RunsQuery),
    responses(
        (status = 200, description = "Runs, newest first", body = [LatticeView]),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 422, description = "Bad session_id or limit", body = ErrorBody),
    )
)]
async fn list_runs(
    State(state): State<AppState>,
    q: Result<Query<RunsQuery>, QueryRejection>,
) -> Result<Json<Vec<LatticeView>>, ApiError> {
    let q = query(q)?;
    let session = query_id::<SessionId>("session_id", q.session_id.as_deref())?;
    let limit = query_number("limit", q.limit.as_deref(), 50, 1, 200)?;
    Ok(Json(workflows(&state).lattice_runs(session, limit)?))
}

#[utoipa::path(
    get, path = "/v1/lattice/runs/{id}", tag = "lattice",
    params(("id" = i64, Path, description = "Lattice Run id (`lat_N` or `N`)")),
    responses(
        (status = 200, description = "The Run", body = LatticeView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such Run", body = ErrorBody),
    )
)]
async fn get_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<LatticeView>, ApiError> {
    let id = path_id::<LatticeRunId>(&id)?;
    Ok(Json(workflows(&state).lattice_run(id)?))
}

#[utoipa::path(
    post, path = "/v1/lattice/runs/{id}/resume", tag = "lattice",
    params(("id" = i64, Path, description = "Lattice Run id (`lat_N` or `N`)")),
    responses(
        (status = 200, description = "The Run, active again: a failed or cancelled current Step is back in blueprinting with its evidence kept; after a budget pause the cap is one more call", body = LatticeView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such Run", body = ErrorBody),
        (status = 409, description = "Not the session's current Run (`run_not_current`), already ended (`run_finished`), its loop still runs (`loop_running`), or another workflow holds the session (`workflow_active`)", body = ErrorBody),
    )
)]
async fn resume_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<LatticeView>, ApiError> {
    let id = path_id::<LatticeRunId>(&id)?;
    Ok(Json(workflows(&state).resume_lattice_run(id).await?))
}

#[utoipa::path(
    post, path = "/v1/lattice/runs/{id}/approve", tag = "lattice",
    params(("id" = i64, Path, description = "Lattice Run id (`lat_N` or `N`)")),
    responses(
        (status = 200, description = "The Run, executing exactly the reviewed Blueprint", body = LatticeView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such Run", body = ErrorBody),
        (status = 409, description = "The Run is not in awaiting_execution (`not_awaiting_execution`), or the Blueprint changed since its review (`blueprint_review_stale`)", body = ErrorBody),
    )
)]
async fn approve_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<LatticeView>, ApiError> {
    let id = path_id::<LatticeRunId>(&id)?;
    Ok(Json(workflows(&state).approve_lattice_run(id).await?))
}

#[utoipa::path(
    post, path = "/v1/lattice/runs/{id}/cancel", tag = "lattice",
    params(("id" = i64, Path, description = "Lattice Run id (`lat_N` or `N`)")),
    responses(
        (status = 200, description = "The Run, cancelled (a repeat on a cancelled Run answers it unchanged)", body = LatticeView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such Run", body = ErrorBody),
        (status = 409, description = "The Run completed or failed (`run_finished`), or is not the session's current Run (`run_not_current`)", body = ErrorBody),
    )
)]
async fn cancel_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<LatticeView>, ApiError> {
    let id = path_id::<LatticeRunId>(&id)?;
    Ok(Json(workflows(&state).cancel_lattice_run(id).await?))
}
