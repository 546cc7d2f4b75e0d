//! The standard check (digest 003-B §3.3, SC1–SC10): once a large job's sample is approved,
//! every ticket that waited for it is held to its standard. When one of those tickets hands
//! over, the app gathers evidence from both hand-overs (a video's facts and five frames, the
//! first pictures, or a text's opening, middle and end), and the picture judge compares craft
//! and form only — content is expected to differ. Unsure passes; a failure names its
//! shortfalls; when nothing can judge (nothing handed over, no model, a stop, the day's
//! picture budget spent) the check holds nothing and the hand-over waits on the user's word.
//! It is the only picture judgement that gates (SC10).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// SC3: frames taken from a video, evenly spaced.
pub const FRAMES: usize = 5;
/// SC3: pictures shown at most from a hand-over of pictures.
pub const PICTURES: usize = 5;
/// Q7: what picture judging may cost in a day, in US dollars.
pub const PICTURE_BUDGET_USD_PER_DAY: f64 = 5.0;
/// Characters of each text excerpt.
pub const EXCERPT_CHARS: usize = 600;

/// A video's facts as the app measured them (SC3).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VideoFacts {
    /// The longest video file handed over.
    pub file: String,
    pub duration_secs: Option<f64>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub has_sound: bool,
    /// Keyframes looked at, and how many distinct pictures they show.
    pub keyframes: u32,
    pub distinct_keyframes: u32,
    /// How often the most repeated keyframe picture appears.
    pub most_repeated: u32,
}

/// A text's opening, middle and end (SC3).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TextExcerpts {
    pub file: String,
    pub opening: String,
    pub middle: String,
    pub end: String,
}

/// What the app gathered from one hand-over. The pictures themselves (frames or images) go
/// with the call; `pictures` counts them, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub files: Vec<String>,
    pub video: Option<VideoFacts>,
    pub text: Option<TextExcerpts>,
    /// Picture files among the hand-over (shown as pictures when the model takes them).
    pub picture_files: Vec<String>,
    pub pictures: usize,
}

impl Evidence {
    /// Nothing to compare: no file, or none of a kind the app reads.
    pub fn is_empty(&self) -> bool {
        self.video.is_none() && self.text.is_none() && self.picture_files.is_empty()
    }
}

/// Why the check could not judge (SC6): it then holds nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotJudged {
    NothingHandedOver,
    NoModel(String),
    Stopped,
    BudgetSpent,
    Unreadable(String),
}

impl std::fmt::Display for NotJudged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotJudged::NothingHandedOver => {
                f.write_str("not judged: nothing to compare was handed over")
            }
            NotJudged::NoModel(why) => write!(f, "not judged: no model could judge ({why})"),
            NotJudged::Stopped => f.write_str("not judged: a stop covers the job"),
            NotJudged::BudgetSpent => write!(
                f,
                "not judged: today's picture budget (${PICTURE_BUDGET_USD_PER_DAY:.0}) is spent"
            ),
            NotJudged::Unreadable(why) => write!(f, "not judged: the judge's answer {why}"),
        }
    }
}

/// The judge's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Holds to the standard, or the judge was unsure (SC4: unsure passes).
    Holds {
        unsure: bool,
    },
    Short(Vec<String>),
}

/// SC6: today's spend so far leaves room for one more picture judgement.
pub fn budget_left(spent_today_usd: f64) -> bool {
    spent_today_usd < PICTURE_BUDGET_USD_PER_DAY
}

/// SC1: the tickets held to the sample's standard once it is approved — every ticket but the
/// sample and what it depends on (however far back), not approved and not dropped.
pub fn held_to_standard(
    graph: &[crate::ticket::TicketNode],
    sample: crate::TicketId,
) -> Vec<crate::TicketId> {
    use crate::ticket::TicketStage;
    let before = crate::ticket::sample_dependencies(graph, sample);
    graph
        .iter()
        .filter(|t| t.id != sample && !before.contains(&t.id))
        .filter(|t| !matches!(t.stage, TicketStage::Approved | TicketStage::Dropped))
        .map(|t| t.id)
        .collect()
}

/// What the check is called on the board and in the situation (SC9).
pub fn check_label(sample_number: u32, sample_title: &str) -> String {
    format!("Holds to the standard of sample #{sample_number:02} {sample_title}")
}

/// SC3 for text: the opening, middle and end, each at most [`EXCERPT_CHARS`] characters; a
/// short text is its opening alone.
pub fn excerpts(text: &str) -> (String, String, String) {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let take = |from: usize| -> String {
        chars[from.min(n)..(from + EXCERPT_CHARS).min(n)]
            .iter()
            .collect()
    };
    if n <= EXCERPT_CHARS * 3 {
        return (text.to_string(), String::new(), String::new());
    }
    (
        take(0),
        take(n / 2 - EXCERPT_CHARS / 2),
        take(n - EXCERPT_CHARS),
    )
}

/// How many keyframe pictures there were, how many distinct, and the most repeated one's
/// count, from each picture's fingerprint.
pub fn keyframe_counts(fingerprints: &[u64]) -> (u32, u32, u32) {
    let mut counts: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
    for f in fingerprints {
        *counts.entry(*f).or_default() += 1;
    }
    let most = counts.values().copied().max().unwrap_or(0);
    (fingerprints.len() as u32, counts.len() as u32, most)
}

