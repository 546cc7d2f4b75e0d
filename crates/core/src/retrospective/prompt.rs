//! What the Bot looking back is shown (§11.2): the job's record, never its transcript.

use std::fmt::Write;

/// One hand-over by the Bot and what became of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HandOver {
    /// "ticket 02 \"Rough cut\"".
    pub ticket: String,
    pub note: String,
    /// approved, sent back, rejected, failed its checks…
    pub outcome: String,
    /// Review verdicts and their notes.
    pub reviews: Vec<String>,
    /// The checks that failed on it.
    pub failed_checks: Vec<String>,
}

/// One entry of the requirements ledger.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Requirement {
    pub text: String,
    pub said: i64,
    pub first_after_handover: bool,
}

/// An earlier retrospective of the same Bot.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Earlier {
    pub summary: String,
    /// What it concluded (its lists).
    pub conclusions: Vec<String>,
    /// Changes of it the person undid.
    pub undone: Vec<String>,
}

/// Everything the prompt carries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Input {
    pub bot_name: String,
    pub job_name: String,
    /// The person's words that opened the job.
    pub request: String,
    /// The person's other words on the job (complaints included), oldest first.
    pub person_words: Vec<String>,
    pub handovers: Vec<HandOver>,
    pub requirements: Vec<Requirement>,
    /// What went wrong for the Bot (RS4 lines), since the last retrospective (RS5).
    pub went_wrong: Vec<String>,
    /// The Bot's memories: subject, body, on.
    pub memories: Vec<(String, String, bool)>,
    /// The Bot's skills: name, catalog line, text (none: too long to include this time).
    pub skills: Vec<(String, String, Option<String>)>,
    /// The project skills that are on: name, catalog line (read, never changed).
    pub project_skills: Vec<(String, String)>,
    /// The checklist items the person adopted from its reflections.
    pub checklist: Vec<String>,
    pub earlier: Vec<Earlier>,
    /// Set after a reopen: only what went wrong since the last retrospective counts.
    pub since_last: bool,
}

/// The first words of every retrospective prompt, so a fake model can tell it apart.
pub const PREFIX: &str = "troupe-retrospective";

fn list(out: &mut String, title: &str, items: &[String]) {
    let _ = writeln!(out, "\n## {title}");
    if items.is_empty() {
        out.push_str("(none)\n");
    }
    for i in items {
        let _ = writeln!(out, "- {i}");
    }
}

