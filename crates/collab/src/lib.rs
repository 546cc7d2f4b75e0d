//! Direct conversations with Bots on top of the kernel: Bots and their endpoints, model roles,
//! conversations (sessions) and their lines, and the projection of a Bot's replies from its
//! kernel thread into the conversation people see. The kernel stays unaware of all of this.

mod asks;
mod attribution;
pub mod bench_groups;
mod bots;
pub mod ceiling;
pub mod check_backs;
pub mod checks;
mod clearing;
mod closing_check;
mod delegation;
mod delegation_scope;
mod demo;
mod desk;
mod dormancy;
mod ending;
pub mod engines;
mod error;
pub mod external_jobs;
mod go_ahead;
pub mod holds;
mod judgement;
mod key_names;
pub mod last_change;
pub mod ledger;
mod line_flow;
mod lines;
mod members;
pub mod memories;
mod nods;
mod notifications;
mod oneshot;
mod plans;
mod projection;
pub mod quality;
mod quotes;
mod reader;
pub mod reflection;
mod repeated_replies;
pub mod retrospective;
mod reviews;
mod roles;
pub mod routines;
mod routing;
pub mod scheduler;
pub mod scribe;
mod segment_situation;
mod sessions;
mod situation;
pub mod skills;
pub mod submissions;
pub mod supervisor;
mod threads;
pub mod tickets;
pub mod tools;
mod turns;
mod unread;
mod work_items;
mod work_log;
mod work_questions;
mod workspace_dir;

pub use asks::AnswerRequest;
pub use bots::{BotPatch, NewBotRequest, binding_for as bot_binding};
pub use clearing::ClearOutcome;
pub use delegation::DelegationView;
pub use desk::DeskGuard;
pub use ending::WorkEnding;
pub use error::CollabError;
pub use key_names::{DEFAULT_KEY_ENV_PATTERNS, KeyEnvRule};
pub use line_flow::{FlowFiling, FlowWake, LineFlow};
pub use lines::InsertOutcome;
pub use members::{AddMember, HandoffView, LeadRequest, LeadSuggestion, LeadView, MemberView};
pub use notifications::NotificationList;
pub use plans::{OpenPlan, PlanPatchRequest, PlanRevisionView, PlanView};
pub use projection::SessionProjector;
pub use quotes::{EditRequest, QuoteSituation, quote_section};
pub use reader::{BotText, DEFAULT_TIMEOUT as DEFAULT_READING_TIMEOUT};
pub use roles::SharedRoles;
pub use scheduler::{TickFailure, TickReport};
pub use segment_situation::SegmentSituation;
pub use sessions::{BlockedBy, NewSessionRequest, SessionView, create_child_conversation};
pub use situation::{ConversationSituation, Membership};
pub use turns::{FileChange, JobTurnView, TurnView};
pub use unread::{ReadAt, UnreadBy, UnreadLine};
pub use work_items::{ContinueOutcome, WorkItemView, WorkItems, WorkSlots};
pub use work_questions::WorkAnswerRequest;

use std::path::PathBuf;
use std::sync::Arc;
use troupe_engine::{Engine, EngineBuilder, EngineError};
use troupe_store::Store;

/// Everything the conversation layer registers with the kernel: the projection of replies into
/// conversations, the situation, membership and work-slot admission, work items and the desk's
/// guard, and the Bot tools (attach `host` to the [`Collab`] once built).
pub fn extend(
    builder: EngineBuilder,
    host: &Arc<tools::ToolHost>,
) -> Result<EngineBuilder, EngineError> {
    extend_with(builder, host, submissions::Hooks::through(host.clone()))
}

/// [`extend`] with the hand-over's hooks (part ceiling, required items, bound checks) given.
pub fn extend_with(
    builder: EngineBuilder,
    host: &Arc<tools::ToolHost>,
    hooks: submissions::Hooks,
) -> Result<EngineBuilder, EngineError> {
    let builder = builder
        .message_observer(Arc::new(SessionProjector::default()))
        .context(Arc::new(ConversationSituation))
        .context(Arc::new(segment_situation::SegmentSituation))
        .context(Arc::new(quotes::QuoteSituation))
        .context(Arc::new(checks::ChecksSituation))
        .context(Arc::new(ledger::RequirementsSituation))
        .context(Arc::new(memories::KeptSituation))
        .admission(Arc::new(holds::HoldAdmission))
        .admission(Arc::new(Membership))
        .admission(Arc::new(WorkSlots))
        .run_observer(Arc::new(WorkItems))
        .ending_hook(Arc::new(closing_check::ClosingCheck::new(host.clone())))
        .ending_hook(Arc::new(WorkEnding))
        .guard(Arc::new(holds::HoldGuard))
        .tool_scope(Arc::new(holds::ReadonlyTools))
        .guard(Arc::new(DeskGuard::new(host.clone())))
        .context(Arc::new(tickets::TicketSituation))
        .admission(Arc::new(tickets::OneSegmentPerJob))
        .run_observer(Arc::new(tickets::TicketEndings))
        .guard(Arc::new(tickets::TicketFolderGuard))
        .guard(Arc::new(tickets::LargeJobGuard::default()))
        .guard(Arc::new(tickets::WorkStarted))
        .interceptor(Arc::new(external_jobs::ExternalJobs::default()));
    let builder = quality::extend(submissions::extend(builder, host, hooks)?);
    tools::registrations(host)
        .into_iter()
        .try_fold(builder, |b, t| b.tool(t))
}

/// The conversation layer's handle. Cheap to clone.
#[derive(Clone)]
pub struct Collab {
    engine: Engine,
    roles: Arc<SharedRoles>,
    /// Each conversation's Bot works in its own directory under here.
    workspaces: PathBuf,
    reader: Arc<reader::Reader>,
    line_order: Arc<lines::LineOrder>,
    checks: Arc<std::sync::OnceLock<checks::Checks>>,
}

impl Collab {
    /// `engine` must have been built with [`SessionProjector`] as a message observer and
    /// `roles` as its model resolver.
    pub fn new(engine: Engine, roles: Arc<SharedRoles>, workspaces: PathBuf) -> Self {
        Collab {
            engine,
            roles,
            workspaces,
            reader: Arc::new(reader::Reader::default()),
            line_order: Arc::default(),
            checks: Arc::default(),
        }
    }

    /// Readings time out after `timeout` (the config's `reading.timeout_ms`), counting the
    /// wait for a reading slot.
    pub fn with_reading_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.reader = Arc::new(reader::Reader::new(timeout));
        self
    }

    pub(crate) fn reader(&self) -> &reader::Reader {
        &self.reader
    }

    pub(crate) fn line_order(&self) -> &lines::LineOrder {
        &self.line_order
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn store(&self) -> &Store {
        self.engine.store()
    }

    pub fn roles(&self) -> &SharedRoles {
        &self.roles
    }
}
