//! A session's workflow slot (Plan, Light Loop) and its own controls over the pause latch:
//! Continue and Abandon.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use troupe_core::SessionId;
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

#[utoipa::path(
    post, path = "/v1/sessions/{id}/continue", tag = "workflows",
    params(("id" = i64, Path, description = "Conversation id")),
    responses(
        (status = 200, description = "The latch is lifted and a drive forced; `drive` says what it did (a running session is never driven)", body = ContinueReport),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
    )
)]
async fn continue_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ContinueReport>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    Ok(Json(workflows(&state).continue_session(id).await?))
}

#[utoipa::path(
    post, path = "/v1/sessions/{id}/abandon", tag = "workflows",
    params(("id" = i64, Path, description = "Conversation id")),
    responses(
        (status = 200, description = "What was abandoned: live turn stopped, interrupted task ended, workflow cancelled, latch lifted (a repeat changes nothing)", body = AbandonReport),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
    )
)]
async fn abandon_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<AbandonReport>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    Ok(Json(workflows(&state).abandon(id).await?))
}
