//! Quality events a turn's end says by itself (digest 003-B §9.1), written in the transaction
//! that ends it: `model` for a failed model call, the hop cap (a reply that loops), a reply
//! cut off at the length cap or one the model declined (the provider's finish, kept on the
//! model call); `orchestration` for a turn the process died under or the kernel broke off —
//! the app's stall, never the model's (QE4).

use serde_json::json;
use troupe_core::quality::{ReplyShape, turn_end_quality};
use troupe_engine::extension::RunObserver;
use troupe_store::{NewQualityEvent, RunRecord, StoreError, Tx};

pub struct QualityRuns;

impl RunObserver for QualityRuns {
    fn on_run_ended(&self, tx: &mut Tx<'_>, run: &RunRecord) -> Result<(), StoreError> {
        // Only a Bot's turn concerns a Bot; a thread no Bot owns (a pipeline operator, a
        // child task's agent) has no quality of a Bot's.
        let bot = tx.bot_of_turn(run.id)?;
        if bot.is_none() {
            return Ok(());
        }
        let Some(end) = &run.end_reason else {
            return Ok(());
        };
        // How the replies came back matters only where the end itself says nothing: a hold
        // ending a hundred turns reads no replies.
        let shape = if turn_end_quality(end, ReplyShape::Whole).is_some() {
            ReplyShape::Whole
        } else {
            tx.run_reply_shape(run.id)?
        };
        let Some((kind, why)) = turn_end_quality(end, shape) else {
            return Ok(());
        };
        let detail = json!({
            "end_reason": end.code(),
            "end_detail": end.detail(),
        });
        tx.quality_event(
            NewQualityEvent::new(kind, why)
                .run(Some(run.id))
                .bot(bot)
                .source("run", run.id.0)
                .detail(detail),
        )?;
        Ok(())
    }
}
