//! troupe-tools
