//! Engines (ADR 0085, digest 003-B §0.3 and §1.6): which steps each built-in engine runs (the
//! scribe on in video only, the retrospective in all three, the reflection off in general, by
//! default), which engine a conversation runs (its own choice, else Settings' default), and the
//! engine a job's calls run under — its conversation's choice, then the choice of the
//! conversation it was opened from, then Settings' default — with why it is that one.

use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use troupe_core::{PlanId, SessionId};
use troupe_store::{ENGINE_STEPS, ENGINES, PlanRecord, StoreError, Tx};

/// `{engine: {step: on}}` for every engine and step.
pub type EngineSteps = BTreeMap<String, BTreeMap<String, bool>>;

/// `PUT /v1/sessions/:id/engine`: an engine to choose, or `null` for Settings' default.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionEngine {
    /// video | general | coding; null: run Settings' default.
    pub engine: Option<String>,
}

/// The engine a conversation runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionEngineView {
    /// video | general | coding
    pub engine: String,
    /// The conversation chose it; false: it runs Settings' default.
    pub chosen: bool,
}

/// `PUT /v1/settings/default-engine`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DefaultEngine {
    /// video | general | coding
    pub engine: String,
}

/// One engine in the Engines panel.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EngineView {
    pub engine: String,
    /// Every switchable step, on or off.
    pub steps: BTreeMap<String, bool>,
    /// The steps it leaves off.
    pub steps_off: Vec<String>,
    /// The person's conversations (directs and groups, not archived) that run it.
    pub conversations: u32,
}

/// `GET /v1/settings/engines`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EnginesView {
    /// What a conversation that never chose runs.
    pub default_engine: String,
    pub engines: Vec<EngineView>,
}

/// Why a job runs the engine it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EngineWhy {
    /// Its conversation chose it.
    Conversation,
    /// The conversation it was opened from chose it (its own did not).
    OpenedFrom,
    /// Neither chose: Settings' default.
    Default,
}

/// The engine a job's calls run under (`GET /v1/tasks/:id/engine`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobEngine {
    pub task_id: PlanId,
    #[serde(flatten)]
    pub engine: EngineView,
    pub why: EngineWhy,
    /// The conversation whose choice it is (none for the default).
    pub session_id: Option<SessionId>,
    /// "Its conversation runs video", "The conversation it was opened from runs coding",
    /// "Settings' default".
    pub why_text: String,
}

fn engine_view(tx: &Tx<'_>, engine: &str) -> Result<EngineView, StoreError> {
    let mut steps = BTreeMap::new();
    for s in tx
        .engine_steps()?
        .into_iter()
        .filter(|s| s.engine == engine)
    {
        steps.insert(s.step, s.enabled);
    }
    Ok(EngineView {
        engine: engine.to_string(),
        steps_off: steps
            .iter()
            .filter(|(_, on)| !**on)
            .map(|(s, _)| s.clone())
            .collect(),
        steps,
        conversations: tx.conversations_running(engine)?,
    })
}

/// The job's engine and why: its conversation's choice; then that of the conversation it was
/// opened from (a Bot↔Bot direct's origin, where a hand-over opened the job); then the default.
fn resolve(
    tx: &Tx<'_>,
    plan: &PlanRecord,
) -> Result<(String, EngineWhy, Option<SessionId>), StoreError> {
    if let Some(home) = plan.home_session_id {
        let e = tx.session_engine_record(home)?;
        if e.chosen {
            return Ok((e.engine, EngineWhy::Conversation, Some(home)));
        }
        if let Some(from) = tx.session(home)?.origin_session_id {
            let e = tx.session_engine_record(from)?;
            if e.chosen {
                return Ok((e.engine, EngineWhy::OpenedFrom, Some(from)));
            }
        }
    }
    Ok((tx.default_engine()?, EngineWhy::Default, None))
}

/// Whether `step` is on in the engine the job runs under.
pub(crate) fn step_on(tx: &Tx<'_>, plan: &PlanRecord, step: &str) -> Result<bool, StoreError> {
    let (engine, _, _) = resolve(tx, plan)?;
    tx.engine_has_step_on(&engine, step)
}

fn unknown_engine(engine: &str) -> Option<CollabError> {
    (!ENGINES.contains(&engine)).then(|| {
        CollabError::invalid(format!(
            "engine: '{engine}' is not one of video, general, coding"
        ))
    })
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

    /// The Engines panel: the default and each engine with its steps and conversations.
    pub fn engines(&self) -> Result<EnginesView, CollabError> {
        Ok(self.store().read(|tx| {
            Ok(EnginesView {
                default_engine: tx.default_engine()?,
                engines: ENGINES
                    .iter()
                    .map(|e| engine_view(tx, e))
                    .collect::<Result<_, StoreError>>()?,
            })
        })?)
    }

    /// Settings' default engine: every conversation that never chose runs it from now on.
    pub fn set_default_engine(&self, req: &DefaultEngine) -> Result<EnginesView, CollabError> {
        if let Some(e) = unknown_engine(&req.engine) {
            return Err(e);
        }
        self.store()
            .write(|tx| tx.set_default_engine(&req.engine))?;
        self.engines()
    }

    /// The engine a conversation runs (404 for an unknown one).
    pub fn session_engine(&self, session: SessionId) -> Result<SessionEngineView, CollabError> {
        let e = self.store().read(|tx| tx.session_engine_record(session))?;
        Ok(SessionEngineView {
            engine: e.engine,
            chosen: e.chosen,
        })
    }

    /// The conversation chooses an engine, or (`null`) runs Settings' default again.
    pub fn set_session_engine(
        &self,
        session: SessionId,
        req: &SessionEngine,
    ) -> Result<SessionEngineView, CollabError> {
        if let Some(e) = req.engine.as_deref().and_then(unknown_engine) {
            return Err(e);
        }
        self.store()
            .write(|tx| tx.set_session_engine(session, req.engine.as_deref()))?;
        self.session_engine(session)
    }

    /// The engine a job's calls run under, why, the steps it leaves off and how many
    /// conversations run it ("Who does what in this job").
    pub fn job_engine(&self, plan: PlanId) -> Result<JobEngine, CollabError> {
        Ok(self.store().read(|tx| {
            let record = tx.plan(plan)?;
            let (engine, why, session_id) = resolve(tx, &record)?;
            let why_text = match why {
                EngineWhy::Conversation => format!("Its conversation runs {engine}"),
                EngineWhy::OpenedFrom => {
                    format!("The conversation it was opened from runs {engine}")
                }
                EngineWhy::Default => "Settings' default".to_string(),
            };
            Ok(JobEngine {
                task_id: plan,
                engine: engine_view(tx, &engine)?,
                why,
                session_id,
                why_text,
            })
        })?)
    }
}
