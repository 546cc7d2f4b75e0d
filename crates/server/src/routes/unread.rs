//! `GET /v1/sessions/:id/unread`: the conversation's person's lines some Bot has not read yet,
//! and when each such Bot will (UQ-16). The page shows a row under each with Take back
//! (`POST /v1/messages/:id/withdraw`) and Insert now (`POST /v1/messages/:id/insert`).

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use troupe_collab::UnreadLine;
use troupe_core::SessionId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(unread))
}

#[utoipa::path(
    get, path = "/v1/sessions/{id}/unread", tag = "sessions",
    params(("id" = i64, Path, description = "Conversation id")),
    responses(
        (status = 200, description = "The person's recent lines some Bot holds unread, oldest first: for each Bot, `read_at` `next_step` (it is working), `its_turn` (it waits for a segment or a slot) or `held` (a stop covers it); `can_take_back` while no Bot has read the line", body = [UnreadLine]),
        (status = 400, description = "The id is not an id", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
    )
)]
async fn unread(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<UnreadLine>>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    Ok(Json(state.collab.unread_lines(id)?))
}
