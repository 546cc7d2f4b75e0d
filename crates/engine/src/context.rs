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
use troupe_llm::{ChatMessage, ImagePart, ModelRequest, ToolCall, ToolSpec};
use troupe_tools::{Workspace, load_picture, parse_picture_marker};

/// Most pictures one model call carries; older picture results say they are not sent again.
pub(crate) const MAX_PICTURES_PER_CALL: usize = 20;

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

    /// The request for one model call. `takes_pictures`: the model takes pictures, so those
    /// named by stored `read_file` results are read again and attached.
    pub(crate) fn assemble(
        &self,
        thread: &Thread,
        history: &[Message],
        hop: u32,
        takes_pictures: bool,
    ) -> ModelRequest {
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
        let mut sight = Sight {
            workspace: takes_pictures
                .then(|| crate::dispatch::thread_workspace(thread).ok())
                .flatten(),
            takes_pictures,
            skip: 0,
        };
        let mut messages = self.project(history, &mut sight);
        // The long-run reminder joins this call only; it is never stored, and tools stay.
        if let Some(reminder) = long_run_reminder(hop, &self.inner.config.limits) {
            messages.push(ChatMessage::user(format!("[runtime reminder] {reminder}")));
        }
        ModelRequest {
            system,
            messages,
            tools: self.tool_specs(thread),
            max_tokens: None,
            lightest_thinking: false,
        }
    }

    /// Project stored messages into the model's conversation.
    fn project(&self, history: &[Message], sight: &mut Sight) -> Vec<ChatMessage> {
        let contexts = &self.inner.ext.contexts;
        let shown: Vec<&Message> = history
            .iter()
            .filter(|m| !contexts.iter().any(|c| c.hides(m)))
            .collect();
        if sight.takes_pictures {
            let pictures = shown
                .iter()
                .flat_map(|m| &m.parts)
                .filter(|p| p.in_context && picture_named(&p.body).is_some())
                .count();
            sight.skip = pictures.saturating_sub(MAX_PICTURES_PER_CALL);
        }
        let mut out = Vec::with_capacity(history.len() * 2);
        for m in shown {
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
                Role::Assistant => project_assistant(m, sight, &mut out),
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

/// The path and hash a stored `read_file` result names a picture by, if it does.
fn picture_named(body: &PartBody) -> Option<(&str, &str)> {
    match body {
        PartBody::ToolResult {
            name,
            content,
            is_error: false,
            ..
        } if name == "read_file" => parse_picture_marker(content),
        _ => None,
    }
}

/// How pictures named by stored `read_file` results join one call's context. The store keeps
/// only a marker line (path and SHA-256); the picture is read again from the thread's
/// workspace and attached when the model takes pictures and the file is unchanged, else a
/// short note says why it is not.
struct Sight {
    /// The thread's workspace, when the model takes pictures and it opens.
    workspace: Option<Workspace>,
    takes_pictures: bool,
    /// Picture results still to pass before attaching (only the latest ones are sent).
    skip: usize,
}

impl Sight {
    /// The result's text for the model (without the marker line) and the pictures to attach.
    fn see(&mut self, content: &str, path: &str, sha256: &str) -> (String, Vec<ImagePart>) {
        let text = content.split_once('\n').map_or("", |(_, rest)| rest);
        let (note, images) = self.attach(path, sha256);
        (format!("{text}\n{note}"), images)
    }

    fn attach(&mut self, path: &str, sha256: &str) -> (String, Vec<ImagePart>) {
        let not = |why: String| (format!("(The picture is not attached: {why}.)"), Vec::new());
        if !self.takes_pictures {
            return not("this model cannot see pictures".into());
        }
        if self.skip > 0 {
            self.skip -= 1;
            return not(format!(
                "only the latest {MAX_PICTURES_PER_CALL} pictures go with a call; read it again \
                 to see it"
            ));
        }
        let Some(ws) = &self.workspace else {
            return not("the thread's workspace cannot be opened".into());
        };
        match load_picture(ws, path) {
            Ok(Some(p)) if p.sha256 == sha256 => (
                "The picture is attached to this result.".into(),
                vec![ImagePart {
                    media_type: p.media_type.to_string(),
                    data: p.base64(),
                }],
            ),
            Ok(_) => not(format!(
                "{path} has changed since it was read; read it again to see it as it is now"
            )),
            Err(e) => not(e.to_string()),
        }
    }
}

fn project_assistant(m: &Message, sight: &mut Sight, out: &mut Vec<ChatMessage>) {
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
            } => {
                let (content, images) = match picture_named(&p.body) {
                    Some((path, sha256)) => sight.see(content, path, sha256),
                    None => (content.clone(), Vec::new()),
                };
                results.push(ChatMessage::ToolResult {
                    call_id: call_id.clone(),
                    content,
                    is_error: *is_error,
                    images,
                })
            }
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
