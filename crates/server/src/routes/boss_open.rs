//! Opening the Runtime Boss from Settings (issue 18 item 19, RB-6): `POST
//! /v1/boss/session/open`, and its name (item 18): `GET/PUT /v1/boss/name`.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::workflows::workflows;
use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use troupe_workflows::runtime_boss::open::Opened;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(open))
        .routes(routes!(get_name, put_name))
}

#[utoipa::path(
    post, path = "/v1/boss/session/open", tag = "runtime-boss",
    responses(
        (status = 200, description = "The runtime boss session to open: an account-routed one, else an existing channel-less one, else a new \"Runtime Boss (local)\" (`created`, briefed then). `kickoff`: a greeting task was queued and the session woken (only a channel-less session with no conversation yet, nothing queued and a model; at most once per session)", body = Opened),
        (status = 409, description = "Runtime Boss Mode is off (`boss_disabled`)", body = ErrorBody),
    )
)]
async fn open(State(state): State<AppState>) -> Result<Json<Opened>, ApiError> {
    Ok(Json(
        workflows(&state)
            .open_runtime_boss(&state.data_dir, &state.channels.accounts())
            .await?,
    ))
}

/// The runtime boss's name.
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BossName {
    /// 1 to 64 characters on one line (trimmed); `null` when none is kept.
    pub name: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/boss/name", tag = "runtime-boss",
    responses(
        (status = 200, description = "The name kept as the shared-memory row self/boss_name, or null", body = BossName),
    )
)]
async fn get_name(State(state): State<AppState>) -> Result<Json<BossName>, ApiError> {
    Ok(Json(BossName {
        name: workflows(&state).boss_name()?,
    }))
}

#[utoipa::path(
    put, path = "/v1/boss/name", tag = "runtime-boss",
    request_body = BossName,
    responses(
        (status = 200, description = "The name kept (trimmed); the runtime boss sessions are re-briefed once with it", body = BossName),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 422, description = "name: missing, empty, over 64 characters, or more than one line", body = ErrorBody),
    )
)]
async fn put_name(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<BossName>,
) -> Result<Json<BossName>, ApiError> {
    let Some(name) = req.name else {
        return Err(ApiError::invalid("name: required (1 to 64 characters)"));
    };
    let wf = workflows(&state);
    let name = wf.set_boss_name(&name)?;
    wf.ensure_runtime_boss(&state.data_dir, &state.channels.accounts())?;
    Ok(Json(BossName { name: Some(name) }))
}
