//! Quality (digest 003-B §9, §10.1): quality events (`orchestration` only with
//! `?maintainer=true`), the quality report, the user's "the model's problem" mark on a turn,
//! timeout lessons (the Lessons page: warn, block, off) and model prices for the report's spend.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{path_id, query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use troupe_core::lesson::LessonState;
use troupe_core::{BotId, RunId};
use troupe_store::{
    LessonRecord, ModelPrice, QualityEventRecord, QualityFilter, QualityReport, QualityType,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_events))
        .routes(routes!(report))
        .routes(routes!(mark_model_problem))
        .routes(routes!(list_lessons))
        .routes(routes!(patch_lesson))
        .routes(routes!(list_prices, set_price))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only this Bot's events.
    #[param(value_type = Option<i64>)]
    pub bot_id: Option<String>,
    /// Only this type: execution, unclear, model, pipeline, review_miss, orchestration.
    #[serde(rename = "type")]
    #[param(rename = "type", value_type = Option<String>)]
    pub kind: Option<String>,
    /// How many days back: 1 to 365 (default 7).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 365)]
    pub days: Option<String>,
    /// `true` also lists `orchestration` events (stalls, crashes, broken stops).
    #[param(value_type = Option<bool>)]
    pub maintainer: Option<String>,
    /// How many, newest first: 1 to 500 (default 200).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Option<String>,
}

fn flag(name: &str, raw: Option<&str>) -> Result<bool, ApiError> {
    match raw.map(str::trim) {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(ApiError::invalid(format!(
            "{name}: must be true or false (got '{other}')"
        ))),
    }
}

#[utoipa::path(
    get, path = "/v1/quality/events", tag = "quality",
    params(EventsQuery),
    responses(
        (status = 200, description = "Quality events, newest first", body = [QualityEventRecord]),
        (status = 404, description = "No such Bot", body = ErrorBody),
        (status = 422, description = "Bad bot_id, type, days, maintainer or limit", body = ErrorBody),
    )
)]
async fn list_events(
    State(state): State<AppState>,
    q: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<Json<Vec<QualityEventRecord>>, ApiError> {
    let q = query(q)?;
    let bot_id = query_id::<BotId>("bot_id", q.bot_id.as_deref())?;
    let kind = q
        .kind
        .as_deref()
        .map(|k| QualityType::parse(k.trim()).map_err(|m| ApiError::invalid(format!("type: {m}"))))
        .transpose()?;
    let days = query_number("days", q.days.as_deref(), 7, 1, 365)?;
    let maintainer = flag("maintainer", q.maintainer.as_deref())?;
    let limit = query_number("limit", q.limit.as_deref(), 200, 1, 500)?;
    if let Some(b) = bot_id {
        state.collab.bot(b)?;
    }
    let since = state.collab.store().now() - i64::from(days) * 86_400_000;
    Ok(Json(state.collab.quality_events(&QualityFilter {
        bot_id,
        kind,
        since,
        maintainer,
        limit,
    })?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    /// How many days back: 1 to 365 (default 7).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 365)]
    pub days: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/quality/report", tag = "quality",
    params(ReportQuery),
    responses(
        (status = 200, description = "Per Bot × model × job kind: hand-overs, approvals, turn-backs, complaints, failure shapes, review misses, tokens, spend where the model is priced", body = QualityReport),
        (status = 422, description = "Bad days", body = ErrorBody),
    )
)]
async fn report(
    State(state): State<AppState>,
    q: Result<Query<ReportQuery>, QueryRejection>,
) -> Result<Json<QualityReport>, ApiError> {
    let q = query(q)?;
    let days = query_number("days", q.days.as_deref(), 7, 1, 365)?;
    Ok(Json(state.collab.quality_report(days)?))
}

/// The user's mark on a turn's model.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelProblemRequest {
    /// `true`: the turn went wrong because of its model; `false` takes the mark back.
    pub marked: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ModelProblemAnswer {
    #[schema(value_type = i64)]
    pub turn_id: RunId,
    pub marked: bool,
}

#[utoipa::path(
    put, path = "/v1/turns/{id}/model-problem", tag = "quality",
    params(("id" = i64, Path, description = "Turn (run) id")),
    request_body = ModelProblemRequest,
    responses(
        (status = 200, description = "Whether the turn is marked as its model's problem now (a `model` quality event, only in the model report)", body = ModelProblemAnswer),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such turn", body = ErrorBody),
        (status = 422, description = "Missing or non-boolean marked", body = ErrorBody),
    )
)]
async fn mark_model_problem(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ModelProblemRequest>,
) -> Result<Json<ModelProblemAnswer>, ApiError> {
    let turn = path_id::<RunId>(&id)?;
    let marked = state.collab.mark_model_problem(turn, req.marked)?;
    Ok(Json(ModelProblemAnswer {
        turn_id: turn,
        marked,
    }))
}

