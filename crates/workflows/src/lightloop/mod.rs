//! Light Loop: a session keeps working on one task until an independent reviewer accepts a
//! completion claim. The rules are the pure machine in [`machine`]; the rest wires it into the
//! kernel: the `light_loop` continuation policy, the executor's and reviewer's tools, the
//! reviewer child, and recovery at start.

pub mod commit;
pub mod host;
pub mod machine;
pub mod policy;
pub mod recovery;
pub mod reviewer;
pub mod texts;
pub mod tools;
