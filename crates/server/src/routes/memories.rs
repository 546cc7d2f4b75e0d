//! A Bot's memories and the retrospectives that look back on a delivered job (digest 003-B
//! §11): the person lists, adds, rewords, turns off and deletes a Bot's memories; a job's view
//! lists its retrospectives, and each change one made can be undone while it stands as written.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;
use troupe_core::{BotId, PlanId};
use troupe_store::{BotMemory, RetrospectiveChange, RetrospectiveRecord};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_memories, add_memory))
        .routes(routes!(edit_memory, delete_memory))
        .routes(routes!(list_retrospectives))
        .routes(routes!(undo_change))
}

fn memory_id(raw: &str) -> Result<i64, ApiError> {
    raw.trim()
        .parse::<i64>()
        .map_err(|_| ApiError::bad_request(format!("path id: '{raw}' is not a memory id")))
}

#[utoipa::path(
    get, path = "/v1/bots/{id}/memories", tag = "bots",
    params(("id" = i64, Path, description = "Bot id")),
    responses(
        (status = 200, description = "The Bot's memories, oldest first; `retrospective_id` marks one its retrospective wrote", body = [BotMemory]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such Bot", body = ErrorBody),
    )
)]
async fn list_memories(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<BotMemory>>, ApiError> {
    Ok(Json(state.collab.bot_memories(path_id::<BotId>(&id)?)?))
}

/// A memory to add (the same subject rewrites it).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMemoryRequest {
    /// 1–40 characters, one line.
    pub subject: String,
    /// 1–160 characters.
    pub body: String,
}

#[utoipa::path(
    post, path = "/v1/bots/{id}/memories", tag = "bots",
    params(("id" = i64, Path, description = "Bot id")),
    request_body = NewMemoryRequest,
    responses(
        (status = 200, description = "The memory, new or rewritten", body = BotMemory),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such Bot", body = ErrorBody),
        (status = 409, description = "A memory with this subject is turned off", body = ErrorBody),
        (status = 422, description = "Subject or body empty or too long, or 20 memories on already", body = ErrorBody),
    )
)]
async fn add_memory(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<NewMemoryRequest>,
) -> Result<Json<BotMemory>, ApiError> {
    let bot = path_id::<BotId>(&id)?;
    Ok(Json(state.collab.add_bot_memory(
        bot,
        &req.subject,
        &req.body,
    )?))
}

/// The person's change to a memory: new words (which take the retrospective's mark off) or
/// turned on or off.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryPatch {
    pub subject: Option<String>,
    pub body: Option<String>,
    pub enabled: Option<bool>,
}

#[utoipa::path(
    patch, path = "/v1/bot-memories/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Memory id")),
    request_body = MemoryPatch,
    responses(
        (status = 200, description = "The memory as changed", body = BotMemory),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such memory", body = ErrorBody),
        (status = 409, description = "The Bot has another memory with this subject", body = ErrorBody),
        (status = 422, description = "Nothing to change, words empty or too long, or 20 memories on already", body = ErrorBody),
    )
)]
async fn edit_memory(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<MemoryPatch>,
) -> Result<Json<BotMemory>, ApiError> {
    let id = memory_id(&id)?;
    Ok(Json(state.collab.edit_bot_memory(
        id,
        req.subject.as_deref(),
        req.body.as_deref(),
        req.enabled,
    )?))
}

#[utoipa::path(
    delete, path = "/v1/bot-memories/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Memory id")),
    responses(
        (status = 200, description = "The memory deleted", body = BotMemory),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such memory", body = ErrorBody),
    )
)]
async fn delete_memory(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<BotMemory>, ApiError> {
    Ok(Json(state.collab.delete_bot_memory(memory_id(&id)?)?))
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/retrospectives", tag = "tasks",
    params(("id" = i64, Path, description = "Job (task) id")),
    responses(
        (status = 200, description = "The job's retrospectives, newest first: who looked back, skipped or not, the summary, the three lists, and each change with before and after, why one was not made, and whether Undo still applies", body = [RetrospectiveRecord]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
    )
)]
async fn list_retrospectives(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<RetrospectiveRecord>>, ApiError> {
    Ok(Json(state.collab.retrospectives(path_id::<PlanId>(&id)?)?))
}

#[utoipa::path(
    post, path = "/v1/retrospective-changes/{id}/undo", tag = "tasks",
    params(("id" = i64, Path, description = "Retrospective change id")),
    responses(
        (status = 200, description = "The change, undone: the memory or skill is as it was before (a skill the retrospective made is deleted)", body = RetrospectiveChange),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such change", body = ErrorBody),
        (status = 409, description = "not_undoable: not made, undone already, or the memory or skill changed since (the change is new now)", body = ErrorBody),
    )
)]
async fn undo_change(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RetrospectiveChange>, ApiError> {
    let id = id
        .trim()
        .parse::<i64>()
        .map_err(|_| ApiError::bad_request(format!("path id: '{id}' is not a change id")))?;
    Ok(Json(state.collab.undo_retrospective_change(id)?))
}
