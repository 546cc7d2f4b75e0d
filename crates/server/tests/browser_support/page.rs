//! Page helpers for the browser tests: reading what the page shows in one script call,
//! filling and clicking, and bounded waits on page state (never fixed sleeps).

use std::path::Path;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use fantoccini::{Client, Locator};
use serde_json::json;

use super::poll;

/// WebDriver's Enter key.
pub const ENTER: &str = "\u{E007}";
/// WebDriver's Tab key.
pub const TAB: &str = "\u{E004}";

pub const SHORT: Duration = Duration::from_secs(10);
pub const TURN: Duration = Duration::from_secs(45);

/// The page ignores a tap on Stop this soon after a send (the send's double tap, STOP-10).
pub const SEND_GUARD: Duration = Duration::from_millis(600);

/// Waits until a tap on Stop is no longer within [`SEND_GUARD`] of the send at `sent`.
pub async fn past_send_guard(sent: std::time::Instant) -> Result<()> {
    let guard = SEND_GUARD + Duration::from_millis(150);
    poll("the send's double-tap guard to pass", SHORT, || async {
        Ok((sent.elapsed() > guard).then_some(()))
    })
    .await
}

pub async fn add_scripted_bot(c: &Client, name: &str, script: &Path) -> Result<()> {
    let details = c.find(Locator::Css("#bots-details")).await?;
    if details.attr("open").await?.is_none() {
        press(c, "#bots-details > summary").await?;
    }
    fill(c, "#bot-name", name).await?;
    c.find(Locator::Css("#bot-kind"))
        .await?
        .select_by_value("scripted")
        .await?;
    let script_input = poll("#bot-script to show for kind scripted", SHORT, || async {
        let el = c.find(Locator::Css("#bot-script")).await?;
        Ok(el.is_displayed().await?.then_some(el))
    })
    .await?;
    script_input.clear().await?;
    script_input
        .send_keys(&script.display().to_string())
        .await?;
    fill(c, "#bot-model", "scripted").await?;
    press(c, "#bot-submit").await?;
    poll("the new Bot in the Bots list", SHORT, || async {
        let err = elements(c, "#bot-error").await?;
        if let Some(e) = err.first().filter(|e| e.visible) {
            bail!("the page shows an error for the new Bot: {}", e.text);
        }
        let bots = elements(c, "#bot-list .bot-item").await?;
        Ok(bots
            .iter()
            .any(|b| b.text.contains(name) && b.text.contains("scripted"))
            .then_some(()))
    })
    .await
}

pub async fn start_conversation(c: &Client, bot: &str, title: &str) -> Result<()> {
    start_conversation_in(c, bot, title, None).await
}

/// Open a direct with `bot`, on `folder` when one is given (the form's optional field).
pub async fn start_conversation_in(
    c: &Client,
    bot: &str,
    title: &str,
    folder: Option<&str>,
) -> Result<()> {
    press(c, "#new-session").await?;
    let select = c
        .wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#session-bot"))
        .await?;
    let mut picked = false;
    for opt in select.find_all(Locator::Css("option")).await? {
        if opt.text().await?.starts_with(bot) {
            opt.click().await?;
            picked = true;
            break;
        }
    }
    if !picked {
        bail!("no option for Bot {bot} in #session-bot");
    }
    fill(c, "#session-title", title).await?;
    if let Some(folder) = folder {
        fill(c, "#session-folder", folder).await?;
    }
    press(c, "#session-create").await?;
    poll("the new conversation to open", SHORT, || async {
        let err = elements(c, "#session-error").await?;
        if let Some(e) = err.first().filter(|e| e.visible) {
            bail!(
                "the page shows an error for the new conversation: {}",
                e.text
            );
        }
        let active = elements(c, ".session-item.active").await?;
        let composer = c.find(Locator::Css("#composer")).await?;
        Ok(
            (active.iter().any(|a| a.text.contains(title)) && composer.is_enabled().await?)
                .then_some(()),
        )
    })
    .await
}

pub async fn click_session(c: &Client, title: &str) -> Result<()> {
    // The list may be redrawn between finding a button and clicking it: then look again.
    poll(
        &format!("a click on conversation {title:?}"),
        SHORT,
        || async {
            for item in c.find_all(Locator::Css(".session-item button")).await? {
                match item.text().await {
                    Ok(t) if t.contains(title) => {}
                    Ok(_) => continue,
                    Err(e) if is_stale(&e) => return Ok(None),
                    Err(e) => return Err(e.into()),
                }
                return match item.click().await {
                    Ok(_) => Ok(Some(())),
                    Err(e) if is_stale(&e) => Ok(None),
                    Err(e) => Err(e.into()),
                };
            }
            // Not (yet) in the list, or the list caught mid-redraw: look again until the wait
            // runs out.
            Ok(None)
        },
    )
    .await
}

