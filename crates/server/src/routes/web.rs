//! The web page, embedded in the binary.

use crate::AppState;
use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

const INDEX: &str = include_str!("../../web/index.html");
const APP_JS: &str = include_str!("../../web/app.js");
const WORKFLOW_JS: &str = include_str!("../../web/workflow.js");
const GROUP_JS: &str = include_str!("../../web/group.js");
const COMMANDS_JS: &str = include_str!("../../web/commands.js");
const WORK_JS: &str = include_str!("../../web/work.js");
const HOLDS_JS: &str = include_str!("../../web/holds.js");
const DELIVERABLES_JS: &str = include_str!("../../web/deliverables.js");
const MCP_JS: &str = include_str!("../../web/mcp.js");
const LATTICE_JS: &str = include_str!("../../web/lattice.js");
const BOSS_JS: &str = include_str!("../../web/boss.js");
const STYLE: &str = include_str!("../../web/style.css");
const WORKLOG_JS: &str = include_str!("../../web/worklog.js");
const REQUIREMENTS_JS: &str = include_str!("../../web/requirements.js");
const EDIT_JS: &str = include_str!("../../web/edit.js");
const CEILING_JS: &str = include_str!("../../web/ceiling.js");
const QUALITY_JS: &str = include_str!("../../web/quality.js");
const NOTIFICATIONS_JS: &str = include_str!("../../web/notifications.js");
const UNREAD_JS: &str = include_str!("../../web/unread.js");
const ACTIVITY_JS: &str = include_str!("../../web/activity.js");
const BOTS_JS: &str = include_str!("../../web/bots.js");
const CUTOFF_JS: &str = include_str!("../../web/cutoff.js");
const HTTP_JS: &str = include_str!("../../web/http.js");
const RUNTIME_BOSS_JS: &str = include_str!("../../web/runtime_boss.js");
const SUPERVISION_CSS: &str = include_str!("../../web/supervision.css");

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response()
            }),
        )
        .route(
            "/app.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    APP_JS,
                )
                    .into_response()
            }),
        )
        .route(
            "/workflow.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    WORKFLOW_JS,
                )
                    .into_response()
            }),
        )
        .route(
            "/group.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    GROUP_JS,
                )
                    .into_response()
            }),
        )
        .route(
            "/commands.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    COMMANDS_JS,
                )
                    .into_response()
            }),
        )
        .route(
            "/work.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    WORK_JS,
                )
                    .into_response()
            }),
        )
        .route(
            "/holds.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    HOLDS_JS,
                )
                    .into_response()
            }),
        )
        .route(
            "/deliverables.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    DELIVERABLES_JS,
                )
                    .into_response()
            }),
        )
        .route(
            "/mcp.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    MCP_JS,
                )
                    .into_response()
            }),
        )
        .route(
            "/lattice.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    LATTICE_JS,
                )
                    .into_response()
            }),
        )
        .route(
            "/boss.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    BOSS_JS,
                )
                    .into_response()
            }),
        )
        .route("/worklog.js", get(|| async { script(WORKLOG_JS) }))
        .route(
            "/requirements.js",
            get(|| async { script(REQUIREMENTS_JS) }),
        )
        .route("/edit.js", get(|| async { script(EDIT_JS) }))
        .route("/ceiling.js", get(|| async { script(CEILING_JS) }))
        .route("/quality.js", get(|| async { script(QUALITY_JS) }))
        .route(
            "/notifications.js",
            get(|| async { script(NOTIFICATIONS_JS) }),
        )
        .route("/unread.js", get(|| async { script(UNREAD_JS) }))
        .route("/activity.js", get(|| async { script(ACTIVITY_JS) }))
        .route("/bots.js", get(|| async { script(BOTS_JS) }))
        .route("/cutoff.js", get(|| async { script(CUTOFF_JS) }))
        .route("/http.js", get(|| async { script(HTTP_JS) }))
        .route(
            "/runtime_boss.js",
            get(|| async { script(RUNTIME_BOSS_JS) }),
        )
        .route(
            "/supervision.css",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
                    SUPERVISION_CSS,
                )
                    .into_response()
            }),
        )
        .route(
            "/style.css",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
            }),
        )
}

fn script(body: &'static str) -> axum::response::Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        body,
    )
        .into_response()
}
