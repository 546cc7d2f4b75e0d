//! Asking only for leave to go on (ASK-6…10): an `ask_user` question, or the `needs_from_user`
//! of a `blocked` ending, read by a model as only asking the person's OK for what they already
//! asked for is sent back once per segment with what to do instead, spending one of the
//! segment's two bounces. With no reading model (or a reading that fails), the second time in
//! a segment, or with the budget already spent (ASK-9: never ending the work needing
//! attention), the question reaches the person.

use crate::tools::ToolHost;
use troupe_core::ending::{EndingVerdict, on_asks_go_ahead};
use troupe_engine::extension::ToolCallContext;

impl ToolHost {
    /// The words the Bot reads when `question` is sent back, or `None`: it reaches the person.
    pub(crate) async fn go_ahead_sent_back(
        &self,
        ctx: &ToolCallContext,
        question: &str,
    ) -> Option<String> {
        let collab = self.collab.get()?;
        let run = ctx.run_id;
        let already = self
            .go_ahead_refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&run);
        let (answered, used) = ctx
            .store
            .read(|tx| {
                let trigger = tx.segment(run)?.and_then(|s| s.trigger_line_id);
                let answered = trigger.map(|l| tx.line(l).map(|l| l.body)).transpose()?;
                let used = tx.segment_work(run)?.map_or(0, |s| s.bounces);
                Ok((answered.unwrap_or_default(), used))
            })
            .ok()?;
        let Some(EndingVerdict::Bounce { text, .. }) = on_asks_go_ahead(used, already) else {
            return None;
        };
        match collab.read_bot_text(run, question, &answered).await {
            Ok(r) if r.by_model && r.reading.asks_ok_only => {
                self.go_ahead_refused
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(run);
                if let Err(e) = ctx.store.write(|tx| tx.bump_segment_bounces(run)) {
                    tracing::warn!(run = %run, error = %e, "could not count a go-ahead refusal");
                }
                Some(text)
            }
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(run = %run, error = %e, "reading a question failed; it goes to the person");
                None
            }
        }
    }
}
