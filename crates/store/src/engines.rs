//! Engines (ADR 0085, digest 003-B §0.3): a conversation runs one of the built-in engines, and
//! each engine switches some steps on or off (the scribe, the retrospective, the reflection). A
//! conversation either chose its engine (`sessions.engine_chosen`) or runs Settings' default
//! (`app_settings.default_engine`, `general` until set), so changing the default moves every
//! conversation that never chose.

use crate::{Result, StoreError, Tx, args};
use troupe_core::SessionId;

/// The engines a conversation can run.
pub const ENGINES: &[&str] = &["video", "general", "coding"];
/// The steps an engine can switch.
pub const ENGINE_STEPS: &[&str] = &["scribe", "retrospective", "reflection"];
/// The default engine until Settings names another.
pub const FALLBACK_ENGINE: &str = "general";
const DEFAULT_KEY: &str = "default_engine";

/// One engine step's switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineStep {
    pub engine: String,
    pub step: String,
    pub enabled: bool,
    pub updated_at: i64,
}

/// The engine a conversation runs, and whether it chose it (else it is Settings' default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionEngineRecord {
    pub engine: String,
    pub chosen: bool,
}

fn known(engine: &str) -> Result<()> {
    if ENGINES.contains(&engine) {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "engine: '{engine}' is not one of video, general, coding"
        )))
    }
}

impl Tx<'_> {
    /// Every engine step's switch.
    pub fn engine_steps(&self) -> Result<Vec<EngineStep>> {
        self.query_all(
            "SELECT engine, step, enabled, updated_at FROM engine_steps ORDER BY engine, step",
            args![],
            |r| {
                Ok(EngineStep {
                    engine: r.get(0)?,
                    step: r.get(1)?,
                    enabled: r.get::<i64>(2)? == 1,
                    updated_at: r.get(3)?,
                })
            },
        )
    }

    /// Switch one engine's step.
    pub fn set_engine_step(&mut self, engine: &str, step: &str, enabled: bool) -> Result<()> {
        if !ENGINES.contains(&engine) || !ENGINE_STEPS.contains(&step) {
            return Err(StoreError::Invalid(format!(
                "no engine step {engine}/{step}"
            )));
        }
        self.exec(
            "UPDATE engine_steps SET enabled = ?3, updated_at = ?4 WHERE engine = ?1 AND step = ?2",
            args![engine, step, i64::from(enabled), self.now],
        )?;
        Ok(())
    }

    /// Settings' default engine: what a conversation that never chose runs.
    pub fn default_engine(&self) -> Result<String> {
        Ok(self
            .setting(DEFAULT_KEY)?
            .filter(|e| ENGINES.contains(&e.as_str()))
            .unwrap_or_else(|| FALLBACK_ENGINE.to_string()))
    }

    pub fn set_default_engine(&mut self, engine: &str) -> Result<()> {
        known(engine)?;
        self.set_setting(DEFAULT_KEY, engine)
    }

    /// The engine a conversation runs: its own choice, else Settings' default.
    pub fn session_engine(&self, session: SessionId) -> Result<String> {
        Ok(self.session_engine_record(session)?.engine)
    }

    pub fn session_engine_record(&self, session: SessionId) -> Result<SessionEngineRecord> {
        let (engine, chosen): (String, i64) = self
            .query_opt(
                "SELECT engine, engine_chosen FROM sessions WHERE id = ?1",
                args![session.0],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .ok_or_else(|| StoreError::not_found("session", session))?;
        Ok(if chosen == 1 {
            SessionEngineRecord {
                engine,
                chosen: true,
            }
        } else {
            SessionEngineRecord {
                engine: self.default_engine()?,
                chosen: false,
            }
        })
    }

    /// The conversation chooses an engine, or (`None`) goes back to Settings' default.
    pub fn set_session_engine(&mut self, session: SessionId, engine: Option<&str>) -> Result<()> {
        if let Some(e) = engine {
            known(e)?;
        }
        let n = self.exec(
            "UPDATE sessions SET engine = ?2, engine_chosen = ?3 WHERE id = ?1",
            args![
                session.0,
                engine.unwrap_or(FALLBACK_ENGINE),
                i64::from(engine.is_some())
            ],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("session", session));
        }
        Ok(())
    }

    /// Whether a step is on for the engine a conversation runs: one statement, since the
    /// scribe's switch is read for every line of the person's filed under a job.
    pub fn engine_step_on(&self, session: SessionId, step: &str) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT e.enabled FROM sessions s JOIN engine_steps e ON e.step = ?2
                   AND e.engine = CASE WHEN s.engine_chosen = 1 THEN s.engine
                       ELSE COALESCE((SELECT value FROM app_settings WHERE key = ?3), ?4) END
                 WHERE s.id = ?1",
                args![session.0, step, DEFAULT_KEY, FALLBACK_ENGINE],
                |r| r.get::<i64>(0),
            )?
            .is_some_and(|v| v == 1))
    }

    /// Whether `engine` runs `step`.
    pub fn engine_has_step_on(&self, engine: &str, step: &str) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT enabled FROM engine_steps WHERE engine = ?1 AND step = ?2",
                args![engine, step],
                |r| r.get::<i64>(0),
            )?
            .is_some_and(|v| v == 1))
    }

    /// How many conversations the person has (directs and groups, not archived) run `engine`,
    /// by choice or by default.
    pub fn conversations_running(&self, engine: &str) -> Result<u32> {
        let default = self.default_engine()?;
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM sessions
             WHERE archived_at IS NULL AND kind IN ('direct', 'group')
               AND (CASE WHEN engine_chosen = 1 THEN engine ELSE ?2 END) = ?1",
            args![engine, default],
            |r| r.get(0),
        )?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }
}
