//! Where a job lives, as the ball holder reads it (digest C §13, BH-2…BH-4): the
//! conversations the user spoke about it in, where a Bot last worked on it, and how many
//! turns each Bot had on it.

use crate::{Result, Tx, args};
use troupe_core::{BotId, PlanId, SessionId};

impl Tx<'_> {
    /// The person's lines filed under the job, oldest first, the latest `limit` (LJ1: the
    /// large-job reading weighs all of them).
    pub fn user_words_about(&self, plan: PlanId, limit: u32) -> Result<Vec<String>> {
        let mut words: Vec<String> = self.query_all(
            "SELECT m.body FROM message_filings f
             JOIN session_messages m ON m.id = f.message_id
             WHERE f.plan_id = ?1 AND m.author = 'user'
             GROUP BY m.id, m.body ORDER BY m.id DESC LIMIT ?2",
            args![plan.0, i64::from(limit)],
            |r| r.get(0),
        )?;
        words.reverse();
        Ok(words)
    }

    /// The conversations with a person's line filed under the job, the latest such line's
    /// first.
    pub fn sessions_user_spoke_about(&self, plan: PlanId) -> Result<Vec<SessionId>> {
        self.query_all(
            "SELECT m.session_id FROM message_filings f
             JOIN session_messages m ON m.id = f.message_id
             WHERE f.plan_id = ?1 AND m.author = 'user'
             GROUP BY m.session_id ORDER BY MAX(m.id) DESC",
            args![plan.0],
            |r| Ok(SessionId(r.get(0)?)),
        )
    }

    /// Where the Bot's latest turn on the job spoke, among conversations the user can see
    /// (not a Bot↔Bot direct) that are not archived.
    pub fn last_visible_session_on(&self, plan: PlanId, bot: BotId) -> Result<Option<SessionId>> {
        self.query_opt(
            "SELECT s.session_id FROM segments s
             JOIN work_items w ON w.id = s.work_item_id
             JOIN sessions c ON c.id = s.session_id
             WHERE w.plan_id = ?1 AND s.bot_id = ?2
               AND c.kind <> 'bot_direct' AND c.archived_at IS NULL
             ORDER BY s.run_id DESC LIMIT 1",
            args![plan.0, bot.0],
            |r| Ok(SessionId(r.get(0)?)),
        )
    }

    /// Turns (segments) per Bot on the job's work, most first; ties by Bot id.
    pub fn turns_per_bot_on(&self, plan: PlanId) -> Result<Vec<(BotId, i64)>> {
        self.query_all(
            "SELECT s.bot_id, COUNT(*) FROM segments s
             JOIN work_items w ON w.id = s.work_item_id
             WHERE w.plan_id = ?1
             GROUP BY s.bot_id ORDER BY COUNT(*) DESC, s.bot_id",
            args![plan.0],
            |r| Ok((BotId(r.get(0)?), r.get(1)?)),
        )
    }
}
