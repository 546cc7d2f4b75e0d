//! Holds: the person's stops kept until they lift them (digest A §14). Listed (in force, or
//! all), read, made from a menu or button (`POST /v1/holds`), lifted (the Lift button), and
//! the work log of what they did (`GET /v1/audit`). Only the person makes or lifts a hold
//! here; no Bot reaches these routes.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::sessions::query;
use crate::routes::{path_id, query_id, query_number};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use troupe_collab::holds::{HoldRequest, HoldView};
use troupe_core::{EventId, HoldId, RunId, SessionId, ThreadId};
use troupe_store::Event;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_holds, post_hold))
        .routes(routes!(get_hold))
        .routes(routes!(lift_hold))
        .routes(routes!(audit))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HoldsQuery {
    /// `all` lists lifted holds too; without it, only those in force.
    #[param(value_type = Option<String>)]
    pub status: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/holds", tag = "holds",
    params(HoldsQuery),
    responses(
        (status = 200, description = "Holds in force (or all of them), newest first", body = [HoldView]),
        (status = 422, description = "A status other than `all`", body = ErrorBody),
    )
)]
async fn list_holds(
    State(state): State<AppState>,
    q: Result<Query<HoldsQuery>, QueryRejection>,
) -> Result<Json<Vec<HoldView>>, ApiError> {
    let q = query(q)?;
    let all = match q.status.as_deref() {
        None => false,
        Some("all") => true,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "status: '{other}' is not all (leave it out for the holds in force)"
            )));
        }
    };
    Ok(Json(state.collab.holds(all)?))
}

#[utoipa::path(
    get, path = "/v1/holds/{id}", tag = "holds",
    params(("id" = i64, Path, description = "Hold id (`hold_N` or `N`)")),
    responses(
        (status = 200, description = "The hold, with what it stopped", body = HoldView),
        (status = 400, description = "The id is not an id", body = ErrorBody),
        (status = 404, description = "No such hold", body = ErrorBody),
    )
)]
async fn get_hold(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<HoldView>, ApiError> {
    Ok(Json(state.collab.hold(path_id::<HoldId>(&id)?)?))
}

#[utoipa::path(
    post, path = "/v1/holds", tag = "holds",
    request_body = HoldRequest,
    responses(
        (status = 201, description = "The new hold (source `user_button`): what it covers has ended", body = HoldView),
        (status = 200, description = "The same scope was already held: that hold, unchanged", body = HoldView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 422, description = "An unknown scope kind or action, a missing ref, or a ref to nothing (the message names it)", body = ErrorBody),
    )
)]
async fn post_hold(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<HoldRequest>,
) -> Result<(StatusCode, Json<HoldView>), ApiError> {
    let (hold, created) = state.collab.post_hold(req).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(hold)))
}

#[utoipa::path(
    post, path = "/v1/holds/{id}/lift", tag = "holds",
    params(("id" = i64, Path, description = "Hold id (`hold_N` or `N`)")),
    responses(
        (status = 200, description = "The hold, lifted: the work it ended goes on (a composer Stop's reopens nothing); an already lifted hold comes back unchanged", body = HoldView),
        (status = 400, description = "The id is not an id", body = ErrorBody),
        (status = 404, description = "No such hold", body = ErrorBody),
    )
)]
async fn lift_hold(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<HoldView>, ApiError> {
    Ok(Json(state.collab.lift_hold(path_id::<HoldId>(&id)?).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this kind: `control_hold`, `hold_lifted`, `wake_suppressed`, `hold_reopened`,
    /// `control_acted`, `hold_still_running`.
    #[param(value_type = Option<String>)]
    pub kind: Option<String>,
    /// Only the entries about this hold.
    #[param(value_type = Option<i64>)]
    pub hold_id: Option<String>,
    /// Entries after this event id.
    #[param(value_type = Option<i64>)]
    pub after: Option<String>,
    /// How many, oldest first: 1 to 1000 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
}

/// One entry of the work log: an event of one of its kinds, naming its holds in
/// `payload.hold_ids`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AuditEntry {
    pub id: EventId,
    pub at: i64,
    pub thread_id: Option<ThreadId>,
    pub run_id: Option<RunId>,
    pub session_id: Option<SessionId>,
    pub kind: String,
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
}

impl From<Event> for AuditEntry {
    fn from(e: Event) -> Self {
        AuditEntry {
            id: e.id,
            at: e.at,
            thread_id: e.thread_id,
            run_id: e.run_id,
            session_id: e.session_id,
            kind: e.kind,
            payload: e.payload,
        }
    }
}

#[utoipa::path(
    get, path = "/v1/audit", tag = "holds",
    params(AuditQuery),
    responses(
        (status = 200, description = "The work log of holds, oldest first", body = [AuditEntry]),
        (status = 404, description = "No such hold", body = ErrorBody),
        (status = 422, description = "An unknown kind, a malformed hold or event id, a bad limit", body = ErrorBody),
    )
)]
async fn audit(
    State(state): State<AppState>,
    q: Result<Query<AuditQuery>, QueryRejection>,
) -> Result<Json<Vec<AuditEntry>>, ApiError> {
    let q = query(q)?;
    let hold = query_id::<HoldId>("hold_id", q.hold_id.as_deref())?;
    let after = query_id::<EventId>("after", q.after.as_deref())?.unwrap_or(EventId(0));
    let limit = query_number("limit", q.limit.as_deref(), 100, 1, 1000)?;
    let kind = q.kind.as_deref().map(str::trim);
    if let Some(h) = hold {
        // An unknown hold is a 404, as an unknown conversation is on the other lists.
        state.collab.hold(h)?;
    }
    let log = state.collab.audit(kind, hold, after, limit)?;
    Ok(Json(log.into_iter().map(AuditEntry::from).collect()))
}
