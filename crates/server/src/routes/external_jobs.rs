//! External jobs (B §8): the renders media servers accepted through paired `submit_<x>` /
//! `check_<x>` tools, which the app polls and settles by itself; read-only here.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{path_id, query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use troupe_core::PlanId;
use troupe_core::ids::ExternalJobId;
use troupe_store::ExternalJobRecord;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_external_jobs))
        .routes(routes!(get_external_job))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExternalJobsQuery {
    /// Only this job's (plan's) renders.
    #[param(value_type = Option<i64>)]
    pub plan_id: Option<String>,
    /// How many, newest first: 1 to 1000 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/external-jobs", tag = "external-jobs",
    params(ExternalJobsQuery),
    responses(
        (status = 200, description = "External jobs, newest first: status (pending, done, failed or lost), the result read, the next poll, who submitted and who waits", body = [ExternalJobRecord]),
        (status = 404, description = "No such job (plan)", body = ErrorBody),
        (status = 422, description = "A bad plan_id or limit", body = ErrorBody),
    )
)]
async fn list_external_jobs(
    State(state): State<AppState>,
    q: Result<Query<ExternalJobsQuery>, QueryRejection>,
) -> Result<Json<Vec<ExternalJobRecord>>, ApiError> {
    let q = query(q)?;
    let plan = query_id::<PlanId>("plan_id", q.plan_id.as_deref())?;
    let limit = query_number("limit", q.limit.as_deref(), 100, 1, 1000)?;
    Ok(Json(state.collab.external_jobs(plan, limit)?))
}

#[utoipa::path(
    get, path = "/v1/external-jobs/{id}", tag = "external-jobs",
    params(("id" = i64, Path, description = "External job id")),
    responses(
        (status = 200, description = "The external job with its waiters", body = ExternalJobRecord),
        (status = 400, description = "The id is not an id", body = ErrorBody),
        (status = 404, description = "No such external job", body = ErrorBody),
    )
)]
async fn get_external_job(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ExternalJobRecord>, ApiError> {
    let id = path_id::<ExternalJobId>(&id)?;
    Ok(Json(state.collab.external_job(id)?))
}
