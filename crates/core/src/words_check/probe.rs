//! What a delivered video is, read from `ffprobe -v error -show_streams -show_format -of json`,
//! and a check from the user's words measured against it (CW-11, CW-17). The picture is taken
//! as it plays: the sample aspect ratio widens an anamorphic frame, and a rotation flag (the
//! `rotate` tag of older files, the "Display Matrix" side data of newer ffprobe) turns it, so a
//! phone clip stored 1920×1080 and flagged 90° is a 1080×1920 portrait. A value that cannot be
//! read is an `error`: no evidence either way.

use super::{Number, Orientation, Value, trim};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// The facts a check measures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MediaFacts {
    /// The container's duration, else the longest stream's.
    pub duration_secs: Option<f64>,
    /// The picture as it plays (display width and height).
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// As stored, before the sample aspect ratio and rotation.
    pub stored_width: Option<u32>,
    pub stored_height: Option<u32>,
    /// Clockwise quarter turns applied on playback: 0, 90, 180 or 270.
    pub rotation: u16,
    pub fps: Option<f64>,
    pub has_video: bool,
    pub has_audio: bool,
}

/// Reads ffprobe's JSON. Only output that is not ffprobe's shape at all is an error; missing
/// values stay `None` and make the measurement an `error`.
pub fn parse_ffprobe(json: &str) -> Result<MediaFacts, String> {
    let root: Json =
        serde_json::from_str(json).map_err(|e| format!("ffprobe output is not JSON: {e}"))?;
    let obj = root
        .as_object()
        .ok_or("ffprobe output is not a JSON object")?;
    let streams: &[Json] = match obj.get("streams") {
        Some(Json::Array(a)) => a,
        Some(_) => return Err("ffprobe output's \"streams\" is not a list".into()),
        None => &[],
    };
    let format = obj.get("format");
    if streams.is_empty() && format.is_none() {
        return Err("ffprobe output has neither \"streams\" nor \"format\"".into());
    }
    let kind = |s: &Json| {
        s.get("codec_type")
            .and_then(Json::as_str)
            .map(str::to_owned)
    };
    // Cover art in an audio file is a "video" stream marked attached_pic: no picture to play.
    let video = streams.iter().find(|s| {
        kind(s).as_deref() == Some("video")
            && s.pointer("/disposition/attached_pic")
                .and_then(Json::as_i64)
                != Some(1)
    });
    let has_audio = streams.iter().any(|s| kind(s).as_deref() == Some("audio"));

    let duration_secs = format
        .and_then(|f| f.get("duration"))
        .and_then(seconds)
        .or_else(|| {
            streams
                .iter()
                .filter_map(|s| {
                    s.get("duration")
                        .and_then(seconds)
                        .or_else(|| s.pointer("/tags/DURATION").and_then(clock_seconds))
                })
                .reduce(f64::max)
        });

    let mut facts = MediaFacts {
        duration_secs,
        has_video: video.is_some(),
        has_audio,
        ..MediaFacts::default()
    };
    if let Some(v) = video {
        let w = v.get("width").and_then(Json::as_u64).filter(|w| *w > 0);
        let h = v.get("height").and_then(Json::as_u64).filter(|h| *h > 0);
        facts.stored_width = w.map(|w| w as u32);
        facts.stored_height = h.map(|h| h as u32);
        facts.rotation = rotation(v);
        if let (Some(w), Some(h)) = (w, h) {
            let (n, d) = v
                .get("sample_aspect_ratio")
                .and_then(Json::as_str)
                .and_then(|s| fraction(s, ':'))
                .filter(|(n, d)| *n > 0.0 && *d > 0.0)
                .unwrap_or((1.0, 1.0));
            let display_w = (w as f64 * n / d).round() as u32;
            let (dw, dh) = if facts.rotation % 180 == 90 {
                (h as u32, display_w)
            } else {
                (display_w, h as u32)
            };
            facts.width = Some(dw);
            facts.height = Some(dh);
        }
        facts.fps = ["avg_frame_rate", "r_frame_rate"].iter().find_map(|k| {
            v.get(*k)
                .and_then(Json::as_str)
                .and_then(|s| fraction(s, '/'))
                .filter(|(n, d)| *n > 0.0 && *d > 0.0)
                .map(|(n, d)| n / d)
        });
    }
    Ok(facts)
}

