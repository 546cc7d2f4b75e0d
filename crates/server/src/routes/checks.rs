//! Acceptance checks (digest 003-C §15) and checks from the user's words (§16): a job's checks
//! (`/v1/tasks/:id/checks`, `:id` the job), one check (`/v1/checks/:id`), running them, and
//! confirming an offer from the user's words. Only the user writes checks; a saved or changed
//! check runs at once (AC-5). A path or command reaching outside the workspace is refused
//! `422 outside_workspace`; a check from words is never edited (`409 derived_check`).

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Serialize;
use troupe_collab::CollabError;
use troupe_collab::checks::manage::{check_view, plan_checks};
use troupe_collab::checks::{CheckView, NewCheckRequest, PatchCheckRequest, PlanChecks};
use troupe_core::{CheckId, PlanId};
use troupe_store::{CheckKind, CheckRunRecord};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_checks, create_check))
        .routes(routes!(run_plan_checks))
        .routes(routes!(get_check, patch_check, delete_check))
        .routes(routes!(run_check))
        .routes(routes!(confirm_check))
}

/// AC-1's refusal keeps its own code.
fn api_error(e: CollabError) -> ApiError {
    match e {
        CollabError::Invalid(m) if m.starts_with("outside_workspace") => {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "outside_workspace", m)
        }
        other => other.into(),
    }
}

/// The checks started by `POST /v1/tasks/:id/checks/run`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct RunStarted {
    #[schema(value_type = Vec<i64>)]
    pub check_ids: Vec<CheckId>,
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/checks", tag = "tasks",
    params(("id" = i64, Path, description = "Job (plan) id")),
    responses(
        (status = 200, description = "The job's checks with their last runs; those whose Done when line is gone also under match_no_line", body = PlanChecks),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
    )
)]
async fn list_checks(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<PlanChecks>, ApiError> {
    let plan = path_id::<PlanId>(&id)?;
    let out = state
        .collab
        .store()
        .read(|tx| plan_checks(tx, plan))
        .map_err(CollabError::from)?;
    Ok(Json(out))
}

#[utoipa::path(
    post, path = "/v1/tasks/{id}/checks", tag = "tasks",
    params(("id" = i64, Path, description = "Job (plan) id")),
    request_body = NewCheckRequest,
    responses(
        (status = 201, description = "Saved; it runs at once", body = CheckView),
        (status = 400, description = "Malformed body or id", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
        (status = 422, description = "A field is wrong (named), or a path or command reaches outside the workspace (outside_workspace)", body = ErrorBody),
    )
)]
async fn create_check(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<NewCheckRequest>,
) -> Result<(StatusCode, Json<CheckView>), ApiError> {
    let plan = path_id::<PlanId>(&id)?;
    let checks = state.collab.checks();
    let saved = checks.create(plan, &req).map_err(api_error)?;
    let view = checks
        .store()
        .read(|tx| check_view(tx, saved.id))
        .map_err(CollabError::from)?;
    checks.spawn_run(saved.id);
    Ok((StatusCode::CREATED, Json(view)))
}

#[utoipa::path(
    post, path = "/v1/tasks/{id}/checks/run", tag = "tasks",
    params(("id" = i64, Path, description = "Job (plan) id")),
    responses(
        (status = 202, description = "The job's checks run now, one after another; each run appends check_run", body = RunStarted),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
    )
)]
async fn run_plan_checks(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<RunStarted>), ApiError> {
    let plan = path_id::<PlanId>(&id)?;
    let checks = state.collab.checks();
    let ids: Vec<CheckId> = checks
        .store()
        .read(|tx| {
            tx.plan(plan)?;
            tx.checks_of_plan(plan, false)
        })
        .map_err(CollabError::from)?
        .into_iter()
        .filter(|c| c.kind != CheckKind::Standard)
        .map(|c| c.id)
        .collect();
    let runner = checks.clone();
    tokio::spawn(async move {
        if let Err(e) = runner.run_plan(plan, None, None).await {
            tracing::warn!(plan = %plan, error = %e, "running the job's checks failed");
        }
    });
    Ok((StatusCode::ACCEPTED, Json(RunStarted { check_ids: ids })))
}

