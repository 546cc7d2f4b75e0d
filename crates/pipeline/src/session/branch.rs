//! Branch keys (`step-N/parallel-M`) and input paths (`step-N/parallel-M/<path>`), both written
//! from the session root.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One branch of a session: step `step` (its position in the chain) and parallel branch
/// `parallel`; both start at 1. Ordered by step, then parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BranchKey {
    pub step: u32,
    pub parallel: u32,
}

impl BranchKey {
    pub fn new(step: u32, parallel: u32) -> Self {
        Self { step, parallel }
    }

    /// The key of a nested exchange inside this branch, as the manifest's hash and lease
    /// records name it: `step-N/parallel-M/<exchange>`.
    pub fn exchange_key(&self, exchange: &str) -> String {
        format!("{self}/{exchange}")
    }
}

impl fmt::Display for BranchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step-{}/parallel-{}", self.step, self.parallel)
    }
}

fn number_after(part: &str, prefix: &str) -> Option<u32> {
    let digits = part.strip_prefix(prefix)?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

impl FromStr for BranchKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not a branch key `step-N/parallel-M`"))?;
        match (number_after(a, "step-"), number_after(b, "parallel-")) {
            (Some(step), Some(parallel)) => Ok(Self { step, parallel }),
            _ => Err(format!("`{s}` is not a branch key `step-N/parallel-M`")),
        }
    }
}

impl Serialize for BranchKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for BranchKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// An input named by path from the session root: the branch that produced it and the path
/// inside that branch (as the branch recorded it in its `fields`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputPath {
    pub branch: BranchKey,
    pub path: String,
}

impl InputPath {
    /// The text form `step-N/parallel-M/<path>`.
    pub fn render(branch: BranchKey, path: &str) -> String {
        format!("{branch}/{path}")
    }
}

impl FromStr for InputPath {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.splitn(3, '/');
        let (Some(a), Some(b), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!(
                "`{s}` is not an input path `step-N/parallel-M/<path>`"
            ));
        };
        let branch: BranchKey = format!("{a}/{b}").parse()?;
        if !crate::defs::is_plain_relative(rest) {
            return Err(format!(
                "`{s}`: the path inside the branch must be plain and relative"
            ));
        }
        Ok(Self {
            branch,
            path: rest.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_input_paths_round_trip() {
        let k: BranchKey = "step-2/parallel-10".parse().unwrap();
        assert_eq!(k, BranchKey::new(2, 10));
        assert_eq!(k.to_string(), "step-2/parallel-10");
        assert!("step-0/parallel-1".parse::<BranchKey>().is_err());
        assert!("step-1/par-1".parse::<BranchKey>().is_err());
        let p: InputPath = "step-1/parallel-1/response/data/plan.json".parse().unwrap();
        assert_eq!(p.branch, BranchKey::new(1, 1));
        assert_eq!(p.path, "response/data/plan.json");
        assert!("step-1/parallel-1/../x".parse::<InputPath>().is_err());
        assert!(BranchKey::new(2, 1) > BranchKey::new(1, 3));
    }
}
