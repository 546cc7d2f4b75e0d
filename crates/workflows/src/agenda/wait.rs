//! One-shot Agenda watches as continuation waits: while one targets a thread, the shared gate
//! stays closed and no workflow policy runs. The predicate reads persisted items, so a watch
//! still blocks after a restart.

use crate::agenda::cancel_commands;
use troupe_core::thread::Thread;
use troupe_engine::extension::WaitProvider;
use troupe_store::Store;

pub struct AgendaWaits;

impl WaitProvider for AgendaWaits {
    fn name(&self) -> &str {
        "agenda"
    }

    fn waits(&self, thread: &Thread, store: &Store) -> Result<Vec<String>, String> {
        let blockers = store
            .read(|tx| tx.agenda_blockers(thread.id))
            .map_err(|e| e.to_string())?;
        Ok(cancel_commands(&blockers))
    }
}
