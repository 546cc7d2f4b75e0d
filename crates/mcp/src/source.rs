//! What the engine sees of the servers: their tools as a tool source (an effectful tool is one
//! its server does not mark `readOnlyHint: true`, so every effect guard applies to it with no
//! MCP knowledge), and one context line per server a Bot may use that is not ready.

use crate::call::McpTool;
use crate::manager::Mcp;
use crate::server::Slot;
use crate::status::State;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use troupe_core::thread::Thread;
use troupe_engine::extension::{ContextContributor, ContextParts, ToolRegistration, ToolSource};
use troupe_llm::ToolSpec;
use troupe_store::Store;

/// A server's registrations and the listing generation they were built from.
type Built = (u64, Arc<[ToolRegistration]>);

/// The servers' tools, built once per server and listing generation.
pub struct McpTools {
    mcp: Mcp,
    built: Mutex<HashMap<String, Built>>,
}

impl McpTools {
    pub fn new(mcp: Mcp) -> Self {
        McpTools {
            mcp,
            built: Mutex::new(HashMap::new()),
        }
    }

    fn registrations(&self, slot: &Arc<Slot>) -> Option<Arc<[ToolRegistration]>> {
        let live = slot.live()?;
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((generation, regs)) = built.get(&slot.def.name)
            && *generation == live.generation
        {
            return Some(regs.clone());
        }
        let regs: Arc<[ToolRegistration]> = live
            .tools
            .iter()
            .map(|t| ToolRegistration {
                owner: format!("mcp:{}", slot.def.name),
                spec: ToolSpec {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    parameters: t.input_schema.clone(),
                },
                effectful: !t.read_only,
                // Every call writes its record, so none runs before its reply is committed.
                read_only: false,
                available: Arc::new(|_| true),
                handler: Arc::new(McpTool {
                    slot: Arc::downgrade(slot),
                    server: slot.def.name.clone(),
                    tool: t.tool.clone(),
                    read_only: t.read_only,
                    timeout: Duration::from_secs(slot.def.tool_timeout_sec),
                }),
            })
            .collect();
        built.insert(slot.def.name.clone(), (live.generation, regs.clone()));
        Some(regs)
    }
}

impl ToolSource for McpTools {
    fn name(&self) -> &str {
        "mcp"
    }

    fn tools(&self, thread: &Thread) -> Vec<ToolRegistration> {
        let slots: Vec<Arc<Slot>> = self.mcp.slots_for(&thread.agent.name);
        slots
            .iter()
            .filter_map(|s| self.registrations(s))
            .flat_map(|regs| regs.iter().cloned().collect::<Vec<_>>())
            .collect()
    }
}

/// Tells a turn which of its Bot's servers are unavailable, and why, in one line each.
pub struct Unavailable {
    pub mcp: Mcp,
}

impl ContextContributor for Unavailable {
    fn name(&self) -> &str {
        "mcp_unavailable"
    }

    fn contribute(&self, thread: &Thread, _store: &Store, out: &mut ContextParts) {
        for slot in self.mcp.slots_for(&thread.agent.name) {
            let status = slot.status();
            let why = match status.state {
                State::Ready | State::Disabled => continue,
                State::Starting => "it is starting".to_string(),
                State::Failed => status
                    .last_error
                    .unwrap_or_else(|| "it failed".into())
                    .lines()
                    .next()
                    .unwrap_or("it failed")
                    .to_string(),
            };
            out.system.push(format!(
                "The MCP server {} is unavailable ({why}); its tools are not offered this turn.",
                status.name
            ));
        }
    }
}

impl Mcp {
    /// The enabled servers this Bot may use.
    pub(crate) fn slots_for(&self, bot: &str) -> Vec<Arc<Slot>> {
        self.inner
            .slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|s| s.def.enabled && s.def.allows(bot))
            .cloned()
            .collect()
    }

    /// The tool source to register with the engine.
    pub fn tool_source(&self) -> Arc<dyn ToolSource> {
        Arc::new(McpTools::new(self.clone()))
    }

    /// The context contributor to register with the engine.
    pub fn context(&self) -> Arc<dyn ContextContributor> {
        Arc::new(Unavailable { mcp: self.clone() })
    }
}
