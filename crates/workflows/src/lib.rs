//! Session workflows on top of the kernel and the conversation layer: the workflow slot of a
//! session (Plan, Light Loop) and its controls, the session's Continue and Abandon, the
//! instruction projection that wraps a workflow's contract around a request, and notes with
//! Blueprints, BlueprintLoops, the Agenda, and child tasks (Cortex). Rules are pure functions (`controls`, `lightloop::machine`, `notes::policy`,
//! `notes::blueprint`, `session_controls::abandon_plan`); the rest applies them in store
//! transactions.

pub mod agenda;
pub mod blueprint_loop;
pub mod boss;
pub mod contracts;
pub mod controls;
pub mod cortex;
mod error;
pub mod guard;
mod install;
pub mod lattice;
pub mod lightloop;
pub mod notes;
pub mod projection;
pub mod review;
pub mod reviewer_task;
pub mod runtime_boss;
mod service;
pub mod session_controls;
pub mod slot;
pub mod tool_results;

pub use agenda::service::{AgendaPatchRequest, NewAgendaRequest, TickReport};
pub use blueprint_loop::recovery::BlueprintLoopRecovery;
pub use blueprint_loop::service::{BlueprintLoopView, NewBlueprintLoopRequest};
pub use cortex::api::TaskRecovery;
pub use error::WorkflowError;
pub use install::{build_engine, install};
pub use lattice::{LatticeRecovery, LatticeView};
pub use lightloop::recovery::LightLoopRecovery;
pub use notes::service::{NewNoteRequest, NotePatchRequest};
pub use service::{ReviewerView, SetWorkflowRequest, WorkflowView};
pub use session_controls::{AbandonReport, ContinueReport};

use troupe_collab::Collab;
use troupe_engine::Engine;
use troupe_store::Store;

/// The workflow layer's handle over a conversation layer. Cheap to clone and to make.
#[derive(Clone)]
pub struct Workflows {
    collab: Collab,
}

impl Workflows {
    /// `collab`'s engine must have been built through [`install`].
    pub fn new(collab: Collab) -> Self {
        Workflows { collab }
    }

    pub fn collab(&self) -> &Collab {
        &self.collab
    }

    pub fn engine(&self) -> &Engine {
        self.collab.engine()
    }

    pub fn store(&self) -> &Store {
        self.collab.store()
    }
}
