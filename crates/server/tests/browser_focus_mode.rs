//! Real-browser test of Focus mode (digest A §9.4): a direct whose Bot ran a command, and a
//! Bot↔Bot direct opened from it. With Focus mode on, the command card, the reply time, the
//! Bots' model line and the Bot↔Bot direct's entry are hidden while the reply's words stay;
//! the reply time shows with the pointer on the reply; a working Bot reads only "Thinking";
//! the choice survives a reload, and pressing again shows everything.
//!
//! Needs Debian's `chromium` and `chromium-driver`; without them the test prints a notice and
//! returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_focus_mode
//! ```

mod browser_support;
mod support;

use anyhow::{Result, bail};
use browser_support::in_process::finish;
use browser_support::page::{SHORT, TURN, elements, press, wait_text, wait_text_within};
use browser_support::{browser_in, poll};
use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use fantoccini::{Client, Locator};
use serde_json::json;
use support::TestApp;
use troupe_core::{BotId, SessionId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn focus_mode() {
    let app = TestApp::start().await;
    let runner = app
        .scripted_bot(
            "Runner",
            json!({"steps": [
                {"tool_calls": [{"name": "shell", "arguments": {"command": "echo hi"}}]},
                {"text": "Ran it."},
                {"text": "Second answer.", "delay_ms": 2500}
            ], "on_exhausted": "repeat_last"}),
        )
        .await;
    let other = app
        .scripted_bot("Other", json!({"steps": [{"text": "ok"}]}))
        .await;
    let s = app.direct(runner).await;
    app.state
        .collab
        .store()
        .write(|tx| {
            tx.open_bot_direct(
                BotId(runner),
                BotId(other),
                Some(SessionId(s)),
                "create_direct",
                "Runner ↔ Other",
            )
        })
        .unwrap();
    let Some((driver, client)) = browser_in(app.dir.path()).await else {
        return;
    };
    let result = scenario(&client, &app, s).await;
    finish(result, driver, client, "browser-focus-mode-failure.png").await;
}

async fn visible(c: &Client, css: &str) -> Result<bool> {
    Ok(elements(c, css).await?.iter().any(|e| e.visible))
}

/// Whether each of these shows, in order.
async fn shown(c: &Client) -> Result<[bool; 4]> {
    Ok([
        visible(c, "#transcript .commands").await?,
        visible(c, "#transcript .reply-time").await?,
        visible(c, "#conv-sub").await?,
        visible(c, "#sessions .session-item[data-kind=\"bot_direct\"]").await?,
    ])
}

async fn scenario(c: &Client, app: &TestApp, s: i64) -> Result<()> {
    c.goto(&app.url(&format!("/#session={s}"))).await?;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "Run it."}),
    )
    .await
    .expect(201);
    wait_text_within(c, "#transcript .msg.bot", "Ran it.", TURN).await?;
    poll("the command card and the reply time", SHORT, || async {
        Ok((shown(c).await? == [true; 4]).then_some(()))
    })
    .await?;

    // On: the machinery goes, the words stay.
    press(c, "#focus-toggle").await?;
    poll("Focus mode to hide them", SHORT, || async {
        Ok((shown(c).await? == [false; 4]).then_some(()))
    })
    .await?;
    if !visible(c, "#transcript .msg.bot").await? {
        bail!("the reply's words must stay");
    }
    let pressed = c
        .find(Locator::Css("#focus-toggle"))
        .await?
        .attr("aria-pressed")
        .await?;
    if pressed.as_deref() != Some("true") {
        bail!("the toggle should say it is on: {pressed:?}");
    }

    // With the pointer on the reply, its time shows.
    let reply = c.find(Locator::Css("#transcript .msg.bot")).await?;
    c.perform_actions(
        MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
            element: reply,
            duration: None,
            x: 0.0,
            y: 0.0,
        }),
    )
    .await?;
    poll("the reply time on hover", SHORT, || async {
        Ok(visible(c, "#transcript .reply-time").await?.then_some(()))
    })
    .await?;

    // A working Bot reads only "Thinking".
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "Again."}),
    )
    .await
    .expect(201);
    poll("the working line", SHORT, || async {
        let v = c
            .execute(
                "const li = document.querySelector('#activity .activity-item');
                 if (!li || !li.offsetParent) return null;
                 const what = li.querySelector('.activity-what');
                 return [getComputedStyle(li, '::after').content, !!(what && what.offsetParent)];",
                vec![],
            )
            .await?;
        Ok((v == json!(["\"Thinking\"", false])).then_some(()))
    })
    .await?;
    wait_text_within(c, "#transcript .msg.bot", "Second answer.", TURN).await?;

    // Kept across a reload; off again, everything shows.
    c.refresh().await?;
    wait_text(c, "#transcript .msg.bot", "Ran it.").await?;
    poll("Focus mode after a reload", SHORT, || async {
        Ok((shown(c).await? == [false; 4]).then_some(()))
    })
    .await?;
    press(c, "#focus-toggle").await?;
    poll("everything back", SHORT, || async {
        Ok((shown(c).await? == [true; 4]).then_some(()))
    })
    .await?;
    Ok(())
}
