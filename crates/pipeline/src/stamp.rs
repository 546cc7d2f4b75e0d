//! The two text forms a session uses for a clock reading; the calendar arithmetic lives in core.

pub use troupe_core::time::{iso_utc, session_stamp};
