//! The `troupe` command line: configuration, file locations, and the commands.

pub mod args;
pub mod bench_groups;
pub mod config;
pub mod db;
pub mod ending;
pub mod exec;
pub mod feed;
pub mod golden;
pub mod login_link;
pub mod mcp;
pub mod paths;
pub mod pipeline;
pub mod pipeline_args;
pub mod pipeline_record;
pub mod progress;
pub mod serve;

#[cfg(test)]
mod durability_tests;
