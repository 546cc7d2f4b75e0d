//! troupe-core
