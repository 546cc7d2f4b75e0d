//! One module per resource.

pub mod bots;
pub mod events;
pub mod roles;
pub mod sessions;
pub mod turns;
pub mod web;
