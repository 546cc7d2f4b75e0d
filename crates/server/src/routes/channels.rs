//! Chat channels: the inbound webhook of each channel account (`[channels.NAME]`).
//!
//! The route is reached by a chat service's bridge, not by the person: it is not behind the
//! API's bearer token (`access::is_public`) and is authenticated by the body's signature under
//! the account's secret instead. The signature is checked before the body is read.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use serde::Serialize;
use troupe_channels::{ChannelError, InboundError, Outcome, SIGNATURE_HEADER};
use troupe_core::SessionId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(inbound))
}

/// `202`: what became of a signed message.
#[derive(Serialize, utoipa::ToSchema)]
pub struct InboundAnswer {
    /// False when the account's filters did not take it (`reason` says why).
    pub accepted: bool,
    /// `not_mentioned`, `group_not_allowed` or `dm_not_allowed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// The conversation it went to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
    /// The same message id was accepted before; nothing was delivered this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<bool>,
}

impl From<ChannelError> for ApiError {
    fn from(e: ChannelError) -> Self {
        match e {
            ChannelError::UnknownAccount(m) => ApiError::not_found(m),
            ChannelError::Inbound(InboundError::BadSignature) => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "bad_signature",
                format!(
                    "{SIGNATURE_HEADER} is missing or is not sha256=<hex HMAC-SHA256 of the body> under the account's secret"
                ),
            ),
            ChannelError::Inbound(InboundError::Malformed(m)) => ApiError::bad_request(m),
            ChannelError::Inbound(InboundError::Invalid(m)) => ApiError::invalid(m),
            ChannelError::Conflict { code, message } => ApiError::conflict(code, message),
            ChannelError::Collab(c) => c.into(),
            ChannelError::Store(s) => troupe_collab::CollabError::from(s).into(),
        }
    }
}

#[utoipa::path(
    post, path = "/v1/channels/{account}/inbound", tag = "channels",
    params(
        ("account" = String, Path, description = "The channel account: the NAME of `[channels.NAME]`"),
        ("X-Troupe-Signature" = String, Header, description = "`sha256=<hex HMAC-SHA256 of the raw body>` under the account's secret"),
    ),
    request_body = troupe_channels::InboundBody,
    responses(
        (status = 202, description = "Read: filtered out (`accepted: false` and the `reason`), or accepted (`session_id`; `duplicate: true` when the message id was accepted before and nothing was delivered)", body = InboundAnswer),
        (status = 400, description = "Signed, but not JSON", body = ErrorBody),
        (status = 401, description = "The signature is missing or wrong (`bad_signature`); not the API's bearer token", body = ErrorBody),
        (status = 404, description = "No such channel account, or it is disabled", body = ErrorBody),
        (status = 409, description = "The account's Bot is missing or archived (`bot_unavailable`), or the chat's conversation is archived (`archived`)", body = ErrorBody),
        (status = 422, description = "Signed JSON that is not a message; the message names the field", body = ErrorBody),
    )
)]
async fn inbound(
    State(state): State<AppState>,
    Path(account): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<InboundAnswer>), ApiError> {
    let signature = headers.get(SIGNATURE_HEADER).and_then(|v| v.to_str().ok());
    let answer = match state.channels.accept(&account, signature, &body).await? {
        Outcome::Filtered(reason) => InboundAnswer {
            accepted: false,
            reason: Some(reason),
            session_id: None,
            duplicate: None,
        },
        Outcome::Accepted(a) => InboundAnswer {
            accepted: true,
            reason: None,
            session_id: Some(a.session_id),
            duplicate: Some(a.duplicate),
        },
    };
    Ok((StatusCode::ACCEPTED, Json(answer)))
}
