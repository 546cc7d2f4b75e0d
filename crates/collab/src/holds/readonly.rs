//! Read-only turns (HOLD-R1..R4, SQ-3): under a stop that still holds, a status question (or
//! under an app hold, any line) said to the held Bot gets an answer from a turn that can only
//! read. It opens on a hidden app note with the person's words, is offered no tool with an
//! effect, owes no ending, and its reply wakes nobody. Its segment is stored `readonly`, the
//! one kind of live turn the hold trigger lets through.

use super::facts::holds_over_thread;
use troupe_core::conversation::SessionMessage;
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::message::Origin;
use troupe_core::thread::Thread;
use troupe_core::{HoldId, RunId, ThreadId};
use troupe_engine::extension::{Narrowed, ToolScope};
use troupe_store::{Store, StoreError, Tx};

/// Delivery keys of the notes that open read-only turns.
pub(crate) const KEY_PREFIX: &str = "readonly:";

/// The tools a read-only turn is offered: reading, and ending its turn.
const READ_ONLY_TOOLS: &[&str] = &[
    "read_file",
    "list_dir",
    "read_skill",
    "list_routines",
    "end_turn",
];

fn note(words: &str) -> String {
    format!(
        "The person stopped this work, and the stop still holds. They said: \"{words}\". This \
         turn can only answer them: nothing with an effect can run. If they tell you to go on, \
         say plainly that the stop still holds and that their next word to you about this work \
         lifts it; do not claim to be going on."
    )
}

/// Give `thread` a read-only turn for `line`, when holds still cover it after the line's
/// lift. Under app holds the line is kept in `answered_lines` (HOLD-N5).
pub(crate) fn open_for(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
    thread: ThreadId,
    status_question: bool,
) -> Result<bool, StoreError> {
    let holds = holds_over_thread(tx, thread)?;
    if holds.is_empty() {
        return Ok(false);
    }
    let mut app: Vec<HoldId> = Vec::new();
    for h in &holds {
        if tx.hold(*h)?.is_app_hold() {
            app.push(*h);
        }
    }
    if !status_question && app.is_empty() {
        // A line a stop holds back waits for the lift (HOLD-L8).
        return Ok(false);
    }
    tx.deliver(
        thread,
        // It rides along with the line's own task, so the answer is one turn.
        &Delivery::user_task(note(&line.body))
            .with_mode(InboxMode::Context)
            .with_origin(Origin::System("hold_readonly".into()))
            .with_key(format!("{KEY_PREFIX}{}:{}", line.id.0, thread.0)),
    )?;
    for h in app {
        let mut hold = tx.hold(h)?;
        if !hold.effect.answered_lines.contains(&line.id) {
            hold.effect.answered_lines.push(line.id);
            tx.set_hold_effect(h, &hold.effect)?;
        }
    }
    Ok(true)
}

/// Whether the thread has a read-only note waiting: the one wake a hold admits.
pub(crate) fn waiting(store: &Store, thread: ThreadId) -> Result<bool, StoreError> {
    store.read(|tx| {
        Ok(tx.inbox(thread)?.iter().any(|i| {
            i.delivery_key
                .as_deref()
                .is_some_and(|k| k.starts_with(KEY_PREFIX))
        }))
    })
}

/// Whether `run` is a read-only turn.
pub(crate) fn is_readonly(tx: &Tx<'_>, run: RunId) -> Result<bool, StoreError> {
    Ok(tx.segment_work(run)?.is_some_and(|s| s.readonly))
}

/// Narrows a read-only turn to reading and end_turn.
pub struct ReadonlyTools;

impl ToolScope for ReadonlyTools {
    fn name(&self) -> &str {
        "hold_readonly"
    }

    fn narrow(&self, thread: &Thread, store: &Store) -> Result<Option<Narrowed>, String> {
        let Some(run) = thread.lease.holder else {
            return Ok(None);
        };
        let readonly = store
            .read(|tx| is_readonly(tx, run))
            .map_err(|e| e.to_string())?;
        Ok(readonly.then(|| Narrowed {
            only: READ_ONLY_TOOLS.iter().map(|t| t.to_string()).collect(),
            reason: "held: the person stopped this work; this turn can only read and answer".into(),
            keep_sourced_read_only: true,
        }))
    }
}
