//! Real-browser test of the page's work views: a conversation's jobs, each Bot's work items
//! (with "Queued, at position N") and a delegation's read-only records in the Bot↔Bot
//! direct it opened, kept current by the live events; a job's turns in its view, a stopped one
//! marked Stopped (STOP-13).
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`;
//! `TROUPE_BIN=<path>` skips building `troupe-cli`):
//!
//! ```text
//! cargo test -p troupe-server --test browser_work
//! ```
//!
//! Screenshots of the delegation records, the Jobs panel, the panel at phone width and the job's
//! turns go to `target/browser-work-delegation.png`, `browser-work-jobs.png`,
//! `browser-work-phone.png` and `browser-work-job-turns.png`;
//! on failure one goes to `target/browser-work-failure.png` and the page text and daemon log
//! are printed.

mod browser_support;

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use browser_support::page::{
    SHORT, TURN, active_session_id, add_scripted_bot, click, click_in, click_session, elements,
    fill, no_sideways_scroll, save_screenshot, wait_bot_line, wait_hidden, wait_text,
};
use browser_support::{Daemon, chromedriver_path, diagnostics, open_session, poll, troupe_binary};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

/// The lead delegates on "ask beta" and, once answered, says the slogan.
const ALPHA: &str = r#"{"steps":[{"text":"unused"}],"rules":[{"when_user_contains":"answered your request","reply":{"text":"Slogan: Fast and calm."}},{"when_user_contains":"ask beta","reply":{"tool_calls":[{"name":"delegate","arguments":{"to":"Beta","ask":"A four-word slogan.","expects":"answer"}}]}}]}"#;

/// Beta answers the request — after a pause, so the open record can be seen first.
const BETA: &str = r#"{"steps":[{"text":"unused"}],"rules":[{"when_user_contains":"asks you","reply":{"delay_ms":8000,"tool_calls":[{"name":"end_turn","arguments":{"reason":"answered","answer":"Fast and calm."}}]}}]}"#;

/// Gamma's desk opens a job per line; its job turns hang for a minute.
const GAMMA: &str = r#"{"steps":[{"text":"unused"},{"text":"working","delay_ms":60000}],"rules":[{"when_user_contains":"job one","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"one"}}}]}},{"when_user_contains":"job two","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"two"}}}]}},{"when_user_contains":"job three","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"three"}}}]}}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_shows_plans_work_items_and_a_delegation_thread() {
    let driver_path = chromedriver_path();
    if !driver_path.exists() {
        let msg = format!(
            "{} not found: install chromium and chromium-driver (or set CHROMEDRIVER)",
            driver_path.display()
        );
        if std::env::var_os("TROUPE_REQUIRE_BROWSER").is_some() {
            panic!("{msg}");
        }
        eprintln!("SKIPPED browser test: {msg}");
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let (data, work, profile) = (
        tmp.path().join("data"),
        tmp.path().join("work"),
        tmp.path().join("chrome-profile"),
    );
    for d in [&data, &work, &profile] {
        std::fs::create_dir_all(d).expect("create temp dirs");
    }
    let mut scripts = Vec::new();
    for (name, text) in [("Alpha", ALPHA), ("Beta", BETA), ("Gamma", GAMMA)] {
        let path = tmp.path().join(format!("{}.json", name.to_lowercase()));
        std::fs::write(&path, text).expect("write script");
        scripts.push((name, path));
    }
    let bin = troupe_binary().expect("locate the troupe binary");
    let daemon = Daemon::start(&bin, &data, &work).expect("start troupe serve");
    let (driver, client) = open_session(&driver_path, &profile).await;
    let http = daemon.http();
    let mut hanging = None;
    let result = scenario(&client, &daemon, &http, &scripts, &mut hanging).await;
    // The job turns hang for a minute: stop the group's work (its menu's "Stop the work in
    // this group") so the daemon shuts down promptly.
    if let Some(sid) = hanging {
        let _ = http
            .post(format!("{}/v1/holds", daemon.base_url))
            .json(&json!({ "scope": { "kind": "session", "session_id": sid }, "session_id": sid }))
            .send()
            .await;
    }
    if let Err(err) = &result {
        let diag = diagnostics(&client, &daemon, &driver, "browser-work-failure.png").await;
        let _ = client.clone().close().await;
        panic!("{err:#}\n{diag}");
    }
    let _ = client.close().await;
}

async fn get(http: &reqwest::Client, daemon: &Daemon, path: &str) -> Result<Value> {
    Ok(http
        .get(format!("{}{path}", daemon.base_url))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?)
}

