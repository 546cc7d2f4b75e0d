//! Reading whether a job is large (digest 003-B §2, LJ1, LJ3): one tool-free call weighs all
//! of the user's words about the job by what they ask for, never by their wording or length.
//! Unsure is no; an answer that does not hold is no reading, and the job stays unread.

use super::{as_object, extract_json_object};
use crate::large_job::Reading;
use serde_json::Value;

/// The user's words shown at most, the latest kept.
pub const WORDS_AT_MOST: usize = 30;

/// What the supervisor adds when it has a job read again (LJ3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RereadFacts {
    pub ended_segments: u32,
}

/// The prompt. `words` are the user's lines about the job, oldest first; only the latest
/// [`WORDS_AT_MOST`] are shown.
pub fn large_job_prompt(
    job: &str,
    request: &str,
    words: &[String],
    reread: Option<&RereadFacts>,
) -> String {
    let mut out = String::from("troupe-reader:large_job\n");
    out.push_str(
        "You read what a user asked AI Bots to make, and say whether it is a large job. You only \
         describe it; you do not answer it.\n\
         A large job can only be done well in several parts, with one part made first to set the \
         standard for the rest: a video of several minutes, a whole episode, a book or report of \
         many chapters, a site of many pages, a batch of dozens of like things. Judge by what is \
         asked for, never by how many words the user wrote or which words. If you are unsure, it \
         is not large.\n\
         Answer with one JSON object and nothing else:\n\
         {\"large\": true | false, \"evidence\": \"<the user's words that show it is large>\"}\n\
         - evidence: copied from the user's words below when large is true; \"\" otherwise.\n\n",
    );
    out.push_str(&format!("The job: {}\n", job.trim()));
    if !request.trim().is_empty() {
        out.push_str(&format!("Asked for first: {}\n", request.trim()));
    }
    if let Some(f) = reread {
        out.push_str(&format!(
            "So far {} segments of work on it have ended with nothing approved and nothing laid \
             out in parts.\n",
            f.ended_segments
        ));
    }
    out.push_str("\nThe user's words about it, oldest first:\n");
    let skip = words.len().saturating_sub(WORDS_AT_MOST);
    if words.len() == skip {
        out.push_str("(none)\n");
    }
    for w in &words[skip..] {
        out.push_str("- ");
        out.push_str(w.trim());
        out.push('\n');
    }
    out
}

/// Checks an answer (never `Reading::Failed`: an Err is the failure, with its reason). Large
/// with no evidence is refused: the banner shows what showed it.
pub fn parse_large_reading(raw: &str) -> Result<Reading, String> {
    let value = extract_json_object(raw)?;
    let obj = as_object(&value)?;
    let large = match obj.get("large") {
        Some(Value::Bool(b)) => *b,
        None | Some(Value::Null) => return Err("the answer has no \"large\"".into()),
        Some(other) => return Err(format!("\"large\" must be true or false, not {other}")),
    };
    if !large {
        return Ok(Reading::No);
    }
    let evidence = match obj.get("evidence") {
        Some(Value::String(s)) => s.trim().to_string(),
        None | Some(Value::Null) => String::new(),
        Some(other) => return Err(format!("\"evidence\" must be text, not {other}")),
    };
    if evidence.is_empty() {
        return Err("\"large\" is true with no evidence".into());
    }
    Ok(Reading::Yes { evidence })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_reading_needs_evidence_and_a_boolean() {
        let yes = parse_large_reading(r#"{"large": true, "evidence": "a 5-minute MV"}"#).unwrap();
        assert_eq!(
            yes,
            Reading::Yes {
                evidence: "a 5-minute MV".into()
            }
        );
        assert_eq!(
            parse_large_reading(r#"{"large": false, "evidence": ""}"#).unwrap(),
            Reading::No
        );
        assert!(
            parse_large_reading(r#"{"large": true}"#)
                .unwrap_err()
                .contains("no evidence")
        );
        assert!(
            parse_large_reading(r#"{"large": "yes"}"#)
                .unwrap_err()
                .contains("true or false")
        );
        assert!(parse_large_reading("It is large.").is_err());
    }

    #[test]
    fn prompt_shows_the_latest_words_and_the_reread_facts() {
        let words: Vec<String> = (0..40).map(|i| format!("line {i}")).collect();
        let p = large_job_prompt("MV", "make a 5-minute MV", &words, None);
        assert_eq!(p.lines().next(), Some("troupe-reader:large_job"));
        assert!(
            !p.contains("- line 9\n") && p.contains("- line 10\n") && p.contains("- line 39\n")
        );
        assert!(!p.contains("segments of work"));
        let p = large_job_prompt("MV", "", &[], Some(&RereadFacts { ended_segments: 3 }));
        assert!(p.contains("So far 3 segments"), "{p}");
        assert!(p.contains("(none)"), "{p}");
    }
}
