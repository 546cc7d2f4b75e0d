//! Conversations ("sessions" in the API) and their lines. In a direct conversation one Bot
//! works in one kernel thread; a person's line becomes a durable inbox delivery to it.

use crate::bots::binding_for;
use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use troupe_core::conversation::{
    Author, LineStatus, Session, SessionKind, SessionMessage, validate_line,
};
use troupe_core::effect::UnknownCall;
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::pause::Paused;
use troupe_core::thread::Interaction;
use troupe_core::{BotId, SessionId, SessionMessageId, ThreadId};
use troupe_engine::StopMode;
use troupe_store::{NewLine, NewThread, RunRecord};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewSessionRequest {
    pub kind: String,
    pub bot_ids: Vec<BotId>,
    #[serde(default)]
    pub title: Option<String>,
}

/// A conversation as the API shows it: the record plus whether its Bot is working or paused.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct SessionView {
    #[serde(flatten)]
    pub session: Session,
    pub running: bool,
    pub paused: Option<Paused>,
    /// The workflow slot of the Bot's thread, as stored (`{"kind": "plan"}`, …), or null.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub workflow: Option<serde_json::Value>,
    /// Why the Bot will not go on by itself, when something other than a pause holds it.
    pub blocked_by: Option<BlockedBy>,
}

/// What keeps a conversation's Bot from resuming by itself until the person acts.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct BlockedBy {
    /// `unknown_effect`: the last tool call was cut off and its outcome is unknown.
    pub reason: String,
    /// The call in question.
    pub call: UnknownCall,
    /// One sentence for the page.
    pub message: String,
}

const DIRECT: &str = "direct";

