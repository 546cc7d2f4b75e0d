//! Plans ("jobs"; the seed's tasks) under `/v1/tasks`: a conversation's plans, one plan, its
//! revisions and the lines filed under it, and the person's edit of its spec. Plans are
//! opened by the Bots' work (a desk, `work_on`), not over HTTP.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{path_id, query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use troupe_collab::{PlanPatchRequest, PlanRevisionView, PlanView};
use troupe_core::conversation::SessionMessage;
use troupe_core::{PlanId, SessionId, SessionMessageId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_plans))
        .routes(routes!(get_plan))
        .routes(routes!(plan_revisions))
        .routes(routes!(plan_messages))
        .routes(routes!(patch_plan_spec))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PlansQuery {
    /// Required: the conversation whose plans to list (home to them, or filed into from it).
    #[param(required = true, value_type = i64)]
    pub session_id: Option<String>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PlanLinesQuery {
    /// Only lines after this one.
    #[param(value_type = Option<i64>)]
    pub after: Option<String>,
    /// How many, oldest first: 1 to 1000 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/tasks", tag = "tasks",
    params(PlansQuery),
    responses(
        (status = 200, description = "The conversation's plans, newest first, dormant ones included (`dormant: true`)", body = [PlanView]),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 422, description = "session_id missing or not an id", body = ErrorBody),
    )
)]
async fn list_plans(
    State(state): State<AppState>,
    q: Result<Query<PlansQuery>, QueryRejection>,
) -> Result<Json<Vec<PlanView>>, ApiError> {
    let q = query(q)?;
    let session = query_id::<SessionId>("session_id", q.session_id.as_deref())?
        .ok_or_else(|| ApiError::invalid("session_id: required (the conversation's id)"))?;
    Ok(Json(state.collab.plans(session)?))
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}", tag = "tasks",
    params(("id" = i64, Path, description = "Plan id")),
    responses(
        (status = 200, description = "The plan", body = PlanView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such plan", body = ErrorBody),
    )
)]
async fn get_plan(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<PlanView>, ApiError> {
    Ok(Json(state.collab.plan(path_id::<PlanId>(&id)?)?))
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/revisions", tag = "tasks",
    params(("id" = i64, Path, description = "Plan id")),
    responses(
        (status = 200, description = "Every version of the spec, oldest first, with its cause (`user`, `message:<id>`, `turn:<id>`) and the fields it changed (old and new)", body = [PlanRevisionView]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such plan", body = ErrorBody),
    )
)]
async fn plan_revisions(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<PlanRevisionView>>, ApiError> {
    Ok(Json(state.collab.plan_revisions(path_id::<PlanId>(&id)?)?))
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/messages", tag = "tasks",
    params(("id" = i64, Path, description = "Plan id"), PlanLinesQuery),
    responses(
        (status = 200, description = "The lines filed under the plan, from any conversation, oldest first", body = [SessionMessage]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such plan", body = ErrorBody),
        (status = 422, description = "Bad after or limit", body = ErrorBody),
    )
)]
async fn plan_messages(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<PlanLinesQuery>, QueryRejection>,
) -> Result<Json<Vec<SessionMessage>>, ApiError> {
    let id = path_id::<PlanId>(&id)?;
    let q = query(q)?;
    let after = query_id::<SessionMessageId>("after", q.after.as_deref())?;
    let limit = query_number("limit", q.limit.as_deref(), 100, 1, 1000)?;
    Ok(Json(state.collab.plan_messages(id, after, limit)?))
}

#[utoipa::path(
    patch, path = "/v1/tasks/{id}/spec", tag = "tasks",
    params(("id" = i64, Path, description = "Plan id")),
    request_body = PlanPatchRequest,
    responses(
        (status = 200, description = "The plan at its next version; the edit is the person's (cause `user`): a rename sets `renamed_at` and keeps the folder, `done` sets `delivered_at`, and a dormant plan wakes", body = PlanView),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such plan", body = ErrorBody),
        (status = 409, description = "A stale version (`revision_conflict`; the message names the current one)", body = ErrorBody),
        (status = 422, description = "Nothing to change, a blank or over-40-character name, a field over 4000 characters, status parked or unknown, an unknown field", body = ErrorBody),
    )
)]
async fn patch_plan_spec(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<PlanPatchRequest>,
) -> Result<Json<PlanView>, ApiError> {
    let id = path_id::<PlanId>(&id)?;
    Ok(Json(state.collab.edit_plan_spec(id, req).await?))
}
