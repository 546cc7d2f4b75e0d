//! Who is in a conversation: adding and removing a group's Bots, the lead the person
//! confirms (GL-1…8), and each member's state as the page shows it.

use crate::threads::{ensure_thread, thread_of};
use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use troupe_core::conversation::{Author, LineKind, SessionKind};
use troupe_core::lead::{HandoffCount, SUGGESTION_WINDOW_MS, suggest_lead};
use troupe_core::pause::Paused;
use troupe_core::{BotId, RunId, SessionId};
use troupe_engine::StopMode;
use troupe_store::{NewLine, StoreError, Tx};

/// A member as a conversation shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemberView {
    pub bot_id: BotId,
    pub name: String,
    pub is_lead: bool,
    /// idle, thinking (a line for it is being read), running, or waiting_ask.
    pub state: String,
    /// Its running turn here, if any.
    pub turn_id: Option<RunId>,
    /// Why its work here will not go on by itself until the person's Continue or Abandon
    /// (`POST /v1/sessions/:id/continue?bot_id=`): a restart cut it off, its turn failed, …
    pub paused: Option<Paused>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddMember {
    pub bot_id: BotId,
}

/// `PUT /v1/sessions/:id/lead`: the person's confirmation (`bot_id: null` clears).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeadRequest {
    pub bot_id: Option<BotId>,
    #[serde(default)]
    pub confirmed: Option<bool>,
}

