//! Real-browser test of the row under a person's line no Bot has read yet (UQ-16, UQ-17): while
//! the Bot streams its answer, a second line shows "Queued · read at its next step" with Take
//! back; pressed, the line says it was taken back and its words return to the empty composer;
//! a line the Bot then reads has no row once read. And Send stays ready while a line is read
//! (TURN-10): the composer empties at once and a second line goes in before the first is read.
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`):
//!
//! ```text
//! cargo test -p troupe-server --test browser_unread
//! ```

mod browser_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Result, bail};
use axum::extract::State;
use axum::response::IntoResponse;
use browser_support::page::{
    SHORT, TURN, add_scripted_bot, click_in, elements, fill, press, start_conversation, wait_text,
};
use browser_support::{BrowserRun, Daemon, QUICK_FINAL_TEXT, poll, quick_script};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};
use tokio::sync::watch;

/// The first answer streams for about six seconds; later ones come at once.
const SLOW: &str = r#"{"steps":[
    {"text":"Here is everything about it, told slowly and at length.","chunks":60,"chunk_delay_ms":100},
    {"text":"Noted."}],"on_exhausted":"repeat_last"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_takes_back_a_line_no_bot_has_read() {
    let Some(run) = BrowserRun::start().await else {
        return;
    };
    let script = run.tmp.path().join("slow.json");
    std::fs::write(&script, SLOW).expect("write script");
    let result = scenario(&run.client, &run.daemon, &script).await;
    run.finish(result, "browser-unread-failure.png").await;
}

async fn send(c: &Client, line: &str) -> Result<()> {
    fill(c, "#composer", line).await?;
    c.find(Locator::Css("#send")).await?.click().await?;
    wait_text(c, ".msg.user", line).await
}

async fn composer(c: &Client) -> Result<String> {
    Ok(c.find(Locator::Css("#composer"))
        .await?
        .prop("value")
        .await?
        .unwrap_or_default())
}

async fn scenario(c: &Client, daemon: &Daemon, script: &std::path::Path) -> Result<()> {
    daemon.log_in(c).await?;
    add_scripted_bot(c, "Slow", script).await?;
    start_conversation(c, "Slow", "Long talk").await?;
    send(c, "tell me everything").await?;
    // The Bot is streaming: a line now waits in its inbox, unread.
    wait_text(c, ".msg.bot", "Here is").await?;
    send(c, "never mind the second part").await?;
    wait_text(
        c,
        ".msg.user [data-testid=unread-row]",
        "Queued \u{b7} read at its next step",
    )
    .await?;
    click_in(
        c,
        ".msg.user",
        "never mind the second part",
        ".unread-take-back",
    )
    .await?;
    wait_text(c, ".msg.user .taken-back", "You took this line back").await?;
    poll("the words back in the composer", SHORT, || async {
        Ok((composer(c).await? == "never mind the second part").then_some(()))
    })
    .await?;
    fill(c, "#composer", "").await?;
    // The answer finishes without the line; the next line is read at once and has no row.
    wait_text(c, ".msg.bot", "told slowly and at length.").await?;
    poll("the Bot to finish", TURN, || async {
        let working = elements(c, ".msg.bot.streaming").await?;
        Ok(working.is_empty().then_some(()))
    })
    .await?;
    send(c, "short one").await?;
    wait_text(c, ".msg.bot", "Noted.").await?;
    poll("no row under a read line", SHORT, || async {
        Ok(elements(c, "[data-testid=unread-row]")
            .await?
            .is_empty()
            .then_some(()))
    })
    .await?;
    Ok(())
}

/// TURN-10, and the seed's "a direct's Send no longer greys out while your last line is read":
/// the line reader (a model server the test holds) has the first line, yet the composer is
/// empty and Send ready; a second line goes in meanwhile; let through, the Bot answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_stays_ready_while_the_last_line_is_read() {
    let Some(run) = BrowserRun::start().await else {
        return;
    };
    let reader = Reader::serve().await;
    let script = run.tmp.path().join("quick.json");
    std::fs::write(&script, quick_script()).expect("write script");
    let result = send_while_reading(&run.client, &run.daemon, &reader, &script).await;
    run.finish(result, "browser-send-while-reading-failure.png")
        .await;
}

