//! §11.3–11.4 for skills: at most two skills changed or created in one retrospective, at most
//! one of them new; each edit made as the edit rules allow (`skill::edit`) or refused with
//! why; a project skill or a skill the Bot does not have is not touched. One refused takes no
//! other with it.

use super::answer::{Answer, SkillAsk};
use crate::skill::{self, edit};

/// §11.3: at most this many skills changed or created…
pub const SKILLS_MAX: usize = 2;
/// …of which at most this many created.
pub const CREATED_MAX: usize = 1;

/// The skills' texts the prompt carries, in all, at most this many characters: a Bot may keep
/// 30 skills of 20,000 each, more than any look back can read.
pub const TEXTS_SHOWN_MAX: usize = 24_000;

/// Which of the skills (their texts' lengths in characters, in the prompt's order) have their
/// text in the prompt: each while the texts shown so far stay within [`TEXTS_SHOWN_MAX`].
pub fn texts_shown(lengths: &[usize]) -> Vec<bool> {
    let mut used = 0;
    lengths
        .iter()
        .map(|&n| {
            let fits = used + n <= TEXTS_SHOWN_MAX;
            if fits {
                used += n;
            }
            fits
        })
        .collect()
}

/// One of the Bot's skills as it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldSkill {
    pub name: String,
    pub body: String,
    /// Its text was in the prompt; one that was not is not edited.
    pub shown: bool,
}

/// A skill change as it will be recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedSkill {
    pub name: String,
    /// A new skill's catalog line.
    pub description: Option<String>,
    /// The whole text it writes; for a change not made, what was asked, as the record shows it.
    pub after: String,
    pub refused: Option<String>,
}

