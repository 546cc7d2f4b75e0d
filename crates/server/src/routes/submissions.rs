//! Hand-overs (digest 003-B §4.1): a job's submissions (`/v1/tasks/:id/submissions`, a
//! ticket's with `?ticket_id=`) and one submission, each with its files, the checks bound to
//! it with their results, and its reviews with their verdicts. Hand-overs are made by the
//! Bots (`submit`, their endings), not over HTTP.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{path_id, query_id};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use troupe_collab::submissions::SubmissionView;
use troupe_core::{PlanId, SubmissionId, TicketId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(plan_submissions))
        .routes(routes!(get_submission))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubmissionsQuery {
    /// Only this ticket's hand-overs (one of the job's tickets).
    #[param(value_type = Option<i64>)]
    pub ticket_id: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/submissions", tag = "tasks",
    params(("id" = i64, Path, description = "Job (plan) id"), SubmissionsQuery),
    responses(
        (status = 200, description = "The job's hand-overs, newest first, with files, checks and reviews", body = [SubmissionView]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
        (status = 422, description = "ticket_id is not an id, or not a ticket of this job", body = ErrorBody),
    )
)]
async fn plan_submissions(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<SubmissionsQuery>, QueryRejection>,
) -> Result<Json<Vec<SubmissionView>>, ApiError> {
    let plan = path_id::<PlanId>(&id)?;
    let q = query(q)?;
    let ticket = query_id::<TicketId>("ticket_id", q.ticket_id.as_deref())?;
    Ok(Json(state.collab.plan_submissions(plan, ticket)?))
}

#[utoipa::path(
    get, path = "/v1/submissions/{id}", tag = "tasks",
    params(("id" = i64, Path, description = "Submission id")),
    responses(
        (status = 200, description = "The hand-over with its files, checks and reviews", body = SubmissionView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such submission", body = ErrorBody),
    )
)]
async fn get_submission(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SubmissionView>, ApiError> {
    Ok(Json(
        state.collab.submission(path_id::<SubmissionId>(&id)?)?,
    ))
}
