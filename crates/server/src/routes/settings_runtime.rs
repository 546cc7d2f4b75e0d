//! The Runtime-domain settings (issue 18 item 14): `GET/PATCH /v1/settings/runtime` —
//! `boss_mode`, `briefing_interval_days`, `persona`, `identity_text`. A PATCH takes any subset
//! (`null` clears a field); a bad value is a 422 naming the field and nothing changes. After a
//! PATCH, provisioning (`ensure`) runs.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::workflows::workflows;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use troupe_core::runtime_boss::{RuntimeSettings, RuntimeSettingsPatch};
use troupe_workflows::runtime_boss::ensure::Provisioned;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_runtime, patch_runtime))
}

/// The settings after a change, and what provisioning did with them.
#[derive(Serialize, utoipa::ToSchema)]
pub struct RuntimeSettingsChanged {
    pub settings: RuntimeSettings,
    pub provisioned: Provisioned,
}

#[utoipa::path(
    get, path = "/v1/settings/runtime", tag = "runtime-boss",
    responses(
        (status = 200, description = "The Runtime-domain settings (unset fields read as off or null)", body = RuntimeSettings),
    )
)]
async fn get_runtime(State(state): State<AppState>) -> Result<Json<RuntimeSettings>, ApiError> {
    Ok(Json(workflows(&state).runtime_settings()?))
}

#[utoipa::path(
    patch, path = "/v1/settings/runtime", tag = "runtime-boss",
    request_body = RuntimeSettingsPatch,
    responses(
        (status = 200, description = "The settings now, and what provisioning did: the runtime boss session of each enabled channel account, those made and those briefed", body = RuntimeSettingsChanged),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 422, description = "An unknown field, a value of the wrong type, an interval outside 1..=365 days, a persona trait outside [0, 1], an identity text over 4000 characters: the message names the field and nothing changes", body = ErrorBody),
    )
)]
async fn patch_runtime(
    State(state): State<AppState>,
    ApiJson(patch): ApiJson<RuntimeSettingsPatch>,
) -> Result<Json<RuntimeSettingsChanged>, ApiError> {
    let (settings, provisioned) = workflows(&state).patch_runtime_settings(
        &patch,
        &state.data_dir,
        &state.channels.accounts(),
    )?;
    Ok(Json(RuntimeSettingsChanged {
        settings,
        provisioned,
    }))
}