/// The Display Matrix's rotation (counter-clockwise degrees) wins over the older `rotate` tag
/// (clockwise); either way only quarter turns matter.
fn rotation(v: &Json) -> u16 {
    let matrix = v
        .get("side_data_list")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter(|sd| sd.get("side_data_type").and_then(Json::as_str) == Some("Display Matrix"))
        .find_map(|sd| sd.get("rotation").and_then(number))
        .map(|ccw| -ccw);
    let tag = v.pointer("/tags/rotate").and_then(number);
    let clockwise = matrix.or(tag).unwrap_or(0.0);
    let quarter = (clockwise / 90.0).round() as i64;
    (quarter.rem_euclid(4) * 90) as u16
}

/// A JSON number or a number in a string ("107.000000"); "N/A" is none.
fn number(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|x| x.is_finite())
}

fn seconds(v: &Json) -> Option<f64> {
    number(v).filter(|s| *s > 0.0)
}

/// Matroska's stream tag DURATION, "00:01:59.983000000".
fn clock_seconds(v: &Json) -> Option<f64> {
    let s = v.as_str()?;
    let mut total = 0.0;
    for part in s.split(':') {
        total = total * 60.0 + part.trim().parse::<f64>().ok()?;
    }
    (total > 0.0).then_some(total)
}

/// "30000/1001", "4:3".
fn fraction(s: &str, sep: char) -> Option<(f64, f64)> {
    let (n, d) = s.split_once(sep)?;
    Some((n.trim().parse().ok()?, d.trim().parse().ok()?))
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    /// The value could not be read: no evidence either way (CW-17).
    Error,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Error => "error",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub outcome: Outcome,
    /// What was measured against what was asked: "107.00 s, asked 108–132 s".
    pub detail: String,
}

/// Measures one number against the facts (CW-11).
pub fn measure(number: &Number, facts: &MediaFacts) -> Measurement {
    let asked = number.asked();
    let error = |what: &str| Measurement {
        outcome: Outcome::Error,
        detail: format!("{what} could not be read, asked {asked}"),
    };
    let judged = |ok: bool, detail: String| Measurement {
        outcome: if ok { Outcome::Passed } else { Outcome::Failed },
        detail,
    };
    let size = facts.width.zip(facts.height);
    let turned = match (facts.stored_width, facts.stored_height) {
        (Some(w), Some(h)) if facts.rotation % 180 == 90 => {
            format!(" (stored {w}×{h}, turned {}°)", facts.rotation)
        }
        _ => String::new(),
    };
    match number.value {
        Value::Seconds { .. } => match facts.duration_secs {
            Some(d) => judged(within(number, d), format!("{d:.2} s, asked {asked}")),
            None => error("the running time"),
        },
        Value::ShortSide { .. } => match size {
            Some((w, h)) => {
                let short = w.min(h);
                judged(
                    within(number, f64::from(short)),
                    format!("{w}×{h}{turned}, short side {short}, asked {asked}"),
                )
            }
            None => error("the picture size"),
        },
        Value::Ratio { .. } => match size {
            Some((w, h)) => {
                let r = f64::from(w) / f64::from(h);
                judged(
                    within(number, r),
                    format!("{w}×{h}{turned} ({r:.3}), asked {asked}"),
                )
            }
            None => error("the picture size"),
        },
        Value::Orientation { orientation } => match size {
            Some((w, h)) => {
                let shape = match w.cmp(&h) {
                    std::cmp::Ordering::Less => "portrait",
                    std::cmp::Ordering::Greater => "landscape",
                    std::cmp::Ordering::Equal => "square",
                };
                let ok = match orientation {
                    Orientation::Portrait => h > w,
                    Orientation::Landscape => w > h,
                };
                judged(ok, format!("{w}×{h}{turned}, {shape}, asked {asked}"))
            }
            None => error("the picture size"),
        },
        Value::FramesPerSecond { .. } => match facts.fps {
            Some(fps) => judged(
                within(number, fps),
                format!("{} fps, asked {asked}", trim(fps)),
            ),
            None => error("the frame rate"),
        },
    }
}

/// Inside the number's range, ends included (a hair of float slack).
fn within(number: &Number, x: f64) -> bool {
    let slack = 1e-9 * x.abs().max(1.0);
    number.min.is_none_or(|lo| x >= lo - slack) && number.max.is_none_or(|hi| x <= hi + slack)
}

#[cfg(test)]
#[path = "probe_tests.rs"]
mod tests;
