//! The Agenda: scheduled deliveries into a session's thread. `DELETE` cancels an item (the row
//! stays, with status `cancelled`).

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::workflows::workflows;
use crate::routes::{path_id, query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use troupe_core::SessionId;
use troupe_store::{AgendaId, AgendaItem};
use troupe_workflows::agenda::service::parse_status;
use troupe_workflows::{AgendaPatchRequest, NewAgendaRequest};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_agenda, create_agenda))
        .routes(routes!(get_agenda, patch_agenda, cancel_agenda))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AgendaQuery {
    /// Only the items delivering into this session.
    #[param(value_type = Option<i64>)]
    pub session_id: Option<String>,
    /// `active`, `paused`, `done` or `cancelled`.
    pub status: Option<String>,
    /// How many, oldest first: 1 to 500 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/agenda", tag = "agenda",
    params(AgendaQuery),
    responses(
        (status = 200, description = "Agenda items, oldest first", body = [AgendaItem]),
        (status = 404, description = "No such session", body = ErrorBody),
        (status = 422, description = "Bad session id, status or limit", body = ErrorBody),
    )
)]
async fn list_agenda(
    State(state): State<AppState>,
    q: Result<Query<AgendaQuery>, QueryRejection>,
) -> Result<Json<Vec<AgendaItem>>, ApiError> {
    let q = query(q)?;
    let limit = query_number("limit", q.limit.as_deref(), 100, 1, 500)?;
    let status = parse_status(q.status.as_deref())?;
    let session = query_id::<SessionId>("session_id", q.session_id.as_deref())?;
    Ok(Json(
        workflows(&state).agenda_items(session, status, limit)?,
    ))
}

#[utoipa::path(
    post, path = "/v1/agenda", tag = "agenda",
    request_body = NewAgendaRequest,
    responses(
        (status = 201, description = "The new item, active, with its first deadline", body = AgendaItem),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 422, description = "Missing or unknown session, a bad trigger, an empty payload", body = ErrorBody),
    )
)]
async fn create_agenda(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<NewAgendaRequest>,
) -> Result<(StatusCode, Json<AgendaItem>), ApiError> {
    Ok((
        StatusCode::CREATED,
        Json(workflows(&state).create_agenda_item(req)?),
    ))
}

#[utoipa::path(
    get, path = "/v1/agenda/{id}", tag = "agenda",
    params(("id" = i64, Path, description = "Agenda item id")),
    responses(
        (status = 200, description = "The item", body = AgendaItem),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such item", body = ErrorBody),
    )
)]
async fn get_agenda(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<AgendaItem>, ApiError> {
    Ok(Json(
        workflows(&state).agenda_item(path_id::<AgendaId>(&id)?)?,
    ))
}

#[utoipa::path(
    patch, path = "/v1/agenda/{id}", tag = "agenda",
    params(("id" = i64, Path, description = "Agenda item id")),
    request_body = AgendaPatchRequest,
    responses(
        (status = 200, description = "The changed item", body = AgendaItem),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such item", body = ErrorBody),
        (status = 409, description = "The item is done or cancelled (`conflict`)", body = ErrorBody),
        (status = 422, description = "Nothing to change, a bad trigger, status or payload", body = ErrorBody),
    )
)]
async fn patch_agenda(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<AgendaPatchRequest>,
) -> Result<Json<AgendaItem>, ApiError> {
    let id = path_id::<AgendaId>(&id)?;
    Ok(Json(workflows(&state).update_agenda_item(id, req).await?))
}

#[utoipa::path(
    delete, path = "/v1/agenda/{id}", tag = "agenda",
    params(("id" = i64, Path, description = "Agenda item id")),
    responses(
        (status = 200, description = "The item, cancelled (cancelling again changes nothing)", body = AgendaItem),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such item", body = ErrorBody),
        (status = 409, description = "The item is already done (`conflict`)", body = ErrorBody),
    )
)]
async fn cancel_agenda(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<AgendaItem>, ApiError> {
    let id = path_id::<AgendaId>(&id)?;
    Ok(Json(workflows(&state).cancel_agenda_item(id).await?))
}
