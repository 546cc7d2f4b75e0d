//! Submissions (digest 003-B §4): a ticket's work handed over — explicitly with `submit`,
//! implicitly at a producer's ending, or as words with `end_turn({reason:"done", answer})` —
//! checked, and moved by the approval pass (`SubmissionPass`) or its reviewer.

pub mod files;
pub mod handover;
pub mod hooks;
pub mod implicit;
pub(crate) mod mail;
pub mod pass;
mod reweigh;
mod submit;
pub(crate) mod user_word;
pub mod view;
pub(crate) mod words;

pub use hooks::{BoundChecks, Hooks, JobChecks, PartCeiling, RequiredItems, SaidTwice};
pub use pass::{Moved, SubmissionPass, settle};
pub use view::{SubmissionCheck, SubmissionView};

use crate::tools::ToolHost;
use files::{in_folder, ticket_folder_name};
use std::sync::Arc;
use troupe_core::delegation::Expects;
use troupe_core::ticket::TicketStage;
use troupe_engine::extension::{ToolHandler, ToolRegistration};
use troupe_engine::{EngineBuilder, EngineError};
use troupe_llm::ToolSpec;
use troupe_store::{StoreError, TicketRecord, Tx, WorkItemRecord};

impl ToolHost {
    /// The hand-over hooks the engine was built with.
    pub(crate) fn deliverable_hooks(&self) -> Hooks {
        self.deliverables.get().cloned().unwrap_or_default()
    }
}

/// The ticket a producer's call is about: its work's ticket; else the ticket a deliverable
/// request to it names; else the one ticket whose folder holds every named file; else the
/// job's only ticket. Otherwise the Bot is told to choose one.
pub(crate) fn ticket_of_work(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
    plan_folder: &str,
    tickets: &[TicketRecord],
    paths: &[String],
) -> Result<Result<TicketRecord, String>, StoreError> {
    let by_id = |id: i64| tickets.iter().find(|t| t.id.0 == id).cloned();
    if let Some(t) = item.ticket_id.and_then(by_id) {
        return Ok(Ok(t));
    }
    for d in tx.open_delegations_to(item.id)? {
        if d.expects == Expects::Deliverable
            && let Some(t) = d.ticket_id.and_then(by_id)
        {
            return Ok(Ok(t));
        }
    }
    let holding: Vec<&TicketRecord> = tickets
        .iter()
        .filter(|t| {
            let name = ticket_folder_name(plan_folder, t);
            !paths.is_empty() && paths.iter().all(|p| in_folder(p, &name))
        })
        .collect();
    if let [one] = holding.as_slice() {
        return Ok(Ok((*one).clone()));
    }
    let live: Vec<&TicketRecord> = tickets
        .iter()
        .filter(|t| t.stage != TicketStage::Dropped)
        .collect();
    if let [one] = live.as_slice() {
        return Ok(Ok((*one).clone()));
    }
    let listed: Vec<String> = live
        .iter()
        .map(|t| {
            format!(
                "#{:02} {} (folder {})",
                t.number,
                t.title,
                ticket_folder_name(plan_folder, t)
            )
        })
        .collect();
    Ok(Err(format!(
        "which_ticket: this job has several tickets and these files are not all in one \
         ticket's folder; choose the ticket with work_on({{\"ticket\": NN}}) first. Tickets: {}",
        listed.join("; ")
    )))
}

fn held(name: &str, inner: Arc<dyn ToolHandler>) -> Arc<dyn ToolHandler> {
    Arc::new(crate::holds::Held {
        tool: name.into(),
        inner,
    })
}

/// Register the hand-over tools (`submit`, `review`), the ending hooks (T12, IS1–IS6) and the
/// picture reads' record with the engine, with `hooks`.
pub(crate) fn extend(
    builder: EngineBuilder,
    host: &Arc<ToolHost>,
    hooks: Hooks,
) -> Result<EngineBuilder, EngineError> {
    let _ = host.deliverables.set(hooks.clone());
    let reg = |name: &str, description: &str, parameters, handler| ToolRegistration {
        owner: crate::tools::OWNER.into(),
        spec: ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        },
        effectful: false,
        read_only: false,
        // A hand-over and a review are a job's, chosen with work_on: offered where it is.
        available: Arc::new(crate::tools::outside_workflow),
        handler: held(name, handler),
    };
    builder
        .ending_hook(Arc::new(implicit::ApprovedChangeEnding))
        .ending_hook(Arc::new(implicit::HandOverEnding {
            hooks: hooks.clone(),
        }))
        .run_observer(Arc::new(crate::reviews::ViewedImages))
        .tool(reg(
            "submit",
            "Hand over a ticket's files: they are checked, and the ticket goes to its reviewer \
             or waits on the user's word. Your turn ends with it unless you set continue.",
            submit::spec(),
            Arc::new(submit::Submit {
                hooks: hooks.clone(),
            }),
        ))?
        .tool(reg(
            "review",
            "Give your verdict on a hand-over you review: a verdict per requirement (pass needs \
             evidence) and approve or reject. Only this moves the ticket; words do not.",
            crate::reviews::spec(),
            Arc::new(crate::reviews::Review { hooks }),
        ))
}
