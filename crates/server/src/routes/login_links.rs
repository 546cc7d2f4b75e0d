//! One-time login links for the web page: whoever holds the token (the CLI's
//! `troupe login-link`) asks for one; a browser that opens it gets a session cookie
//! (`access::login`).

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// A link that logs one browser in, once.
#[derive(Serialize, utoipa::ToSchema)]
pub struct LoginLink {
    /// The one-time code.
    pub once: String,
    /// The link's path on this daemon: `/login?once=CODE`.
    pub path: String,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(create_login_link))
}

#[utoipa::path(
    post, path = "/v1/login-links", tag = "access",
    responses(
        (status = 201, description = "A new one-time login link; void once a browser opens it, or when the daemon restarts", body = LoginLink),
        (status = 401, description = "No token or web session", body = ErrorBody),
        (status = 409, description = "The daemon runs with --no-token: the page needs no login", body = ErrorBody)
    )
)]
async fn create_login_link(
    State(state): State<AppState>,
) -> Result<(StatusCode, Json<LoginLink>), ApiError> {
    if state.token.is_none() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "no_token",
            "this daemon runs with --no-token: the web page needs no login",
        ));
    }
    let once = state.login.issue().map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("cannot draw random bytes: {e}"),
        )
    })?;
    let path = format!("/login?once={once}");
    Ok((StatusCode::CREATED, Json(LoginLink { once, path })))
}
