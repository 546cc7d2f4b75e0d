//! A person's lines in a row (TURN-8…12, LR-2…4). A line is stored at once (routing
//! `reading`) and read at once; it is routed only once read, and only after the line ahead of
//! it in the conversation was routed — waiting at most 45 s from that line's arrival. Bot
//! lines never queue (they are routed as they are written). A line no thread has read yet
//! can be withdrawn. Lines left unrouted by a stop of the process are routed at the next
//! start, reusing their stored reading; delivery keys make that once.

use crate::routing::route_person_line;
use crate::{Collab, CollabError};
use futures::FutureExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use troupe_core::conversation::{Author, SessionKind, SessionMessage, validate_line};
use troupe_core::hold::control::{ControlHandling, control_handling};
use troupe_core::line_queue::{LineState, QueuedLine, ROUTE_WAIT_MS, resume_order};
use troupe_core::{BotId, SessionId, SessionMessageId};
use troupe_store::{NewLine, StoreError, Tx};

/// `POST /v1/messages/:id/insert`: what was done so the line is read now.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct InsertOutcome {
    /// A working Bot's step was cut: it reads the line at once.
    pub cut: bool,
    /// Bots whose own Stop was lifted: each opens a segment on the line.
    pub lifted: Vec<BotId>,
    /// Bots under a lasting stop (Stop all Bots, the board, a tools menu): they read the line
    /// once it is lifted.
    pub held: Vec<BotId>,
}

/// The routing turn of each conversation: held by the line being read and routed; the next
/// line waits for it (tokio's mutex hands it on in arrival order).
#[derive(Default)]
pub(crate) struct LineOrder(Mutex<HashMap<SessionId, Arc<tokio::sync::Mutex<()>>>>);

impl LineOrder {
    fn of(&self, session: SessionId) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(session).or_default().clone()
    }
}

impl Collab {
    /// A person's line: stored, read, then routed in its conversation's order. Returns once it
    /// is routed (its Bots' drives have acted) or withdrawn. Read and routed in the caller's
    /// task: dropping the future leaves the line to the next start, as a stop would.
    pub async fn post_line(
        &self,
        id: SessionId,
        body: String,
        parent_id: Option<SessionMessageId>,
    ) -> Result<SessionMessage, CollabError> {
        let line = self.store_line(id, body, parent_id)?;
        self.read_and_route(line.id).await?;
        Ok(self.store().read(|tx| tx.line(line.id))?)
    }

    /// A person's line, stored (routing `reading`) and returned at once: it is read and routed
    /// on a task of its own, so neither a slow reader nor a client that goes away holds or
    /// cancels it (a stop of the process leaves it to `resume_lines`).
    pub fn accept_line(
        &self,
        id: SessionId,
        body: String,
        parent_id: Option<SessionMessageId>,
    ) -> Result<SessionMessage, CollabError> {
        let line = self.store_line(id, body, parent_id)?;
        let me = self.clone();
        let line_id = line.id;
        tokio::spawn(async move {
            if let Err(e) = me.read_and_route(line_id).await {
                tracing::warn!(line = %line_id, error = %e, "reading or routing a line failed; it is routed again at the next start");
            }
        });
        Ok(line)
    }

