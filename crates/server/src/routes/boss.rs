//! Boss Mode over HTTP: the person (or a script) acts as session `:id` of a Boss tree through the
//! same `BossService` the Boss tools use — its subtree, a new worker, an assignment to a direct
//! child worker, a cancel. Enabling and disabling go through the session's workflow
//! (`POST /v1/sessions/{id}/workflow`, `kind: "boss"`).

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::workflows::workflows;
use crate::routes::{path_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use troupe_core::SessionId;
use troupe_core::boss::{BossRole, MAX_DEPTH, TreeNode};
use troupe_workflows::boss::{
    AssignRequest, Assigned, CancelRequest, Cancelled, SpawnRequest, Spawned,
};
use troupe_workflows::slot::WorkflowSlot;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(tree))
        .routes(routes!(spawn_worker))
        .routes(routes!(assign))
        .routes(routes!(cancel))
}

/// The Boss refusals that are about the request itself (422). `BossService` says them as
/// `"<code>: <message>"`; the API answers the code as the error's code and the rest as its message.
const INVALID_CODES: [&str; 5] = [
    "invalid_role",
    "invalid_task_id",
    "invalid_task",
    "invalid_summary",
    "unknown_agent",
];

/// A workflow's 422: a Boss refusal keeps its own code, anything else is `invalid`.
pub(crate) fn invalid(message: String) -> ApiError {
    for code in INVALID_CODES {
        if let Some(rest) = message
            .strip_prefix(code)
            .and_then(|r| r.strip_prefix(": "))
        {
            return ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, rest);
        }
    }
    ApiError::invalid(message)
}

/// A person's line never goes to a Boss worker: its root is the tree's only entry (409
/// `boss_worker`).
pub(crate) fn refuse_worker(state: &AppState, session: SessionId) -> Result<(), ApiError> {
    let slot = state
        .collab
        .store()
        .read(|tx| {
            Ok(match tx.session_threads(session)?.first() {
                Some(t) => WorkflowSlot::of(tx.thread(*t)?.workflow.as_ref()),
                None => None,
            })
        })
        .map_err(troupe_collab::CollabError::from)?;
    match slot {
        Some(WorkflowSlot::Boss(b)) if b.role == BossRole::Worker => Err(ApiError::conflict(
            "boss_worker",
            format!(
                "session {session} is a Boss worker: talk to its root (session {})",
                b.root_session_id
                    .map(|r| r.0.to_string())
                    .unwrap_or_else(|| "unknown".into())
            ),
        )),
        _ => Ok(()),
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TreeQuery {
    /// How many levels below the session: 0 to 16 (default 16).
    #[param(value_type = Option<u32>, minimum = 0, maximum = 16)]
    pub depth: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/boss/session/{id}/tree", tag = "boss",
    params(("id" = i64, Path, description = "The Boss tree member acting (root or worker)"), TreeQuery),
    responses(
        (status = 200, description = "The session's subtree: each node with its session, role, Bot, status (running, queued, idle), current task and children; archived sessions left out", body = TreeNode),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 409, description = "The session is not a member of a live Boss tree (`not_boss`)", body = ErrorBody),
        (status = 422, description = "Bad depth", body = ErrorBody),
    )
)]
async fn tree(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<TreeQuery>, QueryRejection>,
) -> Result<Json<TreeNode>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    let q = query(q)?;
    let depth = query_number(
        "depth",
        q.depth.as_deref(),
        MAX_DEPTH as u32,
        0,
        MAX_DEPTH as u32,
    )?;
    state.collab.live_conversation(id)?;
    Ok(Json(
        workflows(&state).boss().tree(id, Some(depth as usize))?,
    ))
}

#[utoipa::path(
    post, path = "/v1/boss/session/{id}/worker", tag = "boss",
    params(("id" = i64, Path, description = "The Boss tree member spawning (root or worker)")),
    request_body = SpawnRequest,
    responses(
        (status = 201, description = "The new worker: a child conversation, unattended, its slot a worker of the caller's tree", body = Spawned),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 409, description = "Not a member of a live Boss tree (`not_boss`), the Bot is archived (`agent_not_delegatable`), the worktree could not be made (`worktree_failed`)", body = ErrorBody),
        (status = 422, description = "Empty or over-long role (`invalid_role`), no such Bot (`unknown_agent`), workspace not main or worktree (`invalid`)", body = ErrorBody),
    )
)]
async fn spawn_worker(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<SpawnRequest>,
) -> Result<(StatusCode, Json<Spawned>), ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    let spawned = workflows(&state).boss().spawn(id, req).await?;
    Ok((StatusCode::CREATED, Json(spawned)))
}

#[utoipa::path(
    post, path = "/v1/boss/session/{id}/assign", tag = "boss",
    params(("id" = i64, Path, description = "The Boss tree member assigning (root or worker)")),
    request_body = AssignRequest,
    responses(
        (status = 200, description = "The task is in the worker's inbox and the worker woken (`delivered: true`), or this caller assigned this task id before and nothing new was delivered (`delivered: false`)", body = Assigned),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such conversation (caller or worker)", body = ErrorBody),
        (status = 409, description = "Not a member of a live Boss tree (`not_boss`); the worker is not the caller's direct child (`not_direct_child`), not a worker (`not_worker`) or of another tree (`tree_mismatch`)", body = ErrorBody),
        (status = 422, description = "A task id not 1–64 of `[A-Za-z0-9._-]` (`invalid_task_id`), an empty task (`invalid_task`)", body = ErrorBody),
    )
)]
async fn assign(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<AssignRequest>,
) -> Result<Json<Assigned>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    Ok(Json(workflows(&state).boss().assign(id, req).await?))
}

#[utoipa::path(
    post, path = "/v1/boss/session/{id}/cancel", tag = "boss",
    params(("id" = i64, Path, description = "The Boss tree member cancelling (root or worker)")),
    request_body = CancelRequest,
    responses(
        (status = 200, description = "Whether the worker's running turn was interrupted (only with no task id, or when the running task is that one) and how many of the caller's pending assignments to it were removed", body = Cancelled),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such conversation (caller or worker)", body = ErrorBody),
        (status = 409, description = "Not a member of a live Boss tree (`not_boss`); the worker is not the caller's direct child (`not_direct_child`), not a worker (`not_worker`) or of another tree (`tree_mismatch`)", body = ErrorBody),
        (status = 422, description = "A malformed task id (`invalid_task_id`)", body = ErrorBody),
    )
)]
async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<CancelRequest>,
) -> Result<Json<Cancelled>, ApiError> {
    let id = path_id::<SessionId>(&id)?;
    state.collab.live_conversation(id)?;
    Ok(Json(workflows(&state).boss().cancel(id, req).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boss_422_codes_are_split_off_the_message() {
        let e = invalid("invalid_task_id: task_id: 'a b' must be 1–64".into());
        assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(e.code, "invalid_task_id");
        assert_eq!(e.message, "task_id: 'a b' must be 1–64");
        let e = invalid("unknown_agent: agent: no Bot named 'x'".into());
        assert_eq!(e.code, "unknown_agent");
        // Any other 422 keeps the general code and its whole message.
        let e = invalid("instructions: must not be empty".into());
        assert_eq!(
            (e.code, e.message.as_str()),
            ("invalid", "instructions: must not be empty")
        );
        let e = invalid("invalid_taskish: x".into());
        assert_eq!(e.code, "invalid");
    }
}
