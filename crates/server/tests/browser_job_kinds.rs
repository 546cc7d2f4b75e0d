//! Real-browser test of the Jobs panel's kinds (PLAN-U1): a direct with a job that was one
//! question (done, no tickets, one turn), an open job and a done job laid out in a ticket. On a
//! wide screen the panel opens on "Work" beside "One question"; pointing at a kind shows it;
//! Up/Down switch kinds, Right goes into the list, Up/Down walk it, Left comes back. On a phone
//! the one-question job folds into a row "1 one-question job" that opens in place.
//!
//! Needs Debian's `chromium` and `chromium-driver`; without them the test prints a notice and
//! returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_job_kinds
//! ```

mod browser_support;
mod support;

use anyhow::{Result, bail};
use browser_support::in_process::finish;
use browser_support::page::{SHORT, elements, press, wait_text};
use browser_support::{browser_in, poll};
use fantoccini::Client;
use serde_json::{Value, json};
use support::{TestApp, wait_until};
use troupe_core::inbox::Delivery;
use troupe_core::thread::Interaction;
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, PlanId, SessionId};
use troupe_store::{NewThread, NewWorkItem};

struct Jobs {
    session: i64,
    asked: PlanId,
    open: PlanId,
    laid: PlanId,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_kinds() {
    let app = TestApp::start().await;
    let jobs = set_up(&app).await;
    let Some((driver, client)) = browser_in(app.dir.path()).await else {
        return;
    };
    let result = scenario(&client, &app, &jobs).await;
    finish(result, driver, client, "browser-job-kinds-failure.png").await;
}

fn open_job(app: &TestApp, session: i64, title: &str) -> PlanId {
    app.open_job(session, title)
}

/// One turn of `bot`'s work on the job, waited for through the store.
async fn one_turn(app: &TestApp, plan: PlanId, session: i64, bot: i64) {
    let store = app.state.collab.store().clone();
    let thread = store
        .write(|tx| {
            let folder = tx.plan(plan)?.folder;
            std::fs::create_dir_all(&folder).unwrap();
            let thread = tx.create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: "work".into(),
                agent: troupe_collab::bot_binding(&tx.bot(BotId(bot))?),
                workspace: folder,
                interaction: Interaction::Interactive,
            })?;
            tx.create_work_item(&NewWorkItem {
                bot_id: BotId(bot),
                mode: WorkMode::Work,
                plan_id: Some(plan),
                session_id: None,
                thread_id: thread.id,
                speaks_in: Some(SessionId(session)),
            })?;
            Ok(thread.id)
        })
        .unwrap();
    app.state
        .collab
        .engine()
        .deliver(thread, Delivery::user_task("What is six times seven?"))
        .await
        .unwrap();
    wait_until("the turn to end", || async {
        let runs = store.read(|tx| tx.runs_for_thread(thread, 10)).unwrap();
        runs.iter().any(|r| r.ended_at.is_some()).then_some(())
    })
    .await;
    app.state.collab.engine().wait_idle(thread).await;
}

async fn done(app: &TestApp, plan: PlanId) {
    let version = app.get(&format!("/v1/tasks/{}", plan.0)).await.expect(200)["version"].clone();
    app.send(
        reqwest::Method::PATCH,
        &format!("/v1/tasks/{}/spec", plan.0),
        Some(support::Body::Json(
            json!({"version": version, "status": "done"}),
        )),
    )
    .await
    .expect(200);
}

async fn set_up(app: &TestApp) -> Jobs {
    let bot = app
        .scripted_bot(
            "Alpha",
            json!({"steps": [{"text": "It is 42."}], "on_exhausted": "repeat_last"}),
        )
        .await;
    let session = app.direct(bot).await;
    let laid = open_job(app, session, "Poster");
    app.post(
        &format!("/v1/tasks/{}/tickets", laid.0),
        json!({"title": "Poster", "owner_bot_id": bot}),
    )
    .await
    .expect(201);
    done(app, laid).await;
    let open = open_job(app, session, "Trailer");
    let asked = open_job(app, session, "Six times seven");
    one_turn(app, asked, session, bot).await;
    done(app, asked).await;
    // Through the API first: only the question is one.
    let listed: Value = app
        .get(&format!("/v1/tasks?session_id={session}"))
        .await
        .expect(200);
    let folded: Vec<i64> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["one_question"] == true)
        .map(|j| j["id"].as_i64().unwrap())
        .collect();
    assert_eq!(folded, [asked.0]);
    Jobs {
        session,
        asked,
        open,
        laid,
    }
}