/// The prompt.
pub fn prompt(i: &Input) -> String {
    let mut out = format!(
        "{PREFIX}\nYou are {}. The job \"{}\" was delivered. Look back once at your own conduct \
         in it, from its record below (not its conversation), and work what you learn into \
         your own memories.\n",
        i.bot_name, i.job_name
    );
    if i.since_last {
        out.push_str(
            "The job was reopened after your last look back; only what went wrong since then is \
             listed.\n",
        );
    }
    let _ = writeln!(out, "\n## The person asked\n{}", i.request.trim());
    list(
        &mut out,
        "The person's other words on the job",
        &i.person_words,
    );
    let _ = writeln!(out, "\n## Your hand-overs");
    if i.handovers.is_empty() {
        out.push_str("(none)\n");
    }
    for h in &i.handovers {
        let _ = writeln!(
            out,
            "- {}: {} — your note: {}",
            h.ticket,
            h.outcome,
            h.note.trim()
        );
        for r in &h.reviews {
            let _ = writeln!(out, "  - review: {r}");
        }
        for c in &h.failed_checks {
            let _ = writeln!(out, "  - failed check: {c}");
        }
    }
    let reqs: Vec<String> = i
        .requirements
        .iter()
        .map(|r| {
            let after = if r.first_after_handover {
                ", first said after a hand-over"
            } else {
                ""
            };
            format!("{} (said {}×{after})", r.text, r.said)
        })
        .collect();
    list(&mut out, "Requirements ledger", &reqs);
    list(&mut out, "What went wrong for you", &i.went_wrong);
    let mems: Vec<String> = i
        .memories
        .iter()
        .map(|(s, b, on)| {
            format!(
                "{s}: {b}{}",
                if *on {
                    ""
                } else {
                    " (turned off by the person: do not touch)"
                }
            )
        })
        .collect();
    list(&mut out, "Your memories", &mems);
    let _ = writeln!(out, "\n## Your skills (passages numbered)");
    if i.skills.is_empty() {
        out.push_str("(none)\n");
    }
    for (name, description, body) in &i.skills {
        let _ = writeln!(out, "### {name} — {description}");
        let Some(body) = body else {
            out.push_str("(its text is not shown this time: do not edit it)\n");
            continue;
        };
        for (n, p) in crate::skill::edit::passages(body).iter().enumerate() {
            let _ = writeln!(out, "[{}] {p}", n + 1);
        }
    }
    let shared: Vec<String> = i
        .project_skills
        .iter()
        .map(|(n, d)| format!("{n}: {d}"))
        .collect();
    list(
        &mut out,
        "Project skills (shared with every Bot; not yours to change)",
        &shared,
    );
    list(&mut out, "Your checklist", &i.checklist);
    let _ = writeln!(out, "\n## Your earlier retrospectives");
    if i.earlier.is_empty() {
        out.push_str("(none)\n");
    }
    for e in &i.earlier {
        let _ = writeln!(out, "- {}", e.summary);
        for c in &e.conclusions {
            let _ = writeln!(out, "  - concluded: {c}");
        }
        for u in &e.undone {
            let _ = writeln!(out, "  - the person undid: {u}");
        }
    }
    out.push_str(
        "\nAnswer with one JSON object and nothing else, of this shape:\n\
         {\"summary\": one or two sentences,\n \
         \"tripped_up\": where you tripped up (at most 5 short strings),\n \
         \"sent_back_because\": which of your ways made the work come back (at most 5),\n \
         \"do_again\": what worked and you will do again (at most 5),\n \
         \"verdicts\": for each earlier conclusion this job tested, {\"conclusion\": its words, \
         \"verdict\": \"still_holds\" | \"happened_again\" | \"no_longer_holds\"},\n \
         \"memories\": at most 3 of {\"subject\": two to five words, \"body\": one short \
         sentence, \"merges\": [subjects of your memories folded into this one]} — a subject \
         you have already is rewritten; a subject over 40 characters or a body over 160 is \
         refused,\n \
         \"forget\": subjects of at most 3 memories that are wrong or no longer hold,\n \
         \"skills\": at most 2 changes to your skills, at most 1 of them a new skill, each one \
         of {\"skill\": name, \"append\": one passage for its end} | {\"skill\": name, \
         \"after_passage\": number, \"add\": one sentence} | {\"skill\": name, \"correct\": one \
         wrong sentence as the skill has it, \"to\": the right sentence} | {\"new_skill\": name, \
         \"description\": one line on what it is for, \"body\": its text}}\n\
         Never rewrite a skill whole; keep every `name`, file name, link and variable it has.\n\
         Write ways of working, not what happened: never copy the list of what went wrong or \
         the requirements into a memory. Do not judge the model you run on.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_carries_the_record_and_marks_memories_turned_off() {
        let p = prompt(&Input {
            bot_name: "Alpha".into(),
            job_name: "Report".into(),
            request: "Write the report".into(),
            handovers: vec![HandOver {
                ticket: "ticket 01 \"Draft\"".into(),
                note: "done".into(),
                outcome: "sent back by a review".into(),
                reviews: vec!["reject: too long".into()],
                failed_checks: vec![],
            }],
            requirements: vec![Requirement {
                text: "Under 500 words".into(),
                said: 2,
                first_after_handover: true,
            }],
            went_wrong: vec!["a review rejected a hand-over".into()],
            memories: vec![("Tone".into(), "Formal.".into(), false)],
            skills: vec![(
                "Reports".into(),
                "Writing reports".into(),
                Some("Outline first.\n\nCount the words.".into()),
            )],
            project_skills: vec![("House style".into(), "How we write".into())],
            since_last: true,
            ..Input::default()
        });
        assert!(p.starts_with(PREFIX));
        assert!(p.contains("reject: too long"));
        assert!(p.contains("Under 500 words (said 2×, first said after a hand-over)"));
        assert!(p.contains("Tone: Formal. (turned off by the person: do not touch)"));
        assert!(p.contains("only what went wrong since then"));
        assert!(
            p.contains("### Reports — Writing reports\n[1] Outline first.\n[2] Count the words.")
        );
        assert!(p.contains("not yours to change)\n- House style: How we write"));
        assert!(p.contains("\"after_passage\""));
    }
}
