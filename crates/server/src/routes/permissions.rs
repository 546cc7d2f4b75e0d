//! Permission requests (issue 18 item 15): a runtime boss's `channel_push` that is not an
//! anchored reply to the current chat on its own account waits for a person's decision here.
//! Allowed, the push is sent once; denied, the session is told.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::query_id;
use crate::routes::sessions::query;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use troupe_core::SessionId;
use troupe_store::{PermissionDecision, PermissionRequest};
use troupe_workflows::runtime_boss::permissions;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(decide))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only this session's requests (`3` or `ses_3`); without it, every session's.
    #[param(value_type = Option<String>)]
    pub session_id: Option<String>,
}

/// `GET /v1/permissions`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct PermissionList {
    /// Newest first, at most 200.
    pub permissions: Vec<PermissionRequest>,
}

/// `POST /v1/permissions/{id}`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionRequest {
    /// `allow` (the push is sent, once) or `deny` (the session is told).
    pub decision: String,
}

#[utoipa::path(
    get, path = "/v1/permissions", tag = "permissions",
    params(ListQuery),
    responses(
        (status = 200, description = "Permission requests, newest first: each with its session, kind (`communication`), status (pending, allowed, denied), the request (for `communication`, the push: account_id, chat_id, text, reply_to_message_id) and the decision", body = PermissionList),
        (status = 404, description = "No such session", body = ErrorBody),
        (status = 422, description = "A malformed session id", body = ErrorBody),
    )
)]
async fn list(
    State(state): State<AppState>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<PermissionList>, ApiError> {
    let q = query(q)?;
    let session = query_id::<SessionId>("session_id", q.session_id.as_deref())?;
    if let Some(s) = session {
        state
            .collab
            .store()
            .read(|tx| tx.session(s))
            .map_err(troupe_collab::CollabError::from)?;
    }
    Ok(Json(PermissionList {
        permissions: permissions::list(&state.collab, session)?,
    }))
}

#[utoipa::path(
    post, path = "/v1/permissions/{id}", tag = "permissions",
    params(("id" = i64, Path, description = "The permission request")),
    request_body = DecisionRequest,
    responses(
        (status = 200, description = "The request as decided: allowed (its push recorded for sending, once) or denied (the session told by a steer and woken)", body = PermissionRequest),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such permission request", body = ErrorBody),
        (status = 409, description = "The request was decided already (`already_decided`); nothing changed", body = ErrorBody),
        (status = 422, description = "A decision that is neither allow nor deny", body = ErrorBody),
    )
)]
async fn decide(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<DecisionRequest>,
) -> Result<Json<PermissionRequest>, ApiError> {
    let id: i64 = id
        .trim()
        .strip_prefix("perm_")
        .unwrap_or(id.trim())
        .parse()
        .map_err(|_| ApiError::bad_request(format!("path id: '{id}' is not a permission id")))?;
    let decision = PermissionDecision::parse(&req.decision).map_err(ApiError::invalid)?;
    Ok(Json(
        permissions::decide(&state.collab, id, decision).await?,
    ))
}
