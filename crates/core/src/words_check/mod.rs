//! Checks from the user's words (digest 003-C §16, RL-5): the pure half. `numbers` reads a
//! running time, resolution, aspect or frame rate out of one user line by fixed rules and no
//! model (CW-1…CW-11), narrowly, because a misread costs an offer the user never asked for;
//! `offers` keeps each dimension's one offer and one check in force from everything said
//! (CW-7…CW-10, CW-18); `final_cut` picks the delivered video such a check measures
//! (CW-12…CW-14); `probe` turns ffprobe's JSON into what the picture shows as it plays and
//! measures a check against it (CW-11, CW-17). Running ffprobe, storing checks and posting the
//! replacement card are the callers' (collab, store); nothing here does I/O.

pub mod final_cut;
pub mod numbers;
mod numbers_words;
mod numerals;
pub mod offers;
pub mod probe;
pub mod replacement;

use serde::{Deserialize, Serialize};
use std::ops::Range;

/// What a number from the user's words measures on the delivered video.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    RunningTime,
    Resolution,
    Aspect,
    FrameRate,
}

impl Dimension {
    pub const ALL: [Dimension; 4] = [
        Dimension::RunningTime,
        Dimension::Resolution,
        Dimension::Aspect,
        Dimension::FrameRate,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::RunningTime => "running_time",
            Dimension::Resolution => "resolution",
            Dimension::Aspect => "aspect",
            Dimension::FrameRate => "frame_rate",
        }
    }

    pub fn parse(s: &str) -> Result<Dimension, String> {
        Dimension::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| {
                format!("'{s}' is not a dimension (running_time, resolution, aspect, frame_rate)")
            })
    }
}

/// How the user bounded the number. `About` and `Exact` both mean ±10% for a running time or
/// frame rate, which is why CW-9 counts "about 2 minutes" and 「片长 120 秒」 as one offer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    About,
    AtLeast,
    AtMost,
    Exact,
}

impl Bound {
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::About => "about",
            Bound::AtLeast => "at_least",
            Bound::AtMost => "at_most",
            Bound::Exact => "exact",
        }
    }

    pub fn parse(s: &str) -> Result<Bound, String> {
        [Bound::About, Bound::AtLeast, Bound::AtMost, Bound::Exact]
            .into_iter()
            .find(|b| b.as_str() == s)
            .ok_or_else(|| format!("'{s}' is not a bound (about, at_least, at_most, exact)"))
    }

    /// "About N" and a bare N read the same range (CW-9, CW-11).
    fn class(self) -> Bound {
        match self {
            Bound::Exact => Bound::About,
            b => b,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Orientation {
    Portrait,
    Landscape,
}

/// The number as the user gave it, in the unit it is measured in.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Value {
    /// A running time.
    Seconds {
        seconds: f64,
    },
    /// A resolution, as its short side in pixels (1080p, 1920×1080 and 1080×1920 are 1080).
    ShortSide {
        pixels: u32,
    },
    /// An aspect ratio, width to height as written (9:16 is portrait).
    Ratio {
        width: f64,
        height: f64,
    },
    /// Portrait or landscape with no ratio given.
    Orientation {
        orientation: Orientation,
    },
    FramesPerSecond {
        fps: f64,
    },
}

impl Value {
    pub fn dimension(&self) -> Dimension {
        match self {
            Value::Seconds { .. } => Dimension::RunningTime,
            Value::ShortSide { .. } => Dimension::Resolution,
            Value::Ratio { .. } | Value::Orientation { .. } => Dimension::Aspect,
            Value::FramesPerSecond { .. } => Dimension::FrameRate,
        }
    }

    /// The figure ranges are measured against: seconds, pixels, width/height or fps. An
    /// orientation has none; it is measured by which side is longer.
    pub fn amount(&self) -> Option<f64> {
        match *self {
            Value::Seconds { seconds } => Some(seconds),
            Value::ShortSide { pixels } => Some(f64::from(pixels)),
            Value::Ratio { width, height } => Some(width / height),
            Value::Orientation { .. } => None,
            Value::FramesPerSecond { fps } => Some(fps),
        }
    }

    fn same(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Orientation { orientation: a }, Value::Orientation { orientation: b }) => {
                a == b
            }
            (Value::Orientation { .. }, _) | (_, Value::Orientation { .. }) => false,
            _ => {
                self.dimension() == other.dimension()
                    && match (self.amount(), other.amount()) {
                        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                        _ => false,
                    }
            }
        }
    }
}

