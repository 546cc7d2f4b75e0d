//! Real-browser test of the Runtime Boss panel (issue 18 item 20): "Open boss session" while the
//! mode is off shows the 409 inline and opens nothing; switched on and saved, it opens the
//! boss's conversation, where the kickoff turn greets the person.
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`):
//!
//! ```text
//! cargo test -p troupe-server --test browser_runtime_boss
//! ```

mod browser_support;

use anyhow::Result;
use browser_support::page::{SHORT, TURN, click, elements, wait_text};
use browser_support::{BrowserRun, Daemon, poll};
use fantoccini::Client;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_opens_the_runtime_boss_only_when_on() {
    let Some(run) = BrowserRun::start().await else {
        return;
    };
    let result = scenario(&run.client, &run.daemon, run.tmp.path()).await;
    run.finish(result, "browser-runtime-boss-failure.png").await;
}

/// The default model the Runtime Boss Bot runs on: it greets.
const GREETING: &str = "Hello, I am your Runtime Boss.";

async fn scenario(c: &Client, daemon: &Daemon, dir: &std::path::Path) -> Result<()> {
    let script = dir.join("boss.json");
    std::fs::write(
        &script,
        format!(r#"{{"steps":[{{"text":"{GREETING}"}}],"on_exhausted":"repeat_last"}}"#),
    )?;
    let set = daemon
        .http()
        .put(format!("{}/v1/roles/default", daemon.base_url))
        .json(&serde_json::json!({"kind": "scripted", "model": "s", "script": script.display().to_string()}))
        .send()
        .await?;
    anyhow::ensure!(
        set.status().is_success(),
        "PUT /v1/roles/default: {}",
        set.status()
    );
    daemon.log_in(c).await?;
    click(c, "#runtime-boss-details > summary").await?;
    // Off: the 409 shows inline and no conversation opens.
    click(c, "#rb-open").await?;
    wait_text(c, "#rb-error", "Runtime Boss Mode is off").await?;
    assert!(
        elements(c, ".session-item").await?.is_empty(),
        "nothing was opened while off"
    );
    // On and saved: Open lands in the boss's conversation, greeted by its kickoff turn.
    click(c, "#rb-mode").await?;
    click(c, "#rb-save").await?;
    wait_text(c, "#rb-note", "Saved.").await?;
    click(c, "#rb-open").await?;
    poll("the boss's conversation to open", SHORT, || async {
        let active = elements(c, ".session-item.active").await?;
        Ok(active
            .iter()
            .any(|a| a.text.contains("Runtime Boss"))
            .then_some(()))
    })
    .await?;
    poll("the boss's greeting", TURN, || async {
        let said = elements(c, ".msg.bot").await?;
        Ok(said
            .iter()
            .any(|m| m.visible && m.text.contains(GREETING))
            .then_some(()))
    })
    .await?;
    Ok(())
}
