//! troupe-engine
