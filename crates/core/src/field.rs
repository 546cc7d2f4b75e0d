//! The checks a short text field a person or a Bot writes is held to (a memory's subject, a
//! skill's name and catalog line), so each says what is wrong the same way.

/// Trimmed, one line, saying something (a letter or digit), at most `max` characters.
pub(crate) fn one_line(what: &str, raw: &str, max: usize) -> Result<String, String> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if s.contains(['\n', '\r']) {
        return Err(format!("{what} must be one line"));
    }
    if !s.chars().any(char::is_alphanumeric) {
        return Err(format!("{what} says nothing (no letter or digit)"));
    }
    let n = s.chars().count();
    if n > max {
        return Err(format!("{what} is {n} characters; at most {max}"));
    }
    Ok(s.to_string())
}
