//! SV-15 / S-SV-5: a model error that retrying cannot mend — refused credentials, an unknown
//! model, spent quota — read from the failed turn's error text. The endpoint's address is left
//! out before reading: a port such as `:40361` is not a 403.

/// Words of an account failure, in the error's own text (lower case).
const WORDS: [&str; 9] = [
    "auth refused",
    "unauthorized",
    "forbidden",
    "model_not_found",
    "unknown model",
    "does not exist",
    "quota",
    "out of usage",
    "usage limit",
];

/// Whether a failed model call's error says the Bot cannot work until its account is mended.
pub fn account_failure(detail: &str) -> bool {
    let text: Vec<String> = detail
        .split_whitespace()
        .filter(|w| !w.contains("://"))
        .map(str::to_ascii_lowercase)
        .collect();
    let text = text.join(" ");
    text.contains("(401)") || text.contains("(403)") || WORDS.iter().any(|w| text.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_credentials_an_unknown_model_and_spent_quota_are_account_failures() {
        for detail in [
            "auth refused (401) by http://127.0.0.1:8080/v1 for model m: invalid api key",
            "auth refused (403) by https://api.example.com/v1 for model m: signed out",
            "not found (404) at http://127.0.0.1:9/v1 for model m: model_not_found: no such model",
            "rate limited (429) by http://127.0.0.1:9/v1 for model m: insufficient_quota",
            "server error (500) from http://h/v1 for model m: You are out of usage for today",
        ] {
            assert!(account_failure(detail), "{detail}");
        }
    }

    /// The flake this rule once had: a server error from an endpoint whose port holds "403".
    #[test]
    fn an_endpoints_port_or_path_is_not_read_as_a_status() {
        for detail in [
            "server error (500) from http://127.0.0.1:40361/v1 for model fake: the fake model is down",
            "server error (502) from http://127.0.0.1:34013/v1 for model m: bad gateway",
            "connection to http://127.0.0.1:4010/v1 failed for model m: refused",
            "protocol error from https://h/v1/quota-403 for model m: stream dropped mid-answer",
        ] {
            assert!(!account_failure(detail), "{detail}");
        }
    }
}
