//! The session container: the only place a run's work exists while it runs.
//!
//! ```text
//! <source>/.worktrees/sessions/<yyyymmdd-HHMMss>-<project>-<first operator>/
//!   state.json                                 the manifest
//!   run-options.json                           how the front end started it (for resume)
//!   step-N/parallel-M/request/request.json     written and hashed before the agent starts
//!   step-N/parallel-M/response/response.json   what routes
//!   step-N/parallel-M/response/response.md     for people; never routes
//!   step-N/parallel-M/response/data/
//!   step-N/parallel-M/response/artifacts/
//!   step-N/parallel-M/<exchange>/{request,response}/   a nested exchange
//! ```

mod branch;
mod container;
mod request;
mod response;
mod state;

pub use branch::{BranchKey, InputPath};
pub use container::{
    NewSession, RUN_OPTIONS_FILE, SESSIONS_DIR, Session, SessionError, WORKTREES_DIR, session_id,
};
pub use request::{Cause, REQUEST_SCHEMA_VERSION, Request, ResumeRef};
pub use response::{Awaiting, RESPONSE_SCHEMA_VERSION, Response, ResponseStatus};
pub use state::{
    BranchRecord, BranchStatus, Budget, Fallback, Lease, Origin, ResumeRecord,
    STATE_SCHEMA_VERSION, SessionState, SessionStatus, SourceRecord, StoppedAt,
};
