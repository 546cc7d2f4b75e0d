//! Model roles that can change while the daemon runs: the config file's roles, overridden by
//! roles set through the API (kept in the store).

use crate::key_names::KeyEnvRule;
use std::sync::RwLock;
use troupe_core::conversation::validate_role;
use troupe_core::thread::{AgentBinding, EndpointSpec};
use troupe_engine::models::SecretSource;
use troupe_engine::{ModelResolver, ResolvedModel, RoleTable};

pub struct SharedRoles {
    table: RwLock<RoleTable>,
    secrets: SecretSource,
    timeout: std::time::Duration,
    retry: troupe_llm::RetryPolicy,
    key_env: KeyEnvRule,
}

impl SharedRoles {
    pub fn new(table: RoleTable, secrets: SecretSource) -> Self {
        let (timeout, retry) = (table.timeout, table.retry.clone());
        SharedRoles {
            table: RwLock::new(table),
            secrets,
            timeout,
            retry,
            key_env: KeyEnvRule::default(),
        }
    }

    /// Hold the key variables endpoints name to `rule` instead of the default patterns.
    pub fn with_key_env_rule(mut self, rule: KeyEnvRule) -> Self {
        self.key_env = rule;
        self
    }

    /// The one check for an endpoint that arrives from outside the config file (the API, the
    /// store): its shape, and the name of its key variable against the key rule.
    pub fn check_endpoint(&self, spec: &EndpointSpec) -> Result<(), String> {
        spec.validate()?;
        // A scripted endpoint names a script file: read it now, so a wrong path or a broken
        // script is refused here rather than failing the Bot's first turn.
        if spec.kind == "scripted"
            && let Some(path) = spec.script.as_deref()
        {
            if path.trim_start().starts_with('{') {
                return Err(
                    "script is the path of a script file, not the script itself: write the \
                     JSON to a file and give its path"
                        .into(),
                );
            }
            troupe_llm::Script::load(path).map_err(|e| e.to_string())?;
        }
        match &spec.api_key_env {
            Some(var) => self.key_env.check(var),
            None => Ok(()),
        }
    }

    /// Point a role at an endpoint (validated); later model calls use it.
    pub fn set(&self, role: &str, spec: EndpointSpec) -> Result<(), String> {
        validate_role(role)?;
        self.check_endpoint(&spec)?;
        let mut table = self.table.write().unwrap_or_else(|p| p.into_inner());
        table.set_role(role, spec)
    }

    pub fn get(&self, role: &str) -> Option<EndpointSpec> {
        self.table
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .role(role)
            .cloned()
    }

    /// Every role with an endpoint.
    pub fn all(&self) -> Vec<(String, EndpointSpec)> {
        troupe_core::conversation::ROLES
            .iter()
            .filter_map(|r| self.get(r).map(|s| (r.to_string(), s)))
            .collect()
    }

    /// Whether the key variable an endpoint names is set (never the key itself).
    pub fn key_present(&self, spec: &EndpointSpec) -> Option<bool> {
        spec.api_key_env
            .as_ref()
            .map(|var| (self.secrets)(var).is_some_and(|k| !k.trim().is_empty()))
    }

    pub fn timeout(&self) -> std::time::Duration {
        self.timeout
    }

    pub fn retry(&self) -> &troupe_llm::RetryPolicy {
        &self.retry
    }
}

impl ModelResolver for SharedRoles {
    fn resolve(&self, agent: &AgentBinding) -> Result<ResolvedModel, String> {
        // A Bot stored before the key rule existed (or under a wider one) may name any
        // variable: hold it to the rule at call time too, before its value is read.
        if let Some(var) = agent.endpoint.as_ref().and_then(|e| e.api_key_env.as_ref()) {
            self.key_env.check(var)?;
        }
        self.table
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .resolve(agent)
    }
}

impl crate::Collab {
    /// Point a role at an endpoint: validated, stored, and used by the next model call.
    pub fn set_role(&self, role: &str, spec: EndpointSpec) -> Result<(), crate::CollabError> {
        validate_role(role).map_err(crate::CollabError::Invalid)?;
        self.roles()
            .check_endpoint(&spec)
            .map_err(|m| crate::CollabError::invalid(format!("endpoint: {m}")))?;
        self.store().write(|tx| tx.set_model_role(role, &spec))?;
        self.roles()
            .set(role, spec)
            .map_err(crate::CollabError::Invalid)
    }

    /// Load the roles set through the API on an earlier run (they override the config file).
    pub fn load_stored_roles(&self) -> Result<(), crate::CollabError> {
        for (role, spec) in self.store().read(|tx| tx.model_roles())? {
            if let Err(e) = self.roles().set(&role, spec) {
                tracing::warn!(role = %role, error = %e, "a stored role endpoint is invalid; ignored");
            }
        }
        Ok(())
    }
}
