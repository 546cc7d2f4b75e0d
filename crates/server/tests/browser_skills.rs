//! Real-browser test of a Bot's skills and the Project skills card (ADR 0052, QE7), on an API
//! served in-process. In the Bots panel the person:
//!
//! - adds a skill to Ada ("Skills (1)", its catalog line, its text opened);
//! - shares it, confirmed once more, after which it is marked shared and the Project skills
//!   card lists the copy "from Ada", "1 of 20 on";
//! - edits Ada's skill: the card says Ada has changed it, and "Update the shared copy" shows
//!   the skill as it is now before "Confirm update" takes it into the copy;
//! - turns the copy off ("0 of 20 on") and stops sharing it.
//!
//! Needs Debian's `chromium` and `chromium-driver`; without them the test prints a notice and
//! returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_skills
//! ```
//!
//! Screenshot: `target/browser-skills.png`; on failure `target/browser-skills-failure.png`,
//! with the page text printed.

mod browser_support;

use anyhow::{Result, bail};
use browser_support::in_process::{App, finish};
use browser_support::page::{SHORT, elements, fill, press, save_screenshot, wait_text};
use browser_support::poll;
use fantoccini::Client;
use troupe_core::BotId;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_and_project_skills_on_the_page() {
    let app = App::start().await;
    let Some((driver, client)) = app.open_browser().await else {
        return;
    };
    let ada = app
        .scripted_bot("Ada", r#"{"steps":[{"text":"ok"}]}"#)
        .await;
    let result = scenario(&client, &app, ada).await;
    finish(result, driver, client, "browser-skills-failure.png").await;
}

async fn scenario(c: &Client, app: &App, ada: BotId) -> Result<()> {
    c.goto(&app.url("/")).await?;
    let fold = format!(".bot-skills[data-bot-id=\"{}\"]", ada.0);
    press(c, "#bots-details > summary").await?;
    press(c, &format!("{fold} > summary")).await?;
    wait_text(c, &format!("{fold} .bot-skill-list"), "No skills yet.").await?;
    wait_text(c, &format!("{fold} .project-skills"), "None shared.").await?;

    // A refused skill says why, where it was pressed; nothing is written.
    fill(c, &format!("{fold} .bot-skill-new-name"), "House style").await?;
    press(c, &format!("{fold} .bot-skill-add-button")).await?;
    wait_text(
        c,
        &format!("{fold} .bot-skill-error"),
        "description is empty",
    )
    .await?;

    fill(
        c,
        &format!("{fold} .bot-skill-new-description"),
        "How we write",
    )
    .await?;
    fill(
        c,
        &format!("{fold} .bot-skill-new-body"),
        "Short sentences. No jargon.",
    )
    .await?;
    press(c, &format!("{fold} .bot-skill-add-button")).await?;
    wait_text(c, &format!("{fold} > summary"), "Skills (1)").await?;
    wait_text(
        c,
        &format!("{fold} .bot-skill"),
        "House style — How we write",
    )
    .await?;

    // Sharing asks once more, then the copy is on the card.
    press(c, &format!("{fold} .bot-skill-share")).await?;
    wait_text(
        c,
        &format!("{fold} .bot-skill-confirm"),
        "every Bot can read it, none can change it",
    )
    .await?;
    press(c, &format!("{fold} .bot-skill-share-confirm")).await?;
    wait_text(
        c,
        &format!("{fold} .project-skills h4"),
        "Project skills (1 of 20 on)",
    )
    .await?;
    wait_text(c, &format!("{fold} .project-skill-owner"), "from Ada").await?;
    wait_text(c, &format!("{fold} .bot-skill"), "shared").await?;

    // Ada's skill edited: the card says so; the update shows the text as it is now.
    press(c, &format!("{fold} .bot-skill-edit")).await?;
    fill(
        c,
        &format!("{fold} .bot-skill-input"),
        "Short sentences. No jargon. Name every source.",
    )
    .await?;
    press(c, &format!("{fold} .bot-skill-save")).await?;
    wait_text(
        c,
        &format!("{fold} .project-skill-changed"),
        "Ada has changed this skill since it was shared.",
    )
    .await?;
    press(c, &format!("{fold} .project-skill-update")).await?;
    wait_text(
        c,
        &format!("{fold} .project-skill-update-preview"),
        "Name every source.",
    )
    .await?;
    save_screenshot(c, "browser-skills.png").await?;
    press(c, &format!("{fold} .project-skill-update-confirm")).await?;
    poll("the change note gone", SHORT, || async {
        let left = elements(c, &format!("{fold} .project-skill-changed")).await?;
        Ok(left.is_empty().then_some(()))
    })
    .await?;
    let copies = app.get("/v1/project-skills").await;
    if copies[0]["body"] != "Short sentences. No jargon. Name every source." {
        bail!("the copy after the update: {copies}");
    }

    // Turned off, then no longer shared.
    press(c, &format!("{fold} .project-skill-toggle")).await?;
    wait_text(
        c,
        &format!("{fold} .project-skills h4"),
        "Project skills (0 of 20 on)",
    )
    .await?;
    press(c, &format!("{fold} .project-skill-unshare")).await?;
    wait_text(c, &format!("{fold} .project-skills"), "None shared.").await?;
    Ok(())
}
