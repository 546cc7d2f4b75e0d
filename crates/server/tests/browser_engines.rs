//! Real-browser test of engines (ADR 0085, digest B §0.3 and §1.6): a group's header picks the
//! engine it runs or Settings' default; the sidebar's Engines fold sets the default, switches
//! each engine's steps and counts the conversations running each; a job's view says which
//! engine its calls run under and why, follows a change made on the page, and its
//! "Engine: X" opens the fold on that engine.
//!
//! Needs Debian's `chromium` and `chromium-driver`; without them the test prints a notice and
//! returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_engines
//! ```
//!
//! The page with the fold open on the job's engine goes to `target/browser-engines.png`.

mod browser_support;
mod support;

use anyhow::{Result, bail};
use browser_support::in_process::finish;
use browser_support::page::{SHORT, elements, pick, press, save_screenshot, wait_text};
use browser_support::{browser_in, poll};
use fantoccini::Client;
use serde_json::{Value, json};
use support::{TestApp, wait_until};
use troupe_core::PlanId;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engines() {
    let app = TestApp::start().await;
    let writer = app
        .scripted_bot("Writer", json!({"steps": [{"text": "on it"}]}))
        .await;
    let editor = app
        .scripted_bot("Editor", json!({"steps": [{"text": "on it"}]}))
        .await;
    let session = app
        .post(
            "/v1/sessions",
            json!({"kind": "group", "bot_ids": [writer, editor], "title": "Brochure"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let plan = app.open_job(session, "Brochure");
    let Some((driver, client)) = browser_in(app.dir.path()).await else {
        return;
    };
    let result = scenario(&client, &app, session, plan).await;
    finish(result, driver, client, "browser-engines-failure.png").await;
}

async fn engine_of(app: &TestApp, session: i64) -> Value {
    app.get(&format!("/v1/sessions/{session}/engine"))
        .await
        .expect(200)
}

async fn scenario(c: &Client, app: &TestApp, session: i64, plan: PlanId) -> Result<()> {
    c.goto(&app.url(&format!("/#session={session}"))).await?;
    // The group runs Settings' default until it chooses.
    wait_text(c, "#conv-engine-row", "Engine").await?;
    poll("the header's menu on the default", SHORT, || async {
        let v = c.execute("return document.querySelector('#conv-engine').value", vec![]).await?;
        let label = c
            .execute("const s = document.querySelector('#conv-engine'); return s.options[s.selectedIndex] ? s.options[s.selectedIndex].text : ''", vec![])
            .await?;
        Ok((v == json!("") && label == json!("Settings\u{2019} default (general)")).then_some(()))
    })
    .await?;

    // The Engines fold: general leaves the scribe and the reflection off and runs the group.
    press(c, "#engines-details > summary").await?;
    let general = "#engine-list .engine-row[data-engine=\"general\"]";
    wait_text(c, general, "1 conversation runs it").await?;
    let steps = c
        .execute(
            "return [...document.querySelectorAll(arguments[0] + ' input')].map(i => i.dataset.step + ':' + i.checked)",
            vec![json!(general)],
        )
        .await?;
    if steps != json!(["reflection:false", "retrospective:true", "scribe:false"]) {
        bail!("general's steps as drawn: {steps}");
    }

    // The group chooses video: the API says so, and the fold counts it there.
    pick(c, "#conv-engine", "video").await?;
    wait_until("the group to run video by choice", || async {
        let e = engine_of(app, session).await;
        (e["engine"] == "video" && e["chosen"] == true).then_some(())
    })
    .await;
    wait_text(
        c,
        "#engine-list .engine-row[data-engine=\"video\"]",
        "1 conversation runs it",
    )
    .await?;

    // The job's view: the engine in the title row and under who does what, with why.
    press(c, "#work-toggle").await?;
    press(
        c,
        &format!("#jobs-list .job-open[data-plan-id=\"{}\"]", plan.0),
    )
    .await?;
    wait_text(c, "#job-engine", "Engine: video").await?;
    wait_text(
        c,
        "#job-shares .job-engine",
        "Its conversation runs video · runs every step",
    )
    .await?;

    // A step switched off in the fold reaches the open job view.
    let retro =
        "#engine-list .engine-row[data-engine=\"video\"] input[data-step=\"retrospective\"]";
    press(c, retro).await?;
    wait_until("video's retrospective to be off", || async {
        let steps = app.get("/v1/settings/engine-steps").await.expect(200);
        (steps["video"]["retrospective"] == false).then_some(())
    })
    .await;
    wait_text(c, "#job-shares .job-engine", "leaves off retrospective").await?;

    // "Engine: video" opens the fold on video.
    c.execute(
        "document.querySelector('#engines-details').open = false",
        vec![],
    )
    .await?;
    press(c, "#job-engine").await?;
    poll("the fold open on video", SHORT, || async {
        let rows = elements(c, "#engine-list .engine-row.focused").await?;
        Ok(
            (rows.len() == 1 && rows[0].visible && rows[0].text.to_lowercase().contains("video"))
                .then_some(()),
        )
    })
    .await?;

    save_screenshot(c, "browser-engines.png").await?;

    // Back to the default, then a new default: the group and its job follow it.
    pick(c, "#conv-engine", "").await?;
    wait_until("the group to run the default", || async {
        (engine_of(app, session).await["chosen"] == false).then_some(())
    })
    .await;
    pick(c, "#default-engine", "coding").await?;
    wait_until("coding to be the default", || async {
        let all = app.get("/v1/settings/engines").await.expect(200);
        (all["default_engine"] == "coding").then_some(())
    })
    .await;
    wait_text(c, "#job-engine", "Engine: coding").await?;
    wait_text(c, "#job-shares .job-engine", "Settings' default").await?;
    Ok(())
}
