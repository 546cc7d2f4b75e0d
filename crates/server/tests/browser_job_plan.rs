//! Real-browser test of the job's plan in its view (PLAN-O1/O2, PLAN-5): the person writes the
//! Done when (saved as typed, cause `user`), meets a conflict when the plan changed meanwhile
//! (the words typed kept, the text as it is now shown, a second Save goes through), renames the
//! job (the view's title follows) and marks it done (its open ticket fades, PLAN-U3) and active
//! again. On a phone the view shows one of Tickets, Plan and Trace at a time.
//!
//! Needs Debian's `chromium` and `chromium-driver`; without them the test prints a notice and
//! returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_job_plan
//! ```

mod browser_support;
mod support;

use anyhow::{Result, bail};
use browser_support::in_process::finish;
use browser_support::page::{SHORT, elements, fill, press, wait_text};
use browser_support::{browser_in, poll};
use fantoccini::Client;
use serde_json::{Value, json};
use support::{Body, TestApp, wait_until};
use troupe_core::PlanId;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_plan() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Maker", json!({"steps": [{"text": "on it"}]}))
        .await;
    let session = app.direct(bot).await;
    let plan = app.open_job(session, "Poster");
    app.post(
        &format!("/v1/tasks/{}/tickets", plan.0),
        json!({"title": "Poster", "owner_bot_id": bot}),
    )
    .await
    .expect(201);
    let Some((driver, client)) = browser_in(app.dir.path()).await else {
        return;
    };
    let result = scenario(&client, &app, session, plan).await;
    finish(result, driver, client, "browser-job-plan-failure.png").await;
}

async fn plan_of(app: &TestApp, plan: PlanId) -> Value {
    app.get(&format!("/v1/tasks/{}", plan.0)).await.expect(200)
}

async fn scenario(c: &Client, app: &TestApp, session: i64, plan: PlanId) -> Result<()> {
    c.goto(&app.url(&format!("/#session={session}"))).await?;
    press(c, "#work-toggle").await?;
    press(
        c,
        &format!("#jobs-list .job-open[data-plan-id=\"{}\"]", plan.0),
    )
    .await?;
    wait_text(c, "#job-plan", "The plan").await?;
    wait_text(c, "#job-plan [data-field=\"goal\"]", "Poster").await?;

    // Done when, written by the person.
    let done_when = "#job-plan [data-field=\"done_when\"]";
    press(c, &format!("{done_when} .job-plan-edit")).await?;
    fill(
        c,
        &format!("{done_when} textarea"),
        "poster.png exists\nthe title reads LAUNCH",
    )
    .await?;
    press(c, &format!("{done_when} .job-plan-save")).await?;
    wait_until("the Done when saved", || async {
        let p = plan_of(app, plan).await;
        (p["spec"]["done_when"] == "poster.png exists\nthe title reads LAUNCH").then_some(())
    })
    .await;
    wait_text(
        c,
        &format!("{done_when} .job-plan-text"),
        "the title reads LAUNCH",
    )
    .await?;

    // Someone else changes the rules while the person edits them: a conflict, the words kept.
    let rules = "#job-plan [data-field=\"rules\"]";
    press(c, &format!("{rules} .job-plan-edit")).await?;
    fill(c, &format!("{rules} textarea"), "no red").await?;
    let version = plan_of(app, plan).await["version"].clone();
    app.send(
        reqwest::Method::PATCH,
        &format!("/v1/tasks/{}/spec", plan.0),
        Some(Body::Json(
            json!({"version": version, "rules": "brand blue only"}),
        )),
    )
    .await
    .expect(200);
    press(c, &format!("{rules} .job-plan-save")).await?;
    wait_text(c, &format!("{rules} .job-plan-error"), "changed meanwhile").await?;
    wait_text(c, &format!("{rules} .job-plan-text"), "brand blue only").await?;
    let kept = c
        .execute(
            "const t = document.querySelector(arguments[0]); return t ? t.value : null;",
            vec![json!(format!("{rules} textarea"))],
        )
        .await?;
    if kept != json!("no red") {
        bail!("the words typed were lost: {kept}");
    }
    press(c, &format!("{rules} .job-plan-save")).await?;
    wait_until("the rules saved over the newer version", || async {
        (plan_of(app, plan).await["spec"]["rules"] == "no red").then_some(())
    })
    .await;

    // Rename: the view's title follows.
    press(c, "#job-plan [data-field=\"name\"] .job-plan-edit").await?;
    fill(c, "#job-plan [data-field=\"name\"] input", "Launch poster").await?;
    press(c, "#job-plan [data-field=\"name\"] .job-plan-save").await?;
    wait_text(c, "#job-view-title", "Launch poster").await?;
    if plan_of(app, plan).await["name"] != "Launch poster" {
        bail!("the rename did not reach the daemon");
    }

    // Mark done, then active again.
    press(c, "#job-plan .job-plan-status").await?;
    wait_until("the job done", || async {
        (plan_of(app, plan).await["status"] == "done").then_some(())
    })
    .await;
    wait_text(c, "#job-plan .job-plan-status", "Set back to active").await?;
    // PLAN-U3: the done job's open ticket fades.
    poll("the open ticket faded", SHORT, || async {
        let o = c
            .execute(
                "const r = document.querySelector('#job-view.settled #ticket-list .ticket-row');
                 return r ? getComputedStyle(r).opacity : null;",
                vec![],
            )
            .await?;
        Ok((o == json!("0.55")).then_some(()))
    })
    .await?;
    press(c, "#job-plan .job-plan-status").await?;
    wait_until("the job active", || async {
        (plan_of(app, plan).await["status"] == "active").then_some(())
    })
    .await;
    wait_text(c, "#job-plan .job-plan-status", "Mark done").await?;
    poll("the job no longer settled", SHORT, || async {
        let settled = c
            .execute(
                "return document.querySelector('#job-view').classList.contains('settled')",
                vec![],
            )
            .await?;
        Ok((settled == json!(false)).then_some(()))
    })
    .await?;

    // On a phone: one part at a time — Tickets first, then the Plan, then the Trace.
    c.set_window_size(390, 844).await?;
    let parts = || async {
        Ok::<_, anyhow::Error>([
            elements(c, "#ticket-list").await?.iter().any(|e| e.visible),
            elements(c, "#job-plan").await?.iter().any(|e| e.visible),
            elements(c, "#job-turns").await?.iter().any(|e| e.visible),
        ])
    };
    press(c, ".job-tab[data-tab=\"tickets\"]").await?;
    poll("only the tickets", SHORT, || async {
        Ok((parts().await? == [true, false, false]).then_some(()))
    })
    .await?;
    press(c, ".job-tab[data-tab=\"plan\"]").await?;
    poll("only the plan", SHORT, || async {
        Ok((parts().await? == [false, true, false]).then_some(()))
    })
    .await?;
    press(c, ".job-tab[data-tab=\"trace\"]").await?;
    poll("only the trace", SHORT, || async {
        Ok((parts().await? == [false, false, true]).then_some(()))
    })
    .await?;
    // Wide again, everything shows and the switch goes.
    c.set_window_size(1280, 900).await?;
    poll("everything on a wide screen", SHORT, || async {
        let tabs = elements(c, ".job-tabs").await?.iter().any(|e| e.visible);
        Ok((parts().await? == [true, true, true] && !tabs).then_some(()))
    })
    .await?;
    Ok(())
}
