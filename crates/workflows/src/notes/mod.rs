//! Notes and Blueprints: versioned notes, the Blueprint's eight sections, the rule that only
//! Plan may write a Blueprint, the HTTP-facing service and the model-facing tools.

pub mod blueprint;
pub mod policy;
pub mod service;
pub mod tools;
