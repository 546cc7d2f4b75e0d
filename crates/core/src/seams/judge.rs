//! AC-15/AC-16: what the seams judge is asked, how its answer reads, and how a run reads
//! from it. The judge sees the acceptance line, the job's rules and one general list; each
//! seam as its picture (both sides put side by side) or as the text either side of it; for
//! text, the whole-set digest. It answers JSON only. A run passes only when every seam and
//! the whole set hold; otherwise its detail reads "K of N seams have problems: a→b: …".

use super::split::PartDigest;
use serde_json::Value;

/// What one seam shows the judge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeamEvidence {
    /// The seam's picture, sent with the call as picture number `index` (from 1); `path` is
    /// where it was kept, relative to the job folder.
    Picture { index: usize, path: String },
    Text {
        end_of_from: String,
        start_of_to: String,
    },
}

/// One seam between two parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seam {
    pub from: String,
    pub to: String,
    pub evidence: SeamEvidence,
}

impl Seam {
    pub fn name(&self) -> String {
        format!("{}→{}", self.from, self.to)
    }

    fn picture_path(&self) -> Option<&str> {
        match &self.evidence {
            SeamEvidence::Picture { path, .. } => Some(path),
            SeamEvidence::Text { .. } => None,
        }
    }
}

/// The prompt's first word, so a call reads as this check's in any log.
pub const PROMPT_TAG: &str = "troupe-seams";

/// The judge's prompt. `whole_set` is the text digest (empty for pictures).
pub fn prompt(
    acceptance_line: &str,
    rules: &str,
    seams: &[Seam],
    whole_set: &[PartDigest],
) -> String {
    let pictures = seams
        .iter()
        .any(|s| matches!(s.evidence, SeamEvidence::Picture { .. }));
    let mut p = format!(
        "{PROMPT_TAG}\nSeveral parts make one delivery. Each was checked on its own; nobody has \
         looked at where they meet. Judge every seam between two parts in a row{}.\n\n",
        if whole_set.is_empty() {
            ""
        } else {
            ", and the set as a whole"
        }
    );
    let line = acceptance_line.trim();
    p.push_str(&format!(
        "What must hold (the job's acceptance line): {}\n",
        if line.is_empty() {
            "the parts read as one delivery"
        } else {
            line
        }
    ));
    let rules = rules.trim();
    p.push_str(&format!(
        "The job's rules: {}\n\n",
        if rules.is_empty() {
            "none written"
        } else {
            rules
        }
    ));
    p.push_str(
        "Look for:\n\
         - agrees with the rules;\n\
         - follows on: the next part picks up where the last one ended (name a missing \
         transition);\n\
         - the same thing stays the same: characters, products and proper names, terms, numbers \
         and units, orientation and direction;\n",
    );
    p.push_str(if pictures {
        "- the same style: the look, rendering, palette and character design;\n"
    } else {
        "- the same style: tone, format and numbering;\n"
    });
    p.push_str(
        "- repeats or gaps, only where the evidence can show them.\n\
         Nearly identical pictures on both sides of a seam are good: the seam cannot be seen.\n\n",
    );
    for (i, s) in seams.iter().enumerate() {
        p.push_str(&format!("Seam {}: {}\n", i + 1, s.name()));
        match &s.evidence {
            SeamEvidence::Picture { index, .. } => p.push_str(&format!(
                "  Picture {index}: on the left the end of {}, on the right the start of {}.\n",
                s.from, s.to
            )),
            SeamEvidence::Text {
                end_of_from,
                start_of_to,
            } => p.push_str(&format!(
                "  End of {}:\n<<<\n{end_of_from}\n>>>\n  Start of {}:\n<<<\n{start_of_to}\n>>>\n",
                s.from, s.to
            )),
        }
    }
    if !whole_set.is_empty() {
        p.push_str(
            "\nThe whole set, part by part (heading; opening; numbers with units; names):\n",
        );
        for d in whole_set {
            p.push_str(&format!(
                "- {}: {}; {}; numbers: {}; names: {}\n",
                d.name,
                if d.heading.is_empty() {
                    "(no heading)"
                } else {
                    &d.heading
                },
                d.opening,
                list_or_none(&d.numbers),
                list_or_none(&d.names),
            ));
        }
    }
    // The shape, not an answer to copy: a small model repeats a filled-in example.
    p.push_str(&format!(
        "\nAnswer with one JSON object of this shape and nothing else:\n\
         {{\"seams\": [{{\"seam\": 1, \"holds\": true or false, \"problem\": \"…\"}}, …]{}}}\n\
         One entry for each of the {} seams. \"holds\" is false when you find any of the \
         above wrong there, and then \"problem\" says what, in one sentence naming it; when it \
         holds, \"problem\" is empty.\n",
        if whole_set.is_empty() {
            ""
        } else {
            ", \"whole_set\": {\"holds\": true or false, \"problem\": \"…\"}"
        },
        seams.len()
    ));
    p
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// One verdict: whether it holds, and what is wrong when it does not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub holds: bool,
    pub problem: String,
}

