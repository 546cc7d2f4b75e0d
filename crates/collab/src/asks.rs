//! Asks (ASK-1…5): a Bot's question to the person is a line of its own whose one answer —
//! picked options and words — is stored on it (a trigger keeps the first). The asking turn
//! ends; the answer reaches the Bot's thread as a task, so it survives a restart. A plain line
//! typed while a Bot waits is that answer; a stop closes the ask.

use crate::{Collab, CollabError};
use serde::Deserialize;
use serde_json::json;
use troupe_core::conversation::{
    Ask, AskAnswer, AskOption, Author, Bot, LineKind, MAX_ASK_OPTIONS, Session, SessionKind,
    SessionMessage,
};
use troupe_core::inbox::Delivery;
use troupe_core::{BotId, RunId, SessionId, SessionMessageId, ThreadId};
use troupe_store::{NewLine, StoreError, Tx};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskArgs {
    question: String,
    #[serde(default)]
    options: Vec<AskOption>,
    #[serde(default)]
    multiple: bool,
}

impl AskArgs {
    pub(crate) fn into_ask(self) -> Result<Ask, String> {
        let question = self.question.trim().to_string();
        if question.is_empty() {
            return Err("question: must not be empty".into());
        }
        if question.chars().count() > 4000 {
            return Err("question: at most 4000 characters".into());
        }
        if self.options.len() > MAX_ASK_OPTIONS {
            return Err(format!(
                "options: at most {MAX_ASK_OPTIONS} (got {})",
                self.options.len()
            ));
        }
        for (i, o) in self.options.iter().enumerate() {
            if o.label.trim().is_empty() {
                return Err(format!("options[{i}].label: must not be empty"));
            }
            if o.label.eq_ignore_ascii_case("other") {
                return Err(format!(
                    "options[{i}]: no \"Other\" option; the person can always write their own answer"
                ));
            }
        }
        if self.multiple && self.options.len() < 2 {
            return Err("multiple: needs at least two options".into());
        }
        Ok(Ask {
            question,
            options: self.options,
            multiple: self.multiple,
            answer: None,
            answered_at: None,
            closed_at: None,
            closed_why: None,
        })
    }
}

/// Post an ask line for the Bot's turn, in the caller's transaction.
pub(crate) fn post_ask(
    tx: &mut Tx<'_>,
    session: SessionId,
    bot: BotId,
    run: RunId,
    thread: ThreadId,
    ask: Ask,
) -> Result<SessionMessageId, StoreError> {
    let body = ask.question.clone();
    let line = tx.insert_line(&NewLine {
        bot_id: Some(bot),
        turn_id: Some(run),
        kind: LineKind::Ask,
        ask: Some((ask, thread)),
        ..NewLine::plain(session, Author::Bot, body)
    })?;
    tx.session_event("ask_created", session, Some(run), json!({"message": line}))?;
    Ok(line.id)
}

/// A person's plain line taken as a waiting Bot's answer (ASK-4): stored on its ask, whether
/// its desk here asked or its work on a job speaking here. Answers the thread that asked; the
/// line itself then reaches the Bot as usual there.
pub(crate) fn take_as_answer(
    tx: &mut Tx<'_>,
    session: &Session,
    line: &SessionMessage,
    bot: &Bot,
) -> Result<Option<ThreadId>, StoreError> {
    let Some((ask, thread)) = tx.open_ask_of_bot_in(session.id, bot.id)? else {
        return Ok(None);
    };
    tx.answer_ask(
        ask,
        &AskAnswer {
            options: Vec::new(),
            text: Some(line.body.clone()),
        },
    )?;
    crate::quotes::typed_answer(tx, line.id, ask)?;
    tx.session_event(
        "ask_taken",
        session.id,
        None,
        json!({"ask_id": ask, "message_id": line.id, "taken_as": "ask_answer"}),
    )?;
    Ok(Some(thread))
}

