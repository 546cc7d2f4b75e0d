//! MCP servers: their definitions (stored, editable while the daemon runs) with each one's live
//! status, and the MCP calls a turn made.
//!
//! Only the person reaches these routes (the API's token, as every route). No Bot tool calls
//! them: changing a server's definition is not an effect a Bot can make, so a held turn cannot
//! make it either.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::Value;
use troupe_core::RunId;
use troupe_mcp::{McpError, ServerDef, ServerView};
use troupe_store::McpCallRecord;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_servers, add_server))
        .routes(routes!(get_server, update_server, remove_server))
        .routes(routes!(restart_server))
        .routes(routes!(turn_mcp_calls))
}

impl From<McpError> for ApiError {
    fn from(e: McpError) -> Self {
        match e {
            McpError::Invalid(d) => ApiError::invalid(d.to_string()),
            McpError::NotFound(_) => ApiError::not_found(e.to_string()),
            McpError::Exists(_) => ApiError::conflict("exists", e.to_string()),
            McpError::Store(s) => troupe_collab::CollabError::from(s).into(),
        }
    }
}

#[utoipa::path(
    get, path = "/v1/mcp-servers", tag = "mcp",
    responses((status = 200, description = "Every MCP server with its status, by name", body = [ServerView]))
)]
async fn list_servers(State(state): State<AppState>) -> Json<Vec<ServerView>> {
    Json(state.mcp.list())
}

#[utoipa::path(
    post, path = "/v1/mcp-servers", tag = "mcp",
    request_body = ServerDef,
    responses(
        (status = 201, description = "The new server, stored and starting (or disabled)", body = ServerView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 409, description = "A server of that name exists (`exists`)", body = ErrorBody),
        (status = 422, description = "A bad definition; the message names the field", body = ErrorBody),
    )
)]
async fn add_server(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<(StatusCode, Json<ServerView>), ApiError> {
    let def = ServerDef::from_json(&body).map_err(McpError::from)?;
    Ok((StatusCode::CREATED, Json(state.mcp.add(def)?)))
}

#[utoipa::path(
    get, path = "/v1/mcp-servers/{name}", tag = "mcp",
    params(("name" = String, Path, description = "Server name")),
    responses(
        (status = 200, description = "The server's definition and live status, its tools with their schemas", body = ServerView),
        (status = 404, description = "No such server", body = ErrorBody),
    )
)]
async fn get_server(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<ServerView>, ApiError> {
    Ok(Json(state.mcp.get(&name)?))
}

#[utoipa::path(
    patch, path = "/v1/mcp-servers/{name}", tag = "mcp",
    params(("name" = String, Path, description = "Server name")),
    request_body(content = Object, description = "The definition's fields to change; `null` clears an optional one. The name cannot change."),
    responses(
        (status = 200, description = "The changed server, started again on its new definition", body = ServerView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 422, description = "The changed definition is bad; the message names the field", body = ErrorBody),
    )
)]
async fn update_server(
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiJson(patch): ApiJson<Value>,
) -> Result<Json<ServerView>, ApiError> {
    Ok(Json(state.mcp.update(&name, &patch)?))
}

#[utoipa::path(
    delete, path = "/v1/mcp-servers/{name}", tag = "mcp",
    params(("name" = String, Path, description = "Server name")),
    responses(
        (status = 204, description = "Removed: its process ended, its tools gone from the next turn"),
        (status = 404, description = "No such server", body = ErrorBody),
    )
)]
async fn remove_server(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.mcp.remove(&name)?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post, path = "/v1/mcp-servers/{name}/restart", tag = "mcp",
    params(("name" = String, Path, description = "Server name")),
    responses(
        (status = 202, description = "Its process is being started again (a failed one skips its backoff)", body = ServerView),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 409, description = "The server is disabled (`disabled`)", body = ErrorBody),
    )
)]
async fn restart_server(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<(StatusCode, Json<ServerView>), ApiError> {
    match state.mcp.restart(&name) {
        Ok(view) => Ok((StatusCode::ACCEPTED, Json(view))),
        // Nothing is wrong with the request, only with the server's state: enable it first.
        Err(McpError::Invalid(d)) => Err(ApiError::conflict("disabled", d.to_string())),
        Err(e) => Err(e.into()),
    }
}

#[utoipa::path(
    get, path = "/v1/turns/{id}/mcp-calls", tag = "mcp",
    params(("id" = i64, Path, description = "Turn (run) id")),
    responses(
        (status = 200, description = "The MCP calls the turn made, read-only or not, in order", body = [McpCallRecord]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such turn", body = ErrorBody),
    )
)]
async fn turn_mcp_calls(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<McpCallRecord>>, ApiError> {
    let run = path_id::<RunId>(&id)?;
    let calls = state
        .collab
        .store()
        .read(|tx| {
            // An unknown turn is a 404, as for its commands.
            tx.run(run)?;
            tx.mcp_calls(run)
        })
        .map_err(troupe_collab::CollabError::from)?;
    Ok(Json(calls))
}
