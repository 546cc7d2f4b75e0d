//! Switchable engine steps (ADR 0085): which steps each engine runs (the scribe: on in the
//! video engine, off in general and coding by default), and which engine a conversation runs.

use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use troupe_core::SessionId;
use troupe_store::{ENGINE_STEPS, ENGINES, PlanRecord, StoreError, Tx};

/// `{engine: {step: on}}` for every engine and step.
pub type EngineSteps = BTreeMap<String, BTreeMap<String, bool>>;

/// A conversation's engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionEngine {
    /// video | general | coding
    pub engine: String,
}

/// Whether `step` is on in the engine of the job's conversation (a job with none: general).
pub(crate) fn step_on(tx: &Tx<'_>, plan: &PlanRecord, step: &str) -> Result<bool, StoreError> {
    let engine = match plan.home_session_id {
        Some(s) => tx.session_engine(s)?,
        None => "general".into(),
    };
    Ok(tx
        .engine_steps()?
        .iter()
        .any(|s| s.engine == engine && s.step == step && s.enabled))
}

impl Collab {
    /// Every engine's steps.
    pub fn engine_steps(&self) -> Result<EngineSteps, CollabError> {
        let mut out = EngineSteps::new();
        for s in self.store().read(|tx| tx.engine_steps())? {
            out.entry(s.engine).or_default().insert(s.step, s.enabled);
        }
        Ok(out)
    }

    /// Switch the steps named; an unknown engine or step is refused and nothing changes.
    pub fn set_engine_steps(&self, patch: &EngineSteps) -> Result<EngineSteps, CollabError> {
        for (engine, steps) in patch {
            if !ENGINES.contains(&engine.as_str()) {
                return Err(CollabError::invalid(format!(
                    "{engine}: not an engine (video, general, coding)"
                )));
            }
            if let Some(step) = steps.keys().find(|s| !ENGINE_STEPS.contains(&s.as_str())) {
                return Err(CollabError::invalid(format!(
                    "{engine}.{step}: not a switchable step (scribe, retrospective, reflection)"
                )));
            }
        }
        self.store().write(|tx| {
            for (engine, steps) in patch {
                for (step, on) in steps {
                    tx.set_engine_step(engine, step, *on)?;
                }
            }
            Ok(())
        })?;
        self.engine_steps()
    }

    /// The engine a conversation runs (404 for an unknown one).
    pub fn session_engine(&self, session: SessionId) -> Result<SessionEngine, CollabError> {
        Ok(SessionEngine {
            engine: self.store().read(|tx| tx.session_engine(session))?,
        })
    }

    /// Set the engine a conversation runs.
    pub fn set_session_engine(
        &self,
        session: SessionId,
        engine: &SessionEngine,
    ) -> Result<SessionEngine, CollabError> {
        if !ENGINES.contains(&engine.engine.as_str()) {
            return Err(CollabError::invalid(format!(
                "engine: '{}' is not one of video, general, coding",
                engine.engine
            )));
        }
        self.store()
            .write(|tx| tx.set_session_engine(session, &engine.engine))?;
        self.session_engine(session)
    }
}
