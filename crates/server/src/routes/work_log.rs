//! A job's work log: `GET /v1/tasks/:id/work-log?after=&limit=`, what the app did on the job,
//! oldest first. The same rows stream live on `GET /v1/events` as they are written.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{path_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use troupe_core::PlanId;
use troupe_store::WorkLogEntry;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(work_log))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WorkLogQuery {
    /// Only rows after this one (a row `id`; default 0, from the start).
    #[param(value_type = Option<i64>, minimum = 0)]
    pub after: Option<String>,
    /// How many, oldest first: 1 to 1000 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/work-log", tag = "tasks",
    params(("id" = i64, Path, description = "Plan (job) id"), WorkLogQuery),
    responses(
        (status = 200, description = "The job's work log, oldest first: each row's `kind` (`supervisor_picked_up`, …), time, ticket and work item, and what it says", body = [WorkLogEntry]),
        (status = 400, description = "The id is not an id", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
        (status = 422, description = "A bad after or limit", body = ErrorBody),
    )
)]
async fn work_log(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<WorkLogQuery>, QueryRejection>,
) -> Result<Json<Vec<WorkLogEntry>>, ApiError> {
    let id = path_id::<PlanId>(&id)?;
    let q = query(q)?;
    let after = match q.after.as_deref().map(str::trim) {
        None => 0,
        Some(raw) => raw.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
            ApiError::invalid(format!(
                "after: must be a work-log row id, 0 or more (got '{raw}')"
            ))
        })?,
    };
    let limit = query_number("limit", q.limit.as_deref(), 100, 1, 1000)?;
    Ok(Json(state.collab.work_log(id, after, limit)?))
}
