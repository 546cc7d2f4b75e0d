//! Runtime Boss rows (issue 18 item 14): the runtime boss sessions, one per enabled channel
//! account (RB-1) plus channel-less local ones, and the Runtime-domain settings, stored as
//! `app_settings` rows under `experimental.boss_*`.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use troupe_core::SessionId;
use troupe_core::runtime_boss::{RuntimeSettings, RuntimeSettingsPatch, SCOPE_KEY, keys};

/// One runtime boss session.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuntimeBossSession {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// The channel account it is routed from; `None`: a channel-less local session.
    pub account: Option<String>,
    pub scope_key: String,
    pub chat_id: Option<String>,
    /// The identity fingerprint last briefed, and how many briefings were sent.
    pub briefed_identity: Option<String>,
    pub briefings: i64,
    pub created_at: i64,
}

const COLUMNS: &str =
    "session_id, account, scope_key, chat_id, briefed_identity, briefings, created_at";

fn row(r: &crate::db::Row) -> Result<RuntimeBossSession> {
    Ok(RuntimeBossSession {
        session_id: SessionId(r.get(0)?),
        account: r.get(1)?,
        scope_key: r.get(2)?,
        chat_id: r.get(3)?,
        briefed_identity: r.get(4)?,
        briefings: r.get(5)?,
        created_at: r.get(6)?,
    })
}

impl Tx<'_> {
    /// The runtime boss session routed from `account` (scope `boss`), if one was made.
    pub fn runtime_boss_session(&self, account: &str) -> Result<Option<SessionId>> {
        self.query_opt(
            "SELECT session_id FROM runtime_boss_sessions WHERE account = ?1 AND scope_key = ?2",
            args![account, SCOPE_KEY],
            |r| Ok(SessionId(r.get(0)?)),
        )
    }

    /// Whether `session` is a runtime boss session (channel-routed or local).
    pub fn is_runtime_boss_session(&self, session: SessionId) -> Result<bool> {
        Ok(self.runtime_boss_row(session)?.is_some())
    }

    /// One runtime boss session's row.
    pub fn runtime_boss_row(&self, session: SessionId) -> Result<Option<RuntimeBossSession>> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM runtime_boss_sessions WHERE session_id = ?1"),
            args![session.0],
            row,
        )
    }

    /// Every runtime boss session, oldest first (archived ones too: RB-7 keeps them).
    pub fn runtime_boss_sessions(&self) -> Result<Vec<RuntimeBossSession>> {
        self.query_all(
            &format!("SELECT {COLUMNS} FROM runtime_boss_sessions ORDER BY session_id"),
            args![],
            row,
        )
    }

    /// Mark `session` a runtime boss session, routed from `account` (`None`: channel-less)
    /// with the endpoint chat `chat_id` (the sentinel "boss"). A second session for the same
    /// account is refused by the unique index (RB-1).
    pub fn insert_runtime_boss_session(
        &mut self,
        session: SessionId,
        account: Option<&str>,
        chat_id: &str,
    ) -> Result<()> {
        if account.is_some_and(|a| a.trim().is_empty()) {
            return Err(StoreError::Invalid(
                "a runtime boss account is empty".into(),
            ));
        }
        self.exec(
            "INSERT INTO runtime_boss_sessions (session_id, account, scope_key, chat_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            args![session.0, account, SCOPE_KEY, chat_id, self.now],
        )?;
        Ok(())
    }

    /// Record that `session` was briefed with the identity `fingerprint`; answers the number
    /// of briefings sent so far, this one included.
    pub fn record_runtime_boss_briefing(
        &mut self,
        session: SessionId,
        fingerprint: &str,
    ) -> Result<i64> {
        let n = self.exec(
            "UPDATE runtime_boss_sessions SET briefed_identity = ?2, briefings = briefings + 1
             WHERE session_id = ?1",
            args![session.0, fingerprint],
        )?;
        if n == 0 {
            return Err(StoreError::NotFound {
                what: "runtime boss session",
                id: session.0.to_string(),
            });
        }
        self.query_one(
            "SELECT briefings FROM runtime_boss_sessions WHERE session_id = ?1",
            args![session.0],
            |r| r.get(0),
        )
    }

    /// The Runtime-domain settings as stored (unset keys read as their defaults).
    pub fn runtime_settings(&self) -> Result<RuntimeSettings> {
        let mut stored = Vec::with_capacity(keys::ALL.len());
        for key in keys::ALL {
            stored.push((key, self.setting(key)?));
        }
        Ok(RuntimeSettings::from_rows(|k| {
            stored
                .iter()
                .find(|(key, _)| *key == k)
                .and_then(|(_, v)| v.clone())
        }))
    }

    /// Store the settings whole (each key written, or removed when unset). Refuses settings
    /// that break a rule, naming the field.
    pub fn set_runtime_settings(&mut self, settings: &RuntimeSettings) -> Result<()> {
        settings
            .validate()
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        for (key, value) in settings.to_rows() {
            match value {
                Some(v) => self.set_setting(key, &v)?,
                None => {
                    self.exec("DELETE FROM app_settings WHERE key = ?1", args![key])?;
                }
            }
        }
        Ok(())
    }

    /// Seed the settings from the config file: each key the seed sets is written only if no
    /// value is stored yet (a stored value, from an earlier seed or a PATCH, wins). Answers
    /// the keys written.
    pub fn seed_runtime_settings(
        &mut self,
        seed: &RuntimeSettingsPatch,
    ) -> Result<Vec<&'static str>> {
        let seeded = RuntimeSettings::default()
            .apply(seed)
            .map_err(|e| StoreError::Invalid(format!("[experimental] {e}")))?;
        let given = [
            seed.boss_mode.is_some(),
            matches!(seed.briefing_interval_days, Some(Some(_))),
            matches!(seed.persona, Some(Some(_))),
            matches!(seed.identity_text, Some(Some(_))),
        ];
        let mut written = Vec::new();
        for ((key, value), given) in seeded.to_rows().into_iter().zip(given) {
            let Some(value) = value.filter(|_| given) else {
                continue;
            };
            if self.setting(key)?.is_none() {
                self.set_setting(key, &value)?;
                written.push(key);
            }
        }
        Ok(written)
    }
}