/// Creates a group from the page's form and answers its id once it is open.
async fn new_group(c: &Client, title: &str, bots: &[&str]) -> Result<String> {
    click(c, "#new-group").await?;
    wait_text(c, "#group-create", "Create group").await?;
    fill(c, "#group-title", title).await?;
    for name in bots {
        click_in(c, "#group-bots .group-bot", name, "input").await?;
    }
    click(c, "#group-create").await?;
    poll(&format!("the group {title:?} to open"), SHORT, || async {
        let active = elements(c, ".session-item.active").await?;
        let chips = elements(c, "#member-chips .chip").await?;
        Ok(
            (active.iter().any(|a| a.text.contains(title)) && chips.len() == bots.len())
                .then_some(()),
        )
    })
    .await?;
    active_session_id(c).await
}

async fn say(c: &Client, line: &str) -> Result<()> {
    fill(c, "#composer", line).await?;
    click(c, "#send").await?;
    wait_text(c, ".msg.user", line).await
}

/// Opens the Jobs panel unless it is open.
async fn open_jobs(c: &Client) -> Result<()> {
    let open = elements(c, "#work-panel").await?;
    if !open.iter().any(|p| p.visible) {
        click(c, "#work-toggle").await?;
    }
    poll("the Jobs panel", SHORT, || async {
        Ok(elements(c, "#work-panel")
            .await?
            .iter()
            .any(|p| p.visible)
            .then_some(()))
    })
    .await
}

/// The visible text of `bot`'s rows in "What each Bot is doing", one entry per work item.
async fn work_items_of(c: &Client, bot: &str) -> Result<Vec<String>> {
    let v = c
        .execute(
            "return [...document.querySelectorAll('#bot-work .bot-work-row')]
               .filter(r => r.querySelector('.member-name').textContent === arguments[0])
               .flatMap(r => [...r.querySelectorAll('.work-item')].map(i => i.innerText));",
            vec![json!(bot)],
        )
        .await?;
    Ok(v.as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|s| s.as_str().unwrap_or_default().to_string())
        .collect())
}

/// Whether a work item is on the job its desk opened for `title` (named from the line).
fn names_job(item: &Value, title: &str) -> bool {
    item["plan_name"]
        .as_str()
        .is_some_and(|n| n.ends_with(title))
}

