//! Provisioning (digest §8.2, issue 18 item 14): while Boss Mode is on, every enabled channel
//! account has exactly one runtime boss session (RB-1) — in the home workspace, slot
//! `{boss, boss}`, interactive, talking with the `Runtime Boss` Bot — and each is briefed once
//! per identity (RB-2), with the re-enumeration reminder on the Agenda when an interval is set.
//! Off: nothing is made and the reminders are cancelled; the sessions are kept (RB-7).
//! Idempotent: a second run finds everything in place and writes nothing.

use super::{briefing, schedule};
use crate::slot::{BossSlot, WorkflowSlot};
use crate::{WorkflowError, Workflows};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use troupe_channels::ChannelDef;
use troupe_core::SessionId;
use troupe_core::boss::BossRole;
use troupe_core::conversation::{Bot, SessionKind};
use troupe_core::runtime_boss::{BOT_NAME, ENDPOINT_CHAT};
use troupe_core::thread::Interaction;
use troupe_store::{CONVERSATION, NewBot, NewThread, StoreError, Tx};

/// One provisioning at a time in this process: the check and the creation share one write,
/// and the unique `(account, scope_key)` index holds the rule across processes.
static ENSURE: Mutex<()> = Mutex::new(());

/// What the Bot is told about itself; the persona proper is injected per turn.
const BOT_PERSONA: &str = "You are the Runtime Boss: the person's standing coordinator across \
their sessions and projects.";

/// What one `ensure` did.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Provisioned {
    pub boss_mode: bool,
    /// Each enabled account with its runtime boss session.
    pub accounts: Vec<AccountSession>,
    /// Sessions made by this run.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub created: Vec<SessionId>,
    /// Sessions briefed (or re-briefed after a persona change) by this run.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub briefed: Vec<SessionId>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AccountSession {
    pub account: String,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
}

/// `<data dir>/workspaces/home`: where every runtime boss session works.
pub fn home_workspace(data_dir: &Path) -> PathBuf {
    data_dir.join("workspaces").join("home")
}

/// The slot of a runtime boss session.
pub fn boss_slot() -> serde_json::Value {
    WorkflowSlot::Boss(BossSlot {
        role: BossRole::Boss,
        worker_role: None,
        root_session_id: None,
        instructions: None,
    })
    .to_value()
}

impl Workflows {
    /// Make the runtime boss sessions agree with the settings and the accounts (see the module
    /// docs). `accounts` are the channel accounts configured; disabled ones are skipped.
    pub fn ensure_runtime_boss(
        &self,
        data_dir: &Path,
        accounts: &[ChannelDef],
    ) -> Result<Provisioned, WorkflowError> {
        let _one = ENSURE.lock().unwrap_or_else(|p| p.into_inner());
        let settings = self.store().read(|tx| tx.runtime_settings())?;
        let mut out = Provisioned {
            boss_mode: settings.boss_mode,
            ..Provisioned::default()
        };
        if !settings.boss_mode {
            // Routing reverts by itself (ingress reads the switch); the reminders stop.
            for row in self.store().read(|tx| tx.runtime_boss_sessions())? {
                schedule::clear(self, row.session_id)?;
            }
            return Ok(out);
        }
        let home = home_workspace(data_dir);
        std::fs::create_dir_all(&home).map_err(|e| {
            WorkflowError::invalid(format!(
                "cannot create the home workspace {}: {e}",
                home.display()
            ))
        })?;
        let enabled: Vec<&ChannelDef> = accounts.iter().filter(|a| a.enabled).collect();
        if enabled.is_empty() {
            self.refresh_local(&settings, &mut out)?;
            return Ok(out);
        }
        let bot = self.runtime_boss_bot()?;
        for def in enabled {
            let (session, created) = self.store().write(|tx| {
                if let Some(s) = tx.runtime_boss_session(&def.name)? {
                    promote(tx, s)?;
                    return Ok((s, false));
                }
                let s =
                    create_boss_session(tx, &bot, troupe_core::runtime_boss::SESSION_TITLE, &home)?;
                tx.insert_runtime_boss_session(s, Some(&def.name), ENDPOINT_CHAT)?;
                Ok((s, true))
            })?;
            if created {
                out.created.push(session);
            }
            out.accounts.push(AccountSession {
                account: def.name.clone(),
                session_id: session,
            });
            if self.store().read(|tx| tx.session(session))?.archived {
                continue;
            }
            if briefing::brief(self, session)? {
                out.briefed.push(session);
            }
            schedule::set(self, session, settings.briefing_interval_days)?;
        }
        self.refresh_local(&settings, &mut out)?;
        Ok(out)
    }