async fn send_while_reading(
    c: &Client,
    daemon: &Daemon,
    reader: &Reader,
    script: &std::path::Path,
) -> Result<()> {
    let r = daemon
        .http()
        .put(format!("{}/v1/roles/reading", daemon.base_url))
        .json(&json!({"kind": "openai", "base_url": reader.url, "model": "reader"}))
        .send()
        .await?;
    if !r.status().is_success() {
        bail!("PUT /v1/roles/reading: {} {}", r.status(), r.text().await?);
    }
    daemon.log_in(c).await?;
    add_scripted_bot(c, "Quick", script).await?;
    start_conversation(c, "Quick", "Read first").await?;
    fill(c, "#composer", "hello there").await?;
    press(c, "#send").await?;
    poll("the reader to have the line", SHORT, || async {
        Ok((reader.calls.load(Ordering::SeqCst) >= 1).then_some(()))
    })
    .await?;
    // The line is being read: it shows, and the composer is ready for the next one.
    wait_text(c, ".msg.user", "hello there").await?;
    if !composer(c).await?.is_empty() {
        bail!("the composer should empty as the line is sent");
    }
    if !c.find(Locator::Css("#send")).await?.is_enabled().await? {
        bail!("Send should stay ready while the last line is read");
    }
    fill(c, "#composer", "and a second thought").await?;
    press(c, "#send").await?;
    wait_text(c, ".msg.user", "and a second thought").await?;
    // Its reading starts at once too, not after the first line's (TURN-10).
    poll(
        "the reader to have the second line as well",
        SHORT,
        || async { Ok((reader.calls.load(Ordering::SeqCst) >= 2).then_some(())) },
    )
    .await?;
    if !elements(c, ".msg.bot").await?.is_empty() {
        bail!("no Bot should have answered before the reader let the lines through");
    }
    reader.open.send_replace(true);
    wait_text(c, ".msg.bot", QUICK_FINAL_TEXT).await?;
    Ok(())
}

/// An OpenAI-compatible line reader that holds every call until the test opens it.
struct Reader {
    url: String,
    calls: AtomicUsize,
    open: watch::Sender<bool>,
}

impl Reader {
    async fn serve() -> Arc<Reader> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = Arc::new(Reader {
            url: format!("http://{addr}/v1"),
            calls: AtomicUsize::new(0),
            open: watch::channel(false).0,
        });
        let router = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(read))
            .with_state(reader.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        reader
    }
}

async fn read(
    State(reader): State<Arc<Reader>>,
    axum::Json(req): axum::Json<Value>,
) -> axum::response::Response {
    reader.calls.fetch_add(1, Ordering::SeqCst);
    let mut open = reader.open.subscribe();
    let _ = open.wait_for(|o| *o).await;
    // A Bot's line gets the Bot-line answer; a person's line reads as nothing to carry out.
    let answer = if req.to_string().contains("troupe-reader:bot") {
        json!({"restates": false, "still_going": null, "claims_run": false,
               "nothing_to_do": false, "bare_status": false, "asks_ok_only": false})
    } else {
        json!({"control": "neither", "only_control": false, "status_question": false,
               "objections": [], "let_through": []})
    };
    let chunk = |delta: Value, finish: Option<&str>| {
        let v = json!({"id": "r", "object": "chat.completion.chunk", "model": "reader",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    };
    let body = chunk(
        json!({"role": "assistant", "content": answer.to_string()}),
        None,
    ) + &chunk(json!({}), Some("stop"))
        + "data: [DONE]\n\n";
    ([("content-type", "text/event-stream")], body).into_response()
}
