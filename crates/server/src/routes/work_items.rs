//! Bots' work items: their desks and their work on jobs, with state and queue position.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use troupe_collab::WorkItemView;
use troupe_core::{BotId, WorkItemId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(bot_work_items))
        .routes(routes!(get_work_item))
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
