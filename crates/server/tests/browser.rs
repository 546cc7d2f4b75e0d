//! Real-browser test of the web page served by `troupe serve`.
//!
//! Needs Debian's `chromium` and `chromium-driver` packages (`/usr/bin/chromium`,
//! `/usr/bin/chromedriver`; override with `CHROME_BIN` / `CHROMEDRIVER`). Without
//! chromedriver the test prints a notice and returns, unless `TROUPE_REQUIRE_BROWSER=1`
//! is set, in which case it fails.
//!
//! The daemon is the real `troupe` binary (crate `troupe-cli`), which Cargo does not
//! build for this crate's tests, so the test runs `cargo build -p troupe-cli` itself
//! (a no-op when current) and starts `target/debug/troupe serve --data-dir <tmp>
//! --addr 127.0.0.1:0`. Set `TROUPE_BIN=<path>` to use another binary without building.
//!
//! ```text
//! cargo test -p troupe-server --test browser
//! ```
//!
//! Three scenarios, each with its own daemon and browser: chatting (create a Bot, send,
//! stream, Stop), workflows (Plan and Light Loop on and off from the header, the 409
//! shown inline, a Stop's hold lifted from the Stops panel, the pause latch with Continue)
//! and a group (members, the
//! lead, mentions with pull-in, a Bot↔Bot direct read-only, an ask answered from its card).
//!
//! Phone-width screenshots are written to `target/browser-phone.png`,
//! `target/browser-workflow-phone.png` and `target/browser-group-phone.png`; on failure a
//! screenshot goes to `target/browser-failure.png` (or `browser-workflow-failure.png`,
//! `browser-group-failure.png`) and the page text and daemon log are printed.

mod browser_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use browser_support::page::{
    ENTER, SHORT, TAB, TURN, active_session_id, add_scripted_bot, chips, click, click_in,
    click_session, elements, fill, past_send_guard, start_conversation, wait_bot_line, wait_chip,
    wait_for_texts, wait_hidden, wait_text,
};
use browser_support::{
    ALPHA_FOLLOW_UP, ALPHA_REPLY, BOT_DIRECT_LINE, ChromeDriver, Daemon, GAMMA_REPLY,
    QUICK_FINAL_TEXT, RECOVERED_REPLY, alpha_script, beta_script, chromedriver_path, connect,
    diagnostics, failing_script, gamma_script, poll, quick_script, slow_script, target_dir,
    troupe_binary,
};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

/// A daemon, a chromedriver and a Chromium session in one temp dir, for one scenario.
struct Harness {
    tmp: tempfile::TempDir,
    daemon: Daemon,
    driver: ChromeDriver,
    client: Client,
}