async fn scenario(
    c: &Client,
    daemon: &Daemon,
    http: &reqwest::Client,
    scripts: &[(&str, PathBuf)],
    hanging: &mut Option<i64>,
) -> Result<()> {
    c.goto(&daemon.login_link).await?;
    c.wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#new-bot-form"))
        .await?;
    for (name, script) in scripts {
        add_scripted_bot(c, name, script).await?;
    }
    let bots = get(http, daemon, "/v1/bots").await?;
    let bot_id = |name: &str| -> Result<i64> {
        bots.as_array()
            .and_then(|b| b.iter().find(|b| b["name"] == name))
            .and_then(|b| b["id"].as_i64())
            .ok_or_else(|| anyhow!("no Bot {name} in {bots}"))
    };
    let gamma = bot_id("Gamma")?;

    // --- (a) A line makes Alpha delegate to Beta: the job shows in the group's Jobs panel
    let sid = new_group(c, "Slogans", &["Alpha", "Beta"]).await?;
    open_jobs(c).await?;
    wait_text(c, "#jobs-empty", "No jobs yet.").await?;
    say(c, "@Alpha ask Beta for a slogan").await?;
    let plan = poll("the job opened by the line", TURN, || async {
        let plans = get(http, daemon, &format!("/v1/tasks?session_id={sid}")).await?;
        Ok(plans.as_array().and_then(|p| p.first()).cloned())
    })
    .await?;
    let job_name = plan["name"]
        .as_str()
        .ok_or_else(|| anyhow!("a job without a name: {plan}"))?
        .to_string();
    poll("the job in the Jobs list, active", TURN, || async {
        Ok(elements(c, "#jobs-list .job-row")
            .await?
            .iter()
            .any(|r| r.visible && r.text.contains(&job_name) && r.text.contains("Active"))
            .then_some(()))
    })
    .await?;
    wait_hidden(c, "#jobs-empty", SHORT).await?;
    let rows = elements(c, "#jobs-list .job-row").await?;
    if rows.iter().any(|r| r.text.contains("Dormant")) {
        bail!("a fresh job is labelled Dormant");
    }

    // --- The pair direct the delegation opened: its record, open, and no composer
    poll("the Bot↔Bot direct under the group", TURN, || async {
        Ok(elements(c, ".session-item.sub")
            .await?
            .iter()
            .any(|s| s.visible && s.text.contains("Alpha ↔ Beta"))
            .then_some(()))
    })
    .await?;
    click_session(c, "Alpha ↔ Beta").await?;
    wait_hidden(c, "#composer-form", SHORT).await?;
    wait_text(c, "#readonly-note", "you can read it").await?;
    poll("the open delegation record", TURN, || async {
        Ok(
            elements(c, "#delegation-records .delegation[data-state=open]")
                .await?
                .iter()
                .any(|d| {
                    d.visible
                        && d.text.contains("Alpha asked Beta")
                        && d.text.contains("expects an answer")
                        && d.text.contains("A four-word slogan.")
                        && d.text.contains("Open")
                        && d.text.contains(&job_name)
                })
                .then_some(()),
        )
    })
    .await?;
    let pair = active_session_id(c).await?;
    let dels = get(http, daemon, &format!("/v1/sessions/{pair}/delegations")).await?;
    if dels.as_array().map(Vec::len) != Some(1) || dels[0]["state"] != "open" {
        bail!("the API should show one open delegation while the page does: {dels}");
    }

    // --- Beta answers: the record turns replied, with the result, on the live event alone
    poll("the replied delegation record", TURN, || async {
        Ok(
            elements(c, "#delegation-records .delegation[data-state=replied]")
                .await?
                .iter()
                .any(|d| {
                    d.visible
                        && d.text.contains("Beta replied")
                        && d.text.contains("Fast and calm.")
                })
                .then_some(()),
        )
    })
    .await?;
    if !elements(c, "#delegation-records .delegation[data-state=open]")
        .await?
        .is_empty()
    {
        bail!("the delegation shows both open and replied");
    }
    wait_hidden(c, "#composer-form", SHORT).await?;
    save_screenshot(c, "browser-work-delegation.png").await?;
    let dels = get(http, daemon, &format!("/v1/sessions/{pair}/delegations")).await?;
    if dels[0]["state"] != "replied" || dels[0]["result"]["text"] != "Fast and calm." {
        bail!("the API disagrees with the replied record: {dels}");
    }

    // --- Back in the group: Alpha says the slogan; the job lists its delegation
    click_session(c, "Slogans").await?;
    wait_bot_line(c, "Alpha", "Slogan: Fast and calm.").await?;
    open_jobs(c).await?;
    poll(
        "the job's delegation, replied, in the Jobs list",
        TURN,
        || async {
            Ok(elements(c, "#jobs-list .job-row")
                .await?
                .iter()
                .any(|r| {
                    r.text.contains(&job_name) && r.text.contains("Alpha asked Beta · Replied")
                })
                .then_some(()))
        },
    )
    .await?;

    // --- (b) Gamma's desk opens three jobs; two run (its two work slots), the third waits
    let jobs_sid = new_group(c, "Backlog", &["Gamma"]).await?;
    *hanging = jobs_sid.parse().ok();
    open_jobs(c).await?;
    let work_of_gamma = || async {
        let items = get(http, daemon, &format!("/v1/bots/{gamma}/work-items")).await?;
        Ok::<Vec<Value>, anyhow::Error>(
            items
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|i| i["mode"] == "work")
                .collect(),
        )
    };
    for (n, title) in [(1, "one"), (2, "two")] {
        say(c, &format!("@Gamma job {title}")).await?;
        poll(&format!("Gamma's job {title:?} to start"), TURN, || async {
            let items = work_of_gamma().await?;
            Ok((items.len() == n
                && items
                    .iter()
                    .any(|i| names_job(i, title) && i["state"] == "running"))
            .then_some(()))
        })
        .await?;
        poll(&format!("job {title:?} shown as working"), TURN, || async {
            Ok(work_items_of(c, "Gamma")
                .await?
                .iter()
                .any(|i| i.contains(&format!("{title}\u{201d}")) && i.contains("Working"))
                .then_some(()))
        })
        .await?;
    }
    say(c, "@Gamma job three").await?;
    poll("Gamma's job \"three\" to be queued", TURN, || async {
        let items = work_of_gamma().await?;
        Ok(items
            .iter()
            .any(|i| names_job(i, "three") && i["state"] == "queued")
            .then_some(()))
    })
    .await?;
    poll(
        "job \"three\" shown as queued at position 1",
        TURN,
        || async {
            Ok(work_items_of(c, "Gamma")
                .await?
                .iter()
                .any(|i| i.contains("three\u{201d}") && i.contains("Queued, at position 1"))
                .then_some(()))
        },
    )
    .await?;
    let items = work_of_gamma().await?;
    let three = items
        .iter()
        .find(|i| names_job(i, "three"))
        .ok_or_else(|| anyhow!("no work item for job three: {items:?}"))?;
    if three["queue_position"] != 1 {
        bail!("the API should put job three at position 1: {three}");
    }
    poll("the three jobs in the Jobs list", SHORT, || async {
        let rows = elements(c, "#jobs-list .job-row .job-name").await?;
        Ok(["one", "two", "three"]
            .iter()
            .all(|n| rows.iter().any(|r| r.visible && r.text.ends_with(n)))
            .then_some(()))
    })
    .await?;
    let toggle = elements(c, "#work-toggle").await?;
    if !toggle.iter().any(|t| t.text.contains("Jobs · 3")) {
        bail!(
            "the Jobs button should count three jobs: {:?}",
            toggle.iter().map(|t| &t.text).collect::<Vec<_>>()
        );
    }
    save_screenshot(c, "browser-work-jobs.png").await?;

    // --- Phone width: the Jobs panel fits, no sideways scroll
    c.set_window_size(390, 844).await?;
    click_session(c, "Backlog").await?;
    open_jobs(c).await?;
    wait_text(c, "#bot-work .work-item", "Queued, at position 1").await?;
    no_sideways_scroll(c, "the Jobs panel at 390 px").await?;
    save_screenshot(c, "browser-work-phone.png").await?;

    // --- STOP-13: job one's view lists Gamma's turn at work; stopping the group's work marks
    // it Stopped, with what it was doing as the stop recorded it
    let items = work_of_gamma().await?;
    let plan = items
        .iter()
        .find(|i| names_job(i, "one"))
        .and_then(|i| i["plan_id"].as_i64())
        .ok_or_else(|| anyhow!("no job for \"one\": {items:?}"))?;
    // AT-8: the line that opened it says where it was filed, and opens the job's flow
    click_in(c, ".msg.user", "job one", ".line-flow-toggle").await?;
    let filed = ".msg.user .line-flow .flow-step[data-step=\"filed\"]";
    wait_text(c, filed, "Filed under: job one").await?;
    click(
        c,
        &format!("{filed} .flow-open-job[data-plan-id=\"{plan}\"]"),
    )
    .await?;
    wait_text(c, "#job-view-title", "job one").await?;
    // PLAN-O7: the head says what changed last: Gamma's turn on it.
    wait_text(c, "#job-state .job-last-change", "(Gamma's turn)").await?;
    // At phone width the job view shows one part at a time: its turns are under Trace.
    click(c, ".job-tab[data-tab=\"trace\"]").await?;
    wait_text(c, "#job-turns .job-turn[data-status=\"running\"]", "Gamma").await?;
    wait_text(c, "#job-turns .job-turn-state", "Working").await?;
    http.post(format!("{}/v1/holds", daemon.base_url))
        .json(
            &json!({ "scope": { "kind": "session", "session_id": jobs_sid.parse::<i64>()? },
                       "session_id": jobs_sid.parse::<i64>()? }),
        )
        .send()
        .await?
        .error_for_status()?;
    wait_text(
        c,
        "#job-turns .job-turn[data-status=\"stopped\"]",
        "Stopped",
    )
    .await?;
    wait_text(c, "#job-turns .job-turn-stop", "You stopped it").await?;
    // HOLD-M9: the job view lists the stop over its conversation, with Lift; HOLD-M7: Stop
    // this job makes the job's own stop, listed too, and its Lift takes it away.
    wait_text(
        c,
        "#job-holds .job-hold[data-kind=\"session\"]",
        "Stopped: The work in",
    )
    .await?;
    click(c, "#job-holds .job-stop").await?;
    wait_text(
        c,
        "#job-holds .job-hold[data-kind=\"plan\"]",
        "Stopped: The job",
    )
    .await?;
    let own = holds_over_job(http, daemon, plan).await?;
    if own.len() != 1 {
        bail!("Stop this job should make one hold on job one: {own:?}");
    }
    click(c, "#job-holds .job-hold[data-kind=\"plan\"] .job-hold-lift").await?;
    wait_hidden(c, "#job-holds .job-hold[data-kind=\"plan\"]", SHORT).await?;
    if !holds_over_job(http, daemon, plan).await?.is_empty() {
        bail!("Lift in the job view should lift the job's stop");
    }
    let turns = get(http, daemon, &format!("/v1/tasks/{plan}/turns")).await?;
    if turns[0]["status"] != "stopped" || turns[0]["stopped_by"].is_null() {
        bail!("the API should list job one's turn as stopped by the hold: {turns}");
    }
    no_sideways_scroll(c, "the job's turns at 390 px").await?;
    save_screenshot(c, "browser-work-job-turns.png").await?;
    Ok(())
}

/// The holds in force on the job itself (scope `plan`).
async fn holds_over_job(http: &reqwest::Client, daemon: &Daemon, plan: i64) -> Result<Vec<Value>> {
    let all = get(http, daemon, "/v1/holds").await?;
    Ok(all
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|h| {
            h["status"] == "in_force"
                && h["scope"]["kind"] == "plan"
                && h["scope"]["plan_id"] == plan
        })
        .collect())
}