impl Collab {
    pub fn create_session(&self, req: NewSessionRequest) -> Result<SessionView, CollabError> {
        let kind = SessionKind::parse(&req.kind)
            .map_err(|m| CollabError::invalid(format!("kind: {m}")))?;
        if kind != SessionKind::Direct {
            return Err(CollabError::invalid(
                "kind: only direct conversations are supported so far",
            ));
        }
        if req.bot_ids.len() != 1 {
            return Err(CollabError::invalid(format!(
                "bot_ids: a direct conversation has exactly one Bot (got {})",
                req.bot_ids.len()
            )));
        }
        let bot = match self.bot(req.bot_ids[0]) {
            Err(CollabError::NotFound { id, .. }) => {
                return Err(CollabError::invalid(format!(
                    "bot_ids: bot {id} does not exist"
                )));
            }
            other => other?,
        };
        if bot.archived {
            return Err(CollabError::invalid(format!(
                "bot_ids: bot {} is archived",
                bot.id
            )));
        }
        let title = req
            .title
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| bot.name.clone());
        if title.chars().count() > 200 {
            return Err(CollabError::invalid("title must be at most 200 characters"));
        }
        self.create_direct(&bot, &title, None)
    }

    /// A direct conversation with `bot` working in `workspace` (an existing directory), or in a
    /// fresh directory of its own when none is given. Workflows use it to run work in a new
    /// conversation on the same files (a BlueprintLoop's `new` and `worktree` modes).
    pub fn create_session_in(
        &self,
        bot: BotId,
        title: &str,
        workspace: &std::path::Path,
    ) -> Result<SessionView, CollabError> {
        let bot = self.bot(bot)?;
        self.create_direct(&bot, title, Some(workspace))
    }

    fn create_direct(
        &self,
        bot: &troupe_core::conversation::Bot,
        title: &str,
        workspace: Option<&std::path::Path>,
    ) -> Result<SessionView, CollabError> {
        let title = title.to_string();
        let kind = SessionKind::Direct;
        let session = self.store().write(|tx| {
            let session = tx.create_session(kind, &title, &[bot.id])?;
            let dir = match workspace {
                Some(w) => w.to_path_buf(),
                None => self.workspaces.join(format!("session-{}", session.id.0)),
            };
            std::fs::create_dir_all(&dir).map_err(|e| {
                troupe_store::StoreError::Invalid(format!(
                    "cannot create workspace {}: {e}",
                    dir.display()
                ))
            })?;
            let thread = tx.create_thread(&NewThread {
                parent_id: None,
                title: title.clone(),
                agent: binding_for(bot),
                workspace: dir.display().to_string(),
                interaction: Interaction::Interactive,
            })?;
            tx.bind_thread(session.id, bot.id, thread.id, DIRECT)?;
            Ok(session)
        })?;
        self.session_view(session.id)
    }

    pub fn session_view(&self, id: SessionId) -> Result<SessionView, CollabError> {
        let (session, threads) = self
            .store()
            .read(|tx| Ok((tx.session(id)?, tx.session_threads(id)?)))?;
        let running = threads.iter().any(|t| self.engine().is_running(*t));
        let (paused, workflow, blocked_by) = match threads.first() {
            Some(t) => {
                let thread = self.store().read(|tx| tx.thread(*t))?;
                (
                    thread.paused,
                    thread.workflow,
                    self.blocked_by(*t, running)?,
                )
            }
            None => (None, None, None),
        };
        Ok(SessionView {
            session,
            running,
            paused,
            workflow,
            blocked_by,
        })
    }

    /// What keeps an idle thread from going on by itself, for the views that show it.
    pub fn blocked_by(
        &self,
        thread: ThreadId,
        running: bool,
    ) -> Result<Option<BlockedBy>, CollabError> {
        if running {
            return Ok(None);
        }
        let unknown = self.store().read(|tx| tx.blocking_unknown_effect(thread))?;
        Ok(unknown.map(|call| BlockedBy {
            reason: "unknown_effect".into(),
            message: format!(
                "The outcome of the last {} call is unknown (it was cut off); the Bot goes on \
                 when you write or continue.",
                call.tool
            ),
            call,
        }))
    }

    pub fn sessions(&self, limit: u32) -> Result<Vec<SessionView>, CollabError> {
        let ids: Vec<SessionId> = self
            .store()
            .read(|tx| tx.sessions(limit))?
            .into_iter()
            .map(|s| s.id)
            .collect();
        ids.into_iter().map(|id| self.session_view(id)).collect()
    }

    /// The thread the direct conversation's Bot works in.
    pub fn direct_thread(&self, id: SessionId) -> Result<ThreadId, CollabError> {
        let session = self.store().read(|tx| tx.session(id))?;
        let bot = *session
            .bot_ids
            .first()
            .ok_or_else(|| CollabError::invalid("the conversation has no Bot"))?;
        self.store()
            .read(|tx| tx.session_thread(id, bot, DIRECT))?
            .ok_or_else(|| {
                CollabError::invalid(format!("conversation {id} has no thread for its Bot"))
            })
    }

    /// A person's line: written to the conversation and delivered to the Bot's thread in one
    /// transaction (its delivery key makes a retry harmless), then the drive is asked to act.
    /// If the Bot is working, the line joins its running turn at the next step. Returns once
    /// the drive has acted (the Bot's turn has started or the line is queued in its inbox).
    pub async fn post_line(
        &self,
        id: SessionId,
        body: String,
        parent_id: Option<SessionMessageId>,
    ) -> Result<SessionMessage, CollabError> {
        validate_line(&body).map_err(|m| CollabError::invalid(format!("body: {m}")))?;
        let session = self.store().read(|tx| tx.session(id))?;
        if session.archived {
            return Err(CollabError::conflict(
                "archived",
                format!("conversation {id} is archived"),
            ));
        }
        if let Some(parent) = parent_id {
            let p = match self.store().read(|tx| tx.line(parent)) {
                Err(troupe_store::StoreError::NotFound { .. }) => {
                    return Err(CollabError::invalid(format!(
                        "parent_id: message {parent} does not exist"
                    )));
                }
                other => other?,
            };
            if p.session_id != id {
                return Err(CollabError::invalid(format!(
                    "parent_id: message {parent} is in another conversation"
                )));
            }
        }
        let thread = self.direct_thread(id)?;
        let mode = if self.engine().is_running(thread) {
            InboxMode::Steer
        } else {
            InboxMode::Task
        };
        let line = self.store().write(|tx| {
            let line = tx.insert_line(&NewLine {
                session_id: id,
                author: Author::User,
                bot_id: None,
                parent_id,
                body: body.clone(),
                thread_message_id: None,
                turn_id: None,
                status: LineStatus::Done,
            })?;
            let delivery = Delivery::user_task(body.clone())
                .with_mode(mode)
                .with_key(format!("line:{}", line.id.0));
            tx.deliver(thread, &delivery)?;
            // Sending is one way a paused conversation resumes.
            tx.clear_pause(thread)?;
            Ok(line)
        })?;
        // The line is durable already; a drive that fails here is retried by the next request
        // or at boot, so it is logged rather than turned into an error for the sender.
        if let Err(e) = self.engine().request_drive(thread, "inbox", false).await {
            tracing::warn!(thread = %thread, error = %e, "drive after a user line failed");
        }
        Ok(line)
    }

    pub fn lines(
        &self,
        id: SessionId,
        after: Option<SessionMessageId>,
        limit: u32,
    ) -> Result<Vec<SessionMessage>, CollabError> {
        if limit == 0 || limit > 1000 {
            return Err(CollabError::invalid("limit must be between 1 and 1000"));
        }
        Ok(self.store().read(|tx| {
            tx.session(id)?;
            tx.lines(id, after, limit)
        })?)
    }

    /// The Stop button of a direct: ends the running turn as the kernel's abort does.
    pub async fn stop(&self, id: SessionId) -> Result<RunRecord, CollabError> {
        let thread = self.direct_thread(id)?;
        match self.engine().stop(thread, StopMode::User).await {
            Ok(run) => Ok(run),
            Err(troupe_engine::EngineError::NotRunning(_)) => Err(CollabError::conflict(
                "not_running",
                format!("conversation {id} has no running turn"),
            )),
            Err(e) => Err(e.into()),
        }
    }
}
