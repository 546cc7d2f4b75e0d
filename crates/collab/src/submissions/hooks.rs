//! The hand-over's extension points (issue 15 "hooks"): whether a part is stuck at its
//! ceiling (`PartCeiling`, counted by `crate::ceiling`), which requirements a review must pass
//! (`RequiredItems`, the ledger's later), and the checks bound to a submission
//! (`BoundChecks`, run by the checks' runner, `crate::checks`).

use async_trait::async_trait;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use troupe_core::review::Requirement;
use troupe_core::submission::BoundCheck;
use troupe_core::{PartId, SubmissionId};
use troupe_store::{CheckKind, RunOutcome, Store, StoreError, SubmissionRecord, TicketRecord, Tx};

/// §4.3 `ceiling_reached`, §7: what of the ticket stuck at its ceiling the hand-over naming
/// `parts` (none: the whole ticket) may not be handed over past, each named for the Bot.
pub trait PartCeiling: Send + Sync {
    fn stuck(
        &self,
        tx: &Tx<'_>,
        ticket: &TicketRecord,
        parts: &[PartId],
    ) -> Result<Vec<String>, StoreError>;
}

/// §5.2: the requirements in force on the hand-over's job, with which are required.
pub trait RequiredItems: Send + Sync {
    fn requirements(
        &self,
        tx: &Tx<'_>,
        sub: &SubmissionRecord,
    ) -> Result<Vec<Requirement>, StoreError>;
}

/// Until the requirement ledger: the numbers of the user's words (checks from words) said at
/// least twice, each named by its check id. One is backed by the user when it is confirmed
/// and its newest run passed.
pub struct SaidTwice;

impl RequiredItems for SaidTwice {
    fn requirements(
        &self,
        tx: &Tx<'_>,
        sub: &SubmissionRecord,
    ) -> Result<Vec<Requirement>, StoreError> {
        Ok(tx
            .checks_of_plan(sub.plan_id, false)?
            .into_iter()
            .filter(|c| c.kind == CheckKind::Words && c.said_count >= 2)
            .filter(|c| c.ticket_id.is_none_or(|t| t == sub.ticket_id))
            .map(|c| Requirement {
                id: c.id.to_string(),
                said_count: u32::try_from(c.said_count).unwrap_or(u32::MAX),
                about_picture: false,
                user_backed: c.confirmed
                    && c.runs
                        .first()
                        .is_some_and(|r| r.outcome == RunOutcome::Passed),
            })
            .collect())
    }
}

/// CK1–CK2: run the checks bound to a submission and give their results for it.
#[async_trait]
pub trait BoundChecks: Send + Sync {
    async fn run(&self, store: &Store, sub: SubmissionId) -> Result<Vec<BoundCheck>, String>;
}

/// The checks' runner (`crate::checks`): the conversation layer's own once it is attached to
/// the tool host (so hand-overs share its locks and its picture judge), else one made for the
/// engine's store on first use (one run per job, one command machine-wide).
#[derive(Default)]
pub struct JobChecks {
    runner: OnceLock<crate::checks::Checks>,
    host: Option<Arc<crate::tools::ToolHost>>,
}

impl JobChecks {
    /// The runner of the conversation layer `host` is attached to.
    pub fn through(host: Arc<crate::tools::ToolHost>) -> Self {
        JobChecks {
            runner: OnceLock::new(),
            host: Some(host),
        }
    }
}

#[async_trait]
impl BoundChecks for JobChecks {
    async fn run(&self, store: &Store, sub: SubmissionId) -> Result<Vec<BoundCheck>, String> {
        if let Some(collab) = self.host.as_ref().and_then(|h| h.collab()) {
            return BoundChecks::run(&collab.checks(), store, sub).await;
        }
        let runner = self
            .runner
            .get_or_init(|| crate::checks::Checks::with_ffprobe(store.clone()));
        runner.run(store, sub).await
    }
}

/// The hooks a hand-over runs through, shared by the tools, the ending hooks and the pass.
#[derive(Clone)]
pub struct Hooks {
    pub ceiling: Arc<dyn PartCeiling>,
    pub required: Arc<dyn RequiredItems>,
    pub checks: Arc<dyn BoundChecks>,
}

impl Hooks {
    /// The daemon's hooks: the defaults, with the bound checks run by the conversation layer
    /// `host` is attached to.
    pub fn through(host: Arc<crate::tools::ToolHost>) -> Self {
        Hooks {
            checks: Arc::new(JobChecks::through(host)),
            ..Hooks::default()
        }
    }
}

impl Default for Hooks {
    fn default() -> Self {
        Hooks {
            ceiling: Arc::new(crate::ceiling::CountedCeiling),
            required: Arc::new(SaidTwice),
            checks: Arc::new(JobChecks::default()),
        }
    }
}

/// Whether `path` names a picture by its extension (§5.3 1c).
pub fn is_image(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .is_some_and(|e| {
            matches!(
                e.as_str(),
                "png" | "jpg" | "jpeg" | "gif" | "webp" | "bmp" | "tif" | "tiff" | "svg" | "avif"
            )
        })
}
