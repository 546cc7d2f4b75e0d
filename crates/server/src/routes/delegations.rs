//! Delegations, read-only: a job's, and those whose records show in a conversation.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use troupe_collab::DelegationView;
use troupe_core::{PlanId, SessionId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(plan_delegations))
        .routes(routes!(session_delegations))
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/delegations", tag = "tasks",
    params(("id" = i64, Path, description = "Job (plan) id")),
    responses(
        (status = 200, description = "The job's delegations, oldest first; `due_at` is always null (a delegation wait has no due time)", body = [DelegationView]),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
    )
)]
async fn plan_delegations(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<DelegationView>>, ApiError> {
    let id = path_id::<PlanId>(&id)?;
    Ok(Json(state.collab.plan_delegations(id)?))
}

#[utoipa::path(
    get, path = "/v1/sessions/{id}/delegations", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id")),
    responses(
        (status = 200, description = "Delegations shown in this conversation (its pair direct) or on the jobs it is home to", body = [DelegationView]),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
    )
)]
async fn session_delegations(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<DelegationView>>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    Ok(Json(state.collab.session_delegations(id)?))
}
