//! Real-browser test of a group in the web page served by `troupe serve`: members, the lead
//! and its suggestion, mentions with pull-in and `@` completion, a line's flow (AT-8), a
//! Bot↔Bot direct shown read only, an ask answered from its card (and "waiting on you" in the list while it waits), and
//! the page at phone and narrow-window widths.
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`). A
//! phone-width screenshot goes to `target/browser-group-phone.png`; on failure one goes to
//! `target/browser-group-failure.png` and the page text and daemon log are printed.
//!
//! ```text
//! cargo test -p troupe-server --test browser_group
//! ```

mod browser_support;

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use browser_support::page::{
    ENTER, SHORT, TAB, TURN, active_session_id, add_scripted_bot, chips, click, click_in,
    click_session, elements, fill, no_sideways_scroll, save_screenshot, wait_bot_line, wait_chip,
    wait_for_texts, wait_hidden, wait_text, wait_text_within,
};
use browser_support::{
    ALPHA_FOLLOW_UP, ALPHA_REPLY, BOT_DIRECT_LINE, BrowserRun, Daemon, GAMMA_REPLY, alpha_script,
    beta_script, gamma_script, poll,
};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_runs_a_group_with_a_lead_mentions_and_an_ask() {
    let Some(h) = BrowserRun::start().await else {
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

    // --- AT-8: the line's own flow: how it was read, filed nowhere, whom it woke and why
    click_in(c, ".msg.user", "welcome aboard", ".line-flow-toggle").await?;
    wait_text(
        c,
        ".msg.user .line-flow .flow-step[data-step=\"woke\"]",
        "Woke Gamma (you named it)",
    )
    .await?;
    wait_text(
        c,
        ".msg.user .line-flow .flow-step[data-step=\"filed\"]",
        "Not filed under any job",
    )
    .await?;
    wait_text(
        c,
        ".msg.user .line-flow .flow-step[data-step=\"read\"]",
        "Read as",
    )
    .await?;
    click_in(c, ".msg.user", "welcome aboard", ".line-flow-toggle").await?;
    wait_hidden(c, ".msg.user .line-flow", SHORT).await?;

    // --- The direct Gamma opened with Beta: under the group, read-only
    wait_text_within(c, ".session-item.sub", "Gamma ↔ Beta", TURN).await?;
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
    no_sideways_scroll(c, "the group page at 390 px").await?;
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
    save_screenshot(c, "browser-group-phone.png").await?;

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