/// The judge's answer, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// By seam, in order.
    pub seams: Vec<Finding>,
    /// Only when asked (text).
    pub whole_set: Option<Finding>,
}

fn finding(v: &Value, what: &str) -> Result<Finding, String> {
    let holds = match v.get("holds") {
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("{what}: \"holds\" {other} is not true or false")),
        None => return Err(format!("{what} has no \"holds\"")),
    };
    let problem = v
        .get("problem")
        .and_then(Value::as_str)
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    if !holds && problem.is_empty() {
        return Err(format!("{what} does not hold but names no problem"));
    }
    Ok(Finding { holds, problem })
}

/// Read the answer for `n` seams; `whole_set` when the set's pass was asked for.
pub fn parse_answer(raw: &str, n: usize, whole_set: bool) -> Result<Answer, String> {
    let value = crate::reading::extract_json_object(raw)?;
    let Some(list) = value.get("seams").and_then(Value::as_array) else {
        return Err("the answer has no \"seams\" list".into());
    };
    let mut seams: Vec<Option<Finding>> = vec![None; n];
    for (i, v) in list.iter().enumerate() {
        // The seam's number, else its place in the list.
        let k = match v.get("seam") {
            Some(Value::Number(k)) => k.as_u64().map_or(0, |k| k as usize),
            _ => i + 1,
        };
        if k == 0 || k > n {
            return Err(format!("there is no seam {k} (there are {n})"));
        }
        if seams[k - 1].is_some() {
            return Err(format!("seam {k} is answered twice"));
        }
        seams[k - 1] = Some(finding(v, &format!("seam {k}"))?);
    }
    let seams = seams
        .into_iter()
        .enumerate()
        .map(|(i, f)| f.ok_or_else(|| format!("seam {} is not answered", i + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    let whole_set = if whole_set {
        match value.get("whole_set") {
            Some(v) => Some(finding(v, "the whole set")?),
            None => return Err("the answer has no \"whole_set\"".into()),
        }
    } else {
        None
    };
    Ok(Answer { seams, whole_set })
}

/// How a judged run reads: whether it passed, its one-line detail and its output (every
/// seam, with its picture's path when it has one, then the whole set).
pub fn outcome(seams: &[Seam], answer: &Answer) -> (bool, String, String) {
    let n = seams.len();
    let bad: Vec<String> = seams
        .iter()
        .zip(&answer.seams)
        .filter(|(_, f)| !f.holds)
        .map(|(s, f)| format!("{}: {}", s.name(), f.problem))
        .collect();
    let whole_bad = answer.whole_set.as_ref().filter(|w| !w.holds);
    let passed = bad.is_empty() && whole_bad.is_none();
    let detail = if passed {
        format!(
            "{}{}",
            if n == 1 {
                "the seam holds".to_string()
            } else {
                format!("all {n} seams hold")
            },
            if answer.whole_set.is_some() {
                ", and so does the whole set"
            } else {
                ""
            }
        )
    } else {
        let mut d = if bad.is_empty() {
            String::new()
        } else {
            // The seed's own words, whatever the numbers.
            format!(
                "{} of {n} seams have problems: {}",
                bad.len(),
                bad.join("; ")
            )
        };
        if let Some(w) = whole_bad {
            if !d.is_empty() {
                d.push_str("; ");
            }
            d.push_str(&format!("the whole set: {}", w.problem));
        }
        d
    };
    let mut out = String::new();
    for (s, f) in seams.iter().zip(&answer.seams) {
        out.push_str(&s.name());
        out.push_str(": ");
        if f.holds {
            out.push_str("holds");
        } else {
            out.push_str(&f.problem);
        }
        if let Some(p) = s.picture_path() {
            out.push_str(&format!(" ({p})"));
        }
        out.push('\n');
    }
    if let Some(w) = &answer.whole_set {
        out.push_str("whole set: ");
        out.push_str(if w.holds { "holds" } else { &w.problem });
        out.push('\n');
    }
    (passed, detail, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_seam(from: &str, to: &str) -> Seam {
        Seam {
            from: from.into(),
            to: to.into(),
            evidence: SeamEvidence::Text {
                end_of_from: "…end".into(),
                start_of_to: "start…".into(),
            },
        }
    }

    #[test]
    fn the_prompt_carries_the_line_the_rules_the_seams_and_the_set() {
        let seams = [
            text_seam("01-intro", "02-market"),
            Seam {
                from: "02-market".into(),
                to: "03-channels".into(),
                evidence: SeamEvidence::Picture {
                    index: 1,
                    path: "checks/4/seam-02.png".into(),
                },
            },
        ];
        let digest = [PartDigest {
            name: "01-intro".into(),
            heading: "Intro".into(),
            opening: "We sell".into(),
            numbers: vec!["12%".into()],
            names: vec![],
        }];
        let p = prompt(
            "The report reads as one",
            "Use metric units.",
            &seams,
            &digest,
        );
        assert!(p.starts_with("troupe-seams\n"));
        for want in [
            "The report reads as one",
            "Use metric units.",
            "Seam 1: 01-intro→02-market",
            "End of 01-intro:",
            "Picture 1: on the left the end of 02-market",
            "- 01-intro: Intro; We sell; numbers: 12%; names: none",
            "\"whole_set\"",
            "each of the 2 seams",
        ] {
            assert!(p.contains(want), "{want} in {p}");
        }
        let no_set = prompt("", "", &seams[..1], &[]);
        assert!(no_set.contains("none written") && !no_set.contains("whole_set"));
    }

    #[test]
    fn ac16_an_answer_must_name_every_seam_and_a_problem_for_each_failure() {
        let ok = parse_answer(
            "```json\n{\"seams\":[{\"seam\":2,\"holds\":false,\"problem\":\"the price changes\"},\
             {\"seam\":1,\"holds\":true}],\"whole_set\":{\"holds\":true}}\n```",
            2,
            true,
        )
        .unwrap();
        assert!(ok.seams[0].holds && !ok.seams[1].holds);
        assert_eq!(ok.whole_set.unwrap().problem, "");
        for (raw, why) in [
            ("not json", ""),
            ("{\"seams\":[{\"holds\":true}]}", "seam 2 is not answered"),
            (
                "{\"seams\":[{\"holds\":false},{\"holds\":true}]}",
                "names no problem",
            ),
            ("{\"seams\":[{\"seam\":3,\"holds\":true}]}", "no seam 3"),
            (
                "{\"seams\":[{\"holds\":\"yes\"},{\"holds\":true}]}",
                "not true or false",
            ),
        ] {
            let e = parse_answer(raw, 2, false).unwrap_err();
            assert!(e.contains(why), "{raw}: {e}");
        }
        let e = parse_answer("{\"seams\":[{\"holds\":true}]}", 1, true).unwrap_err();
        assert!(e.contains("whole_set"), "{e}");
    }

    #[test]
    fn ac16_a_run_passes_only_when_every_seam_and_the_set_hold() {
        let seams = [
            text_seam("01-intro", "02-market"),
            text_seam("02-market", "03-channels"),
        ];
        let hold = Finding {
            holds: true,
            problem: String::new(),
        };
        let bad = Finding {
            holds: false,
            problem: "the market is 4 M here, 5 M before".into(),
        };
        let (passed, detail, out) = outcome(
            &seams,
            &Answer {
                seams: vec![hold.clone(), bad.clone()],
                whole_set: Some(hold.clone()),
            },
        );
        assert!(!passed);
        assert_eq!(
            detail,
            "1 of 2 seams have problems: 02-market→03-channels: the market is 4 M here, 5 M before"
        );
        assert_eq!(
            out,
            "01-intro→02-market: holds\n02-market→03-channels: the market is 4 M here, 5 M \
             before\nwhole set: holds\n"
        );
        let (passed, detail, _) = outcome(
            &seams,
            &Answer {
                seams: vec![hold.clone(), hold.clone()],
                whole_set: Some(bad),
            },
        );
        assert!(!passed);
        assert_eq!(detail, "the whole set: the market is 4 M here, 5 M before");
        let (passed, detail, _) = outcome(
            &seams,
            &Answer {
                seams: vec![hold.clone(), hold],
                whole_set: None,
            },
        );
        assert!(passed);
        assert_eq!(detail, "all 2 seams hold");
    }
}
