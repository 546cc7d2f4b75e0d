//! Clearing a conversation's history and deleting a group (digest A HOLD-X1/X2, STOP-9,
//! DEL-35, PLAN-D2/D10/D12): `POST /v1/sessions/{id}/clear`, `DELETE /v1/sessions/{id}`.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use troupe_collab::ClearOutcome;
use troupe_core::SessionId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(clear_session))
        .routes(routes!(delete_session))
}

#[utoipa::path(
    post, path = "/v1/sessions/{id}/clear", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id")),
    responses(
        (status = 200, description = "The history is cleared: every line's words blanked in place (ids stay, so holds still point at them); the conversation's live turns ended (not as a hold); open delegations tied to it cancelled, waking nobody; check-backs booked here voided; the plans it is home to dormant, or deleted when nothing refers to them and no hold names them; its command records gone. Clearing again finds nothing more to do", body = ClearOutcome),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation (or it was deleted)", body = ErrorBody),
    )
)]
async fn clear_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ClearOutcome>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    Ok(Json(state.collab.clear_session(id).await?))
}

#[utoipa::path(
    delete, path = "/v1/sessions/{id}", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id (a group)")),
    responses(
        (status = 200, description = "The group is deleted, its history ended as a clear ends it. Its surviving plans (another conversation's turn or line still belongs to them, or a hold names them) leave it, dormant; one the group's hold kept parked first gets a plan hold of its own (source `migration`) carrying the restore; the rest are deleted. The group is gone from the list and every read", body = ClearOutcome),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation (or it was deleted already)", body = ErrorBody),
        (status = 409, description = "A direct is not deleted (`not_a_group`)", body = ErrorBody),
    )
)]
async fn delete_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ClearOutcome>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    Ok(Json(state.collab.delete_group(id).await?))
}
