//! troupe-server: the HTTP daemon (in progress).
