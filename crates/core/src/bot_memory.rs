//! A Bot's memories (digest 003-B §11.4): short notes a Bot keeps for itself and reads in its
//! situation. The limits are the memory tool's, and every writer — the Bot's `remember`, the
//! person's edit, a retrospective — is held to them.

/// A subject is at most this many characters.
pub const SUBJECT_MAX: usize = 40;
/// A body is at most this many characters.
pub const BODY_MAX: usize = 160;
/// At most this many of a Bot's memories are on at once.
pub const ENABLED_MAX: usize = 20;

/// A subject as stored: trimmed, one line, 1–40 characters.
pub fn subject(raw: &str) -> Result<String, String> {
    crate::field::one_line("subject", raw, SUBJECT_MAX)
}

/// A body as stored: trimmed, 1–160 characters.
pub fn body(raw: &str) -> Result<String, String> {
    let b = raw.trim();
    if b.is_empty() {
        return Err("body is empty".into());
    }
    if !b.chars().any(char::is_alphanumeric) {
        return Err("body says nothing (no letter or digit)".into());
    }
    let n = b.chars().count();
    if n > BODY_MAX {
        return Err(format!(
            "body is {n} characters; at most {BODY_MAX}: keep one way of working per memory"
        ));
    }
    Ok(b.to_string())
}

/// Why a new memory may not be turned on: `enabled` are on already.
pub fn room_for_one_more(enabled: usize) -> Result<(), String> {
    if enabled >= ENABLED_MAX {
        Err(format!(
            "{ENABLED_MAX} memories are on already; forget or merge one away first"
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_and_bodies_are_held_to_the_memory_tools_limits() {
        assert_eq!(subject("  Renders ").unwrap(), "Renders");
        assert!(subject(" ").unwrap_err().contains("empty"));
        assert!(subject("a\nb").unwrap_err().contains("one line"));
        assert!(subject("…").unwrap_err().contains("says nothing"));
        assert!(body("...").unwrap_err().contains("says nothing"));
        assert!(subject(&"é".repeat(40)).is_ok(), "characters, not bytes");
        assert!(
            subject(&"x".repeat(41))
                .unwrap_err()
                .contains("41 characters")
        );
        assert!(body(&"x".repeat(160)).is_ok());
        assert!(body(&"x".repeat(161)).unwrap_err().contains("at most 160"));
        assert!(room_for_one_more(19).is_ok());
        assert!(
            room_for_one_more(20)
                .unwrap_err()
                .contains("forget or merge")
        );
    }
}
