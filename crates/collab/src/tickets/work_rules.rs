//! Work on tickets within the work-item rules: a Bot runs at most one segment per job, its
//! work on the whole job and on each ticket counted together (WI-2, I1b), and a segment that
//! ends with its ticket approved or dropped closes its work item (T11).

use troupe_core::TicketId;
use troupe_core::ticket::TicketStage;
use troupe_core::work_item::{WorkMode, WorkState};
use troupe_engine::extension::{Admission, AdmissionCheck, AdmissionContext, RunObserver};
use troupe_store::{RunRecord, StoreError, Tx};

/// WI-2 across a Bot's work items on one job: the next waits while another runs.
pub struct OneSegmentPerJob;

impl AdmissionCheck for OneSegmentPerJob {
    fn name(&self) -> &str {
        "one_segment_per_job"
    }

    fn check(&self, ctx: &AdmissionContext<'_>) -> Admission {
        if !crate::tools::in_conversation(ctx.thread) {
            return Admission::Admit;
        }
        let busy = ctx.store.read(|tx| {
            let Some(item) = tx.work_item_of_thread(ctx.thread.id)? else {
                return Ok(false);
            };
            let (WorkMode::Work, Some(plan)) = (item.mode, item.plan_id) else {
                return Ok(false);
            };
            for other in tx.work_items_of_plan(plan)? {
                if other.bot_id == item.bot_id
                    && other.id != item.id
                    && tx.live_segment_of(other.id)?.is_some()
                {
                    return Ok(true);
                }
            }
            Ok(false)
        });
        match busy {
            Ok(false) => Admission::Admit,
            Ok(true) => Admission::Queue(
                "another segment of this Bot on the same job is running; this one starts after it"
                    .into(),
            ),
            Err(e) => Admission::Queue(format!("the Bot's work on the job could not be read: {e}")),
        }
    }
}

/// T11, after the work item settled (registered after [`crate::WorkItems`]).
pub struct TicketEndings;

impl RunObserver for TicketEndings {
    fn on_run_ended(&self, tx: &mut Tx<'_>, run: &RunRecord) -> Result<(), StoreError> {
        let Some(seg) = tx.segment_work(run.id)? else {
            return Ok(());
        };
        let item = tx.work_item(seg.work_item_id)?;
        let Some(ticket) = item.ticket_id else {
            return Ok(());
        };
        let Some(t) = tx.find_ticket(TicketId(ticket))? else {
            return Ok(());
        };
        if matches!(t.stage, TicketStage::Approved | TicketStage::Dropped)
            && item.state != WorkState::Closed
        {
            tx.set_work_state(item.id, WorkState::Closed, None)?;
        }
        Ok(())
    }
}
