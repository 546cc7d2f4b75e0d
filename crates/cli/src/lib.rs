//! The `troupe` command line: configuration and file locations.

pub mod config;
pub mod paths;
