//! `[workflows]`: the continuation guard every new loop (Light Loop, BlueprintLoop) starts with.
//!
//! ```toml
//! [workflows]
//! max_model_calls = 200          # model calls of the loop's session; 0 = unlimited
//! no_progress_limit = 3          # continuations in a row without a tool call; 0 = off
//! continuation_spacing_ms = 1000 # least time between the starts of two continuations
//! ```

use serde::Deserialize;
use troupe_core::continuation_guard::GuardLimits;

/// The longest spacing accepted: a day. Beyond that a loop is better paused.
const MAX_SPACING_MS: u64 = 86_400_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workflows {
    pub max_model_calls: u32,
    pub no_progress_limit: u32,
    pub continuation_spacing_ms: u64,
}

impl Default for Workflows {
    fn default() -> Self {
        let d = GuardLimits::default();
        Workflows {
            max_model_calls: d.max_model_calls,
            no_progress_limit: d.no_progress_limit,
            continuation_spacing_ms: d.spacing_ms as u64,
        }
    }
}

impl Workflows {
    pub fn validate(&self) -> Result<(), String> {
        if self.continuation_spacing_ms > MAX_SPACING_MS {
            return Err(format!(
                "continuation_spacing_ms must be at most {MAX_SPACING_MS} (a day), got {}",
                self.continuation_spacing_ms
            ));
        }
        Ok(())
    }

    pub fn guard_limits(&self) -> GuardLimits {
        GuardLimits {
            max_model_calls: self.max_model_calls,
            no_progress_limit: self.no_progress_limit,
            spacing_ms: self.continuation_spacing_ms as i64,
        }
    }
}
