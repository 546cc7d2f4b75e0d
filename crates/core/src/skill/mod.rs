//! A Bot's skills (seed 003, ADR 0052): named instructions it keeps for a kind of work. Its
//! catalog (each skill's name and one-line description) is in its situation at every model
//! call; it reads a whole skill with `read_skill` when the work calls for it. A skill shared
//! as a project skill is a copy every Bot reads and none changes.

pub mod edit;

/// A name is at most this many characters.
pub const NAME_MAX: usize = 64;
/// The catalog line is at most this many characters.
pub const DESCRIPTION_MAX: usize = 200;
/// A skill's text is at most this many characters.
pub const BODY_MAX: usize = 20_000;
/// A Bot keeps at most this many skills, so its catalog stays a short read.
pub const PER_BOT_MAX: usize = 30;
/// QE7: at most this many project skills are on at once.
pub const PROJECT_ON_MAX: usize = 20;

/// A name as stored: trimmed, one line, 1–64 characters.
pub fn name(raw: &str) -> Result<String, String> {
    crate::field::one_line("name", raw, NAME_MAX)
}

/// The catalog line: what the skill is for, so the Bot knows when to read it.
pub fn description(raw: &str) -> Result<String, String> {
    crate::field::one_line("description", raw, DESCRIPTION_MAX)
}

/// A skill's text as stored: trimmed at its ends, 1–20,000 characters.
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
        return Err(format!("body is {n} characters; at most {BODY_MAX}"));
    }
    Ok(b.to_string())
}

/// Why a Bot that keeps `held` skills may not make another.
pub fn room_for_one_more(held: usize) -> Result<(), String> {
    if held >= PER_BOT_MAX {
        Err(format!(
            "this Bot keeps {PER_BOT_MAX} skills already; delete one first"
        ))
    } else {
        Ok(())
    }
}

/// Why another project skill may not be turned on while `on` are.
pub fn room_for_one_more_shared(on: usize) -> Result<(), String> {
    if on >= PROJECT_ON_MAX {
        Err(format!(
            "{PROJECT_ON_MAX} project skills are on already; turn one off or stop sharing it first"
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_descriptions_and_bodies_are_held_to_their_limits() {
        assert_eq!(name("  Render checks ").unwrap(), "Render checks");
        assert!(name("a\nb").unwrap_err().contains("one line"));
        assert!(name("--").unwrap_err().contains("says nothing"));
        assert!(name(&"é".repeat(64)).is_ok(), "characters, not bytes");
        assert!(name(&"x".repeat(65)).unwrap_err().contains("65 characters"));
        assert!(description("").unwrap_err().contains("empty"));
        assert!(
            description(&"x".repeat(201))
                .unwrap_err()
                .contains("at most 200")
        );
        assert_eq!(
            body("\n  Step one.\n\nStep two.\n").unwrap(),
            "Step one.\n\nStep two."
        );
        assert!(
            body(&"x".repeat(20_001))
                .unwrap_err()
                .contains("at most 20000")
        );
        assert!(room_for_one_more(29).is_ok());
        assert!(room_for_one_more(30).unwrap_err().contains("delete one"));
        assert!(room_for_one_more_shared(19).is_ok());
        assert!(
            room_for_one_more_shared(20)
                .unwrap_err()
                .contains("turn one off")
        );
    }
}
