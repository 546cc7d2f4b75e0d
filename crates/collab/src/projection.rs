//! A Bot's words reach the conversation here: every assistant message with visible text that
//! the kernel writes in a conversation's thread becomes a line, in the same transaction.

use troupe_core::conversation::{Author, LineStatus};
use troupe_core::message::{Finish, Message, PartBody, Role};
use troupe_engine::extension::MessageObserver;
use troupe_store::{NewLine, StoreError, Tx};

pub struct SessionProjector;

impl MessageObserver for SessionProjector {
    fn on_message(&self, tx: &mut Tx<'_>, m: &Message) -> Result<(), StoreError> {
        if m.role != Role::Assistant {
            return Ok(());
        }
        let Some((session, bot)) = tx.thread_session(m.thread_id)? else {
            return Ok(());
        };
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
        tx.insert_line(&NewLine {
            session_id: session,
            author: Author::Bot,
            bot_id: Some(bot),
            parent_id: None,
            body: body.join("\n"),
            thread_message_id: Some(m.id),
            turn_id: m.run_id,
            status,
        })?;
        Ok(())
    }
}
