//! Clearing a conversation's history and deleting a group (digest A HOLD-X1/X2, STOP-9,
//! DEL-35, PLAN-D2/D10/D12): `POST /v1/sessions/{id}/clear`, `DELETE /v1/sessions/{id}`.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::path_id;
use crate::routes::sessions::query;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use troupe_collab::ClearOutcome;
use troupe_core::SessionId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(clear_session))
        .routes(routes!(delete_session))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ClearQuery {
    /// `true`: also erase what the person said here (UQ-2, "Also erase what you said here"):
    /// the checks standing on those words go (an offer is withdrawn, a confirmed check is an
    /// offer again). Default `false`: clearing alone leaves them.
    #[param(value_type = Option<bool>)]
    pub erase_quotes: Option<String>,
}

fn erase_quotes(q: Result<Query<ClearQuery>, QueryRejection>) -> Result<bool, ApiError> {
    match query(q)?.erase_quotes.as_deref() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(ApiError::invalid(format!(
            "erase_quotes: '{other}' is neither true nor false"
        ))),
    }
}

#[utoipa::path(
    post, path = "/v1/sessions/{id}/clear", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id"), ClearQuery),
    responses(
        (status = 200, description = "The history is cleared: every line's words blanked in place (ids stay, so holds still point at them); the conversation's live turns ended (not as a hold); open delegations tied to it cancelled, waking nobody; check-backs booked here voided; the plans it is home to dormant, or deleted when nothing refers to them and no hold names them; its command records gone. Clearing again finds nothing more to do", body = ClearOutcome),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation (or it was deleted)", body = ErrorBody),
        (status = 422, description = "`erase_quotes` is neither true nor false", body = ErrorBody),
    )
)]
async fn clear_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<ClearQuery>, QueryRejection>,
) -> Result<Json<ClearOutcome>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    let erase = erase_quotes(q)?;
    Ok(Json(state.collab.clear_session(id, erase).await?))
}

#[utoipa::path(
    delete, path = "/v1/sessions/{id}", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id (a group)"), ClearQuery),
    responses(
        (status = 200, description = "The group is deleted, its history ended as a clear ends it. Its surviving plans (another conversation's turn or line still belongs to them, or a hold names them) leave it, dormant; one the group's hold kept parked first gets a plan hold of its own (source `migration`) carrying the restore; the rest are deleted. The group is gone from the list and every read", body = ClearOutcome),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation (or it was deleted already)", body = ErrorBody),
        (status = 409, description = "A direct is not deleted (`not_a_group`)", body = ErrorBody),
        (status = 422, description = "`erase_quotes` is neither true nor false", body = ErrorBody),
    )
)]
async fn delete_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<ClearQuery>, QueryRejection>,
) -> Result<Json<ClearOutcome>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    let erase = erase_quotes(q)?;
    Ok(Json(state.collab.delete_group(id, erase).await?))
}
