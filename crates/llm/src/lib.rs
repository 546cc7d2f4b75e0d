//! troupe-llm
