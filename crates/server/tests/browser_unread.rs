//! Real-browser test of the row under a person's line no Bot has read yet (UQ-16, UQ-17): while
//! the Bot streams its answer, a second line shows "Queued · read at its next step" with Take
//! back; pressed, the line says it was taken back and its words return to the empty composer;
//! a line the Bot then reads has no row once read.
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`):
//!
//! ```text
//! cargo test -p troupe-server --test browser_unread
//! ```

mod browser_support;

use anyhow::Result;
use browser_support::page::{
    SHORT, TURN, add_scripted_bot, click_in, elements, fill, start_conversation, wait_text,
};
use browser_support::{BrowserRun, Daemon, poll};
use fantoccini::{Client, Locator};

/// The first answer streams for about six seconds; later ones come at once.
const SLOW: &str = r#"{"steps":[
    {"text":"Here is everything about it, told slowly and at length.","chunks":60,"chunk_delay_ms":100},
    {"text":"Noted."}],"on_exhausted":"repeat_last"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_takes_back_a_line_no_bot_has_read() {
    let Some(run) = BrowserRun::start().await else {
        return;
    };
    let script = run.tmp.path().join("slow.json");
    std::fs::write(&script, SLOW).expect("write script");
    let result = scenario(&run.client, &run.daemon, &script).await;
    run.finish(result, "browser-unread-failure.png").await;
}

async fn send(c: &Client, line: &str) -> Result<()> {
    fill(c, "#composer", line).await?;
    c.find(Locator::Css("#send")).await?.click().await?;
    wait_text(c, ".msg.user", line).await
}

async fn composer(c: &Client) -> Result<String> {
    Ok(c.find(Locator::Css("#composer"))
        .await?
        .prop("value")
        .await?
        .unwrap_or_default())
}

async fn scenario(c: &Client, daemon: &Daemon, script: &std::path::Path) -> Result<()> {
    daemon.log_in(c).await?;
    add_scripted_bot(c, "Slow", script).await?;
    start_conversation(c, "Slow", "Long talk").await?;
    send(c, "tell me everything").await?;
    // The Bot is streaming: a line now waits in its inbox, unread.
    wait_text(c, ".msg.bot", "Here is").await?;
    send(c, "never mind the second part").await?;
    wait_text(
        c,
        ".msg.user [data-testid=unread-row]",
        "Queued \u{b7} read at its next step",
    )
    .await?;
    click_in(
        c,
        ".msg.user",
        "never mind the second part",
        ".unread-take-back",
    )
    .await?;
    wait_text(c, ".msg.user .taken-back", "You took this line back").await?;
    poll("the words back in the composer", SHORT, || async {
        Ok((composer(c).await? == "never mind the second part").then_some(()))
    })
    .await?;
    fill(c, "#composer", "").await?;
    // The answer finishes without the line; the next line is read at once and has no row.
    wait_text(c, ".msg.bot", "told slowly and at length.").await?;
    poll("the Bot to finish", TURN, || async {
        let working = elements(c, ".msg.bot.streaming").await?;
        Ok(working.is_empty().then_some(()))
    })
    .await?;
    send(c, "short one").await?;
    wait_text(c, ".msg.bot", "Noted.").await?;
    poll("no row under a read line", SHORT, || async {
        Ok(elements(c, "[data-testid=unread-row]")
            .await?
            .is_empty()
            .then_some(()))
    })
    .await?;
    Ok(())
}
