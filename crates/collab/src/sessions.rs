//! Conversations ("sessions" in the API) and their lines. In a direct conversation one Bot
//! works in one kernel thread; a person's line becomes a durable inbox delivery to it.

use crate::threads::ensure_thread;
use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use troupe_core::conversation::{Session, SessionKind, SessionMessage};
use troupe_core::effect::UnknownCall;
use troupe_core::pause::Paused;
use troupe_core::{BotId, SessionId, SessionMessageId, ThreadId};
use troupe_engine::StopMode;
use troupe_store::{CONVERSATION, RunRecord};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewSessionRequest {
    pub kind: String,
    pub bot_ids: Vec<BotId>,
    #[serde(default)]
    pub title: Option<String>,
    /// The folder its Bots work in: an absolute path (or `~/…`) to an existing directory on the
    /// daemon's machine, e.g. a project's checkout. Without it, a fresh folder of its own under
    /// the data dir.
    #[serde(default)]
    pub workspace: Option<String>,
}

/// A conversation as the API shows it: the record plus whether its Bot is working or paused.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct SessionView {
    #[serde(flatten)]
    pub session: Session,
    pub running: bool,
    /// Why a direct's Bot will not go on by itself until Continue or Abandon (a restart
    /// interrupted it, its turn failed, …); in a group, null: each member has its own.
    pub paused: Option<Paused>,
    /// The workflow slot of the Bot's thread, as stored (`{"kind": "plan"}`, …), or null.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub workflow: Option<serde_json::Value>,
    /// Why a direct's Bot will not go on by itself, when something other than a pause holds it.
    pub blocked_by: Option<BlockedBy>,
    /// The Bots here now, with the lead and what each is doing.
    pub members: Vec<crate::members::MemberView>,
    /// The folder its Bots work in (their files and shell commands start there).
    pub workspace: String,
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

impl Collab {
    pub fn create_session(&self, req: NewSessionRequest) -> Result<SessionView, CollabError> {
        let kind = SessionKind::parse(&req.kind)
            .map_err(|m| CollabError::invalid(format!("kind: {m}")))?;
        let bots = self.live_bots_for(&req.bot_ids)?;
        match kind {
            SessionKind::BotDirect => Err(CollabError::invalid(
                "kind: a Bot↔Bot direct is opened by a Bot (create_direct), not through the API",
            )),
            SessionKind::Direct if bots.len() != 1 => Err(CollabError::invalid(format!(
                "bot_ids: a direct conversation has exactly one Bot (got {})",
                bots.len()
            ))),
            SessionKind::Group if bots.is_empty() => Err(CollabError::invalid(
                "bot_ids: a group needs at least one Bot",
            )),
            _ => {
                let title = req
                    .title
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty())
                    .unwrap_or_else(|| {
                        bots.iter()
                            .map(|b| b.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    });
                if title.chars().count() > 200 {
                    return Err(CollabError::invalid("title must be at most 200 characters"));
                }
                let workspace = req
                    .workspace
                    .as_deref()
                    .map(|w| {
                        let dir = crate::workspace_dir::chosen_workspace(
                            w,
                            crate::workspace_dir::home_dir().as_deref(),
                        )?;
                        crate::workspace_dir::outside_daemon_data(&dir, &self.workspaces)?;
                        Ok::<_, String>(dir)
                    })
                    .transpose()
                    .map_err(|m| CollabError::invalid(format!("workspace: {m}")))?;
                self.create_with(kind, &bots, &title, workspace.as_deref())
            }
        }
    }

