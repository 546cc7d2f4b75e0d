//! Work question cards (END-22, WQ): a segment that ends `blocked` asks the person, as an ask
//! line where they will see it (WQ-1: the conversation it spoke in when the person is in it,
//! else where they last spoke about the job, the job's conversation, their direct with the
//! Bot), for what only they can give. Their answer —
//! `POST /v1/messages/:id/work-answer {body, request_id}` — is taken once (the same request
//! again answers as before), reaches the blocked work as priority-1 mail, ends its wait on the
//! person and wakes it.

use crate::asks::post_ask;
use crate::{Collab, CollabError};
use serde::Deserialize;
use troupe_core::conversation::{Ask, AskAnswer, SessionKind, SessionMessage};
use troupe_core::inbox::Delivery;
use troupe_core::notification::{NotificationKind, NotificationStatus};
use troupe_core::work_item::{PRIORITY_USER, WaitingOn, WorkState};
use troupe_core::{RunId, SessionId, SessionMessageId};
use troupe_store::{NewNotification, StoreError, Tx, WorkItemRecord};

/// WQ-1: where the person sees `item`'s card, asked in `asked_in`: the first open conversation
/// of theirs (not a Bot↔Bot direct, not archived) of — `asked_in`, where they last spoke about
/// the job, the job's home, the conversation a Bot↔Bot direct was opened from, their direct
/// with the Bot. With none of those, `asked_in` itself: the card is kept somewhere.
fn card_place(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
    asked_in: SessionId,
) -> Result<SessionId, StoreError> {
    let asked = tx.session(asked_in)?;
    let theirs =
        |s: &troupe_core::conversation::Session| s.kind != SessionKind::BotDirect && !s.archived;
    if theirs(&asked) {
        return Ok(asked_in);
    }
    // The rest are read only while none before is the person's: the usual card is posted
    // where it was asked.
    let pick = |s: Option<SessionId>| -> Result<Option<SessionId>, StoreError> {
        Ok(match s {
            Some(s) if theirs(&tx.session(s)?) => Some(s),
            _ => None,
        })
    };
    if let Some(plan) = item.plan_id {
        if let Some(s) = pick(tx.where_user_last_spoke_of(plan)?)? {
            return Ok(s);
        }
        if let Some(s) = pick(tx.plan(plan)?.home_session_id)? {
            return Ok(s);
        }
    }
    if let Some(s) = pick(asked.origin_session_id)? {
        return Ok(s);
    }
    Ok(pick(tx.user_direct_with(item.bot_id)?)?.unwrap_or(asked_in))
}

/// Post the card for `item`, blocked on `needs`.
pub(crate) fn post(
    tx: &mut Tx<'_>,
    item: &WorkItemRecord,
    session: SessionId,
    run: RunId,
    needs: &str,
) -> Result<SessionMessageId, StoreError> {
    let name = tx.bot(item.bot_id)?.name;
    let ask = Ask {
        question: format!("{name} needs from you: {}", needs.trim()),
        options: Vec::new(),
        multiple: false,
        answer: None,
        answered_at: None,
        closed_at: None,
        closed_why: None,
    };
    let session = card_place(tx, item, session)?;
    let line = post_ask(tx, session, item.bot_id, run, item.thread_id, ask)?;
    tx.create_work_question(line, item.id, needs.trim())?;
    // A later question of the same work supersedes the earlier one's notification (WQ-8).
    tx.close_work_notifications(
        item.id,
        &[NotificationKind::WaitingForAnswer],
        NotificationStatus::Voided,
        "superseded",
    )?;
    let job = match item.plan_id {
        Some(p) => Some(tx.plan(p)?.name),
        None => None,
    };
    tx.notify(&NewNotification {
        kind: NotificationKind::WaitingForAnswer,
        title: &NotificationKind::WaitingForAnswer.title(&name, job.as_deref()),
        body: needs.trim(),
        session_id: Some(session),
        plan_id: item.plan_id,
        ticket_id: item.ticket_id,
        work_item_id: Some(item.id),
        message_id: Some(line),
    })?;
    Ok(line)
}

/// `POST /v1/messages/:id/work-answer`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkAnswerRequest {
    pub body: String,
    /// The client's id for this answer: sending it again changes nothing.
    pub request_id: String,
}