fn is_stale(e: &fantoccini::error::CmdError) -> bool {
    e.to_string().contains("stale element")
}

pub async fn active_session_id(c: &Client) -> Result<String> {
    // Read in one script: the list is redrawn as members' states change, so an element found
    // first could be gone ("stale") by the time its attribute is asked for.
    let id = c
        .execute(
            "const e = document.querySelector('.session-item.active');
             return e ? e.getAttribute('data-id') : null;",
            vec![],
        )
        .await?;
    id.as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("no active conversation with a data-id"))
}

/// A click as [`press`] makes it (kept as the older tests' name).
pub async fn click(c: &Client, css: &str) -> Result<()> {
    press(c, css).await
}

/// Clicks `css` once the page lets a person press it, scrolled to the middle of its panel (a
/// sticky title row could otherwise cover it). While the page loads a conversation or live
/// events redraw a view, the control may be missing, redrawn, hidden or covered for a moment:
/// those are waited out, within [`SHORT`].
pub async fn press(c: &Client, css: &str) -> Result<()> {
    act(c, css, |e| async move { e.click().await.map(|_| ()) }).await
}

/// Picks the option with `value` in the select `css` (its change event fires, as a person's
/// pick does), waiting as [`press`] does.
pub async fn pick(c: &Client, css: &str, value: &str) -> Result<()> {
    act(c, css, |e| async move { e.select_by_value(value).await }).await
}

async fn act<F, Fut>(c: &Client, css: &str, f: F) -> Result<()>
where
    F: Fn(fantoccini::elements::Element) -> Fut,
    Fut: std::future::Future<Output = Result<(), fantoccini::error::CmdError>>,
{
    poll(&format!("a press on {css}"), SHORT, || async {
        let found = c
            .execute(
                "const e = document.querySelector(arguments[0]);
                 if (e) e.scrollIntoView({block: 'center'});
                 return !!e;",
                vec![json!(css)],
            )
            .await?;
        if found != json!(true) {
            return Ok(None);
        }
        let attempt = async { f(c.find(Locator::Css(css)).await?).await };
        match attempt.await {
            Ok(()) => Ok(Some(())),
            Err(e) if not_yet_pressable(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// WebDriver's answers for an element a person could not press yet (redrawn, hidden,
/// covered); anything else is a real failure.
fn not_yet_pressable(e: &fantoccini::error::CmdError) -> bool {
    let text = e.to_string();
    ["stale element", "not interactable", "click intercepted"]
        .iter()
        .any(|w| text.contains(w))
}

/// Waits for a visible element matching `css` whose text contains `needle`.
pub async fn wait_text(c: &Client, css: &str, needle: &str) -> Result<()> {
    wait_text_within(c, css, needle, SHORT).await
}

/// [`wait_text`] with its own bound (a turn's work takes longer than a redraw).
pub async fn wait_text_within(
    c: &Client,
    css: &str,
    needle: &str,
    timeout: Duration,
) -> Result<()> {
    poll(&format!("{css} to show {needle:?}"), timeout, || async {
        Ok(elements(c, css)
            .await?
            .iter()
            .any(|e| e.visible && e.text.contains(needle))
            .then_some(()))
    })
    .await
}

/// Fails when the page is wider than the window (`what` names the view in the message).
pub async fn no_sideways_scroll(c: &Client, what: &str) -> Result<()> {
    let over = c
        .execute(
            "return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await?;
    let over = over.as_f64().unwrap_or(0.0);
    if over > 1.0 {
        bail!("{what} scrolls sideways ({over} px too wide)");
    }
    Ok(())
}

/// Writes a screenshot of the page to `target/<name>` for a human look, and says where.
pub async fn save_screenshot(c: &Client, name: &str) -> Result<()> {
    let png = c.screenshot().await?;
    let dir = super::target_dir();
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(name);
    std::fs::write(&path, png).map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
    eprintln!("screenshot: {}", path.display());
    Ok(())
}

pub async fn fill(c: &Client, css: &str, text: &str) -> Result<()> {
    let el = c.find(Locator::Css(css)).await?;
    el.clear().await?;
    el.send_keys(text).await?;
    Ok(())
}

pub async fn wait_hidden(c: &Client, css: &str, timeout: Duration) -> Result<()> {
    poll(&format!("{css} to be hidden"), timeout, || async {
        let els = elements(c, css).await?;
        Ok(els.iter().all(|e| !e.visible).then_some(()))
    })
    .await
}

pub async fn wait_for_texts(
    c: &Client,
    css: &str,
    what: &str,
    ok: impl Fn(&[String]) -> bool,
) -> Result<()> {
    poll(what, SHORT, || async {
        let texts: Vec<String> = elements(c, css)
            .await?
            .into_iter()
            .map(|e| e.text)
            .collect();
        Ok(ok(&texts).then_some(()))
    })
    .await
}

/// What a CSS selector matches right now, read in one script call (no stale handles).
#[derive(Debug)]
pub struct Seen {
    pub text: String,
    pub class: String,
    pub visible: bool,
}

pub async fn elements(c: &Client, css: &str) -> Result<Vec<Seen>> {
    let v = c
        .execute(
            "return [...document.querySelectorAll(arguments[0])].map(e => ({
                text: e.innerText || '',
                class: e.className || '',
                visible: !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length)
                    && getComputedStyle(e).visibility !== 'hidden',
            }));",
            vec![json!(css)],
        )
        .await?;
    let items = v.as_array().cloned().unwrap_or_default();
    Ok(items
        .into_iter()
        .map(|i| Seen {
            text: i["text"].as_str().unwrap_or_default().to_string(),
            class: i["class"].as_str().unwrap_or_default().to_string(),
            visible: i["visible"].as_bool().unwrap_or(false),
        })
        .collect())
}

/// A member chip as the page shows it.
pub struct Chip {
    pub name: String,
    pub state: String,
    pub lead: bool,
}

pub async fn chips(c: &Client) -> Result<Vec<Chip>> {
    let v = c
        .execute(
            "return [...document.querySelectorAll('#member-chips .chip')].map(e => ({
                name: e.querySelector('.chip-name').textContent,
                state: e.querySelector('.chip-state').textContent,
                lead: !!e.querySelector('.badge.lead'),
                visible: !!(e.offsetWidth || e.offsetHeight),
            })).filter(c => c.visible);",
            vec![],
        )
        .await?;
    Ok(v.as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|i| Chip {
            name: i["name"].as_str().unwrap_or_default().to_string(),
            state: i["state"].as_str().unwrap_or_default().to_string(),
            lead: i["lead"].as_bool().unwrap_or(false),
        })
        .collect())
}

