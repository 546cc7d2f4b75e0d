//! Errors as the API answers them: `{"error": {"code", "message"}}` with the status that fits.

use axum::Json;
use axum::extract::FromRequest;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;
use troupe_collab::CollabError;
use troupe_core::HoldId;
use troupe_store::StoreError;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// With `409 held`: the holds in force that refused the request, when they are known.
    pub hold_ids: Option<Vec<HoldId>>,
}

/// The error body, for the OpenAPI document.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// Machine-readable: `bad_request`, `not_found`, `invalid`, `not_running`, `held`,
    /// `unauthorized`, …
    pub code: String,
    pub message: String,
    /// Only with `held`: the holds in force that refused it, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<i64>>)]
    pub hold_ids: Option<Vec<HoldId>>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            hold_ids: None,
        }
    }
    /// `409 held`: a hold in force covers the work the request would start or change.
    pub fn held(hold_ids: Option<Vec<HoldId>>, message: impl Into<String>) -> Self {
        ApiError {
            hold_ids,
            ..Self::new(StatusCode::CONFLICT, "held", message)
        }
    }
    /// A `409` with its code; `held` also names the holds its message names.
    pub fn conflict(code: &'static str, message: String) -> Self {
        if code == "held" {
            let ids = holds_named_in(&message);
            return Self::held((!ids.is_empty()).then_some(ids), message);
        }
        Self::new(StatusCode::CONFLICT, code, message)
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(ids) = &self.hold_ids {
            error["hold_ids"] = json!(ids);
        }
        (self.status, Json(json!({ "error": error }))).into_response()
    }
}

/// What `409 held` says when the refusal came from the database's trigger.
pub(crate) const HELD_MESSAGE: &str =
    "held: a stop in force covers this work; it goes on once the stop is lifted";

impl From<CollabError> for ApiError {
    fn from(e: CollabError) -> Self {
        match e {
            CollabError::NotFound { what, id } => {
                ApiError::not_found(format!("{what} {id} not found"))
            }
            CollabError::Invalid(m) => ApiError::invalid(m),
            CollabError::Conflict { code, message } => ApiError::conflict(code, message),
            // The database's refusal names no hold.
            CollabError::Store(StoreError::Held)
            | CollabError::Engine(troupe_engine::EngineError::Store(StoreError::Held)) => {
                ApiError::held(None, HELD_MESSAGE)
            }
            other => {
                tracing::error!(error = %other, "request failed");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    other.to_string(),
                )
            }
        }
    }
}

/// JSON body extractor whose rejections use the API's error shape: malformed JSON is 400, a
/// body that is not a JSON object is 422, well-formed JSON with wrong or missing fields is 422
/// naming the field, a body over the limit is 413.
///
/// The body is read as a `serde_json::Value` first and deserialized from that: a derived
/// struct would also take an array positionally (`["x"]` as `{"name": "x"}`), and a syntax
/// error after an unknown field would be reported as the unknown field instead of as 400.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        let value = match Json::<serde_json::Value>::from_request(req, state).await {
            Ok(Json(v)) => v,
            Err(rejection) => return Err(body_rejection(rejection)),
        };
        if !value.is_object() {
            return Err(ApiError::invalid(format!(
                "the body must be a JSON object, got {}",
                json_kind(&value)
            )));
        }
        serde_path_to_error::deserialize(value)
            .map(ApiJson)
            .map_err(|e| {
                let path = e.path().to_string();
                let inner = e.into_inner();
                if path == "." {
                    ApiError::invalid(format!("invalid body: {inner}"))
                } else {
                    ApiError::invalid(format!("invalid body: {path}: {inner}"))
                }
            })
    }
}

fn body_rejection(rejection: JsonRejection) -> ApiError {
    match rejection {
        JsonRejection::JsonSyntaxError(e) => ApiError::bad_request(e.body_text()),
        JsonRejection::MissingJsonContentType(e) => ApiError::bad_request(e.body_text()),
        other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => too_large(),
        // A `Value` takes any well-formed JSON, so no data error reaches here; what is left
        // is a body that could not be read.
        other => ApiError::bad_request(other.body_text()),
    }
}

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        "request body is over 1 MiB",
    )
}

/// A declared body over the limit but no longer than this is read and dropped before the
/// refusal: a sender still writing it would otherwise find the connection reset and never see
/// the 413. Longer ones are refused at once, unread.
const DRAIN_UP_TO: u64 = 8 * 1024 * 1024;

/// Refuses a body over [`crate::BODY_LIMIT`] on every route before its handler runs: a route
/// that reads no body would otherwise act on the request whatever it carries, and a route that
/// reads raw bytes would answer the limit in plain text. A declared length is judged as it
/// stands; a chunked body is read here, up to the limit.
pub async fn limit_body(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    use axum::http::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = declared {
        if n > crate::BODY_LIMIT as u64 {
            if n <= DRAIN_UP_TO {
                use futures::StreamExt;
                let mut body = req.into_body().into_data_stream();
                while let Some(Ok(_)) = body.next().await {}
            }
            return too_large().into_response();
        }
        return next.run(req).await;
    }
    if !req.headers().contains_key(TRANSFER_ENCODING) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    match axum::body::to_bytes(body, crate::BODY_LIMIT).await {
        Ok(bytes) => {
            next.run(axum::extract::Request::from_parts(parts, bytes.into()))
                .await
        }
        // Over the limit, or the sender stopped mid-body: either way nothing was read.
        Err(_) => too_large().into_response(),
    }
}

/// The hold ids (`hold_N`) a `held` refusal's message names, in order, each once.
fn holds_named_in(message: &str) -> Vec<HoldId> {
    let mut out: Vec<HoldId> = Vec::new();
    let mut rest = message;
    while let Some(at) = rest.find("hold_") {
        let after = &rest[at + "hold_".len()..];
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        let boundary = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if boundary
            && !digits.is_empty()
            && let Ok(n) = digits.parse::<i64>()
            && !out.contains(&HoldId(n))
        {
            out.push(HoldId(n));
        }
        rest = after;
    }
    out
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

pub async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!("no route for {}", uri.path()))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(e: ApiError) -> (StatusCode, serde_json::Value) {
        let resp = e.into_response();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn held_is_409_with_the_holds_when_known() {
        let (status, v) = body(CollabError::Store(StoreError::Held).into()).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(v["error"]["code"], "held");
        assert!(v["error"].get("hold_ids").is_none(), "{v}");

        let e = CollabError::conflict("held", "held: stopped by hold_3, hold_12 and hold_3");
        let (status, v) = body(e.into()).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(v["error"]["code"], "held");
        assert_eq!(v["error"]["hold_ids"], json!([3, 12]), "{v}");

        // Another conflict carries no hold ids, whatever its message says.
        let (_, v) = body(CollabError::conflict("not_running", "hold_3 is in force").into()).await;
        assert_eq!(v["error"]["code"], "not_running");
        assert!(v["error"].get("hold_ids").is_none(), "{v}");
    }

    #[test]
    fn hold_ids_are_read_only_as_whole_ids() {
        assert_eq!(holds_named_in("hold_7"), vec![HoldId(7)]);
        assert_eq!(holds_named_in("xhold_7, hold_x, (hold_8)"), vec![HoldId(8)]);
        assert!(holds_named_in("held").is_empty());
    }
}
