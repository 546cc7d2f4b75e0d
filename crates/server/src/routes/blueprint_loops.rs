//! BlueprintLoops: start one from a Blueprint, read it, cancel it.

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
use troupe_core::blueprint_loop::BlueprintLoopId;
use troupe_workflows::{BlueprintLoopView, NewBlueprintLoopRequest};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_loops, create_loop))
        .routes(routes!(get_loop))
        .routes(routes!(cancel_loop))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LoopsQuery {
    /// `true`: only armed, running or auditing loops.
    pub active: Option<bool>,
    /// How many, newest first: 1 to 200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/blueprint-loops", tag = "blueprint-loops",
    params(LoopsQuery),
    responses(
        (status = 200, description = "Loops, newest first", body = [BlueprintLoopView]),
        (status = 422, description = "Bad query", body = ErrorBody),
    )
)]
async fn list_loops(
    State(state): State<AppState>,
    q: Result<Query<LoopsQuery>, QueryRejection>,
) -> Result<Json<Vec<BlueprintLoopView>>, ApiError> {
    let q = query(q)?;
    let limit = query_number("limit", q.limit.as_deref(), 50, 1, 200)?;
    Ok(Json(
        workflows(&state).blueprint_loops(q.active.unwrap_or(false), limit)?,
    ))
}

#[utoipa::path(
    post, path = "/v1/blueprint-loops", tag = "blueprint-loops",
    request_body = NewBlueprintLoopRequest,
    responses(
        (status = 201, description = "The loop, started (`running`), or `failed` with the reason its start failed", body = BlueprintLoopView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 404, description = "No such session", body = ErrorBody),
        (status = 409, description = "The note already has an active loop (`already_active`), the session runs one (`blueprint_loop_active`), is running (`session_running`), holds a workflow a loop cannot replace (`workflow_active`), the note moved on (`note_version_mismatch`), or the worktree could not be made (`worktree_failed`)", body = ErrorBody),
        (status = 422, description = "Unknown note or run mode, a plain note, max_iterations 0", body = ErrorBody),
    )
)]
async fn create_loop(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<NewBlueprintLoopRequest>,
) -> Result<(StatusCode, Json<BlueprintLoopView>), ApiError> {
    Ok((
        StatusCode::CREATED,
        Json(workflows(&state).create_blueprint_loop(req).await?),
    ))
}

#[utoipa::path(
    get, path = "/v1/blueprint-loops/{id}", tag = "blueprint-loops",
    params(("id" = i64, Path, description = "BlueprintLoop id")),
    responses(
        (status = 200, description = "The loop", body = BlueprintLoopView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such loop", body = ErrorBody),
    )
)]
async fn get_loop(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<BlueprintLoopView>, ApiError> {
    Ok(Json(
        workflows(&state).blueprint_loop_view(path_id::<BlueprintLoopId>(&id)?)?,
    ))
}

#[utoipa::path(
    post, path = "/v1/blueprint-loops/{id}/cancel", tag = "blueprint-loops",
    params(("id" = i64, Path, description = "BlueprintLoop id")),
    responses(
        (status = 200, description = "The loop, `cancelled` (or as it ended: cancel is idempotent)", body = BlueprintLoopView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such loop", body = ErrorBody),
    )
)]
async fn cancel_loop(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<BlueprintLoopView>, ApiError> {
    let id = path_id::<BlueprintLoopId>(&id)?;
    Ok(Json(workflows(&state).cancel_blueprint_loop(id).await?.0))
}