async fn listed(c: &Client) -> Result<Vec<String>> {
    let v = c
        .execute("return [...document.querySelectorAll('#jobs-list .job-row')].filter(r => r.offsetParent).map(r => r.dataset.planId)", vec![])
        .await?;
    Ok(v.as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|x| x.as_str().unwrap_or_default().to_string())
        .collect())
}

async fn focused(c: &Client) -> Result<String> {
    let v = c
        .execute("const a = document.activeElement; return (a.dataset.kind || a.dataset.planId || a.id || a.tagName)", vec![])
        .await?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

async fn key(c: &Client, k: &str) -> Result<()> {
    let el = c.active_element().await?;
    el.send_keys(k).await?;
    Ok(())
}

async fn scenario(c: &Client, app: &TestApp, j: &Jobs) -> Result<()> {
    c.set_window_size(1280, 900).await?;
    c.goto(&app.url(&format!("/#session={}", j.session)))
        .await?;
    press(c, "#work-toggle").await?;
    wait_text(c, "#job-kinds", "Work (2)").await?;
    wait_text(c, "#job-kinds", "One question (1)").await?;
    let work = {
        let mut v = vec![j.open.0.to_string(), j.laid.0.to_string()];
        v.sort();
        v
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    poll("the Work jobs", SHORT, || async {
        Ok((sorted(listed(c).await?) == work).then_some(()))
    })
    .await?;

    // Pointing at "One question" shows it.
    c.execute(
        "document.querySelector('#job-kinds [data-kind=\"one_question\"]').dispatchEvent(new MouseEvent('mouseenter'))",
        vec![],
    )
    .await?;
    poll("the one-question job", SHORT, || async {
        Ok((listed(c).await? == [j.asked.0.to_string()]).then_some(()))
    })
    .await?;

    // Keys: Up/Down switch kinds, Right into the list, Down walks it, Left back to the kinds.
    press(c, "#job-kinds [data-kind=\"one_question\"]").await?;
    key(c, "\u{E013}").await?; // Up
    poll("Work again", SHORT, || async {
        Ok((sorted(listed(c).await?) == work).then_some(()))
    })
    .await?;
    if focused(c).await? != "work" {
        bail!(
            "Up/Down should leave the focus on the kind shown: {}",
            focused(c).await?
        );
    }
    key(c, "\u{E014}").await?; // Right
    let first = focused(c).await?;
    if !work.contains(&first) {
        bail!("Right should go to the list's first job, not {first}");
    }
    key(c, "\u{E015}").await?; // Down
    let second = focused(c).await?;
    if second == first || !work.contains(&second) {
        bail!("Down should walk to the next job: {first} then {second}");
    }
    key(c, "\u{E012}").await?; // Left
    if focused(c).await? != "work" {
        bail!("Left should come back to the kinds: {}", focused(c).await?);
    }

    // On a phone: no kinds column; the question folds into one row that opens in place.
    c.set_window_size(390, 844).await?;
    press(c, "#work-close").await?;
    press(c, "#work-toggle").await?;
    wait_text(c, "#jobs-list .one-question-fold", "1 one-question job").await?;
    if elements(c, "#job-kinds").await?.iter().any(|e| e.visible) {
        bail!("a phone shows no kinds column");
    }
    press(c, "#jobs-list .one-question-fold summary").await?;
    poll("the folded job", SHORT, || async {
        Ok(listed(c)
            .await?
            .contains(&j.asked.0.to_string())
            .then_some(()))
    })
    .await?;
    Ok(())
}
