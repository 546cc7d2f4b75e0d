//! Assembling what the model sees for one call: the agent's system prompt, contributed system
//! sections and situation blocks, the projected history (with stamped roots wrapped), and the
//! tools this thread may call. Stored messages are read, never rewritten.

use crate::Engine;
use crate::extension::ContextParts;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use troupe_core::message::{Message, Origin, PartBody, Role};
use troupe_core::run::long_run_reminder;
use troupe_core::thread::Thread;
use troupe_llm::{ChatMessage, ModelRequest, ToolCall, ToolSpec};

impl Engine {
    /// The stamps contributors fix on a new root user message, keyed by contributor name.
    pub(crate) fn root_stamps(&self, thread: &Thread) -> Option<Value> {
        let mut map = Map::new();
        for c in &self.inner.ext.contexts {
            if let Some(stamp) = c.stamp_root(thread) {
                map.insert(c.name().to_string(), stamp);
            }
        }
        (!map.is_empty()).then_some(Value::Object(map))
    }

    /// The first tool scope that narrows this thread's tools now, if any.
    pub(crate) fn narrowed(&self, thread: &Thread) -> Option<crate::extension::Narrowed> {
        for s in &self.inner.ext.scopes {
            match s.narrow(thread, &self.inner.store) {
                Ok(Some(n)) => return Some(n),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(thread = %thread.id, scope = s.name(), error = %e, "tool scope failed; tools left as they are")
                }
            }
        }
        None
    }

    /// Tool specs this thread may call: the built-ins, then registered tools available to it,
    /// narrowed by a tool scope when one applies.
    pub(crate) fn tool_specs(&self, thread: &Thread) -> Arc<[ToolSpec]> {
        let all = self.available_tool_specs(thread);
        match self.narrowed(thread) {
            None => all,
            Some(n) => {
                let kept = self.kept_sourced(thread, &n);
                all.iter()
                    .filter(|s| n.only.contains(&s.name) || kept.contains(&s.name))
                    .cloned()
                    .collect()
            }
        }
    }

    /// The sourced tools without an effect a narrowing keeps, when it keeps them.
    pub(crate) fn kept_sourced(
        &self,
        thread: &Thread,
        n: &crate::extension::Narrowed,
    ) -> Vec<String> {
        if !n.keep_sourced_read_only {
            return Vec::new();
        }
        self.inner
            .ext
            .sourced_tools(thread)
            .into_iter()
            .filter(|t| !t.effectful)
            .map(|t| t.spec.name)
            .collect()
    }

    fn available_tool_specs(&self, thread: &Thread) -> Arc<[ToolSpec]> {
        let fixed = self.fixed_tool_specs(thread);
        if self.inner.ext.sources.is_empty() {
            return fixed;
        }
        let sourced = self.inner.ext.sourced_tools(thread);
        if sourced.is_empty() {
            return fixed;
        }
        fixed
            .iter()
            .cloned()
            .chain(sourced.into_iter().map(|t| t.spec))
            .collect()
    }

    fn fixed_tool_specs(&self, thread: &Thread) -> Arc<[ToolSpec]> {
        let tools = &self.inner.ext.tools;
        let available: Availability = tools.iter().map(|t| (t.available)(thread)).collect();
        let mut lists = self
            .inner
            .tool_lists
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some((_, list)) = lists.iter().find(|(key, _)| *key == available) {
            return list.clone();
        }
        let list: Arc<[ToolSpec]> = builtin_tool_specs()
            .iter()
            .cloned()
            .chain(
                tools
                    .iter()
                    .zip(&available)
                    .filter(|(_, on)| **on)
                    .map(|(t, _)| t.spec.clone()),
            )
            .collect();
        lists.push((available, list.clone()));
        list
    }

    pub(crate) fn assemble(&self, thread: &Thread, history: &[Message], hop: u32) -> ModelRequest {
        let store = &self.inner.store;
        let mut parts = ContextParts::default();
        for c in &self.inner.ext.contexts {
            c.contribute(thread, store, &mut parts);
        }
        let mut system = thread.agent.system_prompt.clone();
        for section in &parts.system {
            push_section(&mut system, section);
        }
        if !parts.situation.is_empty() {
            push_section(
                &mut system,
                &format!("# Situation\n\n{}", parts.situation.join("\n\n")),
            );
        }
        let mut messages = self.project(history);
        // The long-run reminder joins this call only; it is never stored, and tools stay.
        if let Some(reminder) = long_run_reminder(hop, &self.inner.config.limits) {
            messages.push(ChatMessage::user(format!("[runtime reminder] {reminder}")));
        }
        ModelRequest {
            system,
            messages,
            tools: self.tool_specs(thread),
            max_tokens: None,
        }
    }

    /// Project stored messages into the model's conversation.
    pub(crate) fn project(&self, history: &[Message]) -> Vec<ChatMessage> {
        let contexts = &self.inner.ext.contexts;
        let mut out = Vec::with_capacity(history.len() * 2);
        for m in history {
            if contexts.iter().any(|c| c.hides(m)) {
                continue;
            }
            match m.role {
                Role::User => {
                    let mut texts: Vec<String> = m
                        .parts
                        .iter()
                        .filter(|p| p.in_context)
                        .filter_map(|p| match &p.body {
                            PartBody::Text { text } => Some(text.clone()),
                            _ => None,
                        })
                        .collect();
                    if texts.is_empty() {
                        continue;
                    }
                    if m.is_root
                        && m.origin == Origin::User
                        && let Some(wrapped) = self.wrap_root(m, &texts[0])
                    {
                        texts[0] = wrapped;
                    }
                    out.push(ChatMessage::user(texts.join("\n")));
                }
                Role::Assistant => project_assistant(m, &mut out),
            }
        }
        out
    }

    /// At most one wrapper per message: the first contributor whose stamp is present and that wraps.
    fn wrap_root(&self, m: &Message, text: &str) -> Option<String> {
        let stamps = m.metadata.as_ref()?.as_object()?;
        self.inner.ext.contexts.iter().find_map(|c| {
            let stamp = stamps.get(c.name())?;
            c.wrap_root(stamp, text)
        })
    }
}