impl Harness {
    /// `None` (with a notice) when chromedriver is missing and the browser is optional.
    async fn start() -> Option<Harness> {
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
            return None;
        }
        let tmp = tempfile::tempdir().expect("temp dir");
        let data_dir = tmp.path().join("data");
        let work_dir = tmp.path().join("work");
        let profile_dir = tmp.path().join("chrome-profile");
        for d in [&data_dir, &work_dir, &profile_dir] {
            std::fs::create_dir_all(d).expect("create temp dirs");
        }
        let bin = troupe_binary().expect("locate the troupe binary");
        let daemon = Daemon::start(&bin, &data_dir, &work_dir).expect("start troupe serve");
        let driver = ChromeDriver::start(&driver_path)
            .await
            .expect("start chromedriver");
        let client = connect(&driver, &profile_dir)
            .await
            .expect("open a chromium session");
        Some(Harness {
            tmp,
            daemon,
            driver,
            client,
        })
    }

    /// Writes a script file into the temp dir and returns its path.
    fn script(&self, name: &str, text: String) -> PathBuf {
        let path = self.tmp.path().join(name);
        std::fs::write(&path, text).expect("write script");
        path
    }

    /// Closes the browser; on failure first collects a screenshot (`target/<shot>`), the
    /// page text and the logs, and panics with them.
    async fn finish(self, result: Result<()>, shot: &str) {
        if let Err(err) = &result {
            let diag = diagnostics(&self.client, &self.daemon, &self.driver, shot).await;
            let _ = self.client.clone().close().await;
            panic!("{err:#}\n{diag}");
        }
        let _ = self.client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_creates_a_bot_sends_a_line_streams_the_reply_and_stops_a_long_turn() {
    let Some(h) = Harness::start().await else {
        return;
    };
    let quick = h.script("quick.json", quick_script());
    let slow = h.script("slow.json", slow_script());
    let result = scenario(&h.client, &h.daemon, &quick, &slow).await;
    h.finish(result, "browser-failure.png").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_switches_workflows_and_lifts_the_pause_latch() {
    let Some(h) = Harness::start().await else {
        return;
    };
    let slow = h.script("slow.json", slow_script());
    let failing = h.script("failing.json", failing_script());
    let result = workflow_scenario(&h.client, &h.daemon, &slow, &failing).await;
    h.finish(result, "browser-workflow-failure.png").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_runs_a_group_with_a_lead_mentions_and_an_ask() {
    let Some(h) = Harness::start().await else {
        return;
    };
    let scripts = [
        ("Alpha", h.script("alpha.json", alpha_script())),
        ("Beta", h.script("beta.json", beta_script())),
        ("Gamma", h.script("gamma.json", gamma_script())),
    ];
    let result = group_scenario(&h.client, &h.daemon, &scripts).await;
    h.finish(result, "browser-group-failure.png").await;
}

async fn scenario(c: &Client, daemon: &Daemon, quick: &Path, slow: &Path) -> Result<()> {
    c.goto(&daemon.login_link).await?;
    c.wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#new-bot-form"))
        .await?;

    // --- a quick scripted Bot, a conversation, one line, a streamed reply with a command
    add_scripted_bot(c, "quick-bot", quick).await?;
    start_conversation(c, "quick-bot", "Quick chat").await?;

    fill(c, "#composer", "hello").await?;
    c.find(Locator::Css("#send")).await?.click().await?;
    wait_for_texts(c, ".msg.user", "the user line", |t| {
        t.iter().any(|t| t.contains("hello"))
    })
    .await?;

    poll("the bot's final reply", TURN, || async {
        let replies = elements(c, ".msg.bot").await?;
        Ok(replies
            .iter()
            .any(|r| r.text.contains(QUICK_FINAL_TEXT) && !r.class.contains("streaming"))
            .then_some(()))
    })
    .await?;
    poll("the `echo hi` command under the reply", TURN, || async {
        let cmds = elements(c, ".msg.bot .commands .command").await?;
        Ok(cmds
            .iter()
            .any(|e| e.text.contains("echo hi") && e.text.contains("exit 0"))
            .then_some(()))
    })
    .await?;
    wait_hidden(c, "#stop", SHORT)
        .await
        .context("Stop after the quick turn ended")?;
    // Live text and stored messages travel separately; the reply must still show once.
    poll(
        "no leftover streaming bubble after the quick turn",
        SHORT,
        || async {
            Ok(elements(c, ".msg.bot.streaming")
                .await?
                .is_empty()
                .then_some(()))
        },
    )
    .await?;
    let finals = elements(c, ".msg.bot").await?;
    let shown = finals.iter().filter(|r| r.text.contains("said hi")).count();
    if shown != 1 {
        bail!("the final reply shows {shown} times, expected once");
    }

    // --- a slow scripted Bot: watch the stream, then Stop the turn
    add_scripted_bot(c, "slow-bot", slow).await?;
    start_conversation(c, "slow-bot", "Slow chat").await?;
    let session_id = active_session_id(c).await?;
    fill(c, "#composer", "please talk for a while").await?;
    c.find(Locator::Css("#composer"))
        .await?
        .send_keys(ENTER)
        .await?; // Enter sends
    let sent = Instant::now();

    poll(
        "#stop to show and streamed text to appear",
        TURN,
        || async {
            let stop = elements(c, "#stop").await?;
            let streaming = elements(c, ".msg.bot.streaming").await?;
            let shown = stop.first().is_some_and(|s| s.visible);
            let streamed = streaming.iter().any(|s| s.text.contains("word0"));
            Ok((shown && streamed).then_some(()))
        },
    )
    .await?;
    past_send_guard(sent).await?;
    let clicked = Instant::now();
    c.find(Locator::Css("#stop")).await?.click().await?;
    wait_hidden(c, "#stop", Duration::from_secs(20))
        .await
        .context("Stop after clicking it")?;
    poll(
        "the streaming bubble to settle after Stop",
        SHORT,
        || async {
            Ok(elements(c, ".msg.bot.streaming")
                .await?
                .is_empty()
                .then_some(()))
        },
    )
    .await?;

    let http = daemon.http();
    let turns_url = format!("{}/v1/turns?session_id={}", daemon.base_url, session_id);
    let turns = poll("the API to report the turn stopped", SHORT, || async {
        let turns: Vec<Value> = http
            .get(&turns_url)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        Ok(turns
            .iter()
            .any(|t| t["status"] == "stopped")
            .then_some(turns.clone()))
    })
    .await?;
    eprintln!(
        "stopped {:.1?} after the click; turns: {}",
        clicked.elapsed(),
        Value::from(turns)
    );
    let transcript = elements(c, "#transcript").await?;
    if transcript.iter().any(|t| t.text.contains("word200")) {
        bail!("the slow reply streamed to its end although Stop was clicked");
    }

    // --- phone width: single column, collapsible list; screenshot for a human look
    c.set_window_size(390, 844).await?;
    click_session(c, "Quick chat").await?;
    poll(
        "the quick conversation's command at phone width",
        SHORT,
        || async {
            let cmds = elements(c, ".commands .command").await?;
            Ok(cmds
                .iter()
                .any(|e| e.visible && e.text.contains("echo hi"))
                .then_some(()))
        },
    )
    .await?;
    let overflow = c
        .execute(
            "return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await?;
    if overflow.as_f64().unwrap_or(0.0) > 1.0 {
        bail!("the page scrolls sideways at 390 px ({overflow} px too wide)");
    }
    let png = c.screenshot().await?;
    let path = target_dir().join("browser-phone.png");
    std::fs::create_dir_all(target_dir())?;
    std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("phone screenshot: {}", path.display());
    Ok(())
}

async fn workflow_scenario(c: &Client, daemon: &Daemon, slow: &Path, failing: &Path) -> Result<()> {
    c.goto(&daemon.login_link).await?;
    c.wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#new-bot-form"))
        .await?;
    let http = daemon.http();

    // --- Plan on from the header
    add_scripted_bot(c, "plan-bot", slow).await?;
    start_conversation(c, "plan-bot", "Plan chat").await?;
    let sid = active_session_id(c).await?;
    let workflow_url = format!("{}/v1/sessions/{}/workflow", daemon.base_url, sid);
    wait_text(c, "#workflow-status", "Workflow: none").await?;
    click(c, "#enable-plan").await?;
    wait_text(c, "#workflow-status", "Workflow: Plan").await?;
    wait_hidden(c, "#enable-plan", SHORT).await?;
    let w: Value = http.get(&workflow_url).send().await?.json().await?;
    if w["kind"] != "plan" {
        bail!("the API does not report Plan after the click: {w}");
    }

    // --- while a turn runs, turning the workflow off is refused; the 409 shows inline
    fill(c, "#composer", "go").await?;
    click(c, "#send").await?;
    let sent = Instant::now();
    poll("#stop to show for the slow turn", TURN, || async {
        Ok(elements(c, "#stop")
            .await?
            .first()
            .is_some_and(|s| s.visible)
            .then_some(()))
    })
    .await?;
    click(c, "#workflow-off").await?;
    wait_text(c, "#workflow-error", "running").await?;
    wait_text(c, "#workflow-status", "Workflow: Plan").await?;

    // --- Stop is a hold, not the pause latch: no pause notice; its Lift (the Stops panel)
    // leaves the Bot idle (a composer Stop's lift reopens nothing) and Plan stays on
    past_send_guard(sent).await?;
    click(c, "#stop").await?;
    wait_hidden(c, "#stop", SHORT).await?;
    let holds: Value = http
        .get(format!("{}/v1/holds", daemon.base_url))
        .send()
        .await?
        .json()
        .await?;
    if holds.as_array().map(Vec::len) != Some(1) {
        bail!("the Stop should have made one hold: {holds}");
    }
    if elements(c, "#paused").await?.iter().any(|p| p.visible) {
        bail!("a Stop shows the pause notice");
    }
    click(c, "#stops-details > summary").await?;
    click_in(c, "#stops-list .stop-row", "You pressed Stop", ".stop-lift").await?;
    wait_text(c, "#stops-empty", "Nothing is stopped.").await?;
    let view: Value = http
        .get(format!("{}/v1/sessions/{}", daemon.base_url, sid))
        .send()
        .await?
        .json()
        .await?;
    if !view["paused"].is_null() || view["running"] != false {
        bail!("after the Lift the Bot should be idle, with no latch: {view}");
    }
    click(c, "#stops-details > summary").await?;
    wait_text(c, "#workflow-status", "Workflow: Plan").await?;

    // --- off while idle
    click(c, "#workflow-off").await?;
    wait_text(c, "#workflow-status", "Workflow: none").await?;
    wait_hidden(c, "#workflow-error", SHORT).await?;
    let w: Value = http.get(&workflow_url).send().await?.json().await?;
    if !w["kind"].is_null() {
        bail!("the API still reports a workflow after turning it off: {w}");
    }

    // --- one workflow form at a time: the Light Loop's closes the Lattice's
    click(c, "#enable-lattice").await?;
    wait_text(c, "#lattice-form", "Start Lattice").await?;
    // --- Light Loop through its small form, then off again (it ends cancelled)
    click(c, "#enable-lightloop").await?;
    wait_text(c, "#lightloop-submit", "Start Light Loop").await?;
    wait_hidden(c, "#lattice-form", SHORT).await?;
    fill(c, "#lightloop-instructions", "Write hello.txt saying hi.").await?;
    fill(c, "#lightloop-max", "2").await?;
    fill(c, "#lightloop-calls", "7").await?;
    click(c, "#lightloop-submit").await?;
    wait_text(
        c,
        "#workflow-status",
        "Light Loop · executing · iteration 1 of 2 · model calls 0 of 7",
    )
    .await?;
    wait_hidden(c, "#lightloop-form", SHORT).await?;
    let w: Value = http.get(&workflow_url).send().await?.json().await?;
    if w["kind"] != "lightloop"
        || w["slot"]["max_iterations"] != 2
        || w["guard"]["max_model_calls"] != 7
    {
        bail!("the API does not show the Light Loop from the form: {w}");
    }
    click(c, "#workflow-off").await?;
    wait_text(c, "#workflow-status", "cancelled").await?;

    // --- a BlueprintLoop from its form: a Blueprint written under Plan (over the API), run
    // from the page, its phase shown, then cancelled from the page
    let post = |url: String, body: Value| {
        let http = http.clone();
        async move {
            let r = http.post(url).json(&body).send().await?;
            let status = r.status();
            let v: Value = r.json().await?;
            if !status.is_success() {
                bail!("{status}: {v}");
            }
            Ok::<Value, anyhow::Error>(v)
        }
    };
    post(workflow_url.clone(), json!({"kind": "plan"})).await?;
    let body: String = troupe_workflows::notes::blueprint::SECTIONS
        .iter()
        .map(|s| format!("## {s}\nhello.txt says hi.\n"))
        .collect();
    post(
        format!("{}/v1/notes", daemon.base_url),
        json!({"kind": "blueprint", "title": "Hello file", "body": body, "session_id": sid.parse::<i64>()?}),
    )
    .await?;
    wait_text(c, "#workflow-status", "Workflow: Plan").await?;
    click(c, "#enable-blueprint").await?;
    wait_text(c, "#blueprint-note", "Hello file (v1)").await?;
    fill(c, "#blueprint-instruction", "just the file").await?;
    click(c, "#blueprint-submit").await?;
    wait_text(c, "#workflow-status", "BlueprintLoop").await?;
    wait_text(
        c,
        "#workflow-status",
        "\u{201c}Hello file\u{201d} · executing · iteration 1",
    )
    .await?;
    wait_hidden(c, "#blueprint-form", SHORT).await?;
    let w: Value = http.get(&workflow_url).send().await?.json().await?;
    if w["blueprint"]["phase"] != "running" || w["kind"] != Value::Null {
        bail!("the API does not show the BlueprintLoop started from the page: {w}");
    }
    click(c, "#blueprint-cancel-loop").await?;
    wait_text(c, "#workflow-status", "Workflow: none").await?;
    let loops: Value = http
        .get(format!("{}/v1/blueprint-loops", daemon.base_url))
        .send()
        .await?
        .json()
        .await?;
    if loops[0]["status"] != "cancelled" {
        bail!("the loop is not cancelled after the page's Cancel: {loops}");
    }

    // --- a failing model call latches `failed`; Continue lifts it
    add_scripted_bot(c, "failing-bot", failing).await?;
    start_conversation(c, "failing-bot", "Failing chat").await?;
    let failing_sid = active_session_id(c).await?;
    fill(c, "#composer", "hello").await?;
    click(c, "#send").await?;
    poll("#paused-reason and #continue", TURN, || async {
        let reason = elements(c, "#paused-reason").await?;
        let cont = elements(c, "#continue").await?;
        let shown = reason
            .first()
            .is_some_and(|r| r.visible && r.text.contains("failed"));
        Ok((shown && cont.first().is_some_and(|b| b.visible)).then_some(()))
    })
    .await?;

    // Phone width with the header at its fullest: no sideways scroll.
    c.set_window_size(390, 844).await?;
    wait_text(c, "#continue", "Continue").await?;
    let overflow = c
        .execute(
            "return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await?;
    if overflow.as_f64().unwrap_or(0.0) > 1.0 {
        bail!("the page scrolls sideways at 390 px with the workflow header ({overflow} px)");
    }
    let png = c.screenshot().await?;
    let path = target_dir().join("browser-workflow-phone.png");
    std::fs::create_dir_all(target_dir())?;
    std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("workflow phone screenshot: {}", path.display());

    // Continue has the failed turn tried again: the Bot answers and the latch stays gone.
    click(c, "#continue").await?;
    wait_bot_line(c, "failing-bot", RECOVERED_REPLY)
        .await
        .context("the failed turn picked up after Continue")?;
    wait_hidden(c, "#paused", TURN)
        .await
        .context("the latch after Continue")?;
    let view_url = format!("{}/v1/sessions/{}", daemon.base_url, failing_sid);
    poll("the API to report the latch gone", SHORT, || async {
        let view: Value = http.get(&view_url).send().await?.json().await?;
        Ok(view["paused"].is_null().then_some(()))
    })
    .await?;
    Ok(())
}

async fn group_scenario(c: &Client, daemon: &Daemon, scripts: &[(&str, PathBuf)]) -> Result<()> {
    c.goto(&daemon.login_link).await?;
    c.wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#new-bot-form"))
        .await?;
    let http = daemon.http();
    let api = |path: String| {
        let http = http.clone();
        let url = format!("{}{path}", daemon.base_url);
        async move {
            let v: Value = http
                .get(url)
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            Ok::<Value, anyhow::Error>(v)
        }
    };
    for (name, script) in scripts {
        add_scripted_bot(c, name, script).await?;
    }
    let bots = api("/v1/bots".into()).await?;
    let bot_id = |name: &str| -> Result<i64> {
        bots.as_array()
            .and_then(|b| b.iter().find(|b| b["name"] == name))
            .and_then(|b| b["id"].as_i64())
            .ok_or_else(|| anyhow!("no Bot {name} in {bots}"))
    };
    let (alpha, beta) = (bot_id("Alpha")?, bot_id("Beta")?);

    // --- New group: a title and a checkbox per live Bot; it opens
    click(c, "#new-group").await?;
    wait_text(c, "#group-create", "Create group").await?;
    fill(c, "#group-title", "Launch").await?;
    for name in ["Alpha", "Beta"] {
        click_in(c, "#group-bots .group-bot", name, "input").await?;
    }
    click(c, "#group-create").await?;
    poll("the group to open with its two chips", SHORT, || async {
        let active = elements(c, ".session-item.active").await?;
        let chips = chips(c).await?;
        let names: Vec<&str> = chips.iter().map(|ch| ch.name.as_str()).collect();
        Ok((active.iter().any(|a| a.text.contains("Launch"))
            && names == ["Alpha", "Beta"]
            && chips.iter().all(|ch| ch.state == "idle" && !ch.lead))
        .then_some(()))
    })
    .await?;
    let sid = active_session_id(c).await?;
    let view = api(format!("/v1/sessions/{sid}")).await?;
    if view["kind"] != "group" || view["title"] != "Launch" {
        bail!("the page did not create the group asked for: {view}");
    }

    // --- Settings: Alpha made lead with one click; the badge shows on its chip
    click(c, "#group-settings-toggle").await?;
    wait_text(c, "#group-members .member-row", "Make lead").await?;
    click_in(c, "#group-members .member-row", "Alpha", ".make-lead").await?;
    poll("Alpha's Lead badge", SHORT, || async {
        Ok(chips(c)
            .await?
            .iter()
            .any(|ch| ch.name == "Alpha" && ch.lead)
            .then_some(()))
    })
    .await?;
    wait_text(c, "#group-members .member-row", "Remove lead").await?;
    let lead = api(format!("/v1/sessions/{sid}/lead")).await?;
    if lead["lead"] != alpha {
        bail!("the API does not report Alpha as lead after the click: {lead}");
    }
    click(c, "#group-settings-close").await?;
    wait_hidden(c, "#group-settings", SHORT).await?;

    // --- A line naming nobody goes to the lead alone
    fill(c, "#composer", "Kick off, please.").await?;
    c.find(Locator::Css("#composer"))
        .await?
        .send_keys(ENTER)
        .await?;
    wait_for_texts(c, ".msg.user .meta", "the person's line, as You", |t| {
        t.iter().any(|t| t.contains("You"))
    })
    .await?;
    wait_bot_line(c, "Alpha", ALPHA_REPLY).await?;
    wait_chip(c, "Alpha", "idle", TURN).await?;
    let turns = api(format!("/v1/turns?session_id={sid}")).await?;
    let by: Vec<i64> = turns
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["bot_id"].as_i64()).collect())
        .unwrap_or_default();
    if by != [alpha] {
        bail!("only the lead should have answered the unaddressed line; turns: {turns}");
    }

    // --- Alpha asks: working, then waiting on you; answered from the card. (Before Gamma
    // joins: a woken Bot's thread gets the lines it only read after the line that woke it,
    // and the scripted rule looks at the last one.)
    fill(c, "#composer", "Pick a colour for the logo.").await?;
    click(c, "#send").await?;
    wait_chip(c, "Alpha", "working", TURN).await?;
    wait_chip(c, "Alpha", "waiting on you", TURN).await?;
    wait_text(
        c,
        ".ask-card[data-state=open]",
        "Which colour should the logo be?",
    )
    .await?;
    // The conversation list says so too, for a person looking at another conversation.
    wait_text(c, "#sessions .session-item.active", "waiting on you").await?;
    let options = elements(c, ".ask-card[data-state=open] .ask-option").await?;
    let labels: Vec<&str> = options.iter().map(|o| o.text.as_str()).collect();
    if options.len() != 2
        || !labels[0].contains("Blue")
        || !labels[0].contains("Recommended")
        || labels[1].contains("Recommended")
        || labels.iter().any(|l| l.contains("Other"))
    {
        bail!("the ask card's options are wrong: {labels:?}");
    }
    click_in(
        c,
        ".ask-card[data-state=open] .ask-option",
        "Green",
        ".ask-label",
    )
    .await?;
    poll("Green picked (and Blue not)", SHORT, || async {
        let picked = c
            .execute(
                "return [...document.querySelectorAll('.ask-option[aria-checked=true]')].map(e => e.innerText);",
                vec![],
            )
            .await?;
        let picked = picked.as_array().cloned().unwrap_or_default();
        Ok((picked.len() == 1 && picked[0].as_str().unwrap_or("").contains("Green")).then_some(()))
    })
    .await?;
    fill(
        c,
        ".ask-card[data-state=open] .ask-text",
        "A darker shade, please.",
    )
    .await?;
    click(c, ".ask-card[data-state=open] .ask-send").await?;
    poll(
        "the answered card: the pick and the words, no box",
        SHORT,
        || async {
            let cards = elements(c, ".ask-card[data-state=answered]").await?;
            let boxes = elements(c, ".ask-card textarea").await?;
            Ok(cards
                .iter()
                .any(|a| a.text.contains("Green") && a.text.contains("A darker shade, please."))
                .then_some(())
                .filter(|_| boxes.is_empty()))
        },
    )
    .await?;
    wait_chip(c, "Alpha", "working", TURN).await?;
    wait_bot_line(c, "Alpha", ALPHA_FOLLOW_UP).await?;
    wait_chip(c, "Alpha", "idle", TURN).await?;
    poll(
        "the list no longer saying waiting on you",
        SHORT,
        || async {
            let rows = elements(c, "#sessions .session-item.active").await?;
            Ok((!rows.iter().any(|r| r.text.contains("waiting on you"))).then_some(()))
        },
    )
    .await?;
    let lines: Value = api(format!("/v1/sessions/{sid}/messages")).await?;
    let ask = lines
        .as_array()
        .and_then(|l| l.iter().find(|l| l["kind"] == "ask"))
        .ok_or_else(|| anyhow!("no ask among the lines: {lines}"))?;
    if ask["ask"]["answer"] != json!({"options": [1], "text": "A darker shade, please."}) {
        bail!("the answer stored is not what the card sent: {ask}");
    }
    if lines.as_array().is_some_and(|l| {
        l.iter()
            .any(|l| l["bot_id"] == beta && l["author"] == "bot")
    }) {
        bail!("Beta spoke in the group although nobody addressed it: {lines}");
    }

    // --- @ completion, then naming Gamma pulls it in
    fill(c, "#composer", "@Gam").await?;
    wait_text(c, "#mention-menu .mention-option", "@Gamma").await?;
    c.find(Locator::Css("#composer"))
        .await?
        .send_keys(TAB)
        .await?;
    let typed = c
        .execute("return document.querySelector('#composer').value;", vec![])
        .await?;
    if typed != "@Gamma " {
        bail!("Tab on the @ menu should insert \"@Gamma \", the composer has {typed}");
    }
    wait_hidden(c, "#mention-menu", SHORT).await?;
    c.find(Locator::Css("#composer"))
        .await?
        .send_keys(&format!("welcome aboard{ENTER}"))
        .await?;
    wait_text(c, ".msg.user .mention", "@Gamma").await?;
    wait_text(c, ".msg.app-notice", "Gamma joined").await?;
    poll("Gamma's chip", SHORT, || async {
        Ok(chips(c)
            .await?
            .iter()
            .any(|ch| ch.name == "Gamma")
            .then_some(()))
    })
    .await?;
    wait_bot_line(c, "Gamma", GAMMA_REPLY).await?;

    // --- The direct Gamma opened with Beta: under the group, read-only
    poll("the Bot↔Bot direct under the group", TURN, || async {
        Ok(elements(c, ".session-item.sub")
            .await?
            .iter()
            .any(|s| s.visible && s.text.contains("Gamma ↔ Beta"))
            .then_some(()))
    })
    .await?;
    click_session(c, "Gamma ↔ Beta").await?;
    wait_text(
        c,
        "#readonly-note",
        "A conversation between Bots — you can read it",
    )
    .await?;
    wait_hidden(c, "#composer-form", SHORT).await?;
    wait_bot_line(c, "Gamma", BOT_DIRECT_LINE).await?;
    click_session(c, "Launch").await?;
    wait_bot_line(c, "Gamma", GAMMA_REPLY).await?;

    // --- The suggestion is only a hint on the row (Gamma's direct is a handoff)
    click(c, "#group-settings-toggle").await?;
    wait_text(
        c,
        "#group-members .member-row",
        "Suggested: 1 handoff in the last 7 days",
    )
    .await?;
    let rows = elements(c, "#group-members .member-row").await?;
    if !rows
        .iter()
        .any(|r| r.text.contains("Gamma") && r.text.contains("Suggested"))
    {
        bail!("the suggestion hint is not on Gamma's row");
    }
    let lead = api(format!("/v1/sessions/{sid}/lead")).await?;
    if lead["lead"] != alpha {
        bail!("a suggestion must not change the lead: {lead}");
    }
    click(c, "#group-settings-close").await?;

    // --- Phone width: chips wrap, the settings panel fits, no sideways scroll
    c.set_window_size(390, 844).await?;
    click_session(c, "Launch").await?;
    wait_bot_line(c, "Alpha", ALPHA_FOLLOW_UP).await?;
    click(c, "#group-settings-toggle").await?;
    wait_text(c, "#group-members .member-row", "Remove lead").await?;
    let overflow = c
        .execute(
            "return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await?;
    if overflow.as_f64().unwrap_or(0.0) > 1.0 {
        bail!("the group page scrolls sideways at 390 px ({overflow} px too wide)");
    }
    let fits = c
        .execute(
            "const w = window.innerWidth;
             return [...document.querySelectorAll('#member-chips .chip, #group-settings button, #group-settings select, .sidebar-head button')]
               .every(e => { const r = e.getBoundingClientRect(); return r.left >= 0 && r.right <= w + 1; });",
            vec![],
        )
        .await?;
    if fits != json!(true) {
        bail!("a chip, a settings control or a header button sticks out at 390 px");
    }
    let png = c.screenshot().await?;
    let path = target_dir().join("browser-group-phone.png");
    std::fs::create_dir_all(target_dir())?;
    std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("group phone screenshot: {}", path.display());

    // The widest phones (440 px) and a narrow window get the one column too: the list beside
    // the conversation would leave it a strip a word wide.
    for (w, h) in [(440, 956), (700, 900)] {
        c.set_window_size(w, h).await?;
        let shape = c
            .execute(
                "return [document.documentElement.scrollWidth - window.innerWidth,
                         document.querySelector('#main').getBoundingClientRect().width,
                         window.innerWidth];",
                vec![],
            )
            .await?;
        let (over, main, inner) = (
            shape[0].as_f64().unwrap_or(0.0),
            shape[1].as_f64().unwrap_or(0.0),
            shape[2].as_f64().unwrap_or(0.0),
        );
        if over > 1.0 || main < inner - 1.0 {
            bail!(
                "at {w} px the conversation is {main} px of {inner} and the page is {over} px too wide"
            );
        }
    }
    Ok(())
}
