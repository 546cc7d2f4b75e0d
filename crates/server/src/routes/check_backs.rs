//! Check-backs: the one-time timers Bots booked for their own work, as they stand.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use serde::Deserialize;
use troupe_core::check_back::CheckBackState;
use troupe_core::{BotId, SessionId};
use troupe_store::{CheckBackFilter, CheckBackRecord};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_check_backs))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CheckBacksQuery {
    /// Only this Bot's bookings.
    #[param(value_type = Option<i64>)]
    pub bot_id: Option<String>,
    /// Only those booked in this conversation (where they wake the Bot).
    #[param(value_type = Option<i64>)]
    pub session_id: Option<String>,
    /// Only those in this state: pending, set_aside, fired, voided or cleared.
    pub state: Option<String>,
    /// How many, newest first: 1 to 1000 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/check-backs", tag = "check-backs",
    params(CheckBacksQuery),
    responses(
        (status = 200, description = "Check-backs, newest first: when each is due, its note, and what became of it", body = [CheckBackRecord]),
        (status = 422, description = "A bad bot_id, session_id, state or limit", body = ErrorBody),
    )
)]
async fn list_check_backs(
    State(state): State<AppState>,
    q: Result<Query<CheckBacksQuery>, QueryRejection>,
) -> Result<Json<Vec<CheckBackRecord>>, ApiError> {
    let q = query(q)?;
    let filter = CheckBackFilter {
        bot_id: query_id::<BotId>("bot_id", q.bot_id.as_deref())?,
        session_id: query_id::<SessionId>("session_id", q.session_id.as_deref())?,
        state: q
            .state
            .as_deref()
            .map(|s| {
                CheckBackState::parse(s.trim())
                    .map_err(|m| ApiError::invalid(format!("state: {m}")))
            })
            .transpose()?,
    };
    let limit = query_number("limit", q.limit.as_deref(), 100, 1, 1000)?;
    Ok(Json(state.collab.check_backs(&filter, limit)?))
}