/// The answer to a job's ask, typed as a plain line, goes to that work's thread as its next
/// task (its desk here still reads the line as context); the work is queued with it as mail.
pub(crate) fn answer_to_work(
    tx: &mut Tx<'_>,
    session: &Session,
    line: &SessionMessage,
    bot: &Bot,
    thread: ThreadId,
    how: &str,
) -> Result<ThreadId, StoreError> {
    let text = crate::routing::labelled(session, &crate::routing::speaker(tx, line)?, &line.body);
    tx.deliver(
        thread,
        &Delivery {
            origin: troupe_core::message::Origin::User,
            ..Delivery::user_task(text).with_key(crate::routing::line_key(line.id, bot.id))
        },
    )?;
    tx.record_line_delivery(line.id, bot.id, how, thread)?;
    tx.clear_pause(thread)?;
    if let Some(item) = tx.work_item_of_thread(thread)? {
        tx.set_work_mail(item.id, session.id, troupe_core::work_item::PRIORITY_USER)?;
        tx.set_work_state(item.id, troupe_core::work_item::WorkState::Queued, None)?;
    }
    tx.wake_after_commit(thread);
    Ok(thread)
}

/// `POST /v1/messages/:id/answer`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerRequest {
    #[serde(default)]
    pub options: Vec<usize>,
    #[serde(default)]
    pub text: Option<String>,
}

impl Collab {
    /// Answer an ask: stored once on the ask, then given to the asking Bot as a task.
    pub async fn answer_ask(
        &self,
        id: SessionMessageId,
        req: AnswerRequest,
    ) -> Result<SessionMessage, CollabError> {
        let line = self.store().read(|tx| tx.line(id))?;
        let Some(ask) = line.ask.clone() else {
            return Err(CollabError::invalid(format!("message {id} is not an ask")));
        };
        let answer = AskAnswer {
            options: req.options,
            text: req
                .text
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty()),
        };
        ask.check_answer(&answer).map_err(CollabError::Invalid)?;
        if ask.answer.is_some() {
            return Err(CollabError::conflict(
                "already_answered",
                format!("ask {id} is answered already"),
            ));
        }
        if ask.closed_at.is_some() {
            return Err(CollabError::conflict(
                "ask_closed",
                format!("the turn that asked {id} was stopped; it takes no answer"),
            ));
        }
        let thread = self
            .store()
            .read(|tx| tx.ask_thread(id))?
            .ok_or_else(|| CollabError::invalid(format!("ask {id} has no asking thread")))?;
        let text = format!(
            "Answer to your question \"{}\":\n{}",
            ask.question,
            ask.answer_text(&answer)
        );
        let session = self.store().read(|tx| tx.session(line.session_id))?;
        let text = if session.kind == SessionKind::Group {
            format!("[User in group \"{}\"] {text}", session.title)
        } else {
            text
        };
        let out = self.store().write(|tx| {
            match tx.answer_ask(id, &answer) {
                // The trigger that keeps answers: another answer got there first.
                Err(StoreError::Sql(e)) if e.message.contains("already_answered") => {
                    return Err(StoreError::Conflict(format!(
                        "ask {id} is answered already"
                    )));
                }
                other => other?,
            }
            crate::quotes::keep_answer(tx, id, &ask.answer_text(&answer))?;
            tx.deliver(
                thread,
                &Delivery::user_task(text.clone()).with_key(format!("ask:{}:answer", id.0)),
            )?;
            tx.clear_pause(thread)?;
            // Answering is the person's word to the Bot: it lifts what a line would (HOLD-L2).
            let (lifted, _) = crate::holds::lines::lift_by_person_act(tx, thread)?;
            Ok((tx.line(id)?, lifted))
        });
        let out = match out {
            Err(StoreError::Conflict(m)) => {
                return Err(CollabError::conflict("already_answered", m));
            }
            other => other?,
        };
        let (out, lifted) = out;
        self.drive_lifted(&lifted).await;
        if let Err(e) = self.engine().request_drive(thread, "inbox", false).await {
            tracing::warn!(thread = %thread, error = %e, "drive after an answer failed");
        }
        Ok(out)
    }
}
