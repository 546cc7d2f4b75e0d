//! Runtime Boss (issue 18): the account-level boss session — settings and
//! provisioning (`ensure`), persona, briefing and `open`; channel routing and
//! push; the `boss-synergy` toolset. See docs/workflows/runtime-boss.md.
//!
//! One `pub mod` line per concept file; helpers add their own lines below.

pub mod briefing;
pub mod ensure;
pub mod identity;
pub mod ingress;
pub mod memory_tools;
pub mod open;
pub mod permissions;
pub mod persona_context;
pub mod project;
pub mod push;
pub mod push_failures;
pub mod reactions;
pub mod readonly_shell;
pub mod reply_target;
pub mod schedule;
pub mod session_send;
pub mod session_tools;
pub mod settings;
pub mod toolset;
