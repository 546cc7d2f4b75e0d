//! Line reading (LR-1…15): one short tool-free model call per line on the `reading` role
//! (falling back to `default`), in slots of its own (2 per endpoint, never behind a Bot's
//! stream), within 20 s counting the wait for a slot. A person's line is read once, by id; a
//! Bot's text once per turn and text. When no model answers usably, the fixed word lists read
//! it instead and the reason is logged with the reading — but what the lists find is never
//! carried out (the callers only act on a model's reading). A reading writes no state beyond
//! its own record.

mod bot;
mod filing;
mod user;

pub use bot::BotText;
pub(crate) use filing::UnsavedFiling;
pub(crate) use user::{UnsavedUserReading, UserLineReading};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use troupe_core::thread::AgentBinding;
use troupe_engine::ModelResolver;

/// Readings per endpoint at once.
pub const SLOTS_PER_ENDPOINT: usize = 2;
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// What a reading call gave: the raw answer and the model, or why there is none.
pub(crate) struct Answer {
    pub raw: Option<String>,
    pub model: Option<String>,
    pub failure: Option<String>,
}

pub struct Reader {
    slots: Mutex<HashMap<String, Arc<Semaphore>>>,
    timeout: Duration,
}

impl Default for Reader {
    fn default() -> Self {
        Reader::new(DEFAULT_TIMEOUT)
    }
}

impl Reader {
    pub fn new(timeout: Duration) -> Self {
        Reader {
            slots: Mutex::new(HashMap::new()),
            timeout,
        }
    }

    fn slot(&self, key: &str) -> Arc<Semaphore> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots
            .entry(key.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(SLOTS_PER_ENDPOINT)))
            .clone()
    }

    /// One reading call with `prompt`, on the reading role.
    pub(crate) async fn ask(&self, resolver: &dyn ModelResolver, prompt: String) -> Answer {
        let agent = AgentBinding {
            name: "line reader".into(),
            system_prompt: String::new(),
            role: "reading".into(),
            endpoint: None,
        };
        let resolved = match resolver.resolve(&agent) {
            Ok(r) => r,
            Err(e) => {
                return Answer {
                    raw: None,
                    model: None,
                    failure: Some(format!("no reading model: {e}")),
                };
            }
        };
        let model = resolved.provider.model().to_string();
        let key = format!("{} {}", resolved.provider.endpoint(), model);
        let started = Instant::now();
        let slot = self.slot(&key);
        let permit = match tokio::time::timeout(self.timeout, slot.acquire_owned()).await {
            Ok(Ok(p)) => p,
            _ => {
                return Answer {
                    raw: None,
                    model: Some(model),
                    failure: Some("no reading slot came free in time".into()),
                };
            }
        };
        let left = self.timeout.saturating_sub(started.elapsed());
        let answer = crate::oneshot::call_text(resolver, &agent, prompt, left).await;
        drop(permit);
        match answer {
            Ok((raw, model)) => Answer {
                raw: Some(raw),
                model: Some(model),
                failure: None,
            },
            Err(e) => Answer {
                raw: None,
                model: Some(model),
                failure: Some(e),
            },
        }
    }
}
