//! The reflection lesson (digest 003-B §10.2): a job's reflections, the person's Adopt / No on
//! a proposal card, and the checklist items adopted from them (the Lessons page lists, switches
//! and retires them).

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{path_id, query_id};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use troupe_core::{BotId, PlanId};
use troupe_store::{ChecklistItem, ReflectionRecord};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_reflections))
        .routes(routes!(answer))
        .routes(routes!(list_items))
        .routes(routes!(patch_item))
}

fn number(raw: &str, what: &str) -> Result<i64, ApiError> {
    raw.trim()
        .parse::<i64>()
        .map_err(|_| ApiError::bad_request(format!("path id: '{raw}' is not a {what} id")))
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/reflections", tag = "quality",
    params(("id" = i64, Path, description = "Job (task) id")),
    responses(
        (status = 200, description = "The job's reflections, newest first: the Bot, its cause (review_miss, ceiling), its state (proposed, adopted, declined, nothing, failed, skipped), the proposal and its card", body = [ReflectionRecord]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
    )
)]
async fn list_reflections(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<ReflectionRecord>>, ApiError> {
    Ok(Json(state.collab.reflections(path_id::<PlanId>(&id)?)?))
}

/// The person's answer to a proposal.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReflectionAnswer {
    /// `true`: Adopt; `false`: No.
    pub adopt: bool,
}

#[utoipa::path(
    post, path = "/v1/reflections/{id}/answer", tag = "quality",
    params(("id" = i64, Path, description = "Reflection id")),
    request_body = ReflectionAnswer,
    responses(
        (status = 200, description = "Adopted (a checklist item kept for the Bot, or a check added to the ticket as an organizer's) or declined", body = ReflectionRecord),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such reflection", body = ErrorBody),
        (status = 409, description = "Answered already, or nothing was proposed", body = ErrorBody),
        (status = 422, description = "Missing or non-boolean adopt", body = ErrorBody),
    )
)]
async fn answer(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ReflectionAnswer>,
) -> Result<Json<ReflectionRecord>, ApiError> {
    let id = number(&id, "reflection")?;
    Ok(Json(state.collab.answer_reflection(id, req.adopt)?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ItemsQuery {
    /// Only this Bot's items.
    #[param(value_type = Option<i64>)]
    pub bot_id: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/checklist-items", tag = "quality",
    params(ItemsQuery),
    responses(
        (status = 200, description = "Checklist items adopted from reflections, oldest first", body = [ChecklistItem]),
        (status = 404, description = "No such Bot", body = ErrorBody),
        (status = 422, description = "Bad bot_id", body = ErrorBody),
    )
)]
async fn list_items(
    State(state): State<AppState>,
    q: Result<Query<ItemsQuery>, QueryRejection>,
) -> Result<Json<Vec<ChecklistItem>>, ApiError> {
    let q = query(q)?;
    let bot = query_id::<BotId>("bot_id", q.bot_id.as_deref())?;
    Ok(Json(state.collab.checklist_items(bot)?))
}

/// On, or retired.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemPatch {
    pub enabled: bool,
}

#[utoipa::path(
    patch, path = "/v1/checklist-items/{id}", tag = "quality",
    params(("id" = i64, Path, description = "Checklist item id")),
    request_body = ItemPatch,
    responses(
        (status = 200, description = "The item, switched", body = ChecklistItem),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such item", body = ErrorBody),
        (status = 422, description = "Missing or non-boolean enabled", body = ErrorBody),
    )
)]
async fn patch_item(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ItemPatch>,
) -> Result<Json<ChecklistItem>, ApiError> {
    let id = number(&id, "checklist item")?;
    Ok(Json(state.collab.set_checklist_item(id, req.enabled)?))
}
