//! The retrospective's answer (§11.3): one whole JSON object, or nothing is written.

use super::LIST_MAX;
use crate::reading::extract_json_object;
use crate::skill::edit::Edit;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A verdict on a conclusion an earlier retrospective drew, which this job tested.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub conclusion: String,
    /// still_holds | happened_again | no_longer_holds
    pub verdict: String,
}

pub const VERDICTS: [&str; 3] = ["still_holds", "happened_again", "no_longer_holds"];

/// A memory written, rewritten (same subject) or merged (the `merges` subjects go into it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryWrite {
    pub subject: String,
    pub body: String,
    pub merges: Vec<String>,
}

/// What the answer asks of one skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkillAsk {
    /// An edit of one of the Bot's skills.
    Edit(Edit),
    /// A new skill.
    Create { description: String, body: String },
    /// A shape no retrospective may ask for: recorded as not made, with why.
    Unreadable(String),
}

/// A change to one skill, by its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillChange {
    pub name: String,
    pub ask: SkillAsk,
}

/// The answer, read.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Answer {
    pub summary: String,
    pub tripped_up: Vec<String>,
    pub sent_back_because: Vec<String>,
    pub do_again: Vec<String>,
    pub verdicts: Vec<Verdict>,
    pub memories: Vec<MemoryWrite>,
    pub forget: Vec<String>,
    pub skills: Vec<SkillChange>,
}

fn strings(v: &Value, key: &str) -> Result<Vec<String>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        // A lone string where a list was asked for is a list of one (small models write so).
        Some(Value::String(x)) if !x.trim().is_empty() => Ok(vec![x.trim().to_string()]),
        Some(Value::String(_)) => Ok(Vec::new()),
        Some(Value::Array(a)) => {
            let mut out = Vec::new();
            for x in a {
                let s = x
                    .as_str()
                    .ok_or_else(|| format!("{key}: every entry must be a string"))?
                    .trim();
                if !s.is_empty() {
                    out.push(s.to_string());
                }
            }
            Ok(out)
        }
        Some(_) => Err(format!("{key} must be a list of strings")),
    }
}

fn text(item: &Value, key: &str) -> Option<String> {
    item.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(String::from)
}

/// One entry of `skills`: `{"skill", "append"}`, `{"skill", "after_passage", "add"}`,
/// `{"skill", "correct", "to"}`, `{"skill", "body"}` (checked as one of those), or
/// `{"new_skill", "description", "body"}`.
fn skill_change(item: &Value) -> Result<SkillChange, String> {
    let shape = "each skill change names its \"skill\" (or \"new_skill\")";
    if let Some(name) = text(item, "new_skill") {
        let ask = match (text(item, "description"), text(item, "body")) {
            (Some(description), Some(body)) => SkillAsk::Create { description, body },
            _ => SkillAsk::Unreadable("a new skill needs a description and a body".into()),
        };
        return Ok(SkillChange { name, ask });
    }
    let name = text(item, "skill").ok_or(shape)?;
    let passage = item.get("after_passage").and_then(Value::as_u64);
    let ask = if let Some(t) = text(item, "append") {
        SkillAsk::Edit(Edit::Append(t))
    } else if let (Some(sentence), Some(p)) = (text(item, "add"), passage) {
        SkillAsk::Edit(Edit::AddSentence {
            passage: p as usize,
            sentence,
        })
    } else if let (Some(wrong), Some(right)) = (text(item, "correct"), text(item, "to")) {
        SkillAsk::Edit(Edit::Correct { wrong, right })
    } else if let Some(body) = text(item, "body") {
        SkillAsk::Edit(Edit::Whole(body))
    } else {
        SkillAsk::Unreadable(
            "not an edit a retrospective may make (append, add after a passage, correct one \
             sentence)"
                .into(),
        )
    };
    Ok(SkillChange { name, ask })
}

