//! How far a commit has gone before the store acknowledges it: the `synchronous` setting of
//! the writer connection (WAL mode).

use std::fmt;
use std::str::FromStr;

/// What a power loss or an OS crash may cost. A killed process loses nothing in either mode:
/// SQLite's WAL makes every commit atomic, and what reached the OS survives the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous = FULL`: the WAL is synced at every commit, before the caller hears `Ok`,
    /// so a power loss or OS crash loses no acknowledged commit. Group commit
    /// (`Store::write_async`) keeps that to one sync per batch.
    #[default]
    Full,
    /// `synchronous = NORMAL`: the WAL is synced only at checkpoints, so an OS crash or power
    /// loss may lose the last commits; the database stays consistent.
    Normal,
}

impl Durability {
    /// The names, as written in a config file or on the command line.
    pub const NAMES: [&'static str; 2] = ["full", "normal"];

    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Full => "full",
            Durability::Normal => "normal",
        }
    }

    /// The value SQLite reports for `PRAGMA synchronous` in this mode.
    pub fn synchronous_level(self) -> i64 {
        match self {
            Durability::Full => 2,
            Durability::Normal => 1,
        }
    }

    pub(crate) fn pragma(self) -> &'static str {
        match self {
            Durability::Full => "PRAGMA synchronous = FULL;",
            Durability::Normal => "PRAGMA synchronous = NORMAL;",
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A durability name that is neither `full` nor `normal`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "durability must be \"full\" (every commit on disk before it is acknowledged) or \
     \"normal\" (a power loss may lose the last commits), not \"{0}\""
)]
pub struct UnknownDurability(pub String);

impl FromStr for Durability {
    type Err = UnknownDurability;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "full" => Ok(Durability::Full),
            "normal" => Ok(Durability::Normal),
            other => Err(UnknownDurability(other.to_string())),
        }
    }
}

/// How [`crate::Store::open_with`] opens a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpenOptions {
    pub durability: Durability,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print_back() {
        for name in Durability::NAMES {
            assert_eq!(name.parse::<Durability>().unwrap().as_str(), name);
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_choices() {
        let e = "FULL".parse::<Durability>().unwrap_err().to_string();
        assert!(e.contains("\"full\"") && e.contains("\"normal\""), "{e}");
        assert!(e.ends_with("not \"FULL\""), "{e}");
    }
}
