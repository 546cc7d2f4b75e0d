//! Tickets on the board (digest 003-B §1, §0.5): a job's tickets with the counter, adding one,
//! one ticket, adding parts, the user's board edit, and the large-job banner's choice. The
//! `:id` after `/v1/tasks/` is the job.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use troupe_collab::CollabError;
use troupe_collab::tickets::{
    LargeChoiceRequest, NewTicketRequest, PartsRequest, TicketList, TicketPatchRequest, TicketView,
};
use troupe_core::{PlanId, TicketId};
use troupe_store::PlanDeliverables;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tickets, add_ticket))
        .routes(routes!(get_ticket, patch_ticket))
        .routes(routes!(add_parts))
        .routes(routes!(choose_large))
}

/// The 422 codes the tickets answer with: the message starts `<code>: `.
const CODES: [&str; 10] = [
    "reviewer_is_owner",
    "not_in_conversation",
    "dependency_loop",
    "depends_on_self",
    "other_plan",
    "parked_dependency",
    "too_many_dependencies",
    "unknown_ticket",
    "invalid",
    "unknown_dependency",
];

fn api(e: CollabError) -> ApiError {
    if let CollabError::Invalid(m) = &e
        && let Some(code) = CODES
            .iter()
            .find(|c| m.strip_prefix(**c).is_some_and(|r| r.starts_with(": ")))
    {
        let message = m.strip_prefix(&format!("{code}: ")).unwrap_or(m);
        return ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, message);
    }
    e.into()
}

#[utoipa::path(
    get, path = "/v1/tasks/{id}/tickets", tag = "tickets",
    params(("id" = i64, Path, description = "The job (plan) id")),
    responses(
        (status = 200, description = "The job's tickets by number, each with its label, parts and what it waits for, and the counter \"N open · M in all · K dropped/set aside\" (T14)", body = TicketList),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
    )
)]
async fn list_tickets(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TicketList>, ApiError> {
    state
        .collab
        .tickets(path_id::<PlanId>(&id)?)
        .map(Json)
        .map_err(api)
}

#[utoipa::path(
    post, path = "/v1/tasks/{id}/tickets", tag = "tickets",
    params(("id" = i64, Path, description = "The job (plan) id")),
    request_body = NewTicketRequest,
    responses(
        (status = 201, description = "The user's new ticket, to do, in its own folder with its ticket.md", body = TicketView),
        (status = 400, description = "The id is not a number, or the body is not JSON", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
        (status = 422, description = "`invalid` (title missing or blank, an unknown field), `reviewer_is_owner`, `not_in_conversation`", body = ErrorBody),
    )
)]
async fn add_ticket(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<NewTicketRequest>,
) -> Result<(StatusCode, Json<TicketView>), ApiError> {
    let plan = path_id::<PlanId>(&id)?;
    let t = state.collab.add_ticket(plan, req).map_err(api)?;
    Ok((StatusCode::CREATED, Json(t)))
}

#[utoipa::path(
    get, path = "/v1/tickets/{id}", tag = "tickets",
    params(("id" = i64, Path, description = "Ticket id")),
    responses(
        (status = 200, description = "The ticket (B §1.1), its parts and what it waits for", body = TicketView),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such ticket", body = ErrorBody),
    )
)]
async fn get_ticket(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TicketView>, ApiError> {
    state
        .collab
        .ticket(path_id::<TicketId>(&id)?)
        .map(Json)
        .map_err(api)
}

#[utoipa::path(
    patch, path = "/v1/tickets/{id}", tag = "tickets",
    params(("id" = i64, Path, description = "Ticket id")),
    request_body = TicketPatchRequest,
    responses(
        (status = 200, description = "The edited ticket. A status edit moves the stage (source user) and supersedes the ticket's undecided hand-overs (T7)", body = TicketView),
        (status = 400, description = "The id is not a number, or the body is not JSON", body = ErrorBody),
        (status = 404, description = "No such ticket", body = ErrorBody),
        (status = 409, description = "`sample: true` refused: `not_large`, `ticket_through`, `already_sample`", body = ErrorBody),
        (status = 422, description = "`reviewer_is_owner`, `not_in_conversation`, `dependency_loop`, `depends_on_self`, `other_plan`, `parked_dependency`, `too_many_dependencies`, `unknown_ticket`, `invalid` (a bad status, a blank title, `sample: false`, an unknown field)", body = ErrorBody),
    )
)]
async fn patch_ticket(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<TicketPatchRequest>,
) -> Result<Json<TicketView>, ApiError> {
    state
        .collab
        .patch_ticket(path_id::<TicketId>(&id)?, req)
        .map(Json)
        .map_err(api)
}

#[utoipa::path(
    post, path = "/v1/tickets/{id}/parts", tag = "tickets",
    params(("id" = i64, Path, description = "Ticket id")),
    request_body = PartsRequest,
    responses(
        (status = 200, description = "The ticket with its parts; labels it has already stay as they are (T15)", body = TicketView),
        (status = 400, description = "The id is not a number, or the body is not JSON", body = ErrorBody),
        (status = 404, description = "No such ticket", body = ErrorBody),
        (status = 422, description = "`invalid`: no labels, or a blank one", body = ErrorBody),
    )
)]
async fn add_parts(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<PartsRequest>,
) -> Result<Json<TicketView>, ApiError> {
    state
        .collab
        .add_parts(path_id::<TicketId>(&id)?, req)
        .map(Json)
        .map_err(api)
}

#[utoipa::path(
    post, path = "/v1/tasks/{id}/large", tag = "tickets",
    params(("id" = i64, Path, description = "The job (plan) id")),
    request_body = LargeChoiceRequest,
    responses(
        (status = 200, description = "The job's size facts after the user's choice (`large_job_changed` when they changed)", body = PlanDeliverables),
        (status = 400, description = "The id is not a number, or the body is not JSON", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
        (status = 422, description = "`invalid`: choice is not no_need or treat_as_large", body = ErrorBody),
    )
)]
async fn choose_large(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<LargeChoiceRequest>,
) -> Result<Json<PlanDeliverables>, ApiError> {
    state
        .collab
        .choose_large(path_id::<PlanId>(&id)?, req)
        .map(Json)
        .map_err(api)
}
