//! "Where a line belongs" (C §3, §8): when no locked reference filed a person's line, the
//! reader is shown the candidate jobs and says which the line concerns, or that it is new
//! work, done in place, or no telling. There are no word lists for this (LR-10): an unread
//! line goes to the Bot's desk unplaced. Only the jobs shown can come back (unshown refs are
//! dropped); with none left the line is no telling.

use super::{as_object, extract_json_object, push_lines};
use crate::PlanId;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How many lines before the line the reader sees.
pub const FILING_LINES_BEFORE: usize = 6;

/// What the reader says about a line's job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "belongs", rename_all = "snake_case")]
pub enum Filing {
    /// It concerns these jobs (each one shown to the reader).
    Jobs {
        jobs: Vec<PlanId>,
    },
    /// New work: something to hand over, or longer work to follow up.
    New,
    /// A greeting, a question, a look-up, a one-off small action: no job opens for it.
    DoneInPlace,
    NoTelling,
}

impl Filing {
    /// The desk's reading verdict (C §2): `new`, `done_in_place`, `no_telling` (or `jobs`).
    pub fn verdict(&self) -> &'static str {
        match self {
            Filing::Jobs { .. } => "jobs",
            Filing::New => "new",
            Filing::DoneInPlace => "done_in_place",
            Filing::NoTelling => "no_telling",
        }
    }
}

/// A job as the reader is shown it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub id: PlanId,
    pub name: String,
    pub goal: String,
    /// e.g. "3 min ago (a line from the user)".
    pub last_move: String,
}

/// The prompt. `before` is oldest first (speaker, words); only the last six show.
pub fn filing_prompt(
    line: &str,
    where_said: &str,
    before: &[(String, String)],
    candidates: &[Candidate],
) -> String {
    let mut out = String::from("troupe-reader:filing\n");
    out.push_str(
        "You file a person's line under the job it is about. Read it with the lines before it \
         and the jobs below, and answer with one JSON object and nothing else:\n\
         {\"belongs\": \"jobs\", \"jobs\": [\"plan_3\"]} when it is about one or more of the jobs \
         listed (changes, faults, questions about their work);\n\
         {\"belongs\": \"new\"} when it asks for new work to hand over or follow up;\n\
         {\"belongs\": \"done_in_place\"} for a greeting, chat, a question or look-up, a settings \
         change or a small one-off action;\n\
         {\"belongs\": \"no_telling\"} when you cannot tell.\n\n",
    );
    out.push_str(&format!("Said in: {}\n\n", where_said.trim()));
    if candidates.is_empty() {
        out.push_str("Jobs: none open here.\n");
    } else {
        out.push_str("Jobs:\n");
        for c in candidates {
            out.push_str(&format!("- {} \"{}\"", c.id, c.name.trim()));
            if !c.goal.trim().is_empty() {
                out.push_str(&format!(", goal: {}", c.goal.trim()));
            }
            if !c.last_move.trim().is_empty() {
                out.push_str(&format!(", last move {}", c.last_move.trim()));
            }
            out.push('\n');
        }
    }
    let skip = before.len().saturating_sub(FILING_LINES_BEFORE);
    if before.len() > skip {
        out.push_str("\nLines before it:\n");
        push_lines(&mut out, &before[skip..]);
    }
    out.push_str("\nThe line:\n");
    out.push_str(line.trim());
    out.push('\n');
    out
}

/// Check an answer (LR-9): one JSON object with a known `belongs`; job refs must be among
/// `shown` (others are dropped, and none left is no telling).
pub fn parse_filing(raw: &str, shown: &[PlanId]) -> Result<Filing, String> {
    let value = extract_json_object(raw)?;
    let obj = as_object(&value)?;
    let belongs = match obj.get("belongs") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(format!("\"belongs\" must be a string, not {other}")),
        None => return Err("the answer has no \"belongs\"".into()),
    };
    Ok(match belongs {
        "new" => Filing::New,
        "done_in_place" => Filing::DoneInPlace,
        "no_telling" => Filing::NoTelling,
        "jobs" => {
            let Some(Value::Array(refs)) = obj.get("jobs") else {
                return Err("\"jobs\" must be a list of job ids".into());
            };
            let mut jobs = Vec::new();
            for r in refs {
                let id = match r {
                    Value::String(s) => s.trim().parse::<PlanId>().ok(),
                    Value::Number(n) => n.as_i64().map(PlanId),
                    _ => None,
                };
                if let Some(id) = id.filter(|i| shown.contains(i))
                    && !jobs.contains(&id)
                {
                    jobs.push(id);
                }
            }
            if jobs.is_empty() {
                Filing::NoTelling
            } else {
                Filing::Jobs { jobs }
            }
        }
        other => {
            return Err(format!(
                "\"belongs\" must be jobs, new, done_in_place or no_telling, not \"{other}\""
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown() -> Vec<PlanId> {
        vec![PlanId(3), PlanId(5)]
    }

    #[test]
    fn a_reading_names_only_jobs_it_was_shown() {
        let f = parse_filing(
            r#"{"belongs":"jobs","jobs":["plan_3","plan_9",5,"plan_3"]}"#,
            &shown(),
        );
        assert_eq!(
            f.unwrap(),
            Filing::Jobs {
                jobs: vec![PlanId(3), PlanId(5)]
            }
        );
    }

    #[test]
    fn jobs_that_were_never_shown_leave_no_telling() {
        let f = parse_filing(r#"{"belongs":"jobs","jobs":["plan_9"]}"#, &shown()).unwrap();
        assert_eq!(f, Filing::NoTelling);
    }

    #[test]
    fn new_done_in_place_and_no_telling_are_read() {
        assert_eq!(
            parse_filing(r#"{"belongs":"new"}"#, &[]).unwrap(),
            Filing::New
        );
        assert_eq!(
            parse_filing("```json\n{\"belongs\":\"done_in_place\"}\n```", &[]).unwrap(),
            Filing::DoneInPlace
        );
        assert_eq!(
            parse_filing(r#"{"belongs":"no_telling"}"#, &[]).unwrap(),
            Filing::NoTelling
        );
    }

    #[test]
    fn an_unreadable_answer_is_no_reading() {
        assert!(parse_filing("it is about the logo", &shown()).is_err());
        assert!(parse_filing(r#"{"belongs":"maybe"}"#, &shown()).is_err());
        assert!(parse_filing(r#"{"belongs":"jobs","jobs":"plan_3"}"#, &shown()).is_err());
        assert!(parse_filing(r#"{"jobs":["plan_3"]}"#, &shown()).is_err());
    }

    #[test]
    fn the_prompt_shows_the_jobs_and_the_last_six_lines() {
        let before: Vec<_> = (0..8)
            .map(|i| ("User".to_string(), format!("line {i}")))
            .collect();
        let p = filing_prompt(
            "fix the logo colour",
            "group \"Team\"",
            &before,
            &[Candidate {
                id: PlanId(3),
                name: "logo".into(),
                goal: "a logo".into(),
                last_move: "3 min ago".into(),
            }],
        );
        assert!(p.starts_with("troupe-reader:filing\n"));
        assert!(p.contains("- plan_3 \"logo\", goal: a logo, last move 3 min ago"));
        assert!(!p.contains("line 1\n") && p.contains("line 2") && p.contains("line 7"));
        assert!(p.trim_end().ends_with("fix the logo colour"));
    }
}
