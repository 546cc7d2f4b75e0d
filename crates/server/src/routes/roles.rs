//! Model roles: which endpoint each role (default, reading, scribe, …) calls.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use troupe_collab::Collab;
use troupe_core::thread::EndpointSpec;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// A role and its endpoint.
#[derive(Serialize, utoipa::ToSchema)]
pub struct RoleView {
    pub role: String,
    pub endpoint: EndpointSpec,
    /// Whether the key variable the endpoint names is set; null when it names none.
    pub key_present: Option<bool>,
}

impl RoleView {
    fn new(collab: &Collab, role: String, endpoint: EndpointSpec) -> Self {
        let key_present = collab.roles().key_present(&endpoint);
        RoleView {
            role,
            endpoint,
            key_present,
        }
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_roles))
        .routes(routes!(set_role))
}

#[utoipa::path(
    get, path = "/v1/roles", tag = "roles",
    responses((status = 200, description = "Every role that has an endpoint", body = [RoleView]))
)]
async fn list_roles(State(state): State<AppState>) -> Json<Vec<RoleView>> {
    let roles = state.collab.roles().all();
    Json(
        roles
            .into_iter()
            .map(|(r, e)| RoleView::new(&state.collab, r, e))
            .collect(),
    )
}

#[utoipa::path(
    put, path = "/v1/roles/{role}", tag = "roles",
    params(("role" = String, Path, description = "default, reading, scribe, judgement, review or picture_judge")),
    request_body = EndpointSpec,
    responses(
        (status = 200, description = "The role now uses this endpoint", body = RoleView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 422, description = "Unknown role or invalid endpoint", body = ErrorBody),
    )
)]
async fn set_role(
    State(state): State<AppState>,
    Path(role): Path<String>,
    ApiJson(spec): ApiJson<EndpointSpec>,
) -> Result<Json<RoleView>, ApiError> {
    state.collab.set_role(&role, spec.clone())?;
    Ok(Json(RoleView::new(&state.collab, role, spec)))
}
