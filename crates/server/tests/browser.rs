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
//! Two scenarios, each with its own daemon and browser: chatting (create a Bot, send,
//! stream, Stop) and workflows (Plan and Light Loop on and off from the header, one form open
//! at a time, the 409 shown inline, a Stop's hold lifted from the Stops panel, the pause latch
//! with Continue). A group is `tests/browser_group.rs`.
//!
//! Phone-width screenshots are written to `target/browser-phone.png` and
//! `target/browser-workflow-phone.png`; on failure a screenshot goes to
//! `target/browser-failure.png` (or `browser-workflow-failure.png`) and the page text and
//! daemon log are printed.

mod browser_support;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use browser_support::page::{
    ENTER, SHORT, TURN, active_session_id, add_scripted_bot, click, click_in, click_session,
    elements, fill, no_sideways_scroll, past_send_guard, save_screenshot, start_conversation,
    start_conversation_in, wait_bot_line, wait_for_texts, wait_hidden, wait_text,
};
use browser_support::{
    BrowserRun, Daemon, QUICK_FINAL_TEXT, RECOVERED_REPLY, failing_script, poll, quick_script,
    slow_script,
};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_creates_a_bot_sends_a_line_streams_the_reply_and_stops_a_long_turn() {
    let Some(h) = BrowserRun::start().await else {
        return;
    };
    let quick = h.script("quick.json", quick_script());
    let slow = h.script("slow.json", slow_script());
    let result = scenario(&h.client, &h.daemon, &quick, &slow).await;
    h.finish(result, "browser-failure.png").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_switches_workflows_and_lifts_the_pause_latch() {
    let Some(h) = BrowserRun::start().await else {
        return;
    };
    let slow = h.script("slow.json", slow_script());
    let failing = h.script("failing.json", failing_script());
    let result = workflow_scenario(&h.client, &h.daemon, &slow, &failing).await;
    h.finish(result, "browser-workflow-failure.png").await;
}

async fn scenario(c: &Client, daemon: &Daemon, quick: &Path, slow: &Path) -> Result<()> {
    c.goto(&daemon.login_link).await?;
    c.wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#new-bot-form"))
        .await?;

    // --- a quick scripted Bot, a conversation, one line, a streamed reply with a command
    add_scripted_bot(c, "quick-bot", quick).await?;
    // On a project folder of the person's: the header says where the Bot works.
    let project = tempfile::tempdir()?;
    let folder = std::fs::canonicalize(project.path())?.display().to_string();
    start_conversation_in(c, "quick-bot", "Quick chat", Some(&folder)).await?;
    let shown = elements(c, "#conv-folder").await?;
    if !shown
        .first()
        .is_some_and(|e| e.visible && e.text == format!("Folder: {folder}"))
    {
        bail!("the header does not name the folder {folder}: {shown:?}");
    }

    fill(c, "#composer", "hello").await?;
    c.find(Locator::Css("#send")).await?.click().await?;
    wait_for_texts(c, ".msg.user", "the user line", |t| {
        t.iter().any(|t| t.contains("hello"))
    })
    .await?;

    quick_final_reply(c, "the bot's final reply").await?;
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
    // TURN-15/16: the turn's last reply says when it ended and how long it took.
    poll("the reply's time and duration", SHORT, || async {
        let stamps = elements(c, ".msg.bot .meta .reply-time").await?;
        Ok((stamps.len() == 1
            && stamps[0].text.contains('·')
            && stamps[0].text.trim_end().ends_with('s'))
        .then_some(()))
    })
    .await?;
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

    let turns_path = format!("/v1/turns?session_id={session_id}");
    let turns = poll("the API to report the turn stopped", SHORT, || async {
        let turns: Vec<Value> = daemon.get_json(&turns_path).await?;
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

    bot_on_the_default_role(c, daemon, quick).await?;

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
    no_sideways_scroll(c, "the page at 390 px").await?;
    save_screenshot(c, "browser-phone.png").await?;
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
    no_sideways_scroll(c, "the page at 390 px with the workflow header").await?;
    save_screenshot(c, "browser-workflow-phone.png").await?;

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

/// The README's way to a real model: set the `default` role, then add a Bot on it. The page
/// offers the role first once it is set (read again when the Bots panel opens), sends no
/// endpoint for such a Bot, and its conversation answers from the role's model.
async fn bot_on_the_default_role(c: &Client, daemon: &Daemon, script: &Path) -> Result<()> {
    let http = daemon.http();
    http.put(format!("{}/v1/roles/default", daemon.base_url))
        .json(&json!({"kind": "scripted", "model": "scripted", "script": script}))
        .send()
        .await?
        .error_for_status()?;
    let details = c.find(Locator::Css("#bots-details")).await?;
    if details.attr("open").await?.is_some() {
        click(c, "#bots-details > summary").await?;
    }
    click(c, "#bots-details > summary").await?;
    poll(
        "the default role offered first, with its model named",
        SHORT,
        || async {
            let kind = c
                .find(Locator::Css("#bot-kind"))
                .await?
                .prop("value")
                .await?;
            let hint = elements(c, "#bot-default-hint").await?;
            let shown = hint
                .first()
                .is_some_and(|h| h.visible && h.text.contains("scripted"));
            Ok((kind.as_deref() == Some("default") && shown).then_some(()))
        },
    )
    .await?;
    if elements(c, "#bot-model").await?.iter().any(|m| m.visible) {
        bail!("the Model field shows for a Bot on the default role");
    }
    fill(c, "#bot-name", "on-default").await?;
    click(c, "#bot-submit").await?;
    let bot = poll("the Bot on the default role", SHORT, || async {
        let bots: Vec<Value> = daemon.get_json("/v1/bots").await?;
        Ok(bots.into_iter().find(|b| b["name"] == "on-default"))
    })
    .await?;
    if !bot["endpoint"].is_null() {
        bail!(
            "the page gave the Bot an endpoint of its own: {}",
            bot["endpoint"]
        );
    }
    start_conversation(c, "on-default", "On the default").await?;
    fill(c, "#composer", "hello").await?;
    click(c, "#send").await?;
    quick_final_reply(c, "the reply from the default role's model").await?;

    // A Bot and its conversation made over the API while the page is open: the list names its
    // Bot (the page reads its Bots again), not "Bot N".
    let made: Value = http
        .post(format!("{}/v1/bots", daemon.base_url))
        .json(&json!({"name": "made-elsewhere"}))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    http.post(format!("{}/v1/sessions", daemon.base_url))
        .json(&json!({"kind": "direct", "bot_ids": [made["id"]]}))
        .send()
        .await?
        .error_for_status()?;
    // (The list is polled every 5 s; the conversation is titled after its Bot.)
    poll(
        "the new conversation's Bot named in the list",
        TURN,
        || async {
            Ok(elements(c, ".session-item")
                .await?
                .iter()
                .any(|i| {
                    i.visible
                        && i.text.matches("made-elsewhere").count() == 2
                        && !i.text.contains("Bot ")
                })
                .then_some(()))
        },
    )
    .await?;
    Ok(())
}

/// Waits for the quick script's last reply, streamed to its end.
async fn quick_final_reply(c: &Client, what: &str) -> Result<()> {
    poll(what, TURN, || async {
        let replies = elements(c, ".msg.bot").await?;
        Ok(replies
            .iter()
            .any(|r| r.text.contains(QUICK_FINAL_TEXT) && !r.class.contains("streaming"))
            .then_some(()))
    })
    .await
}
