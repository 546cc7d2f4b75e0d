//! Which model a thread's agent calls: its own endpoint, or the endpoint of its role, falling
//! back to `default`. Keys come from the environment variable an endpoint names, at call time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use troupe_core::thread::{AgentBinding, EndpointSpec};
use troupe_llm::{EndpointConfig, Provider, ProviderKind, RetryPolicy, build_provider};

/// A provider ready to call, with the policy its calls retry under.
#[derive(Clone)]
pub struct ResolvedModel {
    pub provider: Arc<dyn Provider>,
    pub retry: RetryPolicy,
    /// The role the call is recorded under.
    pub role: String,
}

pub trait ModelResolver: Send + Sync {
    /// Fails with a message naming what is missing (no endpoint for the role, key variable unset…).
    fn resolve(&self, agent: &AgentBinding) -> Result<ResolvedModel, String>;
}

/// Looks up secrets by name; the process environment by default, a map in tests.
pub type SecretSource = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Endpoints per role, plus per-call settings.
pub struct RoleTable {
    roles: HashMap<String, EndpointSpec>,
    secrets: SecretSource,
    pub timeout: Duration,
    pub retry: RetryPolicy,
    /// Built providers, reused across calls (an HTTP client pools its connections).
    cache: Mutex<HashMap<String, Arc<dyn Provider>>>,
}

impl RoleTable {
    pub fn new(secrets: SecretSource) -> Self {
        RoleTable {
            roles: HashMap::new(),
            secrets,
            timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
            cache: Mutex::new(HashMap::new()),
        }
    }

    pub fn from_env() -> Self {
        Self::new(Arc::new(|name| std::env::var(name).ok()))
    }

    pub fn set_role(&mut self, role: impl Into<String>, spec: EndpointSpec) -> Result<(), String> {
        spec.validate()?;
        self.roles.insert(role.into(), spec);
        Ok(())
    }

    pub fn role(&self, role: &str) -> Option<&EndpointSpec> {
        self.roles.get(role)
    }

    fn config_for(&self, spec: &EndpointSpec) -> Result<EndpointConfig, String> {
        spec.validate()?;
        let kind = match spec.kind.as_str() {
            "openai" => ProviderKind::OpenAi,
            "anthropic" => ProviderKind::Anthropic,
            _ => ProviderKind::Scripted,
        };
        let mut cfg = EndpointConfig::new(kind, spec.model.clone());
        cfg.base_url = if kind == ProviderKind::Scripted {
            spec.script.clone()
        } else {
            spec.base_url.clone()
        };
        cfg.timeout = self.timeout;
        cfg.retry = self.retry.clone();
        cfg.takes_pictures = spec.takes_pictures;
        cfg.thinking_levels = spec.thinking_levels.clone();
        cfg.max_output_tokens = spec.max_output_tokens;
        if let Some(var) = &spec.api_key_env {
            let key = (self.secrets)(var)
                .filter(|k| !k.trim().is_empty())
                .ok_or_else(|| {
                    format!(
                        "the API key variable {var} named for model {} is not set",
                        spec.model
                    )
                })?;
            cfg.api_key = Some(key);
        }
        Ok(cfg)
    }
}

impl ModelResolver for RoleTable {
    fn resolve(&self, agent: &AgentBinding) -> Result<ResolvedModel, String> {
        let (spec, role) = match &agent.endpoint {
            Some(spec) => (spec, agent.role.clone()),
            None => match self
                .roles
                .get(&agent.role)
                .or_else(|| self.roles.get("default"))
            {
                Some(spec) => (spec, agent.role.clone()),
                None => {
                    return Err(format!(
                        "no model endpoint for agent {} (role {} has none and no default is set)",
                        agent.name, agent.role
                    ));
                }
            },
        };
        let cache_key = serde_json::to_string(spec).unwrap_or_default();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let provider = match cache.get(&cache_key) {
            Some(p) => p.clone(),
            None => {
                let p = build_provider(self.config_for(spec)?).map_err(|e| e.to_string())?;
                cache.insert(cache_key, p.clone());
                p
            }
        };
        Ok(ResolvedModel {
            provider,
            retry: self.retry.clone(),
            role,
        })
    }
}

/// Every agent calls the same provider (tests, benchmarks).
pub struct FixedModel {
    pub provider: Arc<dyn Provider>,
    pub retry: RetryPolicy,
}

impl ModelResolver for FixedModel {
    fn resolve(&self, agent: &AgentBinding) -> Result<ResolvedModel, String> {
        Ok(ResolvedModel {
            provider: self.provider.clone(),
            retry: self.retry.clone(),
            role: agent.role.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: &str) -> EndpointSpec {
        EndpointSpec {
            kind: kind.into(),
            base_url: Some("http://127.0.0.1:9/v1".into()),
            model: "m".into(),
            api_key_env: Some("TEST_KEY".into()),
            script: None,
            takes_pictures: false,
            thinking_levels: Vec::new(),
            max_output_tokens: None,
        }
    }

    #[test]
    fn a_missing_key_variable_is_named() {
        let mut t = RoleTable::new(Arc::new(|_| None));
        t.set_role("default", spec("openai")).unwrap();
        let err = t.resolve(&AgentBinding::new("a", "")).err().unwrap();
        assert!(err.contains("TEST_KEY"), "{err}");
    }

    #[test]
    fn an_agent_without_endpoint_falls_back_to_default() {
        let mut t = RoleTable::new(Arc::new(|_| Some("k".into())));
        assert!(t.resolve(&AgentBinding::new("a", "")).is_err());
        t.set_role("default", spec("openai")).unwrap();
        let mut agent = AgentBinding::new("a", "");
        agent.role = "review".into();
        let m = t.resolve(&agent).unwrap();
        assert_eq!(m.provider.model(), "m");
        assert_eq!(m.role, "review");
    }

    #[test]
    fn an_endpoint_marked_as_taking_pictures_gives_a_provider_that_takes_them() {
        let mut t = RoleTable::new(Arc::new(|_| Some("k".into())));
        t.set_role("default", spec("openai")).unwrap();
        let mut seeing = spec("openai");
        seeing.takes_pictures = true;
        t.set_role("eyes", seeing).unwrap();
        let mut agent = AgentBinding::new("a", "");
        assert!(!t.resolve(&agent).unwrap().provider.takes_pictures());
        agent.role = "eyes".into();
        assert!(t.resolve(&agent).unwrap().provider.takes_pictures());
    }

    #[test]
    fn an_endpoints_output_cap_reaches_its_provider() {
        let mut t = RoleTable::new(Arc::new(|_| Some("k".into())));
        t.set_role("default", spec("openai")).unwrap();
        let mut capped = spec("openai");
        capped.max_output_tokens = Some(16_000);
        t.set_role("long", capped).unwrap();
        let mut agent = AgentBinding::new("a", "");
        assert_eq!(t.resolve(&agent).unwrap().provider.output_cap(), None);
        agent.role = "long".into();
        assert_eq!(
            t.resolve(&agent).unwrap().provider.output_cap(),
            Some(16_000)
        );
        let mut zero = spec("openai");
        zero.max_output_tokens = Some(0);
        assert!(
            t.set_role("none", zero)
                .unwrap_err()
                .contains("max_output_tokens")
        );
    }
}
