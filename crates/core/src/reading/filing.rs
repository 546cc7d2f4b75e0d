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
    /// It concerns these jobs (each one shown to the reader), and of their tickets' parts
    /// those it asks to change, faults or asks about (AT-5: never a part it only praises).
    Jobs {
        jobs: Vec<PlanId>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<FiledPart>,
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

/// A part a line is filed under (AT-5), by the ids of its ticket and part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FiledPart {
    pub plan_id: PlanId,
    pub ticket_id: i64,
    pub part_id: i64,
}

/// A ticket's part as the reader is shown it: only parts laid out by the lead or added on the
/// board exist (AT-5), so only those can be named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShownPart {
    pub ticket_number: u32,
    pub ticket_title: String,
    pub ticket_id: i64,
    pub label: String,
    pub part_id: i64,
}

/// A job as the reader is shown it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub id: PlanId,
    pub name: String,
    pub goal: String,
    /// e.g. "3 min ago (a line from the user)".
    pub last_move: String,
    /// Its tickets' parts, by ticket.
    pub parts: Vec<ShownPart>,
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
         {\"belongs\": \"no_telling\"} when you cannot tell.\n\
         With \"jobs\", add \"parts\": [{\"job\": \"plan_3\", \"ticket\": 2, \"part\": \"shot 3\"}] \
         naming the parts listed below that the line asks to change, finds fault with or asks \
         about — never a part it only praises, never a part not listed; [] if none.\n\n",
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
            let mut tickets: Vec<(u32, &str)> = Vec::new();
            for p in &c.parts {
                if !tickets.iter().any(|(n, _)| *n == p.ticket_number) {
                    tickets.push((p.ticket_number, p.ticket_title.as_str()));
                }
            }
            for (n, title) in tickets {
                let labels: Vec<&str> = c
                    .parts
                    .iter()
                    .filter(|p| p.ticket_number == n)
                    .map(|p| p.label.as_str())
                    .collect();
                out.push_str(&format!(
                    "    ticket {n} \"{}\", parts: {}\n",
                    title.trim(),
                    labels.join(", ")
                ));
            }
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
/// `shown` (others are dropped, and none left is no telling), and parts among the parts shown
/// of a job the line is filed under (others are dropped).
pub fn parse_filing(raw: &str, shown: &[PlanId]) -> Result<Filing, String> {
    parse_filing_with_parts(raw, shown, &[])
}

/// [`parse_filing`] with the parts each shown job was shown with.
pub fn parse_filing_with_parts(
    raw: &str,
    shown: &[PlanId],
    shown_parts: &[(PlanId, ShownPart)],
) -> Result<Filing, String> {
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
                let parts = match obj.get("parts") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(items)) => named_parts(items, &jobs, shown_parts),
                    Some(other) => return Err(format!("\"parts\" must be a list, not {other}")),
                };
                Filing::Jobs { jobs, parts }
            }
        }
        other => {
            return Err(format!(
                "\"belongs\" must be jobs, new, done_in_place or no_telling, not \"{other}\""
            ));
        }
    })
}

/// The parts named that were shown under a job the line is filed under, once each.
fn named_parts(
    items: &[Value],
    jobs: &[PlanId],
    shown_parts: &[(PlanId, ShownPart)],
) -> Vec<FiledPart> {
    let mut out: Vec<FiledPart> = Vec::new();
    for item in items {
        let Some(o) = item.as_object() else { continue };
        let job = match o.get("job") {
            Some(Value::String(s)) => s.trim().parse::<PlanId>().ok(),
            Some(Value::Number(n)) => n.as_i64().map(PlanId),
            _ => None,
        };
        let ticket = match o.get("ticket") {
            Some(Value::Number(n)) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
            Some(Value::String(s)) => s.trim().trim_start_matches('#').parse().ok(),
            _ => None,
        };
        let label = o.get("part").and_then(Value::as_str).map(str::trim);
        let (Some(job), Some(ticket), Some(label)) = (job, ticket, label) else {
            continue;
        };
        if !jobs.contains(&job) {
            continue;
        }
        let found = shown_parts.iter().find(|(p, s)| {
            *p == job && s.ticket_number == ticket && s.label.trim().eq_ignore_ascii_case(label)
        });
        if let Some((p, s)) = found {
            let f = FiledPart {
                plan_id: *p,
                ticket_id: s.ticket_id,
                part_id: s.part_id,
            };
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// S-AT-6: praising shot 2 and faulting shot 3 files shot 3 only; a part never shown, or
    /// of a job the line is not filed under, is dropped.
    #[test]
    fn parts_come_only_from_those_shown_under_the_jobs_filed() {
        let part = |n: i64, label: &str| {
            (
                PlanId(3),
                ShownPart {
                    ticket_number: 2,
                    ticket_title: "Shots".into(),
                    ticket_id: 20,
                    label: label.into(),
                    part_id: n,
                },
            )
        };
        let shown_parts = vec![part(7, "shot 2"), part(8, "shot 3")];
        let f = parse_filing_with_parts(
            r#"{"belongs":"jobs","jobs":["plan_3"],"parts":[
                {"job":"plan_3","ticket":2,"part":"Shot 3"},
                {"job":"plan_3","ticket":2,"part":"shot 9"},
                {"job":"plan_5","ticket":2,"part":"shot 2"},
                {"job":"plan_3","ticket":2,"part":"shot 3"}]}"#,
            &shown(),
            &shown_parts,
        )
        .unwrap();
        assert_eq!(
            f,
            Filing::Jobs {
                jobs: vec![PlanId(3)],
                parts: vec![FiledPart {
                    plan_id: PlanId(3),
                    ticket_id: 20,
                    part_id: 8
                }]
            }
        );
        let p = filing_prompt(
            "shot 2 is lovely, shot 3 is too dark",
            "group \"Team\"",
            &[],
            &[Candidate {
                id: PlanId(3),
                name: "MV".into(),
                goal: String::new(),
                last_move: String::new(),
                parts: shown_parts.into_iter().map(|(_, s)| s).collect(),
            }],
        );
        assert!(
            p.contains("    ticket 2 \"Shots\", parts: shot 2, shot 3\n"),
            "{p}"
        );
        assert!(p.contains("never a part it only praises"), "{p}");
    }

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
                jobs: vec![PlanId(3), PlanId(5)],
                parts: vec![]
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
                parts: vec![],
            }],
        );
        assert!(p.starts_with("troupe-reader:filing\n"));
        assert!(p.contains("- plan_3 \"logo\", goal: a logo, last move 3 min ago"));
        assert!(!p.contains("line 1\n") && p.contains("line 2") && p.contains("line 7"));
        assert!(p.trim_end().ends_with("fix the logo colour"));
    }
}
