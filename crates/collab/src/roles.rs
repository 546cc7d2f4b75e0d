//! Model roles that can change while the daemon runs: the config file's roles, overridden by
//! roles set through the API (kept in the store).

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
}

impl SharedRoles {
    pub fn new(table: RoleTable, secrets: SecretSource) -> Self {
        let (timeout, retry) = (table.timeout, table.retry.clone());
        SharedRoles { table: RwLock::new(table), secrets, timeout, retry }
    }

    /// Point a role at an endpoint (validated); later model calls use it.
    pub fn set(&self, role: &str, spec: EndpointSpec) -> Result<(), String> {
        validate_role(role)?;
        spec.validate()?;
        let mut table = self.table.write().unwrap_or_else(|p| p.into_inner());
        table.set_role(role, spec)
    }

    pub fn get(&self, role: &str) -> Option<EndpointSpec> {
        self.table.read().unwrap_or_else(|p| p.into_inner()).role(role).cloned()
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
        spec.api_key_env.as_ref().map(|var| (self.secrets)(var).is_some_and(|k| !k.trim().is_empty()))
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
        self.table.read().unwrap_or_else(|p| p.into_inner()).resolve(agent)
    }
}
