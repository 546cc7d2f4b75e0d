//! Real-browser test of stops (holds) in the page: the composer Stop in a direct (a tap right
//! after a send is ignored; at phone width Stop takes Send's place), then the person's next
//! line lifts the stop and the Bot answers; in a group, "Stop all of X's work" from the stop
//! menu stops X while Y goes on, and X leaves the menu; "Stop everything" with nothing
//! running makes a hold, the Stops panel lists it and its Lift lifts it; a dropped job's hold
//! shows above the conversation list with Lift; a refused press says "That did not work; try
//! again" where it was pressed; with the daemon gone the buttons are disabled.
//! No line about any stop appears in a conversation.
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`;
//! `TROUPE_BIN=<path>` skips building `troupe-cli`):
//!
//! ```text
//! cargo test -p troupe-server --test browser_holds
//! ```
//!
//! Screenshots of the group's stop menu and of the Stops panel go to
//! `target/browser-holds-menu.png` and `target/browser-holds-stops.png`; on failure one goes
//! to `target/browser-holds-failure.png` and the page text and daemon log are printed.

mod browser_support;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use browser_support::page::{
    SHORT, TURN, active_session_id, add_scripted_bot, click, click_in, elements, fill,
    start_conversation, wait_bot_line, wait_chip, wait_hidden, wait_text,
};
use browser_support::{
    Daemon, chromedriver_path, diagnostics, open_session, poll, target_dir, troupe_binary,
};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

/// A long reply streamed as `n` words, 50 ms apart.
fn story(n: usize) -> Value {
    let text: String = (1..=n).map(|i| format!("word{i:03} ")).collect();
    json!({ "text": text, "chunks": n, "chunk_delay_ms": 50 })
}

