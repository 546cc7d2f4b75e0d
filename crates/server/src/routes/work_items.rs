//! Bots' work items: their desks and their work on jobs, with state and queue position.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use troupe_collab::{ContinueOutcome, WorkItemView};
use troupe_core::{BotId, RunId, WorkItemId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(bot_work_items))
        .routes(routes!(get_work_item))
        .routes(routes!(continue_turn))
}

#[utoipa::path(
    post, path = "/v1/turns/{id}/continue", tag = "turns",
    params(("id" = i64, Path, description = "A cut-off (interrupted, failed or stopped) turn")),
    responses(
        (status = 202, description = "Its work runs again, or waits for a work slot (`queued`, `position`)", body = ContinueOutcome),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such turn", body = ErrorBody),
        (status = 409, description = "Its work is already running (`already_working`), or the turn was not cut off (`not_cut_off`)", body = ErrorBody),
        (status = 422, description = "Not a Bot's work in a conversation", body = ErrorBody),
    )
)]
async fn continue_turn(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<ContinueOutcome>), ApiError> {
    let id = path_id::<RunId>(&id)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(state.collab.continue_turn(id).await?),
    ))
}

#[utoipa::path(
    get, path = "/v1/bots/{id}/work-items", tag = "work-items",
    params(("id" = i64, Path, description = "Bot id")),
    responses(
        (status = 200, description = "The Bot's desks and work on jobs, oldest first", body = [WorkItemView]),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such Bot", body = ErrorBody),
    )
)]
async fn bot_work_items(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<WorkItemView>>, ApiError> {
    let id = path_id::<BotId>(&id)?;
    Ok(Json(state.collab.work_items_of_bot(id)?))
}

#[utoipa::path(
    get, path = "/v1/work-items/{id}", tag = "work-items",
    params(("id" = i64, Path, description = "Work item id")),
    responses(
        (status = 200, description = "The work item; `queue_position` is set while it waits for a work slot", body = WorkItemView),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such work item", body = ErrorBody),
    )
)]
async fn get_work_item(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<WorkItemView>, ApiError> {
    let id = path_id::<WorkItemId>(&id)?;
    Ok(Json(state.collab.work_item(id)?))
}