/// A number with its bound and the range a measurement must fall in (CW-11). `min`/`max` are
/// in the unit of [`Value::amount`]; `None` leaves that end open.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Number {
    pub value: Value,
    pub bound: Bound,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl Number {
    /// CW-11's tolerances: about or bare → ±10% (resolution: the short side itself; aspect
    /// ratio: within 1%), at least → min only, at most → max only.
    pub fn new(value: Value, bound: Bound) -> Number {
        let (min, max) = match (value, bound) {
            (Value::Orientation { .. }, _) => (None, None),
            (Value::Ratio { width, height }, _) => {
                let r = width / height;
                (Some(r - r / 100.0), Some(r + r / 100.0))
            }
            (v, Bound::AtLeast) => (v.amount(), None),
            (v, Bound::AtMost) => (None, v.amount()),
            (Value::ShortSide { pixels }, _) => (Some(f64::from(pixels)), Some(f64::from(pixels))),
            (v, _) => {
                let a = v.amount().unwrap_or_default();
                (Some(a - a / 10.0), Some(a + a / 10.0))
            }
        };
        Number {
            value,
            bound,
            min,
            max,
        }
    }

    pub fn dimension(&self) -> Dimension {
        self.value.dimension()
    }

    /// CW-9: the same value and bound, "about" and a bare number alike.
    pub fn same_as(&self, other: &Number) -> bool {
        self.value.same(&other.value) && self.bound.class() == other.bound.class()
    }

    /// What was asked, for a board label or a measurement's text: "108–132 s", "at least
    /// 120 s", "1080", "9:16", "portrait", "54–66 fps".
    pub fn asked(&self) -> String {
        let unit = match self.value {
            Value::Seconds { .. } => " s",
            Value::FramesPerSecond { .. } => " fps",
            _ => "",
        };
        match self.value {
            Value::Orientation { orientation } => match orientation {
                Orientation::Portrait => "portrait".into(),
                Orientation::Landscape => "landscape".into(),
            },
            Value::Ratio { width, height } => format!("{}:{}", trim(width), trim(height)),
            Value::ShortSide { pixels } => match self.bound {
                Bound::AtLeast => format!("at least {pixels}"),
                Bound::AtMost => format!("at most {pixels}"),
                _ => format!("{pixels}"),
            },
            _ => match (self.min, self.max) {
                (Some(lo), Some(hi)) => format!("{}–{}{unit}", trim(lo), trim(hi)),
                (Some(lo), None) => format!("at least {}{unit}", trim(lo)),
                (None, Some(hi)) => format!("at most {}{unit}", trim(hi)),
                (None, None) => String::new(),
            },
        }
    }
}

/// At most two decimals, trailing zeros dropped: 108, 29.97, 0.56.
pub(crate) fn trim(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Where the user's line stands. Only lines about the whole job can give a number: one filed
/// under a shot's or another part's ticket, or an annotation, counts for no dimension (CW-3).
/// The ticket named after the job itself is the job, even when its name is cut on 片尾.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinePlace {
    Job,
    PartTicket,
    Annotation,
}

/// One number read from a line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub dimension: Dimension,
    pub number: Number,
    /// A target sets the deliverable's number (CW-7): the dimension's own word in its clause or
    /// a setting verb right before it, outside the footage or a reference.
    pub target: bool,
    /// Byte range of the number and its unit in the text given.
    pub span: Range<usize>,
}
