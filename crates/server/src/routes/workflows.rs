//! A session's workflow slot (Plan, Light Loop) and its own controls over the pause latch:
//! Continue and Abandon.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{path_id, query_id};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use troupe_core::{BotId, SessionId};
use troupe_workflows::{
    AbandonReport, ContinueReport, SetWorkflowRequest, WorkflowError, WorkflowView, Workflows,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_workflow, set_workflow))
        .routes(routes!(continue_session))
        .routes(routes!(abandon_session))
}

pub(crate) fn workflows(state: &AppState) -> Workflows {
    Workflows::new(state.collab.clone())
}

impl From<WorkflowError> for ApiError {
    fn from(e: WorkflowError) -> Self {
        match e {
            WorkflowError::NotFound { what, id } => {
                ApiError::not_found(format!("{what} {id} not found"))
            }
            WorkflowError::Invalid(m) => crate::routes::boss::invalid(m),
            WorkflowError::Conflict { code, message } => ApiError::conflict(code, message),
            WorkflowError::Collab(c) => c.into(),
            WorkflowError::Store(troupe_store::StoreError::Held)
            | WorkflowError::Engine(troupe_engine::EngineError::Store(
                troupe_store::StoreError::Held,
            )) => ApiError::held(None, crate::error::HELD_MESSAGE),
            other => {
                tracing::error!(error = %other, "request failed");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    other.to_string(),
                )
            }
        }
    }
}

#[utoipa::path(
    get, path = "/v1/sessions/{id}/workflow", tag = "workflows",
    params(("id" = i64, Path, description = "Conversation id")),
    responses(
        (status = 200, description = "The session's workflow slot, phase and last ending", body = WorkflowView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
    )
)]
async fn get_workflow(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<WorkflowView>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    Ok(Json(workflows(&state).workflow(id)?))
}

#[utoipa::path(
    post, path = "/v1/sessions/{id}/workflow", tag = "workflows",
    params(("id" = i64, Path, description = "Conversation id")),
    request_body = SetWorkflowRequest,
    responses(
        (status = 200, description = "The workflow after the change (`changed` says whether anything changed)", body = WorkflowView),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 409, description = "The session is running (`session_running`), another workflow is active (`workflow_active`), or a Light Loop review is pending (`review_pending`)", body = ErrorBody),
        (status = 422, description = "Unknown kind, empty Light Loop instructions, max_iterations 0", body = ErrorBody),
    )
)]
async fn set_workflow(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<SetWorkflowRequest>,
) -> Result<Json<WorkflowView>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    Ok(Json(workflows(&state).set_workflow(id, req).await?))
}

/// Whose work Continue and Abandon act on.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MemberQuery {
    /// The member whose work it is: required in a group or a Bot↔Bot direct (each member's work
    /// pauses on its own); in a person's direct it may be left out, or name that direct's Bot.
    #[param(value_type = Option<i64>)]
    pub bot_id: Option<String>,
}

fn member(q: Result<Query<MemberQuery>, QueryRejection>) -> Result<Option<BotId>, ApiError> {
    let q = query(q)?;
    query_id::<BotId>("bot_id", q.bot_id.as_deref())
}

#[utoipa::path(
    post, path = "/v1/sessions/{id}/continue", tag = "workflows",
    params(("id" = i64, Path, description = "Conversation id"), MemberQuery),
    responses(
        (status = 200, description = "The latch is lifted and a drive forced; `drive` says what it did (a running session is never driven)", body = ContinueReport),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 422, description = "A group or Bot↔Bot direct without `bot_id`, or a `bot_id` that is no member", body = ErrorBody),
    )
)]
async fn continue_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<MemberQuery>, QueryRejection>,
) -> Result<Json<ContinueReport>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    let bot = member(q)?;
    state.collab.live_conversation(id)?;
    Ok(Json(workflows(&state).continue_member(id, bot).await?))
}

#[utoipa::path(
    post, path = "/v1/sessions/{id}/abandon", tag = "workflows",
    params(("id" = i64, Path, description = "Conversation id"), MemberQuery),
    responses(
        (status = 200, description = "What was abandoned: live turn stopped, interrupted task ended, workflow cancelled, latch lifted (a repeat changes nothing)", body = AbandonReport),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 422, description = "A group or Bot↔Bot direct without `bot_id`, or a `bot_id` that is no member", body = ErrorBody),
    )
)]
async fn abandon_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<MemberQuery>, QueryRejection>,
) -> Result<Json<AbandonReport>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    let bot = member(q)?;
    state.collab.live_conversation(id)?;
    Ok(Json(workflows(&state).abandon_member(id, bot).await?))
}
