//! Real-browser test of the page's notifications: a Bot's work ends blocked on something only the
//! person has, so a work question waits; the sidebar's Notifications button shows the count, its
//! list names the Bot and the job and opens the conversation, and the count goes back to none
//! live when the question is answered. A question the work went on without closes on the page,
//! live, saying so.
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`):
//!
//! ```text
//! cargo test -p troupe-server --test browser_notifications
//! ```

mod browser_support;

use anyhow::{Context, Result, anyhow};
use browser_support::page::{SHORT, click, elements, wait_text};
use browser_support::{BrowserRun, Daemon, poll};
use fantoccini::Client;
use serde_json::{Value, json};

/// Alpha opens a job on "deploy" and ends blocked on a key; an answer lets it go on.
const ALPHA: &str = r#"{"steps":[
    {"text":"unused"},
    {"tool_calls":[{"name":"end_turn","arguments":{"reason":"blocked","needs_from_user":"the staging API key"}}]}],
  "rules":[
    {"when_user_contains":"the person answered","reply":{"text":"Thanks, going on."}},
    {"when_user_contains":"deploy","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"deploy"}}}]}}
  ]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_counts_and_lists_notifications_live() {
    let Some(run) = BrowserRun::start().await else {
        return;
    };
    let script = run.tmp.path().join("alpha.json");
    std::fs::write(&script, ALPHA).expect("write script");
    let result = scenario(&run.client, &run.daemon, &script).await;
    run.finish(result, "browser-notifications-failure.png")
        .await;
}

async fn call(daemon: &Daemon, method: reqwest::Method, path: &str, body: Value) -> Result<Value> {
    let r = daemon
        .http()
        .request(method, format!("{}{path}", daemon.base_url))
        .json(&body)
        .send()
        .await?;
    let status = r.status();
    let v: Value = r.json().await?;
    anyhow::ensure!(status.is_success(), "{path}: {status} {v}");
    Ok(v)
}

/// Alpha, on the scripted model `script`.
async fn alpha(daemon: &Daemon, script: &std::path::Path) -> Result<Value> {
    call(
        daemon,
        reqwest::Method::POST,
        "/v1/bots",
        json!({"name": "Alpha", "endpoint": {"kind": "scripted", "model": "s",
               "script": script.display().to_string()}}),
    )
    .await
}

/// A group with Alpha, and Alpha's work on "deploy" blocked on the person: answers the group's
/// id and the work question card's line id.
async fn blocked_work(daemon: &Daemon, script: &std::path::Path) -> Result<(i64, i64)> {
    let post = reqwest::Method::POST;
    let bot = alpha(daemon, script).await?;
    let group = call(
        daemon,
        post.clone(),
        "/v1/sessions",
        json!({"kind": "group", "title": "Ops", "bot_ids": [bot["id"]]}),
    )
    .await?;
    let sid = group["id"]
        .as_i64()
        .ok_or_else(|| anyhow!("no id in {group}"))?;
    call(
        daemon,
        post,
        &format!("/v1/sessions/{sid}/messages"),
        json!({"body": "@Alpha deploy please"}),
    )
    .await?;
    let card = poll("the work question card", SHORT, || async {
        let lines = call(
            daemon,
            reqwest::Method::GET,
            &format!("/v1/sessions/{sid}/messages"),
            json!(null),
        )
        .await?;
        Ok(lines
            .as_array()
            .into_iter()
            .flatten()
            .find(|l| l["kind"] == "ask")
            .and_then(|l| l["id"].as_i64()))
    })
    .await?;
    Ok((sid, card))
}

async fn count(c: &Client) -> Result<Option<String>> {
    Ok(elements(c, "[data-testid=notifications-count]")
        .await?
        .into_iter()
        .find(|e| e.visible)
        .map(|e| e.text))
}

async fn scenario(c: &Client, daemon: &Daemon, script: &std::path::Path) -> Result<()> {
    daemon.log_in(c).await?;
    poll("the Notifications button", SHORT, || async {
        Ok((!elements(c, "[data-testid=notifications-open]")
            .await?
            .is_empty())
        .then_some(()))
    })
    .await?;
    assert_eq!(count(c).await?, None, "no count while nothing is open");

    let (sid, card) = blocked_work(daemon, script).await?;
    // The count arrives live, from the global stream.
    poll("the count to show 1", SHORT, || async {
        Ok((count(c).await?.as_deref() == Some("1")).then_some(()))
    })
    .await?;
    click(c, "[data-testid=notifications-open]").await?;
    wait_text(
        c,
        "#notifications-panel .notification-title",
        "Alpha is waiting for your answer on \u{201c}deploy please\u{201d}",
    )
    .await?;
    wait_text(
        c,
        "#notifications-panel .notification-body",
        "the staging API key",
    )
    .await?;
    // Open goes to the conversation the question waits in.
    browser_support::page::click_in(c, "#notifications-panel .notification", "Alpha", "button")
        .await
        .context("press Open")?;
    poll("the group to open", SHORT, || async {
        let active = elements(c, ".session-item.active").await?;
        Ok(active.iter().any(|a| a.text.contains("Ops")).then_some(()))
    })
    .await?;

    // The answer resolves it; the count goes away without a reload.
    call(
        daemon,
        reqwest::Method::POST,
        &format!("/v1/messages/{card}/work-answer"),
        json!({"body": "sk-staging-123", "request_id": "r1"}),
    )
    .await?;
    poll("the count to go", SHORT, || async {
        Ok(count(c).await?.is_none().then_some(()))
    })
    .await?;
    let all = call(
        daemon,
        reqwest::Method::GET,
        "/v1/notifications?status=all",
        json!(null),
    )
    .await?;
    assert_eq!(all["notifications"][0]["resolution"], "answered", "{all}");
    assert_eq!(all["notifications"][0]["session_id"], sid);
    Ok(())
}

/// Alpha at its desk in a direct: ends blocked on a key, then goes on without it when told.
const DESK: &str = r#"{"steps":[{"text":"unused"}],"rules":[
    {"when_user_contains":"deploy please","reply":{"tool_calls":[{"name":"end_turn","arguments":{"reason":"blocked","needs_from_user":"the staging API key"}}]}},
    {"when_user_contains":"never mind","reply":{"text":"Going on without it."}}
]}"#;