/// Each distinct set of available registered tools (keyed by which are available), built once:
/// cloning and dropping the tools' JSON schemas for every model call cost more than the call's
/// history. Registrations are fixed when the engine is built, so the set of lists is small.
#[derive(Default)]
pub(crate) struct ToolLists(Mutex<Vec<(Availability, Arc<[ToolSpec]>)>>);

/// Which registered tools a thread may call, in registration order.
type Availability = Vec<bool>;

/// The built-in tools' specs never change: built once, not per model call.
fn builtin_tool_specs() -> &'static [ToolSpec] {
    static SPECS: std::sync::OnceLock<Vec<ToolSpec>> = std::sync::OnceLock::new();
    SPECS.get_or_init(|| {
        troupe_tools::builtin_specs()
            .into_iter()
            .map(|s| ToolSpec {
                name: s.name.to_string(),
                description: s.description.to_string(),
                parameters: s.parameters,
            })
            .collect()
    })
}

fn push_section(system: &mut String, section: &str) {
    if !system.is_empty() {
        system.push_str("\n\n");
    }
    system.push_str(section);
}

fn project_assistant(m: &Message, out: &mut Vec<ChatMessage>) {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for p in m.parts.iter().filter(|p| p.in_context) {
        match &p.body {
            PartBody::Text { text: t } => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(t);
            }
            PartBody::ToolCall {
                call_id,
                name,
                arguments,
            } => calls.push(ToolCall {
                id: call_id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
            }),
            PartBody::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => results.push(ChatMessage::ToolResult {
                call_id: call_id.clone(),
                content: content.clone(),
                is_error: *is_error,
                images: Vec::new(),
            }),
        }
    }
    if text.is_empty() && calls.is_empty() {
        return;
    }
    let answered: HashSet<String> = results
        .iter()
        .filter_map(|r| match r {
            ChatMessage::ToolResult { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    // Providers reject a tool call without a result; a call cut off before recording one is
    // answered honestly rather than dropped.
    let missing: Vec<ChatMessage> = calls
        .iter()
        .filter(|c| !answered.contains(&c.id))
        .map(|c| ChatMessage::ToolResult {
            call_id: c.id.clone(),
            content: "no result was recorded for this call (it was cut off)".into(),
            is_error: true,
            images: Vec::new(),
        })
        .collect();
    out.push(ChatMessage::Assistant {
        text,
        tool_calls: calls,
    });
    out.extend(results);
    out.extend(missing);
}
