//! `POST /v1/boss/session/open` (digest §8.7, RB-6): the session Settings opens. Off → 409
//! `boss_disabled`. Else provisioning runs, then the first of: an account-routed runtime boss
//! session, an existing channel-less one, a new channel-less "Runtime Boss (local)" (briefed
//! only then). A channel-less session with no conversation yet, nothing queued and a model gets
//! one greeting kickoff: a system task keyed `boss-open:<session>` (so at most once) and a
//! drive; the queued briefing joins that turn. No model: no kickoff, no error. A channel
//! session never gets one.

use super::briefing;
use super::ensure::{boss_thread, create_boss_session, home_workspace};
use crate::{WorkflowError, Workflows};
use serde::Serialize;
use std::path::Path;
use troupe_channels::ChannelDef;
use troupe_core::SessionId;
use troupe_core::drive::RootState;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::runtime_boss::{ENDPOINT_CHAT, LOCAL_SESSION_TITLE};
use troupe_engine::ModelResolver;

/// The origin detail of the kickoff task.
pub const KICKOFF_ORIGIN: &str = "boss_open";

/// What the kickoff asks.
pub const KICKOFF_TEXT: &str = "[Runtime Boss] The person opened this session from Settings. \
Greet them in a line or two as their coordinator, say briefly what you can see from your \
briefing, and ask what they need.";

pub fn kickoff_key(session: SessionId) -> String {
    format!("boss-open:{}", session.0)
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Opened {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// A new channel-less session was made by this call.
    pub created: bool,
    /// The greeting kickoff was queued and its drive requested by this call.
    pub kickoff: bool,
}

impl Workflows {
    pub async fn open_runtime_boss(
        &self,
        data_dir: &Path,
        accounts: &[ChannelDef],
    ) -> Result<Opened, WorkflowError> {
        if !self.store().read(|tx| tx.runtime_settings())?.boss_mode {
            return Err(WorkflowError::conflict(
                "boss_disabled",
                "Runtime Boss Mode is off: turn experimental.boss_mode on first",
            ));
        }
        let provisioned = self.ensure_runtime_boss(data_dir, accounts)?;
        for a in &provisioned.accounts {
            if !self.store().read(|tx| tx.session(a.session_id))?.archived {
                return Ok(Opened {
                    session_id: a.session_id,
                    created: false,
                    kickoff: false,
                });
            }
        }
        let (session, created) = self.local_runtime_boss(data_dir)?;
        if created {
            briefing::brief(self, session)?;
        }
        let kickoff = self.kickoff(session).await?;
        Ok(Opened {
            session_id: session,
            created,
            kickoff,
        })
    }

    /// The oldest live channel-less runtime boss session, or a new one.
    fn local_runtime_boss(&self, data_dir: &Path) -> Result<(SessionId, bool), WorkflowError> {
        let bot = self.runtime_boss_bot()?;
        let home = home_workspace(data_dir);
        std::fs::create_dir_all(&home).map_err(|e| {
            WorkflowError::invalid(format!(
                "cannot create the home workspace {}: {e}",
                home.display()
            ))
        })?;
        Ok(self.store().write(|tx| {
            for row in tx.runtime_boss_sessions()? {
                if row.account.is_none() && !tx.session(row.session_id)?.archived {
                    return Ok((row.session_id, false));
                }
            }
            let s = create_boss_session(tx, &bot, LOCAL_SESSION_TITLE, &home)?;
            tx.insert_runtime_boss_session(s, None, ENDPOINT_CHAT)?;
            Ok((s, true))
        })?)
    }

    /// The greeting kickoff of a channel-less session, when the rules allow it.
    async fn kickoff(&self, session: SessionId) -> Result<bool, WorkflowError> {
        let (thread, agent, allowed) = self.store().read(|tx| {
            let thread = boss_thread(tx, session)?;
            let t = tx.thread(thread)?;
            let quiet = matches!(tx.root_state(thread)?, RootState::None)
                && !tx.inbox(thread)?.iter().any(|i| i.mode == InboxMode::Task);
            Ok((thread, t.agent, quiet))
        })?;
        if !allowed {
            return Ok(false);
        }
        // The Bot's model, else the default role's: none → skipped, silently.
        if self.collab().roles().resolve(&agent).is_err() {
            return Ok(false);
        }
        let delivered = self.store().write(|tx| {
            tx.deliver(
                thread,
                &Delivery {
                    mode: InboxMode::Task,
                    priority: Priority::USER,
                    origin: Origin::System(KICKOFF_ORIGIN.into()),
                    text: KICKOFF_TEXT.into(),
                    visible: true,
                    delivery_key: Some(kickoff_key(session)),
                    order_key: None,
                    defers_calls: false,
                },
            )
        })?;
        if !delivered.created {
            return Ok(false);
        }
        self.engine()
            .request_drive(thread, KICKOFF_ORIGIN, false)
            .await?;
        Ok(true)
    }
}
