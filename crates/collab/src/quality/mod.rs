//! Quality (digest 003-B §6, §9, §10.1): quality events written where their causes are
//! recorded (`writers`, `runs`, `complaints`, and the store's own at a command's timeout), the
//! reviewer's calibration record, the complaint's note to the turn it wakes, the timeout
//! lessons' guard on `shell`, and what the API reads and changes: events, the report, the
//! user's "the model's problem" mark, lessons and model prices.

mod calibration;
mod complaint_note;
mod complaints;
mod lessons;
mod runs;
mod writers;

pub use calibration::Calibration;
pub use complaint_note::{ComplaintNote, complaint_note};
pub(crate) use complaints::{complain_about, on_routed as complaint_on_routed};
pub use lessons::LessonGuard;
pub use runs::QualityRuns;
pub(crate) use writers::{board_sent_back, check_written, checks_failed, sent_back};

use crate::{Collab, CollabError};
use std::sync::Arc;
use troupe_core::RunId;
use troupe_core::lesson::LessonState;
use troupe_engine::EngineBuilder;
use troupe_store::{LessonRecord, ModelPrice, QualityEventRecord, QualityFilter, QualityReport};

/// What quality registers with the kernel.
pub(crate) fn extend(builder: EngineBuilder) -> EngineBuilder {
    builder
        .guard(Arc::new(LessonGuard))
        .run_observer(Arc::new(QualityRuns))
        .context(Arc::new(Calibration))
        .context(Arc::new(ComplaintNote))
}

/// Days a listing or the report may look back.
pub const MAX_DAYS: u32 = 365;

impl Collab {
    /// Quality events by the filter, newest first (`orchestration` for maintainers only).
    pub fn quality_events(
        &self,
        filter: &QualityFilter,
    ) -> Result<Vec<QualityEventRecord>, CollabError> {
        Ok(self.store().read(|tx| tx.quality_events(filter))?)
    }

    /// The report over the last `days` (1 to [`MAX_DAYS`]).
    pub fn quality_report(&self, days: u32) -> Result<QualityReport, CollabError> {
        if days == 0 || days > MAX_DAYS {
            return Err(CollabError::invalid(format!("days: from 1 to {MAX_DAYS}")));
        }
        Ok(self.store().read(|tx| tx.quality_report(days))?)
    }

    /// The user marks a turn as the model's problem, or takes the mark back (QE3). Answers
    /// whether it is marked now.
    pub fn mark_model_problem(&self, turn: RunId, marked: bool) -> Result<bool, CollabError> {
        Ok(self
            .store()
            .write(|tx| tx.set_model_problem(turn, marked))?)
    }

    pub fn lessons(&self) -> Result<Vec<LessonRecord>, CollabError> {
        Ok(self.store().read(|tx| tx.lessons())?)
    }

    /// The Lessons page: switch warn/block, retire (off), restore.
    pub fn set_lesson_state(
        &self,
        id: i64,
        state: LessonState,
    ) -> Result<LessonRecord, CollabError> {
        Ok(self.store().write(|tx| tx.set_lesson_state(id, state))?)
    }

    pub fn model_prices(&self) -> Result<Vec<ModelPrice>, CollabError> {
        Ok(self.store().read(|tx| tx.model_prices())?)
    }

    pub fn set_model_price(
        &self,
        model: &str,
        input_per_mtok: f64,
        output_per_mtok: f64,
    ) -> Result<ModelPrice, CollabError> {
        Ok(self
            .store()
            .write(|tx| tx.set_model_price(model, input_per_mtok, output_per_mtok))?)
    }
}
