//! One module per resource.

pub mod agenda;
pub mod blueprint_loops;
pub mod boss;
pub mod boss_open;
pub mod bots;
pub mod channels;
pub mod check_backs;
pub mod checks;
pub mod child_tasks;
pub mod clearing;
pub mod debug;
pub mod delegations;
pub mod engines;
pub mod events;
pub mod external_jobs;
pub mod holds;
pub mod lattice;
pub mod login_links;
pub mod mcp;
pub mod members;
pub mod memories;
pub mod messages;
pub mod nodes;
pub mod notes;
pub mod notifications;
pub mod permissions;
pub mod plans;
pub mod quality;
pub mod reflections;
pub mod requirements;
pub mod roles;
pub mod routines;
pub mod sessions;
pub mod settings_runtime;
pub mod skills;
pub mod submissions;
pub mod tickets;
pub mod turns;
pub mod unread;
pub mod web;
pub mod work_items;
pub mod work_log;
pub mod workflows;

use crate::ApiError;
use std::str::FromStr;

/// An id taken from the path: the bare number (`3`) or the display form (`bot_3`). Anything
/// else is a 400 that names what was expected.
pub(crate) fn path_id<T: FromStr<Err = String>>(raw: &str) -> Result<T, ApiError> {
    raw.parse::<T>()
        .map_err(|m| ApiError::bad_request(format!("path id: {m}")))
}

/// An optional integer query parameter in `min..=max`; absent means `default`.
pub(crate) fn query_number(
    name: &str,
    raw: Option<&str>,
    default: u32,
    min: u32,
    max: u32,
) -> Result<u32, ApiError> {
    let Some(raw) = raw else { return Ok(default) };
    match raw.trim().parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(ApiError::invalid(format!(
            "{name}: must be an integer between {min} and {max} (got '{raw}')"
        ))),
    }
}

/// An optional id query parameter (bare number or display form); a bad one is a 422 naming it.
pub(crate) fn query_id<T: FromStr<Err = String>>(
    name: &str,
    raw: Option<&str>,
) -> Result<Option<T>, ApiError> {
    raw.map(|r| {
        r.trim()
            .parse::<T>()
            .map_err(|m| ApiError::invalid(format!("{name}: {m}")))
    })
    .transpose()
}
