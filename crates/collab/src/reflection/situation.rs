//! An adopted checklist item is read in that Bot's situation (§10.2), at every model call.

use troupe_core::thread::Thread;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{Store, StoreError};

pub struct ChecklistSituation;

fn situation(thread: &Thread, store: &Store) -> Result<Option<String>, StoreError> {
    store.read(|tx| {
        let Some((_, bot)) = tx.thread_session(thread.id)? else {
            return Ok(None);
        };
        let items: Vec<_> = tx
            .checklist_items(Some(bot))?
            .into_iter()
            .filter(|i| i.enabled)
            .collect();
        if items.is_empty() {
            return Ok(None);
        }
        let mut text =
            String::from("Your checklist (lessons the person adopted; hold yourself to them):");
        for i in items {
            text.push_str(&format!("\n- {}: {}", i.when.replace('_', " "), i.text));
        }
        Ok(Some(text))
    })
}

impl ContextContributor for ChecklistSituation {
    fn name(&self) -> &str {
        "checklist"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match situation(thread, store) {
            Ok(Some(text)) => out.situation.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "a Bot's checklist could not be read")
            }
        }
    }
}
