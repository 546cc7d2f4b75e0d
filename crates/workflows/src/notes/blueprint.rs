//! A Blueprint is decision-complete: it has the eight sections the seeds name, each with
//! content, and leaves nothing marked TBD. A section is a markdown heading (any level) whose
//! text starts with the section's name; a leading number ("3." or "3)") is ignored.

/// The eight sections, in order.
pub const SECTIONS: [&str; 8] = [
    "Goal",
    "Constraints",
    "Selected approach",
    "Deliverables",
    "Acceptance criteria",
    "Verification",
    "Risks",
    "Exclusions",
];

fn heading_text(line: &str) -> Option<String> {
    let t = line.trim_start();
    let rest = t.strip_prefix('#')?.trim_start_matches('#');
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let mut s = rest.trim().to_lowercase();
    // "3. Risks" / "3) Risks"
    let digits = s.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        let after = &s[digits..];
        if let Some(r) = after.strip_prefix('.').or_else(|| after.strip_prefix(')')) {
            s = r.trim().to_string();
        }
    }
    Some(s)
}

fn section_of(heading: &str) -> Option<usize> {
    SECTIONS
        .iter()
        .position(|s| heading.starts_with(&s.to_lowercase()))
}

/// Every problem with a Blueprint body, or `Ok` when it is complete.
pub fn validate(body: &str) -> Result<(), Vec<String>> {
    let mut content = [None::<bool>; 8];
    let mut current: Option<usize> = None;
    for line in body.lines() {
        if let Some(h) = heading_text(line) {
            current = section_of(&h);
            if let Some(i) = current {
                content[i].get_or_insert(false);
            }
            continue;
        }
        if let Some(i) = current
            && !line.trim().is_empty()
        {
            content[i] = Some(true);
        }
    }
    let mut problems = Vec::new();
    let missing: Vec<&str> = SECTIONS
        .iter()
        .zip(content)
        .filter(|(_, c)| c.is_none())
        .map(|(s, _)| *s)
        .collect();
    if !missing.is_empty() {
        problems.push(format!("missing sections: {}", missing.join(", ")));
    }
    let empty: Vec<&str> = SECTIONS
        .iter()
        .zip(content)
        .filter(|(_, c)| *c == Some(false))
        .map(|(s, _)| *s)
        .collect();
    if !empty.is_empty() {
        problems.push(format!("empty sections: {}", empty.join(", ")));
    }
    if body
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w == "TBD")
    {
        problems.push(
            "a Blueprint leaves nothing TBD: decide it, or ask the user and record the answer"
                .into(),
        );
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// A complete body with every section, for examples and tests.
pub fn template() -> String {
    SECTIONS
        .iter()
        .map(|s| format!("## {s}\n\n…\n"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> String {
        SECTIONS
            .iter()
            .enumerate()
            .map(|(i, s)| format!("### {}. {s}\nSomething decided about {s}.\n", i + 1))
            .collect()
    }

    #[test]
    fn blueprint_with_all_eight_sections_is_complete() {
        assert_eq!(validate(&full()), Ok(()));
        assert_eq!(validate(&template()), Ok(()));
    }

    #[test]
    fn blueprint_names_missing_and_empty_sections() {
        let body = "# Goal\nShip it.\n# Constraints\n\n# Risks\nnone known\n";
        let problems = validate(body).unwrap_err();
        assert!(problems[0].contains("Selected approach"), "{problems:?}");
        assert!(problems[0].contains("Exclusions"), "{problems:?}");
        assert_eq!(problems[1], "empty sections: Constraints");
    }

    #[test]
    fn blueprint_with_tbd_is_not_decision_complete() {
        let body = full().replace("Something decided about Risks.", "Risks: TBD");
        assert!(validate(&body).unwrap_err()[0].contains("TBD"));
    }

    #[test]
    fn headings_need_a_space_and_may_be_numbered() {
        assert_eq!(heading_text("#Goal"), None);
        assert_eq!(
            heading_text("## 2) Constraints"),
            Some("constraints".into())
        );
        assert_eq!(section_of("acceptance criteria and checks"), Some(4));
    }
}
