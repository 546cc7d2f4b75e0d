//! Real-browser test of what a group shows about its Bots' work besides their lines: the
//! activity line (a working Bot's steps, tool calls and a failure streak, a call still being
//! written, gone when its turn ends), a member whose turn failed, paused on its own with
//! Continue under the header (and "paused" on its row in the list), and in a direct a command named with its Bot
//! while no reply holds it, then under the reply with the file the turn wrote (twice: one row).
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`). On
//! failure a screenshot goes to `target/browser-activity-failure.png`.
//!
//! ```text
//! cargo test -p troupe-server --test browser_activity
//! ```

mod browser_support;

use anyhow::{Result, anyhow, bail};
use browser_support::page::{
    SHORT, TURN, add_scripted_bot, click, click_session, elements, fill, start_conversation,
    wait_bot_line, wait_hidden, wait_text, wait_text_within,
};
use browser_support::{BrowserRun, Daemon, RECOVERED_REPLY, failing_script, poll};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

const DONE_TEXT: &str = "Nothing to read there; done.";

/// Three reads of a file that is not there (a failure streak), then four quiet seconds, then
/// its answer: long enough for the page to show the streak while the turn still runs.
fn worker_script() -> String {
    let read = json!({"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.txt"}}]});
    json!({
        "name": "browser-worker",
        "steps": [read, read, read, {"text": DONE_TEXT, "delay_ms": 4000}],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

const NOTED: &str = "Noted in notes.txt.";

/// Runs a command, writes a note, its call's arguments coming in slowly (about four seconds),
/// writes the same note again, then says so.
fn scribe_script() -> String {
    let content = "hi, a note long enough to come in several pieces";
    json!({
        "name": "browser-scribe",
        "steps": [
            {"tool_calls": [{"name": "shell", "arguments": {"command": "echo noting"}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": content}}],
             "chunks": 8, "chunk_delay_ms": 600},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": content}}]},
            {"text": NOTED}
        ],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_shows_a_working_bots_activity_and_a_paused_members_continue() {
    let Some(h) = BrowserRun::start().await else {
        return;
    };
    let worker = h.script("worker.json", worker_script());
    let failing = h.script("failing.json", failing_script());
    let scribe = h.script("scribe.json", scribe_script());
    let result = scenario(&h.client, &h.daemon, [&worker, &failing, &scribe]).await;
    h.finish(result, "browser-activity-failure.png").await;
}

async fn scenario(c: &Client, daemon: &Daemon, scripts: [&std::path::Path; 3]) -> Result<()> {
    let [worker, failing, scribe] = scripts;
    c.goto(&daemon.login_link).await?;
    c.wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#new-bot-form"))
        .await?;
    add_scripted_bot(c, "Worker", worker).await?;
    add_scripted_bot(c, "Failing", failing).await?;
    add_scripted_bot(c, "Scribe", scribe).await?;
    let http = daemon.http();
    let bots: Vec<Value> = daemon.get_json("/v1/bots").await?;
    let id = |name: &str| {
        bots.iter()
            .find(|b| b["name"] == name)
            .and_then(|b| b["id"].as_i64())
            .ok_or_else(|| anyhow!("no Bot {name}"))
    };
    let group: Value = http
        .post(format!("{}/v1/sessions", daemon.base_url))
        .json(
            &json!({"kind": "group", "title": "Crew", "bot_ids": [id("Worker")?, id("Failing")?]}),
        )
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    if group["id"].as_i64().is_none() {
        bail!("no group made: {group}");
    }
    // The list polls for new conversations; the group shows there, and opens on a click.
    wait_text(c, ".session-item", "Crew").await?;
    click_session(c, "Crew").await?;
    c.wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#member-chips .chip"))
        .await?;

    // --- Worker's tool calls fail three times in a row: the activity line says so meanwhile
    fill(c, "#composer", "@Worker read missing.txt").await?;
    click(c, "#send").await?;
    poll(
        "Worker's activity with its failure streak",
        TURN,
        || async {
            let items = elements(c, "#activity .activity-item").await?;
            Ok(items
                .iter()
                .any(|i| {
                    i.visible
                        && i.text.contains("Worker")
                        && i.text.contains("3 tool calls")
                        && i.text.contains("read_file failed 3 times in a row")
                })
                .then_some(()))
        },
    )
    .await?;
    wait_bot_line(c, "Worker", DONE_TEXT).await?;
    wait_hidden(c, "#activity", SHORT).await?;

    // --- Failing's turn fails: it alone is paused, with its own Continue
    fill(c, "#composer", "@Failing please start").await?;
    click(c, "#send").await?;
    poll("Failing's paused line with its buttons", TURN, || async {
        let rows = elements(c, "#member-pauses .member-paused").await?;
        Ok(rows
            .iter()
            .any(|r| {
                r.visible
                    && r.text.contains("Failing")
                    && r.text.contains("its last turn failed")
                    && r.text.contains("Continue")
                    && r.text.contains("Abandon")
            })
            .then_some(()))
    })
    .await?;
    if !elements(c, "#paused").await?.iter().all(|p| !p.visible) {
        bail!("the direct's pause banner shows in a group");
    }
    // The list says so too, to be seen from another conversation.
    wait_text(c, ".session-item .badge.paused", "paused").await?;
    click(
        c,
        "#member-pauses .member-paused button[data-action=continue]",
    )
    .await?;
    wait_bot_line(c, "Failing", RECOVERED_REPLY).await?;
    wait_hidden(c, "#member-pauses", SHORT).await?;
    wait_hidden(c, ".session-item .badge.paused", SHORT).await?;

    // --- In a direct, the file a turn wrote shows under its reply
    start_conversation(c, "Scribe", "Notes").await?;
    fill(c, "#composer", "note it down").await?;
    click(c, "#send").await?;
    // While the call is being written, the activity line says which and how far along.
    wait_text_within(c, "#activity .activity-item", "writing write_file:", TURN).await?;
    // Its command has no reply to sit under yet: its block says whose it is itself.
    poll("Scribe's command, named as Scribe's", SHORT, || async {
        let blocks = elements(c, ".orphan-commands").await?;
        Ok(blocks
            .iter()
            .any(|b| b.visible && b.text.contains("Scribe") && b.text.contains("echo noting"))
            .then_some(()))
    })
    .await?;
    wait_bot_line(c, "Scribe", NOTED).await?;
    wait_text_within(c, ".msg.bot .commands .file-change", "notes.txt", TURN).await?;
    // The same write twice is one row with its count.
    let rows = elements(c, ".msg.bot .commands .file-change").await?;
    if rows.len() != 1 || !rows[0].text.contains("2 times") {
        bail!(
            "the repeated write shows as {:?}",
            rows.iter().map(|r| &r.text).collect::<Vec<_>>()
        );
    }
    // The reply came: the command's block moved under it.
    wait_text_within(
        c,
        ".msg.bot:not(.orphan-commands) .commands",
        "echo noting",
        SHORT,
    )
    .await?;
    if !elements(c, ".orphan-commands").await?.is_empty() {
        bail!("the command's block stayed apart from the reply it now sits under");
    }
    Ok(())
}
