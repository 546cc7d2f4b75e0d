//! Real-browser test of a Bot's memories and a job's retrospective (digest 003-B §11), on an
//! API served in-process with a manual clock (as `troupe serve --manual-clock`). The person
//! adds a memory to Ada in the Bots panel; Ada's job, with a hand-over sent back, is delivered;
//! the clock passes 30 minutes and a tick runs the retrospective. The page must show:
//!
//! - "Retrospective" in the job's view, arriving live: Ada looked back, the summary, why work
//!   came back, and each change to her memories with before and now, and the skill she made;
//! - the rewritten memory marked "Written by the retrospective of “The report”" in the Bots
//!   panel;
//! - Undo on a change, after which the change says "undone", offers no Undo, and the memory it
//!   wrote is gone;
//! - (a second test) a reflection's proposal card (§10.2) in the conversation with Adopt and
//!   No; Adopt answers it, and the Lessons page lists the adopted item, which
//!   Turn off retires.
//!
//! Needs Debian's `chromium` and `chromium-driver`; without them the test prints a notice and
//! returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_retro
//! ```
//!
//! Screenshot: `target/browser-retro.png`; on failure `target/browser-retro-failure.png`, with
//! the page text printed.

mod browser_support;

use browser_support::in_process::{App, finish};

use anyhow::{Result, bail};
use browser_support::page::{SHORT, elements, fill, press, save_screenshot, wait_text};
use browser_support::poll;
use fantoccini::Client;
use serde_json::{Value, json};
use troupe_collab::OpenPlan;
use troupe_core::plan::RevisionCause;
use troupe_core::submission::{ApprovedBy, SubmissionOrigin, SubmissionState};
use troupe_core::{BotId, PlanId, SessionId};
use troupe_store::{NewQualityEvent, NewSubmission, QualityType, quality_cause};

/// Ada answers every model call with this look back.
fn lesson() -> Value {
    json!({
        "summary": "I handed the draft over before reading the brief again.",
        "tripped_up": ["skipped the brief"],
        "sent_back_because": ["off brief"],
        "do_again": ["short sections"],
        "verdicts": [],
        "memories": [
            {"subject": "Brief first", "body": "Read the brief again before handing over."},
            {"subject": "Units", "body": "Every number gets its unit, checked before hand-over."}
        ],
        "forget": [],
        "skills": [
            {"new_skill": "Briefs", "description": "Reading a brief", "body": "Read it twice."}
        ]
    })
}

