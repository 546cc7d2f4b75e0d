//! BossService: the one guard and the operations the five Boss tools and the Boss routes share.
//! Every operation names its caller (a session), is checked by `troupe_core::boss`'s rules
//! against the tree as stored, and writes nothing when refused. Wakes go through
//! `Engine::request_drive` (BOSS-9: no Boss recovery of its own).

use super::members::{
    self, ASSIGN_ORIGIN, Node, REPORT_ORIGIN, assignment_key, member, node, node_of_thread,
    parse_key, pending, root_live,
};
use crate::blueprint_loop::worktree;
use crate::slot::{BossSlot, WorkflowSlot};
use crate::{WorkflowError, Workflows};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use troupe_core::boss::{self as rules, BossRefusal, BossRole, MAX_DEPTH, ReportStatus, TreeNode};
use troupe_core::drive::RootState;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::{MessageId, SessionId, ThreadId};
use troupe_engine::Engine;
use troupe_store::{StoreError, Tx};

/// `boss_spawn` and `POST /v1/boss/session/:id/worker`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpawnRequest {
    /// What the worker does (`code`, `research`, …).
    pub role: String,
    /// The worker's Bot, by name or id (default: the caller's Bot).
    #[serde(default)]
    pub agent: Option<String>,
    /// Standing instructions for the worker's role.
    #[serde(default)]
    pub instructions: Option<String>,
    /// `main` (default: the caller's files) or `worktree` (a git worktree of them).
    #[serde(default)]
    pub workspace: Option<String>,
}

/// `boss_assign` and `POST /v1/boss/session/:id/assign`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignRequest {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub worker_session_id: SessionId,
    /// Chosen by the caller: 1–64 of `[A-Za-z0-9._-]`; a repeat delivers nothing (BOSS-2).
    pub task_id: String,
    pub task: String,
    #[serde(default)]
    pub context: Option<String>,
    #[serde(default)]
    pub acceptance: Vec<String>,
}

/// `boss_cancel` and `POST /v1/boss/session/:id/cancel`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CancelRequest {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub worker_session_id: SessionId,
    /// Cancel only this task (the running one is interrupted only if it is this one).
    #[serde(default)]
    pub task_id: Option<String>,
}