/// The skill changes `answer` asks of the Bot's skills `held`; `shared` are the project
/// skills' names, which no retrospective changes.
pub fn plan(answer: &Answer, held: &[HeldSkill], shared: &[String]) -> Vec<PlannedSkill> {
    let mut out = Vec::new();
    let mut created = 0;
    let mut touched: Vec<String> = Vec::new();
    for (i, c) in answer.skills.iter().enumerate() {
        let own = held.iter().find(|h| h.name.eq_ignore_ascii_case(&c.name));
        let name = own.map_or_else(|| c.name.trim().to_string(), |h| h.name.clone());
        let (description, proposed) = match &c.ask {
            SkillAsk::Edit(e) => (None, e.describe()),
            SkillAsk::Create { description, body } => (Some(description.clone()), body.clone()),
            SkillAsk::Unreadable(_) => (None, String::new()),
        };
        let mut p = PlannedSkill {
            name: name.clone(),
            description,
            after: proposed,
            refused: None,
        };
        let is_shared = || shared.iter().any(|s| s.eq_ignore_ascii_case(&name));
        p.refused = if i >= SKILLS_MAX {
            Some(format!(
                "more than {SKILLS_MAX} skills changed or created in one retrospective"
            ))
        } else if touched.iter().any(|t| t.eq_ignore_ascii_case(&name)) {
            Some("one change per skill in one retrospective".into())
        } else {
            match (&c.ask, own) {
                (SkillAsk::Unreadable(why), _) => Some(why.clone()),
                (SkillAsk::Edit(_), None) if is_shared() => {
                    Some("a project skill is not changed by a retrospective".into())
                }
                (SkillAsk::Edit(_), None) => Some("you have no skill with this name".into()),
                (SkillAsk::Edit(_), Some(h)) if !h.shown => {
                    Some("its text was not shown to you (too long to include this time)".into())
                }
                (SkillAsk::Edit(e), Some(h)) => match edit::apply(&h.body, e) {
                    Ok(after) => {
                        p.after = after;
                        None
                    }
                    Err(why) => Some(why),
                },
                (SkillAsk::Create { .. }, Some(_)) => {
                    Some("you have a skill with this name; change it with an edit".into())
                }
                (SkillAsk::Create { .. }, None) if created >= CREATED_MAX => Some(format!(
                    "more than {CREATED_MAX} skill created in one retrospective"
                )),
                (SkillAsk::Create { description, body }, None) => skill::name(&name)
                    .and_then(|_| skill::description(description))
                    .and_then(|_| skill::body(body))
                    .err()
                    .or_else(|| {
                        created += 1;
                        None
                    }),
            }
        };
        if p.refused.is_none() {
            touched.push(name);
        }
        out.push(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrospective::answer::SkillChange;
    use crate::skill::edit::Edit;

    fn held() -> Vec<HeldSkill> {
        vec![
            HeldSkill {
                name: "Renders".into(),
                body: "Render with `ffmpeg`.\n\nCheck the length.".into(),
                shown: true,
            },
            HeldSkill {
                name: "Long".into(),
                body: "x".repeat(30_000),
                shown: false,
            },
        ]
    }

    fn ask(name: &str, ask: SkillAsk) -> SkillChange {
        SkillChange {
            name: name.into(),
            ask,
        }
    }

    #[test]
    fn s_rs2_a_whole_rewrite_is_refused_and_the_other_change_is_written() {
        let a = Answer {
            skills: vec![
                ask(
                    "renders",
                    SkillAsk::Edit(Edit::Whole("Render as you like.".into())),
                ),
                ask(
                    "Briefs",
                    SkillAsk::Create {
                        description: "Reading briefs".into(),
                        body: "Read twice.".into(),
                    },
                ),
            ],
            ..Answer::default()
        };
        let p = plan(&a, &held(), &[]);
        assert!(p[0].refused.as_deref().unwrap().contains("rewritten whole"));
        assert_eq!(p[0].name, "Renders");
        assert_eq!(
            p[0].after, "Render as you like.",
            "the record shows what was asked"
        );
        assert_eq!(p[1].refused, None);
        assert_eq!(p[1].description.as_deref(), Some("Reading briefs"));
    }

    #[test]
    fn at_most_two_skills_one_created_and_never_a_project_skill() {
        let create = |n: &str| {
            ask(
                n,
                SkillAsk::Create {
                    description: "d".into(),
                    body: "b".into(),
                },
            )
        };
        let a = Answer {
            skills: vec![
                create("One"),
                create("Two"),
                ask(
                    "Renders",
                    SkillAsk::Edit(Edit::Append("Count frames.".into())),
                ),
            ],
            ..Answer::default()
        };
        let p = plan(&a, &held(), &[]);
        assert_eq!(p[0].refused, None);
        assert!(
            p[1].refused
                .as_deref()
                .unwrap()
                .contains("more than 1 skill created")
        );
        assert!(
            p[2].refused
                .as_deref()
                .unwrap()
                .contains("more than 2 skills")
        );

        let a = Answer {
            skills: vec![
                ask("House style", SkillAsk::Edit(Edit::Append("x.".into()))),
                ask(
                    "Renders",
                    SkillAsk::Edit(Edit::Append("Count frames.".into())),
                ),
            ],
            ..Answer::default()
        };
        let p = plan(&a, &held(), &["house style".into()]);
        assert!(p[0].refused.as_deref().unwrap().contains("project skill"));
        assert_eq!(p[1].refused, None);
        assert!(p[1].after.ends_with("Check the length.\n\nCount frames."));
    }

    #[test]
    fn a_skill_whose_text_was_not_shown_is_not_edited() {
        assert_eq!(texts_shown(&[10_000, 20_000, 14_000]), [true, false, true]);
        let a = Answer {
            skills: vec![ask("Long", SkillAsk::Edit(Edit::Append("More.".into())))],
            ..Answer::default()
        };
        assert!(
            plan(&a, &held(), &[])[0]
                .refused
                .as_deref()
                .unwrap()
                .contains("not shown")
        );
    }

    #[test]
    fn one_change_per_skill_and_no_new_skill_over_an_old_name() {
        let a = Answer {
            skills: vec![
                ask(
                    "Renders",
                    SkillAsk::Edit(Edit::Append("Count frames.".into())),
                ),
                ask(
                    "Renders",
                    SkillAsk::Edit(Edit::Append("Count twice.".into())),
                ),
            ],
            ..Answer::default()
        };
        let p = plan(&a, &held(), &[]);
        assert!(
            p[1].refused
                .as_deref()
                .unwrap()
                .contains("one change per skill")
        );
        let a = Answer {
            skills: vec![ask(
                "RENDERS",
                SkillAsk::Create {
                    description: "d".into(),
                    body: "b".into(),
                },
            )],
            ..Answer::default()
        };
        assert!(
            plan(&a, &held(), &[])[0]
                .refused
                .as_deref()
                .unwrap()
                .contains("change it with an edit")
        );
    }
}
