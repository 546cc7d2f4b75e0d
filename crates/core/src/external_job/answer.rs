//! Reading a media server's answers (EJ1, EJ6): JSON when it parses as a JSON object, else
//! `key: value` lines (grok-imagine answers `request_id: abc (note)`), where a bracketed note
//! at the end of a line does not count.

use serde::Serialize;
use serde_json::{Map, Value};

/// The keys an accepted submit's id comes under, most specific first.
const ID_KEYS: [&str; 7] = [
    "request_id",
    "job_id",
    "task_id",
    "generation_id",
    "prediction_id",
    "render_id",
    "id",
];
const STATUS_KEYS: [&str; 3] = ["status", "state", "phase"];
const URL_KEYS: [&str; 6] = [
    "url",
    "video_url",
    "image_url",
    "output_url",
    "result_url",
    "output",
];
const DURATION_KEYS: [&str; 4] = ["duration", "duration_s", "duration_seconds", "seconds"];
const COST_KEYS: [&str; 3] = ["cost", "price", "cost_usd"];
const ERROR_KEYS: [&str; 3] = ["error", "message", "reason"];

/// What a submit's answer says, when it names an id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmitAnswer {
    pub remote_id: String,
    /// The key the id came under (the check is asked with it when its schema does not say).
    pub key: String,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoteStatus {
    #[default]
    Pending,
    Done,
    Failed,
}

/// What a check's answer says.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CheckAnswer {
    #[serde(skip)]
    pub status: RemoteStatus,
    pub url: Option<String>,
    pub duration: Option<String>,
    pub cost: Option<String>,
    /// A failure's reason, when the server gave one.
    pub error: Option<String>,
    /// A line-format answer, whole: passed on as written (EJ6).
    pub raw_lines: Option<String>,
}

impl CheckAnswer {
    /// The result as the woken Bots read it: the lines whole, else url, duration and cost.
    pub fn describe(&self) -> String {
        if let Some(lines) = &self.raw_lines {
            return lines.trim().to_string();
        }
        let mut out = Vec::new();
        for (label, v) in [
            ("url", &self.url),
            ("duration", &self.duration),
            ("cost", &self.cost),
            ("error", &self.error),
        ] {
            if let Some(v) = v {
                out.push(format!("{label}: {v}"));
            }
        }
        if out.is_empty() {
            "(the server gave no details)".into()
        } else {
            out.join("\n")
        }
    }
}

/// Either shape, as key → value text.
enum Fields {
    Json(Map<String, Value>),
    Lines(Vec<(String, String)>),
}

impl Fields {
    fn read(text: &str) -> Fields {
        match serde_json::from_str::<Value>(text.trim()) {
            Ok(Value::Object(m)) => Fields::Json(flatten(m)),
            _ => Fields::Lines(lines(text)),
        }
    }

    fn get(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|k| match self {
            Fields::Json(m) => m.get(*k).and_then(scalar),
            Fields::Lines(ls) => ls
                .iter()
                .find(|(key, v)| key == k && !v.is_empty())
                .map(|(_, v)| v.clone()),
        })
    }

    fn key_of(&self, keys: &[&str]) -> Option<(String, String)> {
        keys.iter()
            .find_map(|k| self.get(&[k]).map(|v| (k.to_string(), v)))
    }
}

/// A nested `data` / `result` / `output` object's fields join the top level's (the top wins).
fn flatten(mut m: Map<String, Value>) -> Map<String, Value> {
    for inner in ["data", "result", "output", "job"] {
        if let Some(Value::Object(sub)) = m.get(inner).cloned() {
            for (k, v) in sub {
                m.entry(k).or_insert(v);
            }
        }
    }
    m
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `key: value` lines, keys lowercased with spaces as `_`; a trailing `(…)` or `[…]` dropped.
fn lines(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let key = k.trim().trim_start_matches(['-', '*', ' ']).trim();
            if key.is_empty() || key.len() > 40 {
                return None;
            }
            let key = key.to_lowercase().replace([' ', '-'], "_");
            Some((key, strip_note(v.trim()).to_string()))
        })
        .collect()
}

/// A bracketed note closing a line is not part of its value.
fn strip_note(v: &str) -> &str {
    for (open, close) in [('(', ')'), ('[', ']')] {
        if v.ends_with(close)
            && let Some(at) = v.rfind(open)
            && at > 0
        {
            return v[..at].trim_end();
        }
    }
    v
}

/// EJ1: the id an accepted submit's answer names, if any.
pub fn parse_submit_answer(text: &str) -> Option<SubmitAnswer> {
    let fields = Fields::read(text);
    let (key, remote_id) = fields.key_of(&ID_KEYS)?;
    // An id is one token; a sentence under `id:` is not one.
    if remote_id.split_whitespace().count() != 1 {
        return None;
    }
    Some(SubmitAnswer { remote_id, key })
}

