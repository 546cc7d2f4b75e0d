//! The daemon's HTTP face: the API under `/v1` (one route module per resource), live events
//! over Server-Sent Events, the generated OpenAPI document, and the web page at `/`. Handlers
//! hold no domain logic: they validate input, call `troupe-collab`, and shape the answer.

pub mod access;
pub mod bootstrap;
pub mod error;
pub mod hosts;
pub mod routes;
pub mod serve;
pub mod state;

pub use error::ApiError;
pub use state::AppState;

use axum::Router;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

/// Request bodies larger than this are refused with 413.
pub const BODY_LIMIT: usize = 1024 * 1024;

#[derive(OpenApi)]
#[openapi(
    info(title = "Troupe", description = "A durable runtime for teams of LLM agents."),
    tags(
        (name = "bots", description = "Bots and their model endpoints"),
        (name = "roles", description = "Which model each role uses"),
        (name = "sessions", description = "Conversations and their lines"),
        (name = "turns", description = "What a Bot's turn did, and the composer Stop in a direct"),
        (name = "holds", description = "The person's stops, kept until they lift them, and their work log"),
        (name = "workflows", description = "A session's workflow (Plan, Light Loop), Continue and Abandon"),
        (name = "notes", description = "Versioned notes and Blueprints"),
        (name = "blueprint-loops", description = "Executions of a Blueprint, audited before they end"),
        (name = "boss", description = "Boss Mode: a conversation as the root of a tree of persistent workers"),
        (name = "runtime-boss", description = "Runtime Boss Mode: the settings, opening the standing coordinator session, its name"),
        (name = "lattice", description = "Lattice Runs: a large goal aligned, planned as a Pathway and carried out Step by Step"),
        (name = "agenda", description = "Scheduled deliveries into a session"),
        (name = "check-backs", description = "One-time timers Bots booked for their own work"),
        (name = "routines", description = "A Bot's work on a schedule: each run a ticket of the routine's standing job"),
        (name = "work-items", description = "Bots' desks and their work on jobs"),
        (name = "tasks", description = "Plans (jobs): one job toward a goal, across conversations"),
        (name = "child-tasks", description = "Child tasks a session's Bot handed to other agents"),
        (name = "events", description = "Live events"),
        (name = "external-jobs", description = "Renders media servers accepted, polled and settled by the app"),
        (name = "nodes", description = "The daemon processes sharing this database"),
        (name = "mcp", description = "MCP servers whose tools Bots use, and the MCP calls a turn made"),
        (name = "channels", description = "Outside chats: each channel account's signed inbound webhook"),
        (name = "permissions", description = "A runtime boss's channel pushes waiting for a person's decision"),
        (name = "notifications", description = "What the person is told outside the conversation: stopped work, blocked work, questions waiting"),
        (name = "quality", description = "Quality events, the quality report, the model's-problem mark, timeout lessons and model prices"),
        (name = "access", description = "One-time login links for the web page"),
        (name = "debug", description = "Test controls of `troupe serve --manual-clock`: move the clock, run one scheduler tick")
    )
)]
struct ApiDoc;

/// Every API route, with the OpenAPI document generated from them.
pub fn api() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(routes::bots::router())
        .merge(routes::roles::router())
        .merge(routes::sessions::router())
        .merge(routes::clearing::router())
        .merge(routes::members::router())
        .merge(routes::check_backs::router())
        .merge(routes::work_items::router())
        .merge(routes::delegations::router())
        .merge(routes::messages::router())
        .merge(routes::turns::router())
        .merge(routes::holds::router())
        .merge(routes::workflows::router())
        .merge(routes::notes::router())
        .merge(routes::blueprint_loops::router())
        .merge(routes::lattice::router())
        .merge(routes::boss::router())
        .merge(routes::boss_open::router())
        .merge(routes::settings_runtime::router())
        .merge(routes::agenda::router())
        .merge(routes::plans::router())
        .merge(routes::submissions::router())
        .merge(routes::checks::router())
        .merge(routes::requirements::router())
        .merge(routes::engines::router())
        .merge(routes::tickets::router())
        .merge(routes::child_tasks::router())
        .merge(routes::events::router())
        .merge(routes::external_jobs::router())
        .merge(routes::nodes::router())
        .merge(routes::mcp::router())
        .merge(routes::channels::router())
        .merge(routes::permissions::router())
        .merge(routes::debug::router())
        .merge(routes::work_log::router())
        .merge(routes::notifications::router())
        .merge(routes::unread::router())
        .merge(routes::quality::router())
        .merge(routes::memories::router())
        .merge(routes::skills::router())
        .merge(routes::routines::router())
        .merge(routes::reflections::router())
        .merge(routes::login_links::router())
        .split_for_parts()
}

/// The whole application: API, OpenAPI document, web page, the Host and Origin checks, access
/// control and body limit. `host_rule` must be built from the address the listener actually bound.
pub fn app(state: AppState, host_rule: hosts::HostRule) -> Router {
    let (api, doc) = api();
    let doc = std::sync::Arc::new(doc);
    api.route(
        "/v1/openapi.json",
        axum::routing::get(move || {
            let doc = doc.clone();
            async move { axum::Json((*doc).clone()) }
        }),
    )
    .merge(routes::web::router())
    .route("/login", axum::routing::get(access::login))
    .fallback(error::not_found)
    // Inside the token check: a stranger's body is not read.
    .layer(axum::middleware::from_fn(error::limit_body))
    .layer(axum::middleware::from_fn_with_state(
        state.clone(),
        access::require_token,
    ))
    // Runs before the token check: a request for another host is refused before anything
    // else looks at it.
    .layer(axum::middleware::from_fn_with_state(
        std::sync::Arc::new(host_rule),
        hosts::check_host_and_origin,
    ))
    .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
    .with_state(state)
}