/// Ada, her direct, and her job "The report": a hand-over the person sent back, then one
/// approved, and the job delivered now.
async fn set_up(app: &App) -> Result<(BotId, SessionId, PlanId)> {
    let script = json!({"steps": [{"text": lesson().to_string()}], "on_exhausted": "repeat_last"});
    let ada = app.scripted_bot("Ada", &script.to_string()).await;
    let home = app.direct(ada).await;
    let collab = &app.state.collab;
    let plan = collab
        .open_plan(OpenPlan {
            home_session_id: home,
            opening_line_id: None,
            title: Some("The report".into()),
            cause: RevisionCause::User,
        })?
        .id;
    app.send(
        reqwest::Method::POST,
        &format!("/v1/tasks/{}/tickets", plan.0),
        Some(json!({"title": "Draft", "owner_bot_id": ada.0})),
    )
    .await?;
    collab.store().write(|tx| {
        let ticket = tx.tickets_of_plan(plan)?[0].id;
        for state in [SubmissionState::Rework, SubmissionState::Approved] {
            let s = tx.create_submission(&NewSubmission {
                ticket_id: ticket,
                origin: SubmissionOrigin::Answer,
                producer_bot_id: Some(ada),
                run_id: None,
                work_item_id: None,
                content: Some("The draft.".into()),
                note: String::new(),
                claims: Vec::new(),
                files: Vec::new(),
                parts: Vec::new(),
            })?;
            if state == SubmissionState::Approved {
                tx.approve_submission(s.id, ApprovedBy::NoReviewer, None, None)?;
            } else {
                tx.set_submission_state(s.id, state)?;
            }
        }
        tx.quality_event(
            NewQualityEvent::new(QualityType::Execution, quality_cause::USER_SENT_BACK)
                .bot(Some(ada))
                .plan(plan)
                .ticket(ticket),
        )?;
        tx.set_plan_delivered(plan, true)?;
        Ok(())
    })?;
    Ok((ada, home, plan))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retrospective_and_memories_on_the_page() {
    let app = App::start().await;
    let Some((driver, client)) = app.open_browser().await else {
        return;
    };
    let setup = set_up(&app).await.expect("set up");
    let result = scenario(&client, &app, setup).await;
    finish(result, driver, client, "browser-retro-failure.png").await;
}

async fn scenario(
    c: &Client,
    app: &App,
    (ada, home, plan): (BotId, SessionId, PlanId),
) -> Result<()> {
    c.goto(&app.url(&format!("/#session={}", home.0))).await?;
    let fold = format!(".bot-memories[data-bot-id=\"{}\"]", ada.0);

    // The person gives Ada a memory in the Bots panel.
    press(c, "#bots-details > summary").await?;
    press(c, &format!("{fold} > summary")).await?;
    wait_text(c, &format!("{fold} .bot-memory-list"), "No memories yet.").await?;
    fill(c, &format!("{fold} .bot-memory-new-subject"), "Units").await?;
    fill(
        c,
        &format!("{fold} .bot-memory-new-body"),
        "Give every number its unit.",
    )
    .await?;
    press(c, &format!("{fold} .bot-memory-add-button")).await?;
    wait_text(
        c,
        &format!("{fold} .bot-memory"),
        "Give every number its unit.",
    )
    .await?;
    wait_text(c, &format!("{fold} > summary"), "Memories (1 of 20 on)").await?;

    // The job's view, before the job has been quiet half an hour: no retrospective.
    press(c, "#work-toggle").await?;
    press(
        c,
        &format!("#jobs-list .job-open[data-plan-id=\"{}\"]", plan.0),
    )
    .await?;
    wait_text(c, "#job-view", "The report").await?;
    if elements(c, "#job-retro").await?.iter().any(|e| e.visible) {
        bail!("a retrospective shows before any ran");
    }

    // Half an hour on, one tick: the section arrives over the job's live events.
    app.send(
        reqwest::Method::POST,
        "/v1/debug/clock",
        Some(json!({"advance_ms": 31 * 60_000})),
    )
    .await?;
    let report = app
        .send(reqwest::Method::POST, "/v1/debug/tick", Some(json!({})))
        .await?;
    let item = "#job-retro .job-retro-item[data-state=\"done\"]";
    wait_text(c, item, "Ada looked back")
        .await
        .map_err(|e| anyhow::anyhow!("{e:#}; the tick said {report}"))?;
    wait_text(
        c,
        item,
        "I handed the draft over before reading the brief again.",
    )
    .await?;
    wait_text(c, item, "off brief").await?;
    wait_text(c, item, "New memory “Brief first”").await?;
    wait_text(c, item, "Rewrote “Units”").await?;
    wait_text(c, item, "New skill “Briefs”").await?;
    save_screenshot(c, "browser-retro.png").await?;

    // The rewritten memory carries the retrospective's mark in the Bots panel.
    press(c, &format!("{fold} > summary")).await?;
    press(c, &format!("{fold} > summary")).await?;
    wait_text(
        c,
        &format!("{fold} .bot-memory-mark"),
        "Written by the retrospective of “The report”",
    )
    .await?;

    // Undo the new memory: the change says undone, offers no Undo, and the memory is gone.
    press(
        c,
        "#job-retro .job-retro-undo[aria-label=\"Undo: New memory Brief first\"]",
    )
    .await?;
    wait_text(c, item, "“Brief first” · undone").await?;
    poll("the Undo button gone", SHORT, || async {
        let left = elements(
            c,
            "#job-retro .job-retro-undo[aria-label=\"Undo: New memory Brief first\"]",
        )
        .await?;
        Ok(left.is_empty().then_some(()))
    })
    .await?;
    let memories = app
        .send(
            reqwest::Method::GET,
            &format!("/v1/bots/{}/memories", ada.0),
            None,
        )
        .await?;
    let subjects: Vec<&str> = memories
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["subject"].as_str().unwrap_or_default())
        .collect();
    if subjects != ["Units"] {
        bail!("after Undo the memories are {subjects:?}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reflections_card_adopted_on_the_page() {
    let app = App::start().await;
    let Some((driver, client)) = app.open_browser().await else {
        return;
    };
    let result = reflection_scenario(&client, &app).await;
    finish(result, driver, client, "browser-retro-failure.png").await;
}

async fn reflection_scenario(c: &Client, app: &App) -> Result<()> {
    let proposal = json!({"proposal": "checklist", "when": "before_reviewing",
                          "text": "Open every file handed over before approving."});
    let script = json!({"steps": [{"text": proposal.to_string()}], "on_exhausted": "repeat_last"});
    let ben = app.scripted_bot("Ben", &script.to_string()).await;
    let home = app.direct(ben).await;
    app.send(
        reqwest::Method::PUT,
        "/v1/settings/engine-steps",
        Some(json!({"general": {"reflection": true}})),
    )
    .await?;
    let collab = &app.state.collab;
    let plan = collab
        .open_plan(OpenPlan {
            home_session_id: home,
            opening_line_id: None,
            title: Some("The report".into()),
            cause: RevisionCause::User,
        })?
        .id;
    let t = app
        .send(
            reqwest::Method::POST,
            &format!("/v1/tasks/{}/tickets", plan.0),
            Some(json!({"title": "Draft"})),
        )
        .await?;
    let ticket = troupe_core::TicketId(t["id"].as_i64().unwrap());
    c.goto(&app.url(&format!("/#session={}", home.0))).await?;
    collab.store().write(|tx| {
        tx.quality_event(
            NewQualityEvent::new(QualityType::ReviewMiss, quality_cause::REVIEW_MISS)
                .bot(Some(ben))
                .plan(plan)
                .ticket(ticket),
        )
    })?;
    app.send(reqwest::Method::POST, "/v1/debug/tick", Some(json!({})))
        .await?;

    let card = ".ceiling[data-card=\"reflection\"]";
    wait_text(
        c,
        card,
        "Ben proposes a checklist item for itself, read before reviewing",
    )
    .await?;
    wait_text(
        c,
        &format!("{card} .ceiling-action[data-action=\"adopt\"]"),
        "Adopt",
    )
    .await?;
    wait_text(
        c,
        &format!("{card} .ceiling-action[data-action=\"no\"]"),
        "No",
    )
    .await?;
    press(c, &format!("{card} .ceiling-action[data-action=\"adopt\"]")).await?;
    wait_text(c, &format!("{card} .ceiling-chosen"), "You chose: Adopt").await?;

    // The Lessons page lists the item; Turn off retires it.
    press(c, ".page-open[data-page=\"lessons\"]").await?;
    let row = "tr.checklist-row";
    wait_text(c, row, "Open every file handed over before approving.").await?;
    wait_text(c, row, "before reviewing").await?;
    press(c, &format!("{row} .checklist-toggle")).await?;
    wait_text(
        c,
        &format!("{row}[data-enabled=\"false\"] .checklist-toggle"),
        "Turn on",
    )
    .await?;
    let items = app
        .send(
            reqwest::Method::GET,
            &format!("/v1/checklist-items?bot_id={}", ben.0),
            None,
        )
        .await?;
    if items[0]["enabled"] != json!(false) {
        bail!("the item is still on: {items}");
    }
    Ok(())
}
