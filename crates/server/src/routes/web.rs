//! The web page, embedded in the binary: each file served at its name with its type.

use crate::AppState;
use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every file of the page: (path, content type, body).
const FILES: &[(&str, &str, &str)] = &[
    ("/", HTML, include_str!("../../web/index.html")),
    ("/app.js", JS, include_str!("../../web/app.js")),
    ("/workflow.js", JS, include_str!("../../web/workflow.js")),
    ("/group.js", JS, include_str!("../../web/group.js")),
    ("/commands.js", JS, include_str!("../../web/commands.js")),
    ("/work.js", JS, include_str!("../../web/work.js")),
    ("/holds.js", JS, include_str!("../../web/holds.js")),
    (
        "/deliverables.js",
        JS,
        include_str!("../../web/deliverables.js"),
    ),
    (
        "/check_text.js",
        JS,
        include_str!("../../web/check_text.js"),
    ),
    ("/mcp.js", JS, include_str!("../../web/mcp.js")),
    ("/lattice.js", JS, include_str!("../../web/lattice.js")),
    ("/boss.js", JS, include_str!("../../web/boss.js")),
    ("/worklog.js", JS, include_str!("../../web/worklog.js")),
    (
        "/requirements.js",
        JS,
        include_str!("../../web/requirements.js"),
    ),
    (
        "/words_checks.js",
        JS,
        include_str!("../../web/words_checks.js"),
    ),
    ("/job_turns.js", JS, include_str!("../../web/job_turns.js")),
    ("/job_who.js", JS, include_str!("../../web/job_who.js")),
    ("/job_need.js", JS, include_str!("../../web/job_need.js")),
    ("/engines.js", JS, include_str!("../../web/engines.js")),
    ("/job_kinds.js", JS, include_str!("../../web/job_kinds.js")),
    ("/focus.js", JS, include_str!("../../web/focus.js")),
    (
        "/ticket_settings.js",
        JS,
        include_str!("../../web/ticket_settings.js"),
    ),
    (
        "/ticket_board.js",
        JS,
        include_str!("../../web/ticket_board.js"),
    ),
    ("/job_plan.js", JS, include_str!("../../web/job_plan.js")),
    ("/job_tabs.js", JS, include_str!("../../web/job_tabs.js")),
    ("/job_holds.js", JS, include_str!("../../web/job_holds.js")),
    ("/job_state.js", JS, include_str!("../../web/job_state.js")),
    ("/job_retro.js", JS, include_str!("../../web/job_retro.js")),
    (
        "/panel_fold.js",
        JS,
        include_str!("../../web/panel_fold.js"),
    ),
    (
        "/bot_memories.js",
        JS,
        include_str!("../../web/bot_memories.js"),
    ),
    (
        "/bot_skills.js",
        JS,
        include_str!("../../web/bot_skills.js"),
    ),
    (
        "/bot_routines.js",
        JS,
        include_str!("../../web/bot_routines.js"),
    ),
    ("/edit.js", JS, include_str!("../../web/edit.js")),
    ("/line_flow.js", JS, include_str!("../../web/line_flow.js")),
    ("/ceiling.js", JS, include_str!("../../web/ceiling.js")),
    ("/quality.js", JS, include_str!("../../web/quality.js")),
    (
        "/notifications.js",
        JS,
        include_str!("../../web/notifications.js"),
    ),
    ("/unread.js", JS, include_str!("../../web/unread.js")),
    ("/activity.js", JS, include_str!("../../web/activity.js")),
    ("/bots.js", JS, include_str!("../../web/bots.js")),
    ("/cutoff.js", JS, include_str!("../../web/cutoff.js")),
    ("/http.js", JS, include_str!("../../web/http.js")),
    (
        "/runtime_boss.js",
        JS,
        include_str!("../../web/runtime_boss.js"),
    ),
    ("/style.css", CSS, include_str!("../../web/style.css")),
    (
        "/deliverables.css",
        CSS,
        include_str!("../../web/deliverables.css"),
    ),
    (
        "/supervision.css",
        CSS,
        include_str!("../../web/supervision.css"),
    ),
];

pub fn router() -> Router<AppState> {
    FILES
        .iter()
        .fold(Router::new(), |router, &(path, kind, body)| {
            router.route(
                path,
                get(move || async move { ([(header::CONTENT_TYPE, kind)], body).into_response() }),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::FILES;

    /// A script or stylesheet the page names but the daemon does not serve stops the whole page
    /// at start (app.js calls every module): each one named must be in `FILES`.
    #[test]
    fn every_script_and_stylesheet_the_page_names_is_served() {
        let page = FILES.iter().find(|f| f.0 == "/").expect("the page").2;
        let named: Vec<&str> = page
            .split(['"', '\''])
            .filter(|s| s.starts_with('/') && (s.ends_with(".js") || s.ends_with(".css")))
            .collect();
        assert!(named.len() > 10, "the page names its files: {named:?}");
        for path in named {
            assert!(
                FILES.iter().any(|f| f.0 == path),
                "{path} is named by the page but not served"
            );
        }
    }
}