fn describe(out: &mut String, e: &Evidence, first_picture: usize) {
    if let Some(v) = &e.video {
        let size = match (v.width, v.height) {
            (Some(w), Some(h)) => format!("{w}×{h}"),
            _ => "unknown size".into(),
        };
        let length = v
            .duration_secs
            .map_or("unknown length".into(), |d| format!("{d:.1} s"));
        out.push_str(&format!(
            "- video {}: {length}, {size}, {}; {} keyframes showing {} distinct pictures, the \
             most repeated one {} times\n",
            v.file,
            if v.has_sound { "with sound" } else { "silent" },
            v.keyframes,
            v.distinct_keyframes,
            v.most_repeated
        ));
    }
    if !e.picture_files.is_empty() {
        out.push_str(&format!("- pictures: {}\n", e.picture_files.join(", ")));
    }
    if let Some(t) = &e.text {
        out.push_str(&format!(
            "- text {}:\n  opening: {}\n",
            t.file,
            t.opening.trim()
        ));
        if !t.middle.is_empty() {
            out.push_str(&format!(
                "  middle: {}\n  end: {}\n",
                t.middle.trim(),
                t.end.trim()
            ));
        }
    }
    if e.pictures > 0 {
        out.push_str(&format!(
            "- pictures attached: {} to {}\n",
            first_picture + 1,
            first_picture + e.pictures
        ));
    }
}

/// The judge's prompt. The sample's pictures are attached first, then the hand-over's.
pub fn judge_prompt(
    sample_name: &str,
    sample: &Evidence,
    ticket_name: &str,
    handed: &Evidence,
) -> String {
    let mut out = String::from("troupe-picture-judge\n");
    out.push_str(
        "You compare a new part of a job with the job's sample, the part made first to set the \
         standard. Compare only craft and form — quality, finish, length and pacing, picture \
         size, sound, real motion against still pictures — never content, which is expected to \
         differ. Still pictures under camera moves, where the sample had real motion, fall \
         short. If you are unsure, it holds.\n\
         Answer with one JSON object and nothing else:\n\
         {\"holds\": true | false | \"unsure\", \"shortfalls\": [\"<what falls short of the \
         sample, one per item>\"]}\n\n",
    );
    out.push_str(&format!("The sample, {sample_name}:\n"));
    describe(&mut out, sample, 0);
    out.push_str(&format!("\nThe new part, {ticket_name}:\n"));
    describe(&mut out, handed, sample.pictures);
    out
}

/// Checks the judge's answer. Falling short needs at least one shortfall named.
pub fn parse_verdict(raw: &str) -> Result<Verdict, String> {
    let value = crate::reading::extract_json_object(raw)?;
    let obj = value.as_object().ok_or("the answer is not a JSON object")?;
    let shortfalls: Vec<String> = match obj.get("shortfalls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        Some(other) => return Err(format!("\"shortfalls\" must be a list, not {other}")),
    };
    match obj.get("holds") {
        Some(Value::Bool(true)) => Ok(Verdict::Holds { unsure: false }),
        Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("unsure") => {
            Ok(Verdict::Holds { unsure: true })
        }
        Some(Value::Bool(false)) if shortfalls.is_empty() => {
            Err("falls short without naming a shortfall".into())
        }
        Some(Value::Bool(false)) => Ok(Verdict::Short(shortfalls)),
        None | Some(Value::Null) => Err("has no \"holds\"".into()),
        Some(other) => Err(format!(
            "\"holds\" {other} is not true, false or \"unsure\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_unsure_passes_and_a_failure_names_its_shortfalls() {
        assert_eq!(
            parse_verdict(r#"{"holds": true}"#).unwrap(),
            Verdict::Holds { unsure: false }
        );
        assert_eq!(
            parse_verdict(r#"{"holds": "unsure", "shortfalls": []}"#).unwrap(),
            Verdict::Holds { unsure: true }
        );
        assert_eq!(
            parse_verdict(r#"{"holds": false, "shortfalls": ["stills under a pan", " "]}"#)
                .unwrap(),
            Verdict::Short(vec!["stills under a pan".into()])
        );
        assert!(parse_verdict(r#"{"holds": false}"#).is_err());
        assert!(parse_verdict(r#"{"holds": "maybe"}"#).is_err());
        assert!(parse_verdict("looks fine").is_err());
    }

    #[test]
    fn excerpts_and_keyframes() {
        let short = "a short brief";
        assert_eq!(
            excerpts(short),
            (short.to_string(), String::new(), String::new())
        );
        let long: String = (0..3000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let (o, m, e) = excerpts(&long);
        assert_eq!(
            (o.chars().count(), m.chars().count(), e.chars().count()),
            (600, 600, 600)
        );
        assert!(long.starts_with(&o) && long.ends_with(&e) && long.contains(&m));
        assert_eq!(keyframe_counts(&[1, 2, 2, 2, 3]), (5, 3, 3));
        assert_eq!(keyframe_counts(&[]), (0, 0, 0));
    }

    #[test]
    fn prompt_numbers_the_pictures_sample_first() {
        let sample = Evidence {
            video: Some(VideoFacts {
                file: "01-Opening/open.mp4".into(),
                duration_secs: Some(30.0),
                width: Some(1920),
                height: Some(1080),
                has_sound: true,
                keyframes: 12,
                distinct_keyframes: 12,
                most_repeated: 1,
            }),
            pictures: 5,
            ..Evidence::default()
        };
        let handed = Evidence {
            pictures: 5,
            ..sample.clone()
        };
        let p = judge_prompt("#01 Opening", &sample, "#03 Chase", &handed);
        assert_eq!(p.lines().next(), Some("troupe-picture-judge"));
        assert!(p.contains("pictures attached: 1 to 5"), "{p}");
        assert!(p.contains("pictures attached: 6 to 10"), "{p}");
        assert!(
            p.contains("12 keyframes showing 12 distinct pictures"),
            "{p}"
        );
        assert!(budget_left(4.99) && !budget_left(5.0));
        assert_eq!(
            check_label(1, "Opening"),
            "Holds to the standard of sample #01 Opening"
        );
    }
}
