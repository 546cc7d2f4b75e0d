//! Real-browser test of a Bot's routines in the Bots panel, on an API served in-process. The
//! person opens Ada's "Routines", where:
//!
//! - a routine every 5 minutes is refused with the server's reason, nothing made, and what was
//!   typed kept;
//! - one every 2 hours is added: "Routines (1)", listed with where it speaks, "every 2 h" and
//!   its next run;
//! - Run now while a stop holds Ada shows the server's refusal, and no run is made;
//! - Pause shows "paused" (and the API agrees), Resume a next run again (and the API agrees);
//! - Delete, confirmed, removes it (and the API agrees);
//! - a routine made elsewhere (over the API, as Ada could) shows in the open fold by itself.
//!
//! Needs Debian's `chromium` and `chromium-driver`; without them the test prints a notice and
//! returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_routines
//! ```
//!
//! Screenshot: `target/browser-routines.png`; on failure `target/browser-routines-failure.png`,
//! with the page text printed.

mod browser_support;

use anyhow::{Result, bail};
use browser_support::in_process::{App, finish};
use browser_support::page::{fill, pick, press, save_screenshot, wait_text};
use fantoccini::Client;
use serde_json::json;
use troupe_core::{BotId, SessionId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routines_on_the_page() {
    let app = App::start().await;
    let Some((driver, client)) = app.open_browser().await else {
        return;
    };
    let ada = app
        .scripted_bot("Ada", r#"{"steps":[{"text":"ok"}]}"#)
        .await;
    let direct = app.direct(ada).await;
    let result = scenario(&client, &app, ada, direct).await;
    finish(result, driver, client, "browser-routines-failure.png").await;
}

async fn scenario(c: &Client, app: &App, ada: BotId, direct: SessionId) -> Result<()> {
    c.goto(&app.url("/")).await?;
    let fold = format!(".bot-routines[data-bot-id=\"{}\"]", ada.0);
    press(c, "#bots-details > summary").await?;
    press(c, &format!("{fold} > summary")).await?;
    wait_text(c, &format!("{fold} .bot-routine-list"), "No routines yet.").await?;

    // Every 5 minutes is too often: the reason shows, nothing is made, the words stay.
    fill(c, &format!("{fold} .routine-new-name"), "Morning brief").await?;
    fill(
        c,
        &format!("{fold} .routine-new-instruction"),
        "Sum up the night in brief.md.",
    )
    .await?;
    fill(c, &format!("{fold} .routine-every-n"), "5").await?;
    pick(c, &format!("{fold} .routine-every-unit"), "minutes").await?;
    press(c, &format!("{fold} .bot-routine-add-button")).await?;
    wait_text(c, &format!("{fold} .bot-routine-error"), "at least 900").await?;
    if app.get("/v1/routines").await != json!([]) {
        bail!("a refused routine was made");
    }
    let kept = c
        .find(fantoccini::Locator::Css(&format!(
            "{fold} .routine-new-name"
        )))
        .await?
        .prop("value")
        .await?;
    if kept.as_deref() != Some("Morning brief") {
        bail!("the name typed was lost: {kept:?}");
    }

    // The Bots list drawn again (a new Bot, read when the panel opens again) keeps Ada's open
    // fold and what was typed in it.
    app.scripted_bot("Bea", r#"{"steps":[{"text":"hi"}]}"#)
        .await;
    c.execute(
        "const d = document.querySelector('#bots-details'); d.open = false; d.open = true;",
        vec![],
    )
    .await?;
    wait_text(c, "#bot-list", "Bea").await?;
    let (open, name) = (
        c.execute(
            "return document.querySelector(arguments[0]).open",
            vec![json!(fold)],
        )
        .await?,
        c.execute(
            "return document.querySelector(arguments[0] + ' .routine-new-name').value",
            vec![json!(fold)],
        )
        .await?,
    );
    if open != json!(true) || name != json!("Morning brief") {
        bail!(
            "a redraw of the Bots list closed the fold or lost the name: open {open}, name {name}"
        );
    }

    // Every 2 hours: listed with its place, schedule and next run.
    fill(c, &format!("{fold} .routine-every-n"), "2").await?;
    pick(c, &format!("{fold} .routine-every-unit"), "hours").await?;
    press(c, &format!("{fold} .bot-routine-add-button")).await?;
    wait_text(c, &format!("{fold} > summary"), "Routines (1)").await?;
    wait_text(c, &format!("{fold} .bot-routine"), "every 2 h").await?;
    wait_text(c, &format!("{fold} .bot-routine-next"), "next run").await?;
    wait_text(c, &format!("{fold} .bot-routine"), "Sum up the night").await?;
    let title = app.get(&format!("/v1/sessions/{}", direct.0)).await["title"].clone();
    let title = title.as_str().unwrap_or_default();
    wait_text(
        c,
        &format!("{fold} .bot-routine"),
        &format!(" in {title} ·"),
    )
    .await?;
    save_screenshot(c, "browser-routines.png").await?;

    // Run now while a stop holds Ada: the server's reason shows, and no run is made.
    let hold = app
        .post(
            "/v1/holds",
            json!({"scope": {"kind": "bot", "bot_id": ada.0}}),
        )
        .await;
    press(c, &format!("{fold} .bot-routine-run")).await?;
    wait_text(c, &format!("{fold} .bot-routine-error"), "lift it first").await?;
    let listed = app.get("/v1/routines").await;
    if listed[0]["runs"] != 0 {
        bail!("Run now under a stop made a run: {listed}");
    }
    app.post(&format!("/v1/holds/{}/lift", hold["id"]), json!({}))
        .await;

    // Pause, then Resume.
    press(c, &format!("{fold} .bot-routine-pause")).await?;
    wait_text(c, &format!("{fold} .bot-routine-next"), "paused").await?;
    let listed = app.get("/v1/routines").await;
    if listed[0]["status"] != "paused" {
        bail!("the API after Pause: {listed}");
    }
    press(c, &format!("{fold} .bot-routine-pause")).await?;
    wait_text(c, &format!("{fold} .bot-routine-next"), "next run").await?;
    let listed = app.get("/v1/routines").await;
    if listed[0]["status"] != "active" {
        bail!("the API after Resume: {listed}");
    }

    // Delete asks first, then it is gone.
    press(c, &format!("{fold} .bot-routine-delete")).await?;
    wait_text(c, &format!("{fold} .bot-routine-confirm"), "No more runs").await?;
    press(c, &format!("{fold} .bot-routine-delete-confirm")).await?;
    wait_text(c, &format!("{fold} .bot-routine-list"), "No routines yet.").await?;
    if app.get("/v1/routines").await != json!([]) {
        bail!("the routine is still there after Delete");
    }

    // Made elsewhere: the open fold follows the global stream, nothing pressed.
    app.post(
        "/v1/routines",
        json!({"bot_id": ada.0, "session_id": direct.0, "name": "Weekly tidy",
               "instruction": "Tidy the notes.",
               "schedule": {"kind": "cron", "expr": "0 9 * * MON", "tz": "Europe/Paris"}}),
    )
    .await;
    wait_text(c, &format!("{fold} > summary"), "Routines (1)").await?;
    wait_text(
        c,
        &format!("{fold} .bot-routine"),
        "at 0 9 * * MON (Europe/Paris)",
    )
    .await?;
    Ok(())
}
