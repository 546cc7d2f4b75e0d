//! Errors as the API answers them: `{"error": {"code", "message"}}` with the status that fits.

use axum::Json;
use axum::extract::FromRequest;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;
use troupe_collab::CollabError;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

/// The error body, for the OpenAPI document.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// Machine-readable: `bad_request`, `not_found`, `invalid`, `not_running`, `unauthorized`, …
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
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
        let body = json!({"error": {"code": self.code, "message": self.message}});
        (self.status, Json(body)).into_response()
    }
}

impl From<CollabError> for ApiError {
    fn from(e: CollabError) -> Self {
        match e {
            CollabError::NotFound { what, id } => {
                ApiError::not_found(format!("{what} {id} not found"))
            }
            CollabError::Invalid(m) => ApiError::invalid(m),
            CollabError::Conflict { code, message } => {
                ApiError::new(StatusCode::CONFLICT, code, message)
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
        other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            "request body is over 1 MiB",
        ),
        // A `Value` takes any well-formed JSON, so no data error reaches here; what is left
        // is a body that could not be read.
        other => ApiError::bad_request(other.body_text()),
    }
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
