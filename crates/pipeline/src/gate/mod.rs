//! The two gates. The request gate runs before an agent starts; the response gate after it
//! ends. A refused document does not route: the refusals name each field and the reason.

mod refusal;
mod request;
mod response;
mod schemas;

pub use refusal::{Refusal, Refusals};
pub use request::check_request;
pub use response::check_response;
pub use schemas::{
    REQUEST_SCHEMA, RESPONSE_SCHEMA, STATE_SCHEMA, Shipped, check_shipped, schema_refusals,
};

use crate::fsutil::{JsonReadError, read_json_value};

/// Reads a JSON document for a gate: a missing, unreadable or malformed file is a refusal
/// named after the file.
pub(crate) fn read_for_gate(
    path: &std::path::Path,
    name: &str,
) -> Result<serde_json::Value, Refusals> {
    read_json_value(path).map_err(|e| {
        let reason = match e {
            JsonReadError::Missing(p) => format!("{} is missing", p.display()),
            JsonReadError::Io(p, e) => format!("{} cannot be read: {e}", p.display()),
            JsonReadError::Syntax {
                line,
                column,
                message,
                ..
            } => format!("malformed JSON at line {line}, column {column}: {message}"),
        };
        Refusals(vec![Refusal::new(name, reason)])
    })
}
