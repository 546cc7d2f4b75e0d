//! `boss_project {directory, title?, agent?, instructions?}` (issue 18 item 17, RB-5): a boss
//! opens a project boss in a directory. Only a boss-role caller may (a worker gets
//! `not_boss`); the directory must be absolute, is created when missing and is registered once
//! in `projects` (a repeat answers the existing project and opens nothing). The project boss is
//! an interactive session there, slot boss/boss, told how to report back in layers and which
//! session coordinates it. Bosses are peers: no parent link is made.

use super::ensure::create_boss_session;
use crate::slot::WorkflowSlot;
use crate::tool_results::{args, reply};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use std::path::{Component, Path};
use std::sync::Arc;
use troupe_core::SessionId;
use troupe_core::boss::BossRole;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::thread::Thread;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;
use troupe_store::{CONVERSATION, Project, StoreError, Tx};

pub const BOSS_PROJECT: &str = "boss_project";
pub const OWNER: &str = "workflows.runtime_boss";
/// The origin of a project boss's instructions line.
pub const ORIGIN: &str = "boss_project";

const CONTRACT: &str =
    r#"{"directory": "/srv/app", "title": "App", "instructions": "Ship the login page."}"#;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    directory: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    instructions: Option<String>,
}

/// The caller's Boss Mode role, if its thread has a boss slot.
fn role(thread: &Thread) -> Option<BossRole> {
    WorkflowSlot::of(thread.workflow.as_ref()).and_then(|s| s.boss().map(|b| b.role))
}

/// An absolute, plain path (no `..`), or why not.
pub fn check_directory(directory: &str) -> Result<&Path, String> {
    let p = Path::new(directory);
    if !p.is_absolute() {
        return Err(format!("directory '{directory}' is not an absolute path"));
    }
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(format!("directory '{directory}' must not contain '..'"));
    }
    Ok(p)
}

/// The project boss's instructions: its work, how to report (layered), who coordinates.
pub fn instructions(
    coordinator: SessionId,
    title: &str,
    directory: &str,
    work: Option<&str>,
) -> String {
    let mut out = format!(
        "[Project boss] You are the project boss for \"{title}\" in {directory}. The \
         coordinator is session {} (a peer, not your parent). Report to it with session_send in \
         layers: each status change (started, blocked, done, failed) as one line, and at the end a \
         one-line result with the session id that holds the detail. Do not send transcripts.",
        coordinator.0
    );
    if let Some(w) = work.filter(|w| !w.trim().is_empty()) {
        out.push_str("\n\n## Instructions\n");
        out.push_str(w.trim());
    }
    out
}

enum Outcome {
    NotBoss,
    Invalid(String),
    Existing(Project),
    Opened(Project),
}

fn open_in(
    tx: &mut Tx<'_>,
    ctx: &ToolCallContext,
    a: &Args,
    dir: &Path,
) -> Result<Outcome, StoreError> {
    let directory = dir.display().to_string();
    if let Some(p) = tx.project_by_directory(&directory)? {
        return Ok(Outcome::Existing(p));
    }
    let Some((coordinator, _)) = tx.thread_session(ctx.thread.id)? else {
        return Ok(Outcome::NotBoss);
    };
    let bot = match &a.agent {
        Some(name) => match tx
            .bots(false)?
            .into_iter()
            .find(|b| b.name.eq_ignore_ascii_case(name))
        {
            Some(b) => b,
            None => return Ok(Outcome::Invalid(format!("no Bot named '{name}'"))),
        },
        None => {
            let s = tx.session(coordinator)?;
            let Some(id) = s.bot_ids.first() else {
                return Ok(Outcome::Invalid("the calling session has no Bot".into()));
            };
            tx.bot(*id)?
        }
    };
    let title = a
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| directory.clone())
        });
    let session = create_boss_session(tx, &bot, &title, dir)?;
    let (project, _) = tx.project_register(&directory, &title, session)?;
    let thread = tx
        .session_thread(session, bot.id, CONVERSATION)?
        .ok_or_else(|| StoreError::not_found("project boss thread", session))?;
    tx.deliver(
        thread,
        &Delivery {
            mode: InboxMode::Steer,
            priority: Priority::OWN_TIMER,
            origin: Origin::System(ORIGIN.into()),
            text: instructions(coordinator, &title, &directory, a.instructions.as_deref()),
            visible: true,
            delivery_key: Some(format!("{ORIGIN}:{}", project.id)),
            order_key: None,
            defers_calls: false,
        },
    )?;
    Ok(Outcome::Opened(project))
}

fn refused(code: &str, status: u16, message: String) -> ToolReply {
    reply(
        json!({"ok": false, "code": code, "status": status, "message": message, "written": false}),
        true,
        false,
    )
}

struct BossProject;

#[async_trait]
impl ToolHandler for BossProject {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: Args = match args(raw, CONTRACT) {
            Ok(a) => a,
            Err(r) => return r,
        };
        if role(&ctx.thread) != Some(BossRole::Boss) {
            return refused(
                "not_boss",
                409,
                "boss_project is for a boss; a worker reports to its boss instead".into(),
            );
        }
        let dir = match check_directory(&a.directory) {
            Ok(d) => d.to_path_buf(),
            Err(m) => return refused("invalid_directory", 422, m),
        };
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return refused(
                "directory_unavailable",
                422,
                format!("cannot create {}: {e}", dir.display()),
            );
        }
        match ctx.store.write(|tx| open_in(tx, ctx, &a, &dir)) {
            Err(e) => ToolReply::error(format!("boss_project: {e}; nothing was registered")),
            Ok(Outcome::NotBoss) => refused("not_boss", 409, "the caller has no session".into()),
            Ok(Outcome::Invalid(m)) => refused("invalid_arguments", 422, m),
            Ok(Outcome::Existing(p)) => reply(
                json!({"ok": true, "status": "existing", "project": p,
                       "message": "already a project; its boss session is named here"}),
                false,
                false,
            ),
            Ok(Outcome::Opened(p)) => reply(
                json!({"ok": true, "status": "opened", "project": p,
                       "message": "a project boss session was opened there with your \
                                   instructions; it reports to you with session_send"}),
                false,
                false,
            ),
        }
    }
}

/// Offered to any Boss Mode thread so a worker's call is answered `not_boss` (RB-5).
pub fn boss_project_tool() -> ToolRegistration {
    ToolRegistration {
        owner: OWNER.into(),
        spec: ToolSpec {
            name: BOSS_PROJECT.into(),
            description: "Open a project boss in a directory (absolute; created if missing; \
                registered once — a repeat answers the existing project). It is an interactive \
                boss session there that reports back to you in layers."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "directory": {"type": "string", "description": "Absolute path of the project."},
                    "title": {"type": "string"},
                    "agent": {"type": "string", "description": "The Bot to run it (default: yours)."},
                    "instructions": {"type": "string", "description": "What the project boss should do."}
                },
                "required": ["directory"],
                "additionalProperties": false
            }),
        },
        effectful: true,
        read_only: false,
        available: Arc::new(|t: &Thread| role(t).is_some()),
        handler: Arc::new(BossProject),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_must_be_absolute_and_plain() {
        assert!(check_directory("/srv/app").is_ok());
        assert!(check_directory("srv/app").is_err());
        assert!(check_directory("").is_err());
        assert!(check_directory("/srv/../etc").is_err());
    }

    #[test]
    fn instructions_name_the_coordinator_and_layered_reporting() {
        let t = instructions(SessionId(7), "App", "/srv/app", Some("Ship it."));
        assert!(t.contains("session 7") && t.contains("one-line result") && t.contains("Ship it."));
    }
}