    /// Local sessions were briefed when made; a persona change re-briefs them, and their
    /// reminder follows the interval.
    fn refresh_local(
        &self,
        settings: &troupe_core::runtime_boss::RuntimeSettings,
        out: &mut Provisioned,
    ) -> Result<(), WorkflowError> {
        for row in self.store().read(|tx| tx.runtime_boss_sessions())? {
            if row.account.is_some() || row.briefings == 0 {
                continue;
            }
            if self.store().read(|tx| tx.session(row.session_id))?.archived {
                continue;
            }
            if briefing::brief(self, row.session_id)? {
                out.briefed.push(row.session_id);
            }
            schedule::set(self, row.session_id, settings.briefing_interval_days)?;
        }
        Ok(())
    }

    /// The `Runtime Boss` Bot: the live one of that name, made once.
    pub fn runtime_boss_bot(&self) -> Result<Bot, WorkflowError> {
        Ok(self.store().write(|tx| {
            let found = tx
                .bots(false)?
                .into_iter()
                .find(|b| b.name.eq_ignore_ascii_case(BOT_NAME));
            match found {
                Some(b) => Ok(b),
                None => tx.create_bot(&NewBot {
                    name: BOT_NAME.into(),
                    persona: BOT_PERSONA.into(),
                    endpoint: None,
                    scripted: false,
                }),
            }
        })?)
    }
}

/// A direct conversation with `bot` in `home`, interactive, its slot `{boss, boss}`: made in
/// the caller's write so the runtime boss row goes in with it.
pub(crate) fn create_boss_session(
    tx: &mut Tx<'_>,
    bot: &Bot,
    title: &str,
    home: &Path,
) -> Result<SessionId, StoreError> {
    let session = tx.create_session(SessionKind::Direct, title, &[bot.id])?;
    let thread = tx.create_thread(&NewThread {
        workspace_root: None,
        parent_id: None,
        title: title.into(),
        agent: troupe_collab::bot_binding(bot),
        workspace: home.display().to_string(),
        interaction: Interaction::Interactive,
    })?;
    tx.bind_thread(session.id, bot.id, thread.id, CONVERSATION)?;
    tx.set_workflow(thread.id, Some(&boss_slot()))?;
    Ok(session.id)
}

/// The conversation thread of a runtime boss session.
pub(crate) fn boss_thread(
    tx: &Tx<'_>,
    session: SessionId,
) -> Result<troupe_core::ThreadId, StoreError> {
    let s = tx.session(session)?;
    for bot in &s.bot_ids {
        if let Some(t) = tx.session_thread(session, *bot, CONVERSATION)? {
            return Ok(t);
        }
    }
    Err(StoreError::not_found("runtime boss thread", session))
}

/// An existing runtime boss session whose slot was changed (or cleared) gets `{boss, boss}`
/// back: it is promoted, never replaced.
fn promote(tx: &mut Tx<'_>, session: SessionId) -> Result<(), StoreError> {
    if tx.session(session)?.archived {
        return Ok(());
    }
    let thread = boss_thread(tx, session)?;
    let slot = boss_slot();
    let current = tx.thread(thread)?.workflow;
    let is_boss_root = matches!(
        WorkflowSlot::of(current.as_ref()),
        Some(WorkflowSlot::Boss(b)) if b.role == BossRole::Boss
    );
    if !is_boss_root {
        tx.set_workflow(thread, Some(&slot))?;
    }
    Ok(())
}
