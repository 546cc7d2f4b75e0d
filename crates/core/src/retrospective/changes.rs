//! §11.4: each change the retrospective asks for is checked on its own before it is written;
//! one refused takes no other with it. Deletions are weighed first, so a memory forgotten in
//! the same answer makes room for a new one.

use super::answer::Answer;
use super::{DELETES_MAX, WRITES_MAX};
use crate::bot_memory;

/// One of the Bot's memories as it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub subject: String,
    pub body: String,
    pub enabled: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A memory written, rewritten or merged into.
    Write,
    /// A memory deleted, or merged away into a write.
    Delete,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Write => "write",
            Kind::Delete => "delete",
        }
    }
}

/// A change as it will be recorded: made (`refused` none) or not, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub kind: Kind,
    pub subject: String,
    /// The body it replaces (a rewrite, a deletion); none for a new memory.
    pub before: Option<String>,
    /// The body it writes; none for a deletion.
    pub after: Option<String>,
    pub refused: Option<String>,
}

fn find<'a>(held: &'a [Held], subject: &str) -> Option<&'a Held> {
    held.iter()
        .find(|h| h.subject.eq_ignore_ascii_case(subject.trim()))
}

/// The changes `answer` asks of memories `held`, each checked against the memory tool's rules
/// and the retrospective's limits.
pub fn plan(answer: &Answer, held: &[Held]) -> Vec<Planned> {
    let mut out = Vec::new();
    let mut gone: Vec<String> = Vec::new();
    let mut enabled = held.iter().filter(|h| h.enabled).count();

    for (i, raw) in answer.forget.iter().enumerate() {
        let mut p = Planned {
            kind: Kind::Delete,
            subject: raw.trim().to_string(),
            before: None,
            after: None,
            refused: None,
        };
        p.refused = if i >= DELETES_MAX {
            Some(format!(
                "more than {DELETES_MAX} memories deleted in one retrospective"
            ))
        } else {
            match find(held, raw) {
                None => Some("there is no memory with this subject".into()),
                Some(h) if !h.enabled => Some("the person turned this memory off".into()),
                Some(h) if gone.contains(&h.subject) => Some("deleted already".into()),
                Some(h) => {
                    p.subject = h.subject.clone();
                    p.before = Some(h.body.clone());
                    gone.push(h.subject.clone());
                    enabled -= 1;
                    None
                }
            }
        };
        out.push(p);
    }

    for (i, w) in answer.memories.iter().enumerate() {
        let mut p = Planned {
            kind: Kind::Write,
            subject: w.subject.trim().to_string(),
            before: None,
            after: None,
            refused: None,
        };
        let checked =
            bot_memory::subject(&w.subject).and_then(|s| bot_memory::body(&w.body).map(|b| (s, b)));
        let refused = if i >= WRITES_MAX {
            Some(format!(
                "more than {WRITES_MAX} memories written in one retrospective"
            ))
        } else {
            match checked {
                Err(e) => Some(e),
                Ok((subject, body)) => {
                    p.subject = subject.clone();
                    p.after = Some(body.clone());
                    let same = find(held, &subject).filter(|h| !gone.contains(&h.subject));
                    let merged: Vec<Option<&Held>> = w
                        .merges
                        .iter()
                        .filter(|m| !m.trim().eq_ignore_ascii_case(&subject))
                        .map(|m| find(held, m))
                        .collect();
                    if same.is_some_and(|h| !h.enabled) {
                        Some("the person turned this memory off".into())
                    } else if same.is_some_and(|h| h.body == body) && merged.is_empty() {
                        Some("the memory already says this".into())
                    } else if merged.iter().any(|m| m.is_none()) {
                        Some("it merges a memory that does not exist".into())
                    } else if merged.iter().flatten().any(|m| !m.enabled) {
                        Some("it merges a memory the person turned off".into())
                    } else if merged.iter().flatten().any(|m| gone.contains(&m.subject)) {
                        Some("it merges a memory deleted already".into())
                    } else {
                        // Merged memories are on and not yet gone: each frees a place.
                        let frees = merged.len();
                        let new_one = same.is_none();
                        match bot_memory::room_for_one_more(enabled - frees) {
                            Err(e) if new_one => Some(e),
                            _ => {
                                p.before = same.map(|h| h.body.clone());
                                for m in merged.iter().flatten() {
                                    gone.push(m.subject.clone());
                                }
                                enabled = enabled - frees + usize::from(new_one);
                                None
                            }
                        }
                    }
                }
            }
        };
        p.refused = refused;
        let merges: Vec<Planned> = if p.refused.is_none() {
            w.merges
                .iter()
                .filter(|m| !m.trim().eq_ignore_ascii_case(&p.subject))
                .filter_map(|m| find(held, m))
                .map(|h| Planned {
                    kind: Kind::Delete,
                    subject: h.subject.clone(),
                    before: Some(h.body.clone()),
                    after: None,
                    refused: None,
                })
                .collect()
        } else {
            Vec::new()
        };
        out.push(p);
        out.extend(merges);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::answer::MemoryWrite;
    use super::*;

    fn held(subject: &str, body: &str, enabled: bool) -> Held {
        Held {
            subject: subject.into(),
            body: body.into(),
            enabled,
        }
    }

    fn write(subject: &str, body: &str, merges: &[&str]) -> MemoryWrite {
        MemoryWrite {
            subject: subject.into(),
            body: body.into(),
            merges: merges.iter().map(|m| m.to_string()).collect(),
        }
    }

    #[test]
    fn s_rs2_one_refused_change_takes_no_other_with_it() {
        let answer = Answer {
            summary: "s".into(),
            memories: vec![
                write("Length", &"x".repeat(200), &[]),
                write("Checks", "Run the checks before handing over.", &[]),
            ],
            ..Answer::default()
        };
        let p = plan(&answer, &[]);
        assert!(p[0].refused.as_deref().unwrap().contains("at most 160"));
        assert_eq!(p[1].refused, None);
        assert_eq!(p[1].before, None, "a new memory");
    }

    #[test]
    fn a_memory_the_person_turned_off_is_not_touched() {
        let h = [held("Tone", "Formal.", false)];
        let answer = Answer {
            memories: vec![write("tone", "Casual.", &[])],
            forget: vec!["Tone".into()],
            ..Answer::default()
        };
        let p = plan(&answer, &h);
        assert!(
            p.iter()
                .all(|c| c.refused.as_deref() == Some("the person turned this memory off"))
        );
    }

    #[test]
    fn twenty_on_needs_one_forgotten_or_merged_first() {
        let mut h: Vec<Held> = (0..20).map(|i| held(&format!("M{i}"), "b", true)).collect();
        h.push(held("Off", "b", false));
        let full = Answer {
            memories: vec![write("New", "A new way.", &[])],
            ..Answer::default()
        };
        assert!(
            plan(&full, &h)[0]
                .refused
                .as_deref()
                .unwrap()
                .contains("20 memories")
        );
        let rewrite = Answer {
            memories: vec![write("M3", "Rewritten.", &[])],
            ..Answer::default()
        };
        let p = plan(&rewrite, &h);
        assert_eq!(
            (p[0].refused.clone(), p[0].before.as_deref()),
            (None, Some("b"))
        );
        let forgot = Answer {
            memories: vec![write("New", "A new way.", &[])],
            forget: vec!["M1".into()],
            ..Answer::default()
        };
        assert!(plan(&forgot, &h).iter().all(|c| c.refused.is_none()));
        let merged = Answer {
            memories: vec![write("New", "Both in one.", &["M1", "M2"])],
            ..Answer::default()
        };
        let p = plan(&merged, &h);
        assert_eq!(p.len(), 3, "the write and the two merged away");
        assert!(p.iter().all(|c| c.refused.is_none()));
        assert_eq!(p[1].kind, Kind::Delete);
        assert_eq!(p[1].subject, "M1");
    }

    #[test]
    fn limits_of_three_each_and_unknown_subjects() {
        let h: Vec<Held> = (0..5).map(|i| held(&format!("M{i}"), "b", true)).collect();
        let answer = Answer {
            memories: (0..4).map(|i| write(&format!("N{i}"), "b", &[])).collect(),
            forget: vec![
                "M0".into(),
                "M1".into(),
                "M2".into(),
                "M3".into(),
                "Nope".into(),
            ],
            ..Answer::default()
        };
        let p = plan(&answer, &h);
        let refused: Vec<&str> = p.iter().filter_map(|c| c.refused.as_deref()).collect();
        assert_eq!(
            refused,
            [
                "more than 3 memories deleted in one retrospective",
                "more than 3 memories deleted in one retrospective",
                "more than 3 memories written in one retrospective",
            ]
        );
        let unknown = Answer {
            forget: vec!["Nope".into()],
            memories: vec![write("N", "b", &["Ghost"])],
            ..Answer::default()
        };
        let p = plan(&unknown, &h);
        assert_eq!(
            p[0].refused.as_deref(),
            Some("there is no memory with this subject")
        );
        assert_eq!(
            p[1].refused.as_deref(),
            Some("it merges a memory that does not exist")
        );
    }
}
