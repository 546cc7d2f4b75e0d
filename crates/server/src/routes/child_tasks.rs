//! Child tasks (Cortex), under `/v1/child-tasks` (`/v1/tasks` is plans, "jobs"): listed by the
//! parent session or thread that started them, read, and cancelled. Tasks are created by the
//! `task` tool (or a workflow's reviewer), not over HTTP.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::workflows::workflows;
use crate::routes::{path_id, query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use troupe_core::{SessionId, ThreadId};
use troupe_store::{TaskId, TaskRecord};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_child_tasks))
        .routes(routes!(get_child_task))
        .routes(routes!(cancel_child_task))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChildTaskQuery {
    /// The tasks started by this session's threads.
    #[param(value_type = Option<i64>)]
    pub parent_session: Option<String>,
    /// The tasks started by this thread (give this or `parent_session`, not both).
    #[param(value_type = Option<i64>)]
    pub parent_thread: Option<String>,
    /// How many, oldest first: 1 to 500 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/child-tasks", tag = "child-tasks",
    params(ChildTaskQuery),
    responses(
        (status = 200, description = "Tasks, oldest first", body = [TaskRecord]),
        (status = 404, description = "No such session or thread", body = ErrorBody),
        (status = 422, description = "Neither or both of parent_session and parent_thread, a bad id or limit", body = ErrorBody),
    )
)]
async fn list_child_tasks(
    State(state): State<AppState>,
    q: Result<Query<ChildTaskQuery>, QueryRejection>,
) -> Result<Json<Vec<TaskRecord>>, ApiError> {
    let q = query(q)?;
    let limit = query_number("limit", q.limit.as_deref(), 100, 1, 500)?;
    let session = query_id::<SessionId>("parent_session", q.parent_session.as_deref())?;
    let thread = query_id::<ThreadId>("parent_thread", q.parent_thread.as_deref())?;
    Ok(Json(workflows(&state).tasks(session, thread, limit)?))
}

#[utoipa::path(
    get, path = "/v1/child-tasks/{id}", tag = "child-tasks",
    params(("id" = i64, Path, description = "Task id")),
    responses(
        (status = 200, description = "The task, with its output or error once it has ended", body = TaskRecord),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such task", body = ErrorBody),
    )
)]
async fn get_child_task(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TaskRecord>, ApiError> {
    Ok(Json(workflows(&state).task(path_id::<TaskId>(&id)?)?))
}

#[utoipa::path(
    post, path = "/v1/child-tasks/{id}/cancel", tag = "child-tasks",
    params(("id" = i64, Path, description = "Task id")),
    responses(
        (status = 200, description = "The task, cancelled: its child's run is aborted and its parent told (cancelling again changes nothing)", body = TaskRecord),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such task", body = ErrorBody),
        (status = 409, description = "The task has already completed or failed (`task_finished`), or is a workflow's reviewer, which is cancelled with its loop (`reviewer_task`)", body = ErrorBody),
    )
)]
async fn cancel_child_task(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TaskRecord>, ApiError> {
    let id = path_id::<TaskId>(&id)?;
    Ok(Json(workflows(&state).cancel_task(id).await?))
}
