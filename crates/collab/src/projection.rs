//! A Bot's words reach the conversation here: every assistant message with visible text that
//! the kernel writes in a conversation's thread becomes a line, in the same transaction — but
//! for a timer's turn repeating an earlier reply (AC-12, `repeated_replies`).

use std::collections::HashSet;
use std::sync::Mutex;
use troupe_core::RunId;
use troupe_core::conversation::{Author, LineStatus};
use troupe_core::message::{Finish, Message, PartBody, Role};
use troupe_engine::extension::MessageObserver;
use troupe_store::{NewLine, StoreError, Tx};

#[derive(Default)]
pub struct SessionProjector {
    /// Runs working on a task a timer gave them (a check-back, a call-back), told by the task's
    /// message as it is written, so a reply needs no read to know whether AC-12 applies. A run
    /// resumed after a restart is not in it: its replies are posted as they are.
    timer_runs: Mutex<HashSet<RunId>>,
}

/// Past this many remembered runs the set starts again (runs end; the set only saves reads).
const TIMER_RUNS_KEPT: usize = 10_000;

impl SessionProjector {
    fn timer_runs(&self) -> std::sync::MutexGuard<'_, HashSet<RunId>> {
        self.timer_runs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl MessageObserver for SessionProjector {
    fn on_message(&self, tx: &mut Tx<'_>, m: &Message) -> Result<(), StoreError> {
        let Some((session, bot)) = tx.thread_session(m.thread_id)? else {
            return Ok(());
        };
        if m.role != Role::Assistant {
            // A run's first message in a conversation opens its segment, with the line that
            // woke it (the newest line delivered to this thread as work).
            if let Some(run) = m.run_id
                && m.role == Role::User
            {
                let trigger = tx.newest_line_delivered_to(m.thread_id)?;
                tx.record_segment(run, bot, session, trigger)?;
                // A task (a root) says who asked for what the run does next.
                if m.is_root {
                    let mut runs = self.timer_runs();
                    if crate::repeated_replies::asked_by_nobody(&m.origin) {
                        if runs.len() >= TIMER_RUNS_KEPT {
                            runs.clear();
                        }
                        runs.insert(run);
                    } else {
                        runs.remove(&run);
                    }
                }
            }
            return Ok(());
        }
        let body: Vec<&str> = m
            .parts
            .iter()
            .filter(|p| p.visible)
            .filter_map(|p| match &p.body {
                PartBody::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
                _ => None,
            })
            .collect();
        if body.is_empty() || tx.line_for_thread_message(m.id)?.is_some() {
            return Ok(());
        }
        let status = match m.finish {
            Some(Finish::Error) => LineStatus::Failed,
            Some(Finish::Interrupted) => LineStatus::Interrupted,
            _ => LineStatus::Done,
        };
        let text = body.join("\n");
        if status == LineStatus::Done
            && let Some(run) = m.run_id
            && self.timer_runs().contains(&run)
            && let Some(earlier) =
                crate::repeated_replies::said_before(tx, run, m.thread_id, session, bot, &text)?
        {
            tracing::debug!(%run, repeats = %earlier, "a reply nobody asked for repeats an earlier one: not posted");
            return Ok(());
        }
        let line = tx.insert_line(&NewLine {
            bot_id: Some(bot),
            thread_message_id: Some(m.id),
            turn_id: m.run_id,
            status,
            ..NewLine::plain(session, Author::Bot, text)
        })?;
        file_bot_line(tx, m.thread_id, line.id)?;
        // A Bot's line is routed as it is written (Bot lines never queue); the threads it gives
        // work to are woken after this step commits.
        let workspace = std::path::PathBuf::from(tx.thread(m.thread_id)?.workspace);
        crate::routing::route_bot_line_in(tx, &line, &workspace)?;
        if m.finish == Some(Finish::Length) {
            // A reply the output cap ended reads as if said in full; the person is told.
            let name = tx.bot(bot)?.name;
            crate::members::system_line(
                tx,
                session,
                format!(
                    "{name}'s reply above was cut off: it reached the most its model may write \
                     in one reply. Ask it to go on, or raise max_output_tokens on its endpoint."
                ),
            )?;
        }
        Ok(())
    }
}

/// A Bot's words in its work on a job are that job's (a locked binding: C §3), wherever they
/// are said: its reply where the work speaks, or a `send_message` elsewhere.
pub(crate) fn file_bot_line(
    tx: &mut Tx<'_>,
    thread: troupe_core::ThreadId,
    line: troupe_core::SessionMessageId,
) -> Result<(), StoreError> {
    if let Some(item) = tx.work_item_of_thread(thread)?
        && let Some(plan) = item.plan_id
    {
        tx.file_line(&troupe_store::NewFiling {
            message_id: line,
            plan_id: plan,
            ticket_id: item.ticket_id,
            part_id: None,
            source: troupe_store::FilingSource::Binding,
            filed_by: "binding".into(),
            locked: true,
            primary: true,
        })?;
    }
    Ok(())
}
