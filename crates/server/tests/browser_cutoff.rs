//! Real-browser test of Continue under a Bot's cut-off line (WI-13): in a group, a Bot whose
//! model calls fail leaves failed lines, and only its latest offers Continue; pressed, the work
//! is picked up again (`POST /v1/turns/:id/continue`), the Bot answers, and the failed line
//! says it was picked up and offers Continue no more.
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`):
//!
//! ```text
//! cargo test -p troupe-server --test browser_cutoff
//! ```

mod browser_support;

use anyhow::{Context, Result, bail};
use browser_support::page::{
    SHORT, add_scripted_bot, click_session, elements, fill, wait_bot_line, wait_text,
};
use browser_support::{BrowserRun, Daemon, poll};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

const PICKED_UP: &str = "Picked it up where it stopped.";

/// Fails its first call with a 401; answers once it reads that the person pressed Continue.
fn flaky_script() -> String {
    json!({
        "name": "browser-flaky",
        "steps": [{ "error": { "kind": "auth", "status": 401, "message": "bad key" } }],
        "rules": [{ "when_user_contains": "pressed Continue", "reply": { "text": PICKED_UP } }],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_continues_a_failed_turn_from_its_line() {
    let Some(run) = BrowserRun::start().await else {
        return;
    };
    let script = run.tmp.path().join("flaky.json");
    std::fs::write(&script, flaky_script()).expect("write script");
    let result = scenario(&run.client, &run.daemon, &script).await;
    run.finish(result, "browser-cutoff-failure.png").await;
}

async fn scenario(c: &Client, daemon: &Daemon, script: &std::path::Path) -> Result<()> {
    daemon.log_in(c).await?;
    add_scripted_bot(c, "Flaky", script).await?;
    let http = daemon.http();
    let bots: Value = http
        .get(format!("{}/v1/bots", daemon.base_url))
        .send()
        .await?
        .json()
        .await?;
    let flaky = bots
        .as_array()
        .and_then(|a| a.iter().find(|b| b["name"] == "Flaky"))
        .context("Flaky in the Bots list")?["id"]
        .clone();
    let r = http
        .post(format!("{}/v1/sessions", daemon.base_url))
        .json(&json!({"kind": "group", "bot_ids": [flaky], "title": "Crew"}))
        .send()
        .await?;
    if !r.status().is_success() {
        bail!("creating the group: {}", r.text().await?);
    }
    c.refresh().await?;
    wait_text(c, ".session-item", "Crew").await?;
    click_session(c, "Crew").await?;

    // Two lines, two failed turns: only the later failed line offers Continue (the earlier
    // one's work may have been done since; running it again would repeat it).
    for line in ["@Flaky please build it", "@Flaky are you there?"] {
        fill(c, "#composer", line).await?;
        c.find(Locator::Css("#send")).await?.click().await?;
        wait_text(c, ".msg.user", line).await?;
    }
    poll(
        "two failed lines, Continue on the later only",
        SHORT,
        || async {
            let failed = elements(c, ".msg.bot.failed").await?;
            let buttons = elements(c, ".msg.bot.failed .cutoff-continue").await?;
            Ok(
                (failed.len() == 2 && buttons.iter().filter(|b| b.visible).count() == 1)
                    .then_some(()),
            )
        },
    )
    .await?;
    let lines = c.find_all(Locator::Css(".msg.bot.failed")).await?;
    let later = lines.last().context("the later failed line")?;
    later
        .find(Locator::Css(".cutoff-continue"))
        .await
        .context("Continue on the later failed line")?
        .click()
        .await?;

    wait_bot_line(c, "Flaky", PICKED_UP).await?;
    wait_text(c, ".msg.bot.failed .cutoff-note", "Picked up again").await?;
    poll("no Continue left on the failed line", SHORT, || async {
        Ok(elements(c, ".cutoff-continue")
            .await?
            .iter()
            .all(|b| !b.visible)
            .then_some(()))
    })
    .await?;
    Ok(())
}