/// WQ-8 on the page: the card waits with its answer box; once the person's plain line took the
/// work on without the answer, the card says it takes no answer, without a reload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_closes_a_question_the_work_went_on_without() {
    let Some(run) = BrowserRun::start().await else {
        return;
    };
    let script = run.tmp.path().join("desk.json");
    std::fs::write(&script, DESK).expect("write script");
    let result = superseded(&run.client, &run.daemon, &script).await;
    run.finish(result, "browser-question-superseded-failure.png")
        .await;
}

async fn superseded(c: &Client, daemon: &Daemon, script: &std::path::Path) -> Result<()> {
    let post = reqwest::Method::POST;
    let bot = alpha(daemon, script).await?;
    let direct = call(
        daemon,
        post.clone(),
        "/v1/sessions",
        json!({"kind": "direct", "title": "Deploys", "bot_ids": [bot["id"]]}),
    )
    .await?;
    let sid = direct["id"]
        .as_i64()
        .ok_or_else(|| anyhow!("no id in {direct}"))?;
    let path = format!("/v1/sessions/{sid}/messages");
    call(
        daemon,
        post.clone(),
        &path,
        json!({"body": "deploy please"}),
    )
    .await?;
    daemon.log_in(c).await?;
    browser_support::page::click_session(c, "Deploys").await?;
    wait_text(
        c,
        "[data-testid=ask-card]",
        "Alpha needs from you: the staging API key",
    )
    .await?;
    poll("the card's answer box", SHORT, || async {
        Ok((!elements(c, "[data-testid=ask-card] form").await?.is_empty()).then_some(()))
    })
    .await?;
    call(daemon, post, &path, json!({"body": "never mind, go on"})).await?;
    wait_text(
        c,
        "[data-testid=ask-card] .ask-closed",
        "went on without it: this question takes no answer now",
    )
    .await?;
    assert!(
        elements(c, "[data-testid=ask-card] form").await?.is_empty(),
        "no answer box on a closed question"
    );
    Ok(())
}
