//! The requirements ledger (digest 003-C §6): a job's "What you asked for" grouped per RL-19
//! (`GET /v1/tasks/:id/requirements`) and the user's buttons on one entry
//! (`POST /v1/requirements/:id/action`). A press on another version than the one the user saw
//! is `409 requirement_changed` (RL-21); a button the entry does not offer there is
//! `422 action_not_offered`. Bots have no way to write the ledger.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use troupe_collab::CollabError;
use troupe_collab::ledger::{ActionRequest, PlanRequirements, RequirementView};
use troupe_core::PlanId;
use troupe_core::ids::RequirementId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_requirements))
        .routes(routes!(press_requirement))
}

/// `action_not_offered` keeps its own code.
fn api_error(e: CollabError) -> ApiError {
    match e {
        CollabError::Invalid(m) if m.starts_with("action_not_offered") => {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "action_not_offered", m)
        }
        other => other.into(),
    }
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/requirements", tag = "tasks",
    params(("id" = i64, Path, description = "Job (plan) id")),
    responses(
        (status = 200, description = "What the user asked for in this job, in RL-19's groups (words you took out, the job's own, inherited by source job, waiting for you, old rules, set aside), each entry with its version and the buttons it offers here", body = PlanRequirements),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
    )
)]
async fn list_requirements(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<PlanRequirements>, ApiError> {
    let plan = path_id::<PlanId>(&id)?;
    Ok(Json(state.collab.plan_requirements(plan)?))
}

#[utoipa::path(
    post, path = "/v1/requirements/{id}/action", tag = "tasks",
    params(("id" = String, Path, description = "Requirement id (3 or R-3)")),
    request_body = ActionRequest,
    responses(
        (status = 200, description = "Pressed: the entry as it stands now (appends requirement_changed {step, plan_version})", body = RequirementView),
        (status = 400, description = "Malformed body or id", body = ErrorBody),
        (status = 404, description = "No such requirement or job", body = ErrorBody),
        (status = 409, description = "requirement_changed: the entry moved on since the version sent", body = ErrorBody),
        (status = 422, description = "A field is wrong (named), or action_not_offered: the entry does not offer that button on this job", body = ErrorBody),
    )
)]
async fn press_requirement(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ActionRequest>,
) -> Result<Json<RequirementView>, ApiError> {
    let id = path_id::<RequirementId>(&id)?;
    let view = state
        .collab
        .requirement_action(id, &req)
        .map_err(api_error)?;
    Ok(Json(view))
}