#[utoipa::path(
    get, path = "/v1/lessons", tag = "quality",
    responses(
        (status = 200, description = "Timeout lessons, the latest timeout first", body = [LessonRecord]),
    )
)]
async fn list_lessons(State(state): State<AppState>) -> Result<Json<Vec<LessonRecord>>, ApiError> {
    Ok(Json(state.collab.lessons()?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LessonPatch {
    /// `warn`, `block`, or `off` (retired; `warn` or `block` restores it).
    pub state: String,
}

fn lesson_id(raw: &str) -> Result<i64, ApiError> {
    raw.trim()
        .parse::<i64>()
        .map_err(|_| ApiError::bad_request(format!("path id: '{raw}' is not a lesson id")))
}

#[utoipa::path(
    patch, path = "/v1/lessons/{id}", tag = "quality",
    params(("id" = i64, Path, description = "Lesson id")),
    request_body = LessonPatch,
    responses(
        (status = 200, description = "The lesson in its new state", body = LessonRecord),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such lesson", body = ErrorBody),
        (status = 422, description = "A state other than warn, block, off", body = ErrorBody),
    )
)]
async fn patch_lesson(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<LessonPatch>,
) -> Result<Json<LessonRecord>, ApiError> {
    let id = lesson_id(&id)?;
    let to = LessonState::parse(req.state.trim())
        .map_err(|m| ApiError::invalid(format!("state: {m}")))?;
    Ok(Json(state.collab.set_lesson_state(id, to)?))
}

#[utoipa::path(
    get, path = "/v1/quality/prices", tag = "quality",
    responses(
        (status = 200, description = "The priced models", body = [ModelPrice]),
    )
)]
async fn list_prices(State(state): State<AppState>) -> Result<Json<Vec<ModelPrice>>, ApiError> {
    Ok(Json(state.collab.model_prices()?))
}

/// The highest price taken, in dollars per million tokens.
const MAX_PRICE_PER_MTOK: f64 = 1_000_000.0;

/// A model's price in US dollars per million tokens.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceRequest {
    /// The model name as the endpoint reports it in its calls.
    pub model: String,
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

#[utoipa::path(
    put, path = "/v1/quality/prices", tag = "quality",
    request_body = PriceRequest,
    responses(
        (status = 200, description = "The model's price, used for the report's spend", body = ModelPrice),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 422, description = "An empty model, or a negative, missing or too large price", body = ErrorBody),
    )
)]
async fn set_price(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<PriceRequest>,
) -> Result<Json<ModelPrice>, ApiError> {
    // No model costs more; a larger number is a slip (or 2^63), not a price to spend by.
    for (field, v) in [
        ("input_per_mtok", req.input_per_mtok),
        ("output_per_mtok", req.output_per_mtok),
    ] {
        if v > MAX_PRICE_PER_MTOK {
            return Err(ApiError::invalid(format!(
                "{field}: must be at most {MAX_PRICE_PER_MTOK} dollars per million tokens"
            )));
        }
    }
    Ok(Json(state.collab.set_model_price(
        &req.model,
        req.input_per_mtok,
        req.output_per_mtok,
    )?))
}