#[utoipa::path(
    get, path = "/v1/checks/{id}", tag = "tasks",
    params(("id" = i64, Path, description = "Check id")),
    responses(
        (status = 200, description = "The check with its last five runs", body = CheckView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such check", body = ErrorBody),
    )
)]
async fn get_check(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<CheckView>, ApiError> {
    let id = path_id::<CheckId>(&id)?;
    let view = state
        .collab
        .store()
        .read(|tx| check_view(tx, id))
        .map_err(CollabError::from)?;
    Ok(Json(view))
}

#[utoipa::path(
    patch, path = "/v1/checks/{id}", tag = "tasks",
    params(("id" = i64, Path, description = "Check id")),
    request_body = PatchCheckRequest,
    responses(
        (status = 200, description = "Changed; it runs at once", body = CheckView),
        (status = 400, description = "Malformed body or id", body = ErrorBody),
        (status = 404, description = "No such check", body = ErrorBody),
        (status = 409, description = "derived_check: a check from your words is confirmed or removed, not edited; removed", body = ErrorBody),
        (status = 422, description = "A field is wrong (named), or reaches outside the workspace (outside_workspace)", body = ErrorBody),
    )
)]
async fn patch_check(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<PatchCheckRequest>,
) -> Result<Json<CheckView>, ApiError> {
    let id = path_id::<CheckId>(&id)?;
    let checks = state.collab.checks();
    checks.edit(id, &req).map_err(api_error)?;
    let view = checks
        .store()
        .read(|tx| check_view(tx, id))
        .map_err(CollabError::from)?;
    checks.spawn_run(id);
    Ok(Json(view))
}

#[utoipa::path(
    delete, path = "/v1/checks/{id}", tag = "tasks",
    params(("id" = i64, Path, description = "Check id")),
    responses(
        (status = 204, description = "Removed: it no longer runs or counts (its row is kept)"),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such check", body = ErrorBody),
    )
)]
async fn delete_check(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = path_id::<CheckId>(&id)?;
    state.collab.checks().remove(id).map_err(api_error)?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post, path = "/v1/checks/{id}/run", tag = "tasks",
    params(("id" = i64, Path, description = "Check id")),
    responses(
        (status = 200, description = "Run now; the recorded run", body = CheckRunRecord),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such check", body = ErrorBody),
        (status = 409, description = "removed: the check was removed", body = ErrorBody),
    )
)]
async fn run_check(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<CheckRunRecord>, ApiError> {
    let id = path_id::<CheckId>(&id)?;
    let run = state
        .collab
        .checks()
        .run_check(id, None)
        .await
        .map_err(api_error)?;
    Ok(Json(run))
}

#[utoipa::path(
    post, path = "/v1/checks/{id}/confirm", tag = "tasks",
    params(("id" = i64, Path, description = "Check id")),
    responses(
        (status = 200, description = "In force and a gate from now on, measured again at once (CW-16, CW-17)", body = CheckView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such check", body = ErrorBody),
        (status = 409, description = "withdrawn: later words replaced or withdrew this offer", body = ErrorBody),
        (status = 422, description = "Not a check from your words", body = ErrorBody),
    )
)]
async fn confirm_check(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<CheckView>, ApiError> {
    let id = path_id::<CheckId>(&id)?;
    let checks = state.collab.checks();
    let confirmed = checks.confirm(id).await.map_err(api_error)?;
    // A gate from now on: the job's undecided hand-overs are weighed against it at once.
    state.collab.reweigh_job(confirmed.plan_id).await;
    let view = checks
        .store()
        .read(|tx| check_view(tx, id))
        .map_err(CollabError::from)?;
    Ok(Json(view))
}