/// EJ6: how a check's answer says the job stands. A url with no status is a finished render.
pub fn parse_check_answer(text: &str) -> CheckAnswer {
    let fields = Fields::read(text);
    let url = fields.get(&URL_KEYS).filter(|u| u.contains("://"));
    let status = match fields.get(&STATUS_KEYS) {
        Some(s) => status_word(&s).unwrap_or(RemoteStatus::Pending),
        None if url.is_some() => RemoteStatus::Done,
        None => RemoteStatus::Pending,
    };
    CheckAnswer {
        status,
        url,
        duration: fields.get(&DURATION_KEYS),
        cost: fields.get(&COST_KEYS),
        error: (status == RemoteStatus::Failed)
            .then(|| fields.get(&ERROR_KEYS))
            .flatten(),
        raw_lines: match fields {
            Fields::Lines(_) if status != RemoteStatus::Pending => Some(text.trim().to_string()),
            _ => None,
        },
    }
}

fn status_word(s: &str) -> Option<RemoteStatus> {
    let w = s.trim().to_lowercase().replace([' ', '-'], "_");
    match w.as_str() {
        "done" | "completed" | "complete" | "succeeded" | "success" | "successful" | "finished"
        | "ready" | "ok" => Some(RemoteStatus::Done),
        "failed" | "failure" | "error" | "errored" | "cancelled" | "canceled" | "expired"
        | "rejected" => Some(RemoteStatus::Failed),
        "pending" | "queued" | "running" | "processing" | "in_progress" | "in_queue"
        | "starting" | "submitted" | "generating" => Some(RemoteStatus::Pending),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_answer_with_a_bracketed_note_gives_its_id() {
        // S-EJ1.
        let a = parse_submit_answer("request_id: abc (note)").unwrap();
        assert_eq!(
            (a.remote_id.as_str(), a.key.as_str()),
            ("abc", "request_id")
        );
        let a = parse_submit_answer("Accepted.\nRequest ID: r-77 [queued]\n").unwrap();
        assert_eq!(a.remote_id, "r-77");
    }

    #[test]
    fn a_json_answer_gives_its_id_nested_or_numeric() {
        assert_eq!(
            parse_submit_answer(r#"{"job_id": "j1", "status": "queued"}"#)
                .unwrap()
                .remote_id,
            "j1"
        );
        assert_eq!(
            parse_submit_answer(r#"{"data": {"id": 42}}"#)
                .unwrap()
                .remote_id,
            "42"
        );
    }

    #[test]
    fn an_answer_without_an_id_registers_nothing() {
        assert_eq!(parse_submit_answer("the server is busy, try later"), None);
        assert_eq!(parse_submit_answer(r#"{"error": "quota"}"#), None);
        assert_eq!(parse_submit_answer("id: not one token"), None);
    }

    #[test]
    fn check_answers_read_status_url_duration_and_cost() {
        let a = parse_check_answer(
            r#"{"status":"completed","url":"https://m/v.mp4","duration":8,"cost":"$0.40"}"#,
        );
        assert_eq!(a.status, RemoteStatus::Done);
        assert_eq!(a.url.as_deref(), Some("https://m/v.mp4"));
        assert_eq!(a.duration.as_deref(), Some("8"));
        assert_eq!(a.cost.as_deref(), Some("$0.40"));
        assert_eq!(a.raw_lines, None);
        assert_eq!(
            a.describe(),
            "url: https://m/v.mp4\nduration: 8\ncost: $0.40"
        );
        let f = parse_check_answer(r#"{"state":"error","error":"nsfw filter"}"#);
        assert_eq!(f.status, RemoteStatus::Failed);
        assert_eq!(f.error.as_deref(), Some("nsfw filter"));
        assert_eq!(
            parse_check_answer(r#"{"status":"processing"}"#).status,
            RemoteStatus::Pending
        );
        assert_eq!(
            parse_check_answer("what is this").status,
            RemoteStatus::Pending
        );
    }

    #[test]
    fn a_finished_line_answer_is_passed_on_whole() {
        let text =
            "status: done\nurl: https://x/v.mp4 (url is TEMPORARY — fetch promptly)\ncost: 0.3";
        let a = parse_check_answer(text);
        assert_eq!(a.status, RemoteStatus::Done);
        assert_eq!(a.url.as_deref(), Some("https://x/v.mp4"));
        assert_eq!(a.describe(), text, "the note rides along");
    }

    #[test]
    fn a_url_without_a_status_is_done() {
        assert_eq!(
            parse_check_answer("video_url: https://cdn/x.mp4").status,
            RemoteStatus::Done
        );
        assert_eq!(
            parse_check_answer("url: not a link").status,
            RemoteStatus::Pending
        );
    }
}
