//! A group's members and its lead. A deleted group is not found here, as on every read
//! (HOLD-X2: it stays a row only for what refers to it).

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use troupe_collab::{AddMember, LeadRequest, LeadView, SessionView};
use troupe_core::{BotId, SessionId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(add_member))
        .routes(routes!(remove_member))
        .routes(routes!(get_lead, put_lead))
}

#[utoipa::path(
    post, path = "/v1/sessions/{id}/members", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id")),
    request_body = AddMember,
    responses(
        (status = 200, description = "The group, with the Bot a member (already present: nothing changes)", body = SessionView),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such conversation (or it was deleted)", body = ErrorBody),
        (status = 422, description = "Not a group; unknown or archived Bot", body = ErrorBody),
    )
)]
async fn add_member(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<AddMember>,
) -> Result<Json<SessionView>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    state.collab.add_member(id, req.bot_id)?;
    Ok(Json(state.collab.session_view(id)?))
}

#[utoipa::path(
    delete, path = "/v1/sessions/{id}/members/{bot_id}", tag = "sessions",
    params(
        ("id" = i64, Path, description = "Conversation id"),
        ("bot_id" = i64, Path, description = "The member to remove"),
    ),
    responses(
        (status = 200, description = "The group without the Bot (its turn there ended, its queued lines dropped, its lead cleared)", body = SessionView),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such conversation (or it was deleted) or member", body = ErrorBody),
        (status = 409, description = "The last Bot of the group (`last_member`)", body = ErrorBody),
        (status = 422, description = "Not a group", body = ErrorBody),
    )
)]
async fn remove_member(
    State(state): State<AppState>,
    Path((id, bot)): Path<(String, String)>,
) -> Result<Json<SessionView>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    state
        .collab
        .remove_member(id, path_id::<BotId>(&bot)?)
        .await?;
    Ok(Json(state.collab.session_view(id)?))
}

#[utoipa::path(
    get, path = "/v1/sessions/{id}/lead", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id")),
    responses(
        (status = 200, description = "The confirmed lead, a suggestion from the last 7 days' handoffs (never applied), and the counts", body = LeadView),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such conversation (or it was deleted)", body = ErrorBody),
        (status = 422, description = "Not a group", body = ErrorBody),
    )
)]
async fn get_lead(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<LeadView>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    Ok(Json(state.collab.lead(id)?))
}

#[utoipa::path(
    put, path = "/v1/sessions/{id}/lead", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id")),
    request_body = LeadRequest,
    responses(
        (status = 200, description = "The lead as confirmed (`bot_id: null` cleared it)", body = LeadView),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such conversation (or it was deleted)", body = ErrorBody),
        (status = 409, description = "The Bot is archived (`archived`)", body = ErrorBody),
        (status = 422, description = "No `confirmed: true`, not a member, not a group", body = ErrorBody),
    )
)]
async fn put_lead(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<LeadRequest>,
) -> Result<Json<LeadView>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    Ok(Json(state.collab.set_lead(id, req)?))
}