enum Taken {
    Now(troupe_core::ThreadId, crate::holds::lift::AfterLift),
    Before,
}

impl Collab {
    pub async fn work_answer(
        &self,
        id: SessionMessageId,
        req: WorkAnswerRequest,
    ) -> Result<SessionMessage, CollabError> {
        let body = req.body.trim().to_string();
        if body.is_empty() {
            return Err(CollabError::invalid("body: must not be empty"));
        }
        let request = req.request_id.trim().to_string();
        if request.is_empty() || request.chars().count() > 200 {
            return Err(CollabError::invalid("request_id: 1 to 200 characters"));
        }
        let taken = self.store().write(|tx| {
            let line = tx.line(id)?;
            let Some(q) = tx.work_question(id)? else {
                return Ok(Err(CollabError::invalid(format!(
                    "message {id} is not a work question"
                ))));
            };
            if let Some(done) = &q.request_id {
                return Ok(if *done == request {
                    Ok(Taken::Before)
                } else {
                    Err(CollabError::conflict(
                        "already_answered",
                        format!("work question {id} is answered already"),
                    ))
                });
            }
            if let Some(ask) = line.ask.filter(|a| a.closed_at.is_some()) {
                return Ok(Err(match ask.closed_why.as_deref() {
                    Some("superseded") => CollabError::conflict(
                        "superseded",
                        format!(
                            "work question {id} takes no answer: the work went on without it \
                             (a later question, or a turn it took up another way); say it in \
                             the conversation instead"
                        ),
                    ),
                    Some(_) => CollabError::conflict(
                        "work_closed",
                        format!("the work that asked {id} is closed; it takes no answer"),
                    ),
                    None => CollabError::conflict(
                        "ask_closed",
                        format!("work question {id} was closed by a stop"),
                    ),
                }));
            }
            if tx.session(line.session_id)?.archived {
                return Ok(Err(CollabError::conflict(
                    "archived",
                    format!("work question {id} is in an archived conversation"),
                )));
            }
            let item = tx.work_item(q.work_item_id)?;
            if item.state == WorkState::Closed || tx.bot(item.bot_id)?.archived {
                return Ok(Err(CollabError::conflict(
                    "work_closed",
                    format!("the work that asked {id} is closed; it takes no answer"),
                )));
            }
            tx.answer_work_question(id, &request, &body)?;
            if let Some(n) = tx.open_notification_of_line(id)? {
                tx.close_notification(n.id, NotificationStatus::Resolved, "answered")?;
            }
            tx.answer_ask(
                id,
                &AskAnswer {
                    options: Vec::new(),
                    text: Some(body.clone()),
                },
            )?;
            // WQ-5: the words are the person's, kept as a quote of the job.
            crate::quotes::keep_answer(tx, id, &body)?;
            tx.deliver(
                item.thread_id,
                &Delivery::user_task(format!(
                    "The person answered what you needed ({}):\n{body}",
                    q.needs
                ))
                .with_key(format!("work_answer:{}", id.0)),
            )?;
            let session = line.session_id;
            tx.set_work_mail(item.id, session, PRIORITY_USER)?;
            if tx.live_segment_of(item.id)?.is_none() {
                tx.set_work_state(item.id, WorkState::Queued, None)?;
            } else if item.waiting_on == Some(WaitingOn::User) {
                tx.set_work_state(item.id, item.state, None)?;
            }
            tx.clear_pause(item.thread_id)?;
            // Answering is the person's word to the Bot: it lifts what a line to it would
            // (HOLD-L2, the dated rule over WQ-6's "only held").
            let (lifted, _) = crate::holds::lines::lift_by_person_act(tx, item.thread_id)?;
            tx.wake_after_commit(item.thread_id);
            Ok(Ok(Taken::Now(item.thread_id, lifted)))
        })??;
        if let Taken::Now(thread, lifted) = taken {
            self.drive_lifted(&lifted).await;
            if let Err(e) = self.engine().request_drive(thread, "inbox", false).await {
                tracing::warn!(thread = %thread, error = %e, "drive after a work answer failed");
            }
        }
        Ok(self.store().read(|tx| tx.line(id))?)
    }
}
