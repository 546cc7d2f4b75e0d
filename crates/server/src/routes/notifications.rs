//! The person's notifications: `GET /v1/notifications?status=open|all&limit=` (newest first,
//! with the open count the page's badge shows) and `POST /v1/notifications/:id/dismiss`.
//! Changes stream as `notification_changed` on the global `GET /v1/events`.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::query_number;
use crate::routes::sessions::query;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use troupe_collab::NotificationList;
use troupe_store::Notification;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(dismiss))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NotificationQuery {
    /// `open` (default) or `all`.
    #[param(value_type = Option<String>)]
    pub status: Option<String>,
    /// How many, newest first: 1 to 200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/notifications", tag = "notifications",
    params(NotificationQuery),
    responses(
        (status = 200, description = "The notifications, newest first, and how many are open", body = NotificationList),
        (status = 422, description = "A bad status or limit", body = ErrorBody),
    )
)]
async fn list(
    State(state): State<AppState>,
    q: Result<Query<NotificationQuery>, QueryRejection>,
) -> Result<Json<NotificationList>, ApiError> {
    let q = query(q)?;
    let all = match q.status.as_deref().map(str::trim) {
        None | Some("open") => false,
        Some("all") => true,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "status: must be open or all (got '{other}')"
            )));
        }
    };
    let limit = query_number("limit", q.limit.as_deref(), 50, 1, 200)?;
    Ok(Json(state.collab.notifications(all, limit)?))
}

#[utoipa::path(
    post, path = "/v1/notifications/{id}/dismiss", tag = "notifications",
    params(("id" = i64, Path, description = "Notification id")),
    responses(
        (status = 200, description = "Dismissed: resolved as `dismissed`", body = Notification),
        (status = 400, description = "The id is not an id", body = ErrorBody),
        (status = 404, description = "No such notification", body = ErrorBody),
        (status = 409, description = "`not_open`: it closed already", body = ErrorBody),
    )
)]
async fn dismiss(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Notification>, ApiError> {
    let id = id
        .trim()
        .parse::<i64>()
        .map_err(|_| ApiError::bad_request(format!("path id: '{id}' is not an id")))?;
    Ok(Json(state.collab.dismiss_notification(id)?))
}
