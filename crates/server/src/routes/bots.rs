//! Bots: create, list, read, change and archive. A Bot's endpoint names the variable that
//! holds its key, never the key; `key_present` says whether that variable is set.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Serialize;
use troupe_collab::{BotPatch, Collab, NewBotRequest};
use troupe_core::BotId;
use troupe_core::conversation::Bot;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// A Bot as the API shows it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct BotView {
    #[serde(flatten)]
    pub bot: Bot,
    /// Whether the key variable its endpoint names is set; null when it names none.
    pub key_present: Option<bool>,
}

impl BotView {
    fn new(collab: &Collab, bot: Bot) -> Self {
        let key_present = bot
            .endpoint
            .as_ref()
            .and_then(|e| collab.roles().key_present(e));
        BotView { bot, key_present }
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_bots, create_bot))
        .routes(routes!(get_bot, update_bot, archive_bot))
}

#[utoipa::path(
    post, path = "/v1/bots", tag = "bots",
    request_body = NewBotRequest,
    responses(
        (status = 201, description = "The new Bot", body = BotView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 422, description = "Invalid values: empty or duplicate name, bad endpoint", body = ErrorBody),
    )
)]
async fn create_bot(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<NewBotRequest>,
) -> Result<(StatusCode, Json<BotView>), ApiError> {
    let bot = state.collab.create_bot(req)?;
    Ok((StatusCode::CREATED, Json(BotView::new(&state.collab, bot))))
}

#[utoipa::path(
    get, path = "/v1/bots", tag = "bots",
    responses((status = 200, description = "The Bots that are not archived", body = [BotView]))
)]
async fn list_bots(State(state): State<AppState>) -> Result<Json<Vec<BotView>>, ApiError> {
    let bots = state.collab.bots()?;
    Ok(Json(
        bots.into_iter()
            .map(|b| BotView::new(&state.collab, b))
            .collect(),
    ))
}

#[utoipa::path(
    get, path = "/v1/bots/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Bot id")),
    responses(
        (status = 200, description = "The Bot (also when archived)", body = BotView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such Bot", body = ErrorBody),
    )
)]
async fn get_bot(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<BotView>, ApiError> {
    let bot = state.collab.bot(path_id::<BotId>(&id)?)?;
    Ok(Json(BotView::new(&state.collab, bot)))
}

#[utoipa::path(
    patch, path = "/v1/bots/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Bot id")),
    request_body = BotPatch,
    responses(
        (status = 200, description = "The changed Bot", body = BotView),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such Bot", body = ErrorBody),
        (status = 409, description = "The Bot is archived (`archived`)", body = ErrorBody),
        (status = 422, description = "Invalid values", body = ErrorBody),
    )
)]
async fn update_bot(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(patch): ApiJson<BotPatch>,
) -> Result<Json<BotView>, ApiError> {
    let bot = state.collab.update_bot(path_id::<BotId>(&id)?, patch)?;
    Ok(Json(BotView::new(&state.collab, bot)))
}

#[utoipa::path(
    delete, path = "/v1/bots/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Bot id")),
    responses(
        (status = 200, description = "The archived Bot; its conversations and history stay", body = BotView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such Bot", body = ErrorBody),
    )
)]
async fn archive_bot(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<BotView>, ApiError> {
    let bot = state.collab.archive_bot(path_id::<BotId>(&id)?)?;
    Ok(Json(BotView::new(&state.collab, bot)))
}