    /// The line checked and stored, its routing `reading`.
    fn store_line(
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
        if session.kind == SessionKind::BotDirect {
            return Err(CollabError::conflict(
                "not_a_member",
                format!(
                    "conversation {id} is a direct between two Bots; you can read it but not post"
                ),
            ));
        }
        if let Some(parent) = parent_id {
            let p = match self.store().read(|tx| tx.line(parent)) {
                Err(StoreError::NotFound { .. }) => {
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
        Ok(self.store().write(|tx| {
            tx.insert_line(&NewLine {
                parent_id,
                routing: Some("reading"),
                ..NewLine::plain(id, Author::User, body.clone())
            })
        })?)
    }

    /// Read the line (at once) and route it when its turn comes.
    async fn read_and_route(&self, id: SessionMessageId) -> Result<(), CollabError> {
        let line = self.store().read(|tx| tx.line(id))?;
        let order = self.line_order().of(line.session_id);
        let turn = order.lock_owned();
        tokio::pin!(turn);
        // Polled once now, so this line takes its place in the queue before it is read.
        let mut guard = (&mut turn).now_or_never();
        // Meaning and filing are read at once; routing waits for the slower (LR-2).
        let (reading, filing) = tokio::join!(
            self.read_user_line_unsaved(id),
            self.read_filing_unsaved(id)
        );
        // A failed reading is read by the word lists; only the store failing leaves the line
        // for the next start.
        let (reading, user_unsaved) = reading?;
        let (_, filing_unsaved) = filing?;
        let mut unsaved = Unsaved {
            user: user_unsaved,
            filing: filing_unsaved,
        };
        let stop =
            control_handling(&reading.reading, reading.by_model) == ControlHandling::ExecuteStop;
        // Readings wait for the routing write only when nothing else comes first: a stop is
        // carried out (and a line ahead waited for) with its readings already stored.
        if stop || guard.is_none() {
            self.store().write(|tx| unsaved.save(tx))?;
            unsaved = Unsaved::default();
        }
        // A pure stop is carried out now, ahead of the lines still waiting (CL-2).
        if stop {
            let stored = self.read_user_line(id).await?;
            if self.execute_stop(&line, &stored).await?.is_some() {
                return Ok(());
            }
        }
        if guard.is_none() {
            guard = (&mut turn).now_or_never();
        }
        if guard.is_none() && !self.engine().is_draining() {
            self.store().write(|tx| tx.set_line_routing(id, "queued"))?;
            let left = self.wait_left(&line)?;
            guard = match tokio::time::timeout(left, &mut turn).await {
                Ok(g) => Some(g),
                Err(_) => {
                    tracing::info!(line = %id, "routed without waiting longer for the line ahead");
                    None
                }
            };
        }
        self.route_line(id, &unsaved).await?;
        drop(guard);
        Ok(())
    }

    /// How much longer a line may wait for the line ahead: 45 s from that line's arrival.
    fn wait_left(&self, line: &SessionMessage) -> Result<Duration, CollabError> {
        let ahead = self.store().read(|tx| {
            let ids = tx.unrouted_lines_of(line.session_id)?;
            ids.into_iter()
                .filter(|l| *l < line.id)
                .min()
                .map(|l| tx.line(l))
                .transpose()
        })?;
        let Some(ahead) = ahead else {
            return Ok(Duration::ZERO);
        };
        let left = (ahead.created_at + ROUTE_WAIT_MS - self.store().now()).max(0);
        Ok(Duration::from_millis(left as u64))
    }

    /// Deliver a read line to whoever it is for (unless it was withdrawn meanwhile), then act
    /// on it: drive the Bots it woke, ask for judgements where nobody was named and no lead is.
    async fn route_line(&self, id: SessionMessageId, unsaved: &Unsaved) -> Result<(), CollabError> {
        let line = self.store().read(|tx| tx.line(id))?;
        if !matches!(line.routing.as_deref(), Some("reading" | "queued")) {
            self.store().write(|tx| unsaved.save(tx))?;
            return Ok(());
        }
        let workspace = self.workspace_of_line(&line)?;
        let routed = self.store().write(|tx| {
            unsaved.save(tx)?;
            // Withdrawn (or routed by another caller) since it was read: nothing to do.
            let now = tx.line(id)?;
            if !matches!(now.routing.as_deref(), Some("reading" | "queued")) {
                return Ok(None);
            }
            let routed = route_person_line(tx, &workspace, &now)?;
            // A complaint sends its work back with the line (CP3), once it is filed.
            crate::quality::complaint_on_routed(tx, &now)?;
            // Shown hand-overs the line objects to go back the same way (UW3, LR-8).
            crate::submissions::user_word::objected_on_routed(tx, &now)?;
            // Sending is one way a paused conversation resumes.
            for t in &routed.woke {
                tx.clear_pause(*t)?;
            }
            Ok(Some(routed))
        })?;
        let Some(routed) = routed else {
            return Ok(());
        };
        // What the line let through is approved by its word once its gates rerun (UW2).
        self.let_through_by_line(id).await;
        // An unread job the line is filed under is read for its size, off the line's path (LJ1).
        let me = self.clone();
        tokio::spawn(async move { me.read_jobs_of_line(id).await });
        // The line is durable already; a drive that fails here is retried by the next request
        // or at boot, so it is logged rather than turned into an error for the sender.
        for thread in &routed.woke {
            if let Err(e) = self.engine().request_drive(*thread, "inbox", false).await {
                tracing::warn!(thread = %thread, error = %e, "drive after a user line failed");
            }
        }
        self.drive_reopened(&routed.reopened).await;
        if !routed.judge.is_empty() {
            let me = self.clone();
            tokio::spawn(async move {
                match me.judge_line(id, routed.judge).await {
                    Ok(woke) => {
                        for t in woke {
                            let _ = me.engine().request_drive(t, "inbox", false).await;
                        }
                    }
                    Err(e) => tracing::warn!(line = %id, error = %e, "judging a line failed"),
                }
            });
        }
        Ok(())
    }

    /// Route the lines a stop of the process left unrouted, reusing their stored readings (or
    /// reading them now). Run once at start. A line read as only a stop skips the queue here
    /// too: it is carried out before the lines ahead of it reach any Bot (LR-3); the rest go
    /// oldest first.
    pub async fn resume_lines(&self) -> Result<usize, CollabError> {
        let lines = self.store().read(|tx| tx.unrouted_lines())?;
        let mut queued = Vec::with_capacity(lines.len());
        for (_, id) in &lines {
            let line = self.store().read(|tx| tx.line(*id))?;
            let reading = self.read_user_line(*id).await?;
            queued.push(QueuedLine {
                id: *id,
                state: LineState::parse(line.routing.as_deref().unwrap_or("reading"))
                    .map_err(CollabError::invalid)?,
                arrived_at: line.created_at,
                read: true,
                started_at: None,
                only_stop: control_handling(&reading.reading, reading.by_model)
                    == ControlHandling::ExecuteStop,
            });
        }
        for id in resume_order(&queued) {
            self.read_and_route(id).await?;
        }
        Ok(lines.len())
    }

    pub fn line(&self, id: SessionMessageId) -> Result<SessionMessage, CollabError> {
        Ok(self.store().read(|tx| tx.line(id))?)
    }

    /// Have the Bots that hold this line unread read it now (UQ-18): a working one's step in
    /// progress is cut (`Engine::cut_step`); one held by the person's own Stop has that Stop
    /// lifted, as the person's word on its work, and opens a segment on the line. A Bot under a
    /// lasting stop is left as it is and named in `held`. Nothing to cut and nothing lifted →
    /// `cut: false`, `lifted: []`: the Bots read it at their next step.
    pub async fn insert_line_now(
        &self,
        id: SessionMessageId,
    ) -> Result<InsertOutcome, CollabError> {
        let line = self.store().read(|tx| tx.line(id))?;
        if line.author != Author::User {
            return Err(CollabError::invalid(format!(
                "message {id} is not a person's line"
            )));
        }
        let waiting: Vec<(troupe_core::ThreadId, BotId, Option<bool>)> =
            self.store().read(|tx| {
                let mut out = Vec::new();
                for d in tx.line_deliveries(id)? {
                    let key = crate::routing::line_key(id, d.bot_id);
                    if !tx.delivery_consumed(d.thread_id, &key)? {
                        let frees = crate::holds::lines::act_would_free(tx, d.thread_id)?;
                        out.push((d.thread_id, d.bot_id, frees));
                    }
                }
                Ok(out)
            })?;
        let mut out = InsertOutcome::default();
        for (thread, bot, frees) in waiting {
            match frees {
                None => out.cut |= self.engine().cut_step(thread),
                Some(false) => out.held.push(bot),
                Some(true) => {
                    let (after, still) = self
                        .store()
                        .write(|tx| crate::holds::lines::lift_by_person_act(tx, thread))?;
                    self.drive_lifted(&after).await;
                    if still.is_empty() {
                        out.lifted.push(bot);
                    } else {
                        out.held.push(bot);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Take back a line no Bot has read yet: it leaves every Bot's inbox (so no transcript
    /// will hold it) and is marked withdrawn. Read by any thread already → 409 `already_read`.
    pub fn withdraw_line(&self, id: SessionMessageId) -> Result<SessionMessage, CollabError> {
        let line = self.store().read(|tx| tx.line(id))?;
        if line.author != Author::User {
            return Err(CollabError::invalid(format!(
                "message {id} is not a person's line"
            )));
        }
        if line.routing.as_deref() == Some("withdrawn") {
            return Ok(line);
        }
        let out = self.store().write(|tx| {
            let key = |bot: troupe_core::BotId| crate::routing::line_key(id, bot);
            let mut drop = Vec::new();
            for t in tx.session_threads(line.session_id)? {
                let Some((_, bot)) = tx.thread_session(t)? else {
                    continue;
                };
                if tx.delivery_consumed(t, &key(bot))? {
                    return Err(StoreError::Conflict(format!(
                        "already_read: a Bot has read message {id} already"
                    )));
                }
                let items: Vec<_> = tx
                    .inbox(t)?
                    .into_iter()
                    .filter(|i| i.delivery_key.as_deref() == Some(key(bot).as_str()))
                    .map(|i| i.id)
                    .collect();
                drop.push((t, items));
            }
            for (t, items) in drop {
                tx.drop_inbox_items(t, &items)?;
            }
            tx.set_line_routing(id, "withdrawn")?;
            // UQ-17: words taken back are erased from the quotes too.
            tx.erase_line_quotes(id)?;
            tx.erase_requirement_words(id)?;
            tx.line(id)
        });
        match out {
            Err(StoreError::Conflict(m)) if m.starts_with("already_read") => {
                Err(CollabError::conflict("already_read", m))
            }
            other => Ok(other?),
        }
    }
}

/// A line's readings not stored yet; they go into the line's routing write.
#[derive(Default)]
struct Unsaved {
    user: Option<crate::reader::UnsavedUserReading>,
    filing: Option<crate::reader::UnsavedFiling>,
}

impl Unsaved {
    fn save(&self, tx: &mut Tx<'_>) -> Result<(), StoreError> {
        if let Some(u) = &self.user {
            u.save(tx)?;
        }
        if let Some(f) = &self.filing {
            f.save(tx)?;
        }
        Ok(())
    }
}
