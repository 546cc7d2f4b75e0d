//! troupe-store