/// The direct's Bot: a long story, and a short answer to anything else (the lines held
/// while it was stopped are read with the one that lifts the stop).
fn teller() -> String {
    json!({
        "name": "holds-teller",
        "rules": [
            { "when_user_contains": "shorter", "reply": { "text": "A short one: the end." } },
            { "when_user_contains": "story", "reply": story(200) }
        ],
        "steps": [{ "text": "A short one: the end." }],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

/// A group member that works at length on "start" (Yara longer than Xavier).
fn worker(name: &str, words: usize) -> String {
    json!({
        "name": format!("holds-{name}"),
        "rules": [{ "when_user_contains": "start", "reply": story(words) }],
        "steps": [{ "text": format!("{name} here.") }],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_in_the_page() {
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
    for (name, text) in [
        ("Teller", teller()),
        ("Xavier", worker("Xavier", 200)),
        ("Yara", worker("Yara", 300)),
    ] {
        let path = tmp.path().join(format!("{}.json", name.to_lowercase()));
        std::fs::write(&path, text).expect("write script");
        scripts.push((name, path));
    }
    let bin = troupe_binary().expect("locate the troupe binary");
    let daemon = Daemon::start(&bin, &data, &work).expect("start troupe serve");
    let (driver, client) = open_session(&driver_path, &profile).await;
    let http = daemon.http();
    let result = scenario(&client, &daemon, &http, &scripts).await;
    if let Err(err) = &result {
        let diag = diagnostics(&client, &daemon, &driver, "browser-holds-failure.png").await;
        let _ = client.clone().close().await;
        panic!("{err:#}\n{diag}");
    }
    // The daemon goes away: every stop and Lift button is disabled until it is back.
    drop(daemon);
    if let Err(err) = unreachable_daemon(&client).await {
        let text = client
            .execute("return document.body.innerText;", vec![])
            .await
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = client.clone().close().await;
        panic!("{err:#}\n--- page text ---\n{text}");
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

async fn holds_in_force(http: &reqwest::Client, daemon: &Daemon) -> Result<Vec<Value>> {
    Ok(get(http, daemon, "/v1/holds")
        .await?
        .as_array()
        .cloned()
        .unwrap_or_default())
}

async fn say(c: &Client, line: &str) -> Result<()> {
    fill(c, "#composer", line).await?;
    click(c, "#send").await?;
    wait_text(c, ".msg.user", line).await
}

/// Whether `css` matches a visible element.
async fn shown(c: &Client, css: &str) -> Result<bool> {
    Ok(elements(c, css).await?.iter().any(|e| e.visible))
}

/// Waits for `css` to be visible (or, with `want = false`, hidden).
async fn wait_shown(c: &Client, css: &str, want: bool) -> Result<()> {
    poll(
        &format!("{css} to be {}", if want { "shown" } else { "hidden" }),
        SHORT,
        || async { Ok((shown(c, css).await? == want).then_some(())) },
    )
    .await
}

/// The labels the open stop menu offers.
async fn menu_choices(c: &Client) -> Result<Vec<String>> {
    Ok(elements(c, "#stop-menu-list .stop-choice")
        .await?
        .into_iter()
        .filter(|e| e.visible)
        .map(|e| e.text)
        .collect())
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

/// No app line about a stop: the conversation shows no system line.
async fn no_stop_line(c: &Client) -> Result<()> {
    let system = elements(c, "#transcript .msg.system").await?;
    if let Some(line) = system.first() {
        bail!("a line about the stop appeared: {:?}", line.text);
    }
    Ok(())
}

async fn scenario(
    c: &Client,
    daemon: &Daemon,
    http: &reqwest::Client,
    scripts: &[(&str, PathBuf)],
) -> Result<()> {
    c.goto(&daemon.login_link).await?;
    c.wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#new-bot-form"))
        .await?;
    for (name, script) in scripts {
        add_scripted_bot(c, name, script).await?;
    }
    wait_shown(c, "#stop-everything", true).await?;

    // --- A direct: the composer Stop shows while the Bot's turn goes
    start_conversation(c, "Teller", "Stories").await?;
    let direct = active_session_id(c).await?;
    wait_shown(c, "#stop", false).await?;
    say(c, "tell me a story").await?;
    wait_shown(c, "#stop", true).await?;
    if shown(c, "#stop-menu-toggle").await? {
        bail!("a direct shows the group's stop menu");
    }
    poll("the story to stream", TURN, || async {
        Ok(elements(c, ".msg.bot.streaming")
            .await?
            .iter()
            .any(|m| m.text.contains("word005"))
            .then_some(()))
    })
    .await?;

    // A tap on Stop right after a send is the send's double tap: ignored, the turn goes on.
    let sent_at = c
        .execute(
            "document.querySelector('#composer').value = 'and make it funny';
             document.querySelector('#send').click();
             document.querySelector('#stop').click();
             return performance.now();",
            vec![],
        )
        .await?
        .as_f64()
        .ok_or_else(|| anyhow!("no time from the page"))?;
    wait_text(c, ".msg.user", "and make it funny").await?;
    poll("0.7 s to pass since the send", SHORT, || async {
        let now = c.execute("return performance.now();", vec![]).await?;
        Ok((now.as_f64().unwrap_or(0.0) - sent_at > 700.0).then_some(()))
    })
    .await?;
    if !holds_in_force(http, daemon).await?.is_empty() {
        bail!("a tap within 0.6 s of a send made a stop");
    }
    let turns = get(http, daemon, &format!("/v1/turns?session_id={direct}")).await?;
    if turns[0]["status"] != "running" {
        bail!("the ignored tap stopped the turn: {turns}");
    }

    // At phone width with nothing typed, Stop takes Send's place; typing brings Send back.
    c.set_window_size(390, 844).await?;
    wait_shown(c, "#send", false).await?;
    wait_shown(c, "#stop", true).await?;
    fill(c, "#composer", "x").await?;
    wait_shown(c, "#send", true).await?;
    // Backspace empties the box again (an input event, as typing is).
    c.find(Locator::Css("#composer"))
        .await?
        .send_keys("\u{E003}")
        .await?;
    wait_shown(c, "#send", false).await?;

    click(c, "#stop").await?;
    wait_shown(c, "#stop", false).await?;
    let held = poll("the composer Stop's hold", SHORT, || async {
        let h = holds_in_force(http, daemon).await?;
        Ok((h.len() == 1).then(|| h[0].clone()))
    })
    .await?;
    if held["source"] != "user_button" || held["composer_stop"] != true {
        bail!("the composer Stop made an unexpected hold: {held}");
    }
    let turns = get(http, daemon, &format!("/v1/turns?session_id={direct}")).await?;
    if turns[0]["status"] != "stopped" {
        bail!("the turn did not stop: {turns}");
    }
    wait_shown(c, "#send", true).await?;
    c.set_window_size(1280, 900).await?;
    no_stop_line(c).await?;

    // The person's next line lifts the stop and the Bot answers it.
    say(c, "tell me a shorter one").await?;
    wait_bot_line(c, "Teller", "A short one: the end.").await?;
    poll("the stop to be lifted", SHORT, || async {
        Ok(holds_in_force(http, daemon).await?.is_empty().then_some(()))
    })
    .await?;
    no_stop_line(c).await?;

    // --- A group: the stop menu beside Send while its Bots work
    let sid = new_group(c, "Studio", &["Xavier", "Yara"]).await?;
    wait_shown(c, "#stop-menu-toggle", false).await?;
    say(c, "@Xavier @Yara start the posters").await?;
    wait_chip(c, "Xavier", "working", TURN).await?;
    wait_chip(c, "Yara", "working", TURN).await?;
    wait_shown(c, "#stop-menu-toggle", true).await?;
    if shown(c, "#stop").await? {
        bail!("a group shows the composer Stop");
    }
    click(c, "#stop-menu-toggle").await?;
    poll("the stop menu's choices", SHORT, || async {
        let got = menu_choices(c).await?;
        Ok([
            "Stop the work in this group",
            "Stop all of Xavier's work",
            "Stop all of Yara's work",
            "Stop every Bot",
        ]
        .iter()
        .all(|want| got.iter().any(|g| g == want))
        .then_some(()))
    })
    .await?;
    screenshot(c, "browser-holds-menu.png").await?;
    click_in(
        c,
        "#stop-menu-list li",
        "Stop all of Xavier's work",
        ".stop-choice",
    )
    .await?;
    wait_shown(c, "#stop-menu", false).await?;
    // Its chip says it is stopped (not merely idle) while the hold is in force.
    wait_chip(c, "Xavier", "stopped", TURN).await?;
    let holds = holds_in_force(http, daemon).await?;
    let xavier_hold = holds
        .iter()
        .find(|h| h["scope"]["kind"] == "bot")
        .cloned()
        .ok_or_else(|| anyhow!("no hold on Xavier's work: {holds:?}"))?;
    if xavier_hold["session_id"] != sid.parse::<i64>()? {
        bail!("the menu's hold does not name its conversation: {xavier_hold}");
    }
    let turns = get(http, daemon, &format!("/v1/turns?session_id={sid}")).await?;
    let of = |name: &str| -> Result<String> {
        let bots = turns.as_array().cloned().unwrap_or_default();
        let bot = xavier_hold["scope"]["bot_id"].clone();
        let t = bots
            .iter()
            .find(|t| (name == "Xavier") == (t["bot_id"] == bot))
            .ok_or_else(|| anyhow!("no turn of {name}: {turns}"))?;
        Ok(t["status"].as_str().unwrap_or_default().to_string())
    };
    if of("Xavier")? != "stopped" || of("Yara")? != "running" {
        bail!("Xavier should be stopped and Yara going on: {turns}");
    }

    // Xavier has left the menu; Yara is still offered.
    click(c, "#stop-menu-toggle").await?;
    poll("the menu without Xavier", SHORT, || async {
        let got = menu_choices(c).await?;
        Ok((got.iter().any(|g| g == "Stop all of Yara's work")
            && !got.iter().any(|g| g.contains("Xavier")))
        .then_some(()))
    })
    .await?;
    click(c, "#stop-menu-toggle").await?;
    wait_shown(c, "#stop-menu", false).await?;

    // Yara goes on to the end of her reply; then nobody works and the menu goes.
    wait_bot_line(c, "Yara", "word300").await?;
    wait_shown(c, "#stop-menu-toggle", false).await?;
    no_stop_line(c).await?;

    // --- Stop everything with nothing running makes a hold
    click(c, "#stop-everything").await?;
    let everything = poll("the hold on everything", SHORT, || async {
        let h = holds_in_force(http, daemon).await?;
        Ok(h.into_iter().find(|h| h["scope"]["kind"] == "everything"))
    })
    .await?;
    if !everything["effect"]["stopped_turns"]
        .as_array()
        .is_some_and(Vec::is_empty)
    {
        bail!("nothing was running, yet the hold stopped turns: {everything}");
    }

    // --- The Stops panel opened on the press (the person sees what it did) and lists both
    // stops; Lift lifts each
    // (Polled: the hold can be read over the API before the page has handled its answer.)
    poll(
        "the Stops panel opened by Stop everything (else nothing on screen says what it did)",
        SHORT,
        || async {
            let open = c
                .execute(
                    "return document.querySelector('#stops-details').open;",
                    vec![],
                )
                .await?;
            Ok((open == json!(true)).then_some(()))
        },
    )
    .await?;
    wait_text(c, "#stops-list .stop-row", "Every Bot's work").await?;
    wait_text(c, "#stops-list .stop-row", "All of Xavier's work").await?;
    wait_text(
        c,
        "#stops-list .stop-row",
        "Stopped Xavier in \u{201c}Studio\u{201d}",
    )
    .await?;
    wait_text(c, "#stops-list .stop-row", "Nothing was running").await?;
    // Everything is held: the idle Yara is stopped too.
    wait_chip(c, "Yara", "stopped", SHORT).await?;
    screenshot(c, "browser-holds-stops.png").await?;
    click_in(c, "#stops-list .stop-row", "Every Bot's work", ".stop-lift").await?;
    poll("the hold on everything to be lifted", SHORT, || async {
        let h = holds_in_force(http, daemon).await?;
        Ok((!h.iter().any(|h| h["scope"]["kind"] == "everything")).then_some(()))
    })
    .await?;
    poll("its row to leave the Stops panel", SHORT, || async {
        Ok((!elements(c, "#stops-list .stop-row")
            .await?
            .iter()
            .any(|r| r.text.contains("Every Bot's work")))
        .then_some(()))
    })
    .await?;
    click_in(
        c,
        "#stops-list .stop-row",
        "All of Xavier's work",
        ".stop-lift",
    )
    .await?;
    poll("every stop lifted", SHORT, || async {
        Ok(holds_in_force(http, daemon).await?.is_empty().then_some(()))
    })
    .await?;
    wait_text(c, "#stops-empty", "Nothing is stopped.").await?;
    wait_chip(c, "Xavier", "idle", SHORT).await?;
    wait_chip(c, "Yara", "idle", SHORT).await?;
    let all = get(http, daemon, "/v1/holds?status=all").await?;
    if all.as_array().map(Vec::len) != Some(3) {
        bail!("three holds were made in all: {all}");
    }

    // --- A refused press says so where it was pressed, and makes nothing
    c.execute(
        "window.__fetch = window.fetch;
         window.fetch = (url, opts) =>
           opts && opts.method === 'POST' && String(url).startsWith('/v1/holds')
             ? Promise.resolve(new Response(
                 JSON.stringify({ error: { code: 'internal', message: 'refused' } }),
                 { status: 500, headers: { 'content-type': 'application/json' } }))
             : window.__fetch(url, opts);",
        vec![],
    )
    .await?;
    click(c, "#stop-everything").await?;
    wait_text(c, "#stop-everything-error", "That did not work; try again").await?;
    c.execute("window.fetch = window.__fetch;", vec![]).await?;
    if !holds_in_force(http, daemon).await?.is_empty() {
        bail!("a refused Stop everything made a hold");
    }

    // --- A dropped job's hold shows above the conversation list, with Lift
    let dropped = http
        .post(format!("{}/v1/holds", daemon.base_url))
        .json(&json!({"scope": {"kind": "session", "session_id": sid.parse::<i64>()?}, "action": "cancel"}))
        .send()
        .await?
        .error_for_status()?
        .json::<Value>()
        .await?;
    wait_text(c, "#dropped .dropped-row", "Dropped").await?;
    wait_text(
        c,
        "#dropped .dropped-row",
        "The work in \u{201c}Studio\u{201d}",
    )
    .await?;
    click_in(c, "#dropped .dropped-row", "Studio", ".dropped-lift").await?;
    wait_hidden(c, "#dropped", SHORT).await?;
    let after = get(http, daemon, &format!("/v1/holds/{}", dropped["id"])).await?;
    if after["status"] != "lifted" {
        bail!("Lift on the dropped job did not lift it: {after}");
    }
    no_stop_line(c).await?;
    Ok(())
}

/// With the daemon gone, Stop everything and the stop buttons are disabled.
async fn unreachable_daemon(c: &Client) -> Result<()> {
    poll(
        "Stop everything to be disabled",
        Duration::from_secs(20),
        || async {
            let v = c
                .execute(
                    "return document.querySelector('#stop-everything').disabled
                        && document.querySelector('#stop').disabled
                        && document.querySelector('#stop-menu-toggle').disabled;",
                    vec![],
                )
                .await?;
            Ok(v.as_bool().unwrap_or(false).then_some(()))
        },
    )
    .await
    .context("the buttons while the daemon is unreachable")
}

/// Writes a screenshot to `target/<name>` and says where.
async fn screenshot(c: &Client, name: &str) -> Result<()> {
    let png = c.screenshot().await?;
    std::fs::create_dir_all(target_dir())?;
    let path = target_dir().join(name);
    std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("screenshot: {}", path.display());
    Ok(())
}