/// A suggestion from handoffs in the last 7 days; a hint, never applied.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeadSuggestion {
    pub bot_id: BotId,
    pub handoffs: u32,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HandoffView {
    pub bot_id: BotId,
    pub handoffs: u32,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeadView {
    pub lead: Option<BotId>,
    pub suggestion: Option<LeadSuggestion>,
    pub counts: Vec<HandoffView>,
}

/// A system line in a conversation, in the caller's transaction.
pub(crate) fn system_line(
    tx: &mut Tx<'_>,
    session: SessionId,
    body: String,
) -> Result<(), StoreError> {
    tx.insert_line(&NewLine {
        kind: LineKind::System,
        ..NewLine::plain(session, Author::System, body)
    })?;
    Ok(())
}

impl Collab {
    pub fn members(&self, id: SessionId) -> Result<Vec<MemberView>, CollabError> {
        let session_is_direct = self.store().read(|tx| tx.session(id))?.kind == SessionKind::Direct;
        let rows = self.store().read(|tx| {
            let rows = tx.members(id)?;
            // A person's line still being read: the Bots it would wake show "thinking".
            let unread = !tx.unrouted_lines_of(id)?.is_empty();
            let mut out = Vec::new();
            for r in rows.into_iter().filter(|r| r.left_at.is_none()) {
                let bot = tx.bot(r.bot_id)?;
                let thread = thread_of(tx, id, r.bot_id)?;
                let asking = tx.open_ask_of_bot_in(id, r.bot_id)?.is_some();
                let (turn, paused) = match thread {
                    Some(t) => {
                        let t = tx.thread(t)?;
                        (t.lease.holder, t.paused)
                    }
                    None => (None, None),
                };
                // Its work on a job speaking here counts as its turn here too.
                let turn = match turn {
                    Some(t) => Some(t),
                    None => tx
                        .live_segment_threads_in(id)?
                        .into_iter()
                        .filter_map(|t| tx.thread(t).ok())
                        .filter(|t| {
                            tx.work_item_of_thread(t.id)
                                .ok()
                                .flatten()
                                .is_some_and(|w| w.bot_id == r.bot_id)
                        })
                        .find_map(|t| t.lease.holder),
                };
                out.push((r, bot.name, turn, asking, unread, paused));
            }
            Ok(out)
        })?;
        Ok(rows
            .into_iter()
            .map(|(r, name, turn, asking, reading, paused)| {
                let state = if turn.is_some() {
                    "running"
                } else if asking {
                    "waiting_ask"
                } else if reading && (r.is_lead || session_is_direct) {
                    "thinking"
                } else {
                    "idle"
                };
                MemberView {
                    bot_id: r.bot_id,
                    name,
                    is_lead: r.is_lead,
                    state: state.into(),
                    turn_id: turn,
                    paused,
                }
            })
            .collect())
    }

    /// Add a Bot to a group; one already present is a no-op (answers false).
    pub fn add_member(&self, id: SessionId, bot: BotId) -> Result<bool, CollabError> {
        let session = self.store().read(|tx| tx.session(id))?;
        if session.kind != SessionKind::Group {
            return Err(CollabError::invalid(format!(
                "conversation {id} is a {} conversation; only groups take members",
                session.kind.as_str()
            )));
        }
        let bot = match self.bot(bot) {
            Err(CollabError::NotFound { id, .. }) => {
                return Err(CollabError::invalid(format!(
                    "bot_id: bot {id} does not exist"
                )));
            }
            other => other?,
        };
        if bot.archived {
            return Err(CollabError::invalid(format!(
                "bot_id: bot {} is archived",
                bot.id
            )));
        }
        let workspaces = self.workspaces.clone();
        Ok(self.store().write(|tx| {
            let added = tx.add_member(id, bot.id, "user")?;
            if added {
                ensure_thread(tx, &workspaces, &session, &bot, None)?;
                system_line(tx, id, format!("{} joined", bot.name))?;
            }
            Ok(added)
        })?)
    }

    /// A Bot leaves a group: its turn there ends, its queued lines there are dropped and its
    /// lead goes. The last Bot cannot leave.
    pub async fn remove_member(&self, id: SessionId, bot: BotId) -> Result<(), CollabError> {
        let session = self.store().read(|tx| tx.session(id))?;
        if session.kind != SessionKind::Group {
            return Err(CollabError::invalid(format!(
                "conversation {id} is a {} conversation; only a group's members can be removed",
                session.kind.as_str()
            )));
        }
        if !session.bot_ids.contains(&bot) {
            return Err(CollabError::NotFound {
                what: "member",
                id: bot.to_string(),
            });
        }
        if session.bot_ids.len() == 1 {
            return Err(CollabError::conflict(
                "last_member",
                format!("bot {bot} is the last Bot of conversation {id}"),
            ));
        }
        let thread = self.store().read(|tx| thread_of(tx, id, bot))?;
        let name = self.bot(bot)?.name;
        self.store().write(|tx| {
            tx.remove_member(id, bot)?;
            if let Some(t) = thread {
                let queued: Vec<_> = tx.inbox(t)?.into_iter().map(|i| i.id).collect();
                tx.drop_inbox_items(t, &queued)?;
                tx.close_asks_of_thread(t)?;
            }
            system_line(tx, id, format!("{name} left"))
        })?;
        if let Some(t) = thread
            && self.engine().is_running(t)
        {
            match self.engine().stop(t, StopMode::User).await {
                Ok(_) | Err(troupe_engine::EngineError::NotRunning(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    pub fn lead(&self, id: SessionId) -> Result<LeadView, CollabError> {
        let now = self.store().now();
        let (session, lead, counts, bots) = self.store().read(|tx| {
            let session = tx.session(id)?;
            let lead = tx.lead(id)?;
            let counts = tx.handoff_counts(id, now - SUGGESTION_WINDOW_MS)?;
            let bots = tx.bots(true)?;
            Ok((session, lead, counts, bots))
        })?;
        if session.kind != SessionKind::Group {
            return Err(CollabError::invalid(format!(
                "conversation {id} is not a group; only groups have a lead"
            )));
        }
        let eligible: Vec<BotId> = session
            .bot_ids
            .iter()
            .copied()
            .filter(|b| bots.iter().any(|x| x.id == *b && !x.archived))
            .collect();
        let counts: Vec<HandoffCount> = counts
            .into_iter()
            .map(|(bot_id, count)| HandoffCount { bot_id, count })
            .collect();
        let suggestion = suggest_lead(&counts, &eligible, lead).map(|c| LeadSuggestion {
            bot_id: c.bot_id,
            handoffs: c.count,
        });
        Ok(LeadView {
            lead,
            suggestion,
            counts: counts
                .into_iter()
                .map(|c| HandoffView {
                    bot_id: c.bot_id,
                    handoffs: c.count,
                })
                .collect(),
        })
    }

    /// Only the person's confirmation sets a lead (GL-1); an archived Bot cannot become one
    /// but an archived lead can be cleared (GL-6).
    pub fn set_lead(&self, id: SessionId, req: LeadRequest) -> Result<LeadView, CollabError> {
        if req.confirmed != Some(true) {
            return Err(CollabError::invalid(
                "confirmed: a lead is set only with confirmed: true",
            ));
        }
        let session = self.store().read(|tx| tx.session(id))?;
        if session.kind != SessionKind::Group {
            return Err(CollabError::invalid(format!(
                "conversation {id} is not a group; only groups have a lead"
            )));
        }
        if let Some(b) = req.bot_id {
            let bot = match self.bot(b) {
                Err(CollabError::NotFound { id, .. }) => {
                    return Err(CollabError::invalid(format!(
                        "bot_id: bot {id} does not exist"
                    )));
                }
                other => other?,
            };
            if !session.bot_ids.contains(&b) {
                return Err(CollabError::invalid(format!(
                    "bot_id: bot {b} is not a member of conversation {id}"
                )));
            }
            if bot.archived {
                return Err(CollabError::conflict(
                    "archived",
                    format!("bot {b} is archived and cannot lead"),
                ));
            }
        }
        self.store().write(|tx| tx.set_lead(id, req.bot_id))?;
        self.lead(id)
    }
}
