//! Test controls of `troupe serve --manual-clock` (loopback binds only): move the daemon's
//! clock, and run one scheduler tick. Without the flag both answer 404 exactly as an unknown
//! route does, whatever the body, so nothing outside a test setup can move time.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use axum::Json;
use axum::extract::State;
use axum::http::Uri;
use serde::{Deserialize, Serialize};
use troupe_collab::TickReport;
use troupe_core::{Clock, ManualClock};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The most one call may move the clock: a year, far past any stored deadline (7-day
/// check-backs, 3-hour external jobs), and no overflow however often it is called.
const MAX_ADVANCE_MS: i64 = 366 * 24 * 60 * 60 * 1000;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(advance_clock))
        .routes(routes!(tick))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct AdvanceRequest {
    /// How far to move the clock forward, in whole milliseconds (0 reads it).
    #[schema(minimum = 0, maximum = 31_622_400_000_i64)]
    pub advance_ms: i64,
}

/// The daemon's clock after the move.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ClockView {
    /// Milliseconds since the Unix epoch.
    pub now_ms: i64,
    /// The same instant in ISO 8601 UTC.
    pub now: String,
}

/// The manual clock, or the 404 an unknown route gets.
fn manual_clock(state: &AppState, uri: &Uri) -> Result<ManualClock, ApiError> {
    state
        .manual_clock
        .clone()
        .ok_or_else(|| ApiError::not_found(format!("no route for {}", uri.path())))
}

#[utoipa::path(
    post, path = "/v1/debug/clock", tag = "debug",
    request_body = AdvanceRequest,
    responses(
        (status = 200, description = "The clock moved forward; the new now", body = ClockView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 404, description = "The daemon was not started with --manual-clock", body = ErrorBody),
        (status = 422, description = "advance_ms missing, not an integer, negative or over a year", body = ErrorBody),
    )
)]
async fn advance_clock(
    State(state): State<AppState>,
    uri: Uri,
    body: Result<ApiJson<AdvanceRequest>, ApiError>,
) -> Result<Json<ClockView>, ApiError> {
    let clock = manual_clock(&state, &uri)?;
    let ApiJson(req) = body?;
    if !(0..=MAX_ADVANCE_MS).contains(&req.advance_ms) {
        return Err(ApiError::invalid(format!(
            "advance_ms: must be an integer from 0 to {MAX_ADVANCE_MS} (got {})",
            req.advance_ms
        )));
    }
    clock.advance(req.advance_ms);
    let now_ms = clock.now_ms();
    Ok(Json(ClockView {
        now_ms,
        now: troupe_core::time::iso_utc(now_ms),
    }))
}

#[utoipa::path(
    post, path = "/v1/debug/tick", tag = "debug",
    responses(
        (status = 200, description = "One scheduler tick ran (supervisor, due check-backs, external-job polls): what it did", body = TickReport),
        (status = 404, description = "The daemon was not started with --manual-clock", body = ErrorBody),
    )
)]
async fn tick(State(state): State<AppState>, uri: Uri) -> Result<Json<TickReport>, ApiError> {
    manual_clock(&state, &uri)?;
    Ok(Json(state.collab.scheduler_tick().await))
}
