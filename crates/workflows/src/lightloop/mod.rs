//! Light Loop: a session keeps working on one task until an independent reviewer accepts a
//! completion claim. The rules are the pure machine in [`machine`].

pub mod machine;