/// Waits for `bot`'s chip to read `state`, within `timeout`.
pub async fn wait_chip(c: &Client, bot: &str, state: &str, timeout: Duration) -> Result<()> {
    poll(
        &format!("{bot}'s chip to read {state:?}"),
        timeout,
        || async {
            Ok(chips(c)
                .await?
                .iter()
                .any(|ch| ch.name == bot && ch.state == state)
                .then_some(()))
        },
    )
    .await
}

/// Clicks the `button` inside the first visible `row` whose text contains `needle`.
pub async fn click_in(c: &Client, row: &str, needle: &str, button: &str) -> Result<()> {
    poll(
        &format!("a click on {button} in {row} {needle:?}"),
        SHORT,
        || async {
            let attempt = async {
                for r in c.find_all(Locator::Css(row)).await? {
                    if r.is_displayed().await? && r.text().await?.contains(needle) {
                        r.find(Locator::Css(button)).await?.click().await?;
                        return Ok(true);
                    }
                }
                Ok::<bool, fantoccini::error::CmdError>(false)
            };
            match attempt.await {
                Ok(true) => Ok(Some(())),
                Ok(false) => bail!("no {row} showing {needle:?}"),
                Err(e) if is_stale(&e) => Ok(None),
                Err(e) => Err(e.into()),
            }
        },
    )
    .await
}

/// A finished (not streaming) Bot line from `who` containing `text`.
pub async fn wait_bot_line(c: &Client, who: &str, text: &str) -> Result<()> {
    poll(&format!("{who}'s line {text:?}"), TURN, || async {
        Ok(elements(c, ".msg.bot")
            .await?
            .iter()
            .any(|m| {
                m.visible
                    && !m.class.contains("streaming")
                    && m.text.starts_with(who)
                    && m.text.contains(text)
            })
            .then_some(()))
    })
    .await
}