    /// The Bots named, each existing, live and named once.
    fn live_bots_for(
        &self,
        ids: &[BotId],
    ) -> Result<Vec<troupe_core::conversation::Bot>, CollabError> {
        let mut out: Vec<troupe_core::conversation::Bot> = Vec::new();
        for id in ids {
            let bot = match self.bot(*id) {
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
            if out.iter().any(|b| b.id == bot.id) {
                return Err(CollabError::invalid(format!(
                    "bot_ids: bot {} is named twice",
                    bot.id
                )));
            }
            out.push(bot);
        }
        Ok(out)
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
        self.create_with(SessionKind::Direct, &[bot], title, Some(workspace))
    }

    /// A direct conversation whose thread is a child of `parent` and unattended, with its
    /// slot set in the same write (a Boss worker; the workflow layer decides the slot).
    pub fn create_child_session(
        &self,
        bot: BotId,
        title: &str,
        workspace: Option<&std::path::Path>,
        parent: ThreadId,
        slot: &serde_json::Value,
    ) -> Result<SessionView, CollabError> {
        let bot = self.bot(bot)?;
        let session = self.store().write(|tx| {
            // A worker shares its parent's files unless given a directory of its own.
            let dir = match workspace {
                Some(d) => d.to_path_buf(),
                None => std::path::PathBuf::from(tx.thread(parent)?.workspace),
            };
            create_child_conversation(tx, &bot, title, &dir, parent, slot)
        })?;
        self.session_view(session.id)
    }

    fn create_with(
        &self,
        kind: SessionKind,
        bots: &[troupe_core::conversation::Bot],
        title: &str,
        workspace: Option<&std::path::Path>,
    ) -> Result<SessionView, CollabError> {
        let ids: Vec<BotId> = bots.iter().map(|b| b.id).collect();
        let session = self.store().write(|tx| {
            let session = tx.create_session(kind, title, &ids)?;
            for bot in bots {
                ensure_thread(tx, &self.workspaces, &session, bot, workspace)?;
            }
            Ok(session)
        })?;
        self.session_view(session.id)
    }

    pub fn session_view(&self, id: SessionId) -> Result<SessionView, CollabError> {
        let session = self.live_conversation(id)?;
        let (threads, speaking) = self
            .store()
            .read(|tx| Ok((tx.session_threads(id)?, tx.live_segment_threads_in(id)?)))?;
        // Work on a job that speaks here (a desk moved it to the job's own thread) is this
        // conversation's running turn too, as Stop and the members' states already count it.
        let running = threads.iter().any(|t| self.engine().is_running(*t))
            || speaking.iter().any(|t| self.engine().is_running(*t));
        // A person's direct has one Bot, whose pause is the conversation's; in a group each
        // member's is on the member (`members[].paused`), not the first thread's.
        let one_bot = session.kind == SessionKind::Direct;
        let (paused, workflow, blocked_by) = match threads.first().filter(|_| one_bot) {
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
        let members = self.members(id)?;
        let workspace = self.session_workspace(&session)?.display().to_string();
        Ok(SessionView {
            session,
            running,
            paused,
            workflow,
            blocked_by,
            members,
            workspace,
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
        if session.kind != SessionKind::Direct {
            return Err(CollabError::invalid(format!(
                "conversation {id} is a {} conversation; workflows and this control work in direct \
                 conversations with one Bot",
                session.kind.as_str()
            )));
        }
        let bot = *session
            .bot_ids
            .first()
            .ok_or_else(|| CollabError::invalid("the conversation has no Bot"))?;
        self.store()
            .read(|tx| tx.session_thread(id, bot, CONVERSATION))?
            .ok_or_else(|| {
                CollabError::invalid(format!("conversation {id} has no thread for its Bot"))
            })
    }

    /// The thread a conversation's Continue and Abandon act on: a direct's Bot's; in a group
    /// or a Bot↔Bot direct, the named member's (each member's work pauses on its own).
    pub fn control_thread(
        &self,
        id: SessionId,
        bot: Option<BotId>,
    ) -> Result<ThreadId, CollabError> {
        let session = self.store().read(|tx| tx.session(id))?;
        if session.kind == SessionKind::Direct {
            if let Some(b) = bot
                && session.bot_ids.first() != Some(&b)
            {
                return Err(CollabError::invalid(format!(
                    "bot_id: Bot {b} is not the Bot of direct conversation {id}"
                )));
            }
            return self.direct_thread(id);
        }
        let Some(bot) = bot else {
            return Err(CollabError::invalid(format!(
                "bot_id: conversation {id} is a {} conversation; say whose work (bot_id, a member)",
                session.kind.as_str()
            )));
        };
        let (present, thread) = self.store().read(|tx| {
            let present = tx
                .members(id)?
                .iter()
                .any(|m| m.bot_id == bot && m.left_at.is_none());
            Ok((present, tx.session_thread(id, bot, CONVERSATION)?))
        })?;
        if !present {
            return Err(CollabError::invalid(format!(
                "bot_id: Bot {bot} is not a member of conversation {id}"
            )));
        }
        thread.ok_or_else(|| {
            CollabError::invalid(format!("Bot {bot} has no work in conversation {id} yet"))
        })
    }

    /// The directory a conversation's Bots work in: where its threads are, else its own.
    pub(crate) fn session_workspace(
        &self,
        session: &troupe_core::conversation::Session,
    ) -> Result<std::path::PathBuf, CollabError> {
        Ok(self
            .store()
            .read(|tx| crate::threads::workspace_of(tx, &self.workspaces, session))?)
    }

    pub(crate) fn workspace_of_line(
        &self,
        line: &SessionMessage,
    ) -> Result<std::path::PathBuf, CollabError> {
        let session = self.store().read(|tx| tx.session(line.session_id))?;
        self.session_workspace(&session)
    }

    /// Who said a line, as Bots read it.
    pub(crate) fn speaker_name(&self, line: &SessionMessage) -> Result<String, CollabError> {
        Ok(self.store().read(|tx| crate::routing::speaker(tx, line))?)
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
        self.live_conversation(id)?;
        Ok(self.store().read(|tx| tx.lines(id, after, limit))?)
    }

    /// The Stop button: ends every running turn in the conversation as the kernel's abort
    /// does (the first stopped is answered), and closes the asks its Bots wait on.
    pub async fn stop(&self, id: SessionId) -> Result<RunRecord, CollabError> {
        let stopped = self.stop_turns(id, None).await?;
        stopped.into_iter().next().ok_or_else(|| {
            CollabError::conflict(
                "not_running",
                format!("conversation {id} has no running turn"),
            )
        })
    }

    /// Stop one turn of the conversation (`turn`) or all of them; the runs stopped.
    pub async fn stop_turns(
        &self,
        id: SessionId,
        turn: Option<troupe_core::RunId>,
    ) -> Result<Vec<RunRecord>, CollabError> {
        // Each thread with a running turn, or whose Bot waits on its ask (the turn that asked).
        let threads = self.store().read(|tx| {
            tx.session(id)?;
            let mut out = Vec::new();
            // Its Bots' threads here, and the work on jobs speaking here from threads of their
            // own (until holds exist, Stop ends every live segment speaking in the conversation).
            let mut threads = tx.session_threads(id)?;
            for t in tx.live_segment_threads_in(id)? {
                if !threads.contains(&t) {
                    threads.push(t);
                }
            }
            for t in threads {
                let holder = tx.thread(t)?.lease.holder;
                let asked = match tx.open_ask_of_thread(t)? {
                    Some(ask) => tx.line(ask)?.turn_id,
                    None => None,
                };
                if turn.is_none() || holder == turn || (asked.is_some() && asked == turn) {
                    out.push((t, asked));
                }
            }
            Ok(out)
        })?;
        let mut stopped = Vec::new();
        for (thread, asked) in threads {
            self.store().write(|tx| tx.close_asks_of_thread(thread))?;
            match self.engine().stop(thread, StopMode::User).await {
                Ok(run) => stopped.push(run),
                // Nothing ran, but the Stop ended the wait on the ask: that turn is what stopped.
                Err(troupe_engine::EngineError::NotRunning(_)) => {
                    if let Some(run) = asked {
                        stopped.push(self.store().read(|tx| tx.run(run))?);
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(stopped)
    }
}

/// A direct conversation with `bot` whose thread is a child of `parent`, unattended, working in
/// `dir`, with `slot` set — one write, for a layer that creates conversations from a tool call.
pub fn create_child_conversation(
    tx: &mut troupe_store::Tx<'_>,
    bot: &troupe_core::conversation::Bot,
    title: &str,
    dir: &std::path::Path,
    parent: ThreadId,
    slot: &serde_json::Value,
) -> Result<Session, troupe_store::StoreError> {
    if bot.archived {
        return Err(troupe_store::StoreError::Invalid(format!(
            "Bot {} is archived",
            bot.name
        )));
    }
    let session = tx.create_session(SessionKind::Direct, title, &[bot.id])?;
    let thread = crate::threads::create_child_thread(tx, &session, bot, dir, parent)?;
    tx.set_workflow(thread, Some(slot))?;
    Ok(session)
}