#[derive(Clone, Debug)]
pub struct ReportRequest {
    pub summary: String,
    pub status: ReportStatus,
    pub refs: Vec<String>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct Spawned {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    pub worker_role: String,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub root_session_id: SessionId,
    pub bot: String,
    /// The worktree the worker works in, if asked for.
    pub worktree: Option<String>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct Assigned {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub worker_session_id: SessionId,
    pub task_id: String,
    /// False: this caller already assigned this task id; nothing new was delivered.
    pub delivered: bool,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct Cancelled {
    /// The worker's running turn was interrupted.
    pub cancelled: bool,
    /// Pending assignments of the caller removed from the worker's inbox.
    pub removed: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct Reported {
    pub parent_session_id: i64,
    pub delivered: bool,
}

impl From<BossRefusal> for WorkflowError {
    fn from(r: BossRefusal) -> Self {
        match r {
            BossRefusal::NotFound(m) => WorkflowError::NotFound {
                what: "session",
                id: m,
            },
            r if r.is_invalid_input() => WorkflowError::Invalid(format!("{}: {r}", r.code())),
            r => WorkflowError::conflict(r.code(), r.to_string()),
        }
    }
}

fn refused(r: BossRefusal) -> Result<(), WorkflowError> {
    Err(r.into())
}

fn caller_node(tx: &Tx<'_>, session: SessionId) -> Result<Result<Node, BossRefusal>, StoreError> {
    Ok(node(tx, session)?.ok_or_else(|| BossRefusal::NotFound(session.to_string())))
}

/// The caller is a live member: its node and its tree's root.
fn checked_caller(
    tx: &Tx<'_>,
    session: SessionId,
) -> Result<Result<(Node, i64), BossRefusal>, StoreError> {
    let n = match caller_node(tx, session)? {
        Ok(n) => n,
        Err(r) => return Ok(Err(r)),
    };
    let m = member(tx, &n)?;
    let live = match m.root_id() {
        Some(r) => root_live(tx, r)?,
        None => false,
    };
    Ok(rules::check_member(&m, live).map(|root| (n, root)))
}

/// The target is the caller's direct child worker in the same tree.
fn checked_target(
    tx: &Tx<'_>,
    caller: SessionId,
    target: SessionId,
) -> Result<Result<(Node, Node), BossRefusal>, StoreError> {
    let (c, root) = match checked_caller(tx, caller)? {
        Ok(x) => x,
        Err(r) => return Ok(Err(r)),
    };
    let t = match caller_node(tx, target)? {
        Ok(t) => t,
        Err(r) => return Ok(Err(r)),
    };
    let cm = member(tx, &c)?;
    let tm = member(tx, &t)?;
    let live = root_live(tx, root)?;
    Ok(rules::check_target(&cm, live, &tm).map(|()| (c, t)))
}

/// The task a thread's open root is, if it came from an assignment.
fn running_task(tx: &Tx<'_>, thread: ThreadId) -> Result<Option<String>, StoreError> {
    let root = match tx.root_state(thread)? {
        RootState::Open(r) | RootState::Breakpoint(r) => r,
        _ => return Ok(None),
    };
    let m = tx.message(root)?;
    Ok(m.delivery_key
        .as_deref()
        .and_then(parse_key)
        .map(|(_, task)| task))
}

/// The Boss operations over an engine (the tools have the engine, not the conversation layer).
pub struct BossService<'a> {
    pub engine: &'a Engine,
}

impl Workflows {
    pub fn boss(&self) -> BossService<'_> {
        BossService {
            engine: self.engine(),
        }
    }
}

impl BossService<'_> {
    fn store(&self) -> &troupe_store::Store {
        self.engine.store()
    }

    fn engine(&self) -> &Engine {
        self.engine
    }

    async fn stop_quietly(&self, thread: ThreadId) {
        match self
            .engine
            .stop(thread, troupe_engine::StopMode::Internal)
            .await
        {
            Ok(_) | Err(troupe_engine::EngineError::NotRunning(_)) => {}
            Err(e) => tracing::warn!(thread = %thread, error = %e, "stopping a worker failed"),
        }
    }

    /// The session a thread is, as a Boss caller (tools call with their thread).
    pub fn session_of(&self, thread: ThreadId) -> Result<SessionId, WorkflowError> {
        self.store()
            .read(|tx| node_of_thread(tx, thread))?
            .map(|n| n.session)
            .ok_or_else(|| BossRefusal::NotBoss.into())
    }

    pub async fn spawn(
        &self,
        caller: SessionId,
        req: SpawnRequest,
    ) -> Result<Spawned, WorkflowError> {
        let role = rules::check_role(&req.role)?;
        let worktree_mode = match req.workspace.as_deref().map(str::trim) {
            None | Some("main") => false,
            Some("worktree") => true,
            Some(other) => {
                return Err(WorkflowError::invalid(format!(
                    "workspace: '{other}' is not main or worktree"
                )));
            }
        };
        let (c, root) = self.store().read(|tx| checked_caller(tx, caller))??;
        let caller_bot = self
            .store()
            .read(|tx| tx.session(c.session))?
            .bot_ids
            .first()
            .copied();
        let bots = self.store().read(|tx| tx.bots(true))?;
        let bot = match req
            .agent
            .as_deref()
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            None => caller_bot
                .and_then(|id| bots.iter().find(|b| b.id == id))
                .cloned(),
            Some(a) => bots
                .iter()
                .find(|b| {
                    b.name.eq_ignore_ascii_case(a)
                        || a.parse::<troupe_core::BotId>().is_ok_and(|id| id == b.id)
                })
                .cloned(),
        }
        .ok_or_else(|| {
            BossRefusal::UnknownAgent(format!(
                "agent: no Bot named '{}'",
                req.agent.clone().unwrap_or_default()
            ))
        })?;
        if bot.archived {
            refused(BossRefusal::AgentNotDelegatable(format!(
                "agent: {} is archived and takes no work",
                bot.name
            )))?;
        }
        let parent_ws = PathBuf::from(self.store().read(|tx| tx.thread(c.thread))?.workspace);
        let dir = if worktree_mode {
            let safe: String = role
                .chars()
                .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '-' })
                .collect();
            let name = format!("boss-{safe}-{}", self.store().now());
            Some(
                worktree::create_named(&parent_ws, &name)
                    .await
                    .map_err(|e| WorkflowError::from(BossRefusal::WorktreeFailed(e.to_string())))?,
            )
        } else {
            None
        };
        let slot = WorkflowSlot::Boss(BossSlot {
            role: BossRole::Worker,
            worker_role: Some(role.clone()),
            root_session_id: Some(SessionId(root)),
            instructions: req
                .instructions
                .map(|i| i.trim().to_string())
                .filter(|i| !i.is_empty()),
        });
        let title = format!("{role} · {}", c.title);
        let work_dir = dir.clone().unwrap_or(parent_ws.clone());
        let made = self.store().write(|tx| {
            troupe_collab::create_child_conversation(
                tx,
                &bot,
                &title,
                &work_dir,
                c.thread,
                &slot.to_value(),
            )
        });
        let session = match made {
            Ok(s) => s,
            Err(e) => {
                // Nothing is left behind: the worktree goes with the failed worker.
                if let Some(d) = &dir {
                    worktree::remove(&parent_ws, d).await;
                }
                return Err(e.into());
            }
        };
        Ok(Spawned {
            session_id: session.id,
            worker_role: role,
            root_session_id: SessionId(root),
            bot: bot.name,
            worktree: dir.map(|d| d.display().to_string()),
        })
    }

    pub async fn assign(
        &self,
        caller: SessionId,
        req: AssignRequest,
    ) -> Result<Assigned, WorkflowError> {
        rules::check_task_id(&req.task_id)?;
        if req.task.trim().is_empty() {
            refused(BossRefusal::InvalidTask("task: must say what to do".into()))?;
        }
        let text = rules::assignment_text(&req.task, req.context.as_deref(), &req.acceptance);
        let key = assignment_key(caller, &req.task_id);
        let (target, delivered) = self.store().write(|tx| {
            let (_, t) = match checked_target(tx, caller, req.worker_session_id)? {
                Ok(x) => x,
                Err(r) => return Ok(Err(r)),
            };
            let d = tx.deliver(
                t.thread,
                &Delivery {
                    mode: InboxMode::Task,
                    priority: Priority::DELEGATION_RESULT,
                    origin: Origin::System(ASSIGN_ORIGIN.into()),
                    text: text.clone(),
                    visible: true,
                    delivery_key: Some(key.clone()),
                    order_key: None,
                    defers_calls: false,
                },
            )?;
            Ok(Ok((t.thread, d.created)))
        })??;
        if delivered {
            self.engine()
                .request_drive(target, "boss_assign", false)
                .await?;
        }
        Ok(Assigned {
            worker_session_id: req.worker_session_id,
            task_id: req.task_id,
            delivered,
        })
    }

    /// A worker's report to its direct parent, keyed by the reply that made it.
    pub async fn report(
        &self,
        caller: SessionId,
        req: ReportRequest,
        reply: MessageId,
    ) -> Result<Reported, WorkflowError> {
        if req.summary.trim().is_empty() {
            refused(BossRefusal::InvalidSummary(
                "summary: say what was done, or what blocks you".into(),
            ))?;
        }
        let refs: Vec<String> = req
            .refs
            .iter()
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect();
        let (parent, parent_session, delivered) = self.store().write(|tx| {
            let c = match caller_node(tx, caller)? {
                Ok(n) => n,
                Err(r) => return Ok(Err(r)),
            };
            let cm = member(tx, &c)?;
            let live = match cm.root_id() {
                Some(r) => root_live(tx, r)?,
                None => false,
            };
            let parent = match c.parent_thread {
                Some(p) => node_of_thread(tx, p)?,
                None => None,
            };
            let pm = match &parent {
                Some(p) => Some(member(tx, p)?),
                None => None,
            };
            if let Err(r) = rules::check_report(&cm, live, pm.as_ref()) {
                return Ok(Err(r));
            }
            let parent = parent.expect("checked above");
            let task = members::latest_assignment(tx, c.thread)?
                .map(|(_, _, task, _)| format!(" on task {task}"))
                .unwrap_or_default();
            let role = c
                .slot
                .as_ref()
                .and_then(|s| s.worker_role.clone())
                .unwrap_or_else(|| "worker".into());
            let text = format!(
                "[Boss report from {role} (session {}){task}]\n{}",
                c.session.0,
                rules::report_text(req.status, &req.summary, &refs)
            );
            let d = tx.deliver(
                parent.thread,
                &Delivery {
                    mode: InboxMode::Steer,
                    priority: Priority::DELEGATION_RESULT,
                    origin: Origin::System(REPORT_ORIGIN.into()),
                    text,
                    visible: true,
                    delivery_key: Some(format!("boss-report:{}:{}", c.session.0, reply.0)),
                    order_key: None,
                    defers_calls: false,
                },
            )?;
            Ok(Ok((parent.thread, parent.session, d.created)))
        })??;
        if delivered {
            self.engine()
                .request_drive(parent, "boss_report", false)
                .await?;
        }
        Ok(Reported {
            parent_session_id: parent_session.0,
            delivered,
        })
    }

    pub async fn cancel(
        &self,
        caller: SessionId,
        req: CancelRequest,
    ) -> Result<Cancelled, WorkflowError> {
        if let Some(t) = &req.task_id {
            rules::check_task_id(t)?;
        }
        let (target, running_task, removed) = self.store().write(|tx| {
            let (_, t) = match checked_target(tx, caller, req.worker_session_id)? {
                Ok(x) => x,
                Err(r) => return Ok(Err(r)),
            };
            // BOSS-8: only the caller's own assignments to this worker go.
            let ids: Vec<_> = pending(tx, t.thread)?
                .into_iter()
                .filter(|(_, from, task)| {
                    *from == caller && req.task_id.as_ref().is_none_or(|want| want == task)
                })
                .map(|(item, _, _)| item.id)
                .collect();
            let removed = if ids.is_empty() {
                0
            } else {
                tx.drop_inbox_items(t.thread, &ids)?
            };
            Ok(Ok((t.thread, running_task(tx, t.thread)?, removed)))
        })??;
        let matches = req
            .task_id
            .as_ref()
            .is_none_or(|want| running_task.as_ref() == Some(want));
        let cancelled = matches && self.engine().is_running(target) && {
            self.stop_quietly(target).await;
            true
        };
        Ok(Cancelled { cancelled, removed })
    }

    /// The caller's subtree (`boss_status`, `GET /v1/boss/session/:id/tree`).
    pub fn tree(&self, caller: SessionId, depth: Option<usize>) -> Result<TreeNode, WorkflowError> {
        let depth = depth.unwrap_or(MAX_DEPTH).min(MAX_DEPTH);
        let engine = self.engine().clone();
        let running = move |t: ThreadId| engine.is_running(t);
        Ok(self.store().read(|tx| {
            let (n, _) = match checked_caller(tx, caller)? {
                Ok(x) => x,
                Err(r) => return Ok(Err(r)),
            };
            Ok(Ok(members::tree(tx, &n, depth, &running)?))
        })??)
    }
}