/// Read the model's text. The three lists keep their first five entries; the changes are all
/// kept here and held to their limits one by one by [`super::changes::plan`].
pub fn parse(raw: &str) -> Result<Answer, String> {
    let v = extract_json_object(raw)?;
    let summary = v
        .get("summary")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or("summary is missing")?
        .to_string();
    let capped = |key: &str| -> Result<Vec<String>, String> {
        let mut l = strings(&v, key)?;
        l.truncate(LIST_MAX);
        Ok(l)
    };
    let mut verdicts = Vec::new();
    if let Some(list) = v.get("verdicts").filter(|x| !x.is_null()) {
        let list = list.as_array().ok_or("verdicts must be a list")?;
        for item in list {
            let conclusion = item.get("conclusion").and_then(Value::as_str);
            let verdict = item.get("verdict").and_then(Value::as_str);
            match (conclusion, verdict) {
                (Some(c), Some(k)) if VERDICTS.contains(&k) => verdicts.push(Verdict {
                    conclusion: c.trim().to_string(),
                    verdict: k.to_string(),
                }),
                _ => {
                    return Err(format!(
                        "each verdict is {{\"conclusion\", \"verdict\"}} with verdict one of {}",
                        VERDICTS.join(", ")
                    ));
                }
            }
        }
    }
    let mut memories = Vec::new();
    if let Some(list) = v.get("memories").filter(|x| !x.is_null()) {
        let list = list.as_array().ok_or("memories must be a list")?;
        for item in list {
            let subject = item.get("subject").and_then(Value::as_str);
            let body = item.get("body").and_then(Value::as_str);
            let (Some(subject), Some(body)) = (subject, body) else {
                return Err("each memory is {\"subject\", \"body\", \"merges\"?}".into());
            };
            memories.push(MemoryWrite {
                subject: subject.to_string(),
                body: body.to_string(),
                merges: strings(item, "merges")?,
            });
        }
    }
    let mut skills = Vec::new();
    if let Some(list) = v.get("skills").filter(|x| !x.is_null()) {
        let list = list.as_array().ok_or("skills must be a list")?;
        for item in list {
            skills.push(skill_change(item)?);
        }
    }
    Ok(Answer {
        summary,
        tripped_up: capped("tripped_up")?,
        sent_back_because: capped("sent_back_because")?,
        do_again: capped("do_again")?,
        verdicts,
        memories,
        forget: strings(&v, "forget")?,
        skills,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_answer_is_read_and_its_lists_capped_at_five() {
        let a = parse(
            r#"```json
{"summary": "I handed over before checking the length.",
 "tripped_up": ["a","b","c","d","e","f"],
 "sent_back_because": ["too long"], "do_again": [],
 "verdicts": [{"conclusion": "Check length first", "verdict": "happened_again"}],
 "memories": [{"subject": "Length", "body": "Count words before handing over.", "merges": ["Words"]}],
 "forget": ["Old habit"]}
```"#,
        )
        .unwrap();
        assert_eq!(a.tripped_up.len(), 5);
        assert_eq!(a.sent_back_because, ["too long"]);
        assert_eq!(a.verdicts[0].verdict, "happened_again");
        assert_eq!(a.memories[0].merges, ["Words"]);
        assert_eq!(a.forget, ["Old habit"]);
    }

    #[test]
    fn anything_but_one_whole_object_is_refused() {
        assert!(parse("{\"summary\": \"cut of").is_err());
        assert!(parse("Here you go: {\"summary\": \"x\"} and more {}").is_err());
        assert!(
            parse("{\"tripped_up\": []}")
                .unwrap_err()
                .contains("summary")
        );
        assert!(
            parse(r#"{"summary": "s", "verdicts": [{"conclusion": "c", "verdict": "maybe"}]}"#)
                .unwrap_err()
                .contains("still_holds")
        );
        assert!(parse(r#"{"summary": "s", "memories": [{"subject": "x"}]}"#).is_err());
        assert!(parse(r#"{"summary": "s", "forget": 3}"#).is_err());
    }

    #[test]
    fn skill_changes_are_read_by_their_shape() {
        let a = parse(
            r#"{"summary": "s", "skills": [
                {"skill": "Renders", "append": "Count frames."},
                {"skill": "Renders", "after_passage": 2, "add": "Never upscale."},
                {"skill": "Captions", "correct": "Burn them.", "to": "Burn them in."},
                {"skill": "Captions", "body": "All new."},
                {"new_skill": "Briefs", "description": "Reading briefs", "body": "Read twice."},
                {"new_skill": "Half"},
                {"skill": "Renders", "delete": true}]}"#,
        )
        .unwrap();
        let asks: Vec<&SkillAsk> = a.skills.iter().map(|c| &c.ask).collect();
        assert_eq!(
            asks[0],
            &SkillAsk::Edit(Edit::Append("Count frames.".into()))
        );
        assert_eq!(
            asks[1],
            &SkillAsk::Edit(Edit::AddSentence {
                passage: 2,
                sentence: "Never upscale.".into()
            })
        );
        assert!(matches!(asks[2], SkillAsk::Edit(Edit::Correct { .. })));
        assert_eq!(asks[3], &SkillAsk::Edit(Edit::Whole("All new.".into())));
        assert!(matches!(asks[4], SkillAsk::Create { .. }));
        assert!(matches!(asks[5], SkillAsk::Unreadable(m) if m.contains("description")));
        assert!(matches!(asks[6], SkillAsk::Unreadable(m) if m.contains("not an edit")));
        assert!(parse(r#"{"summary": "s", "skills": [{"append": "x"}]}"#).is_err());
    }

    #[test]
    fn a_lone_string_where_a_list_is_asked_for_is_a_list_of_one() {
        let a = parse(
            r#"{"summary": "s", "forget": "Old", "tripped_up": "",
                "memories": [{"subject": "A", "body": "B", "merges": "C"}]}"#,
        )
        .unwrap();
        assert_eq!(a.forget, ["Old"]);
        assert!(a.tripped_up.is_empty());
        assert_eq!(a.memories[0].merges, ["C"]);
    }
}
