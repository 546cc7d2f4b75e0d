//! Real-browser test of the MCP servers section in the Bots panel: a bad name typed into the
//! "Add server" form shows the API's error beside the form and nothing typed is lost; the
//! corrected name adds the in-repo test server by its command line and the row goes from
//! starting to ready (live, from the `mcp_server_status` events) with its tools listed when
//! expanded, `t__echo` read-only and `t__write_note` an effect; Restart starts it again; a
//! server that cannot start shows "failed" with its error and its stderr tail (collapsed until
//! opened); Remove asks first and then removes it; Disable shows the disabled state and Enable
//! brings the server back to ready. Every step is a click or typing in the page; the API is
//! only read, to check what the page did.
//!
//! Same setup as `tests/browser.rs` (Debian's `chromium` and `chromium-driver`; without
//! chromedriver the test prints a notice and returns unless `TROUPE_REQUIRE_BROWSER=1`;
//! `TROUPE_BIN=<path>` skips building `troupe-cli`). The MCP test server must be built first:
//!
//! ```text
//! cargo build -p troupe-mcp --examples
//! cargo test -p troupe-server --test browser_mcp
//! ```
//!
//! A screenshot of the section with the tools listed goes to `target/browser-mcp.png`; on
//! failure one goes to `target/browser-mcp-failure.png` and the page text and daemon log are
//! printed.

mod browser_support;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use browser_support::page::{SHORT, click, click_in, elements, fill, wait_hidden, wait_text};
use browser_support::{
    Daemon, chromedriver_path, diagnostics, open_session, poll, target_dir, troupe_binary,
};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

/// How long a server may take to start (or fail) and the page to show it.
const START: Duration = Duration::from_secs(30);

/// The in-repo MCP test server (`cargo build -p troupe-mcp --examples`).
fn test_server() -> PathBuf {
    target_dir()
        .join("debug")
        .join("examples")
        .join(format!("mcp_test_server{}", std::env::consts::EXE_SUFFIX))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_section_adds_a_server_and_shows_its_tools() {
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
    let server = test_server();
    assert!(
        server.is_file(),
        "the MCP test server is not built at {}: run `cargo build -p troupe-mcp --examples` first",
        server.display()
    );
    let tmp = tempfile::tempdir().expect("temp dir");
    let (data, work, profile) = (
        tmp.path().join("data"),
        tmp.path().join("work"),
        tmp.path().join("chrome-profile"),
    );
    for d in [&data, &work, &profile] {
        std::fs::create_dir_all(d).expect("create temp dirs");
    }
    let bin = troupe_binary().expect("locate the troupe binary");
    let daemon = Daemon::start(&bin, &data, &work).expect("start troupe serve");
    let (driver, client) = open_session(&driver_path, &profile).await;
    let http = daemon.http();
    let result = scenario(&client, &daemon, &http, &server.display().to_string()).await;
    if let Err(err) = &result {
        let diag = diagnostics(&client, &daemon, &driver, "browser-mcp-failure.png").await;
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

/// The servers the API knows, by name.
async fn server_names(http: &reqwest::Client, daemon: &Daemon) -> Result<Vec<String>> {
    Ok(get(http, daemon, "/v1/mcp-servers")
        .await?
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v["definition"]["name"].as_str().map(str::to_string))
        .collect())
}

/// The CSS selector of a server's row.
fn row(name: &str) -> String {
    format!("#mcp-list .mcp-server[data-name=\"{name}\"]")
}

/// What a server's row shows: its state (the badge's text and the row's data-state agree),
/// its tool count and restarts as written, and its last error.
#[derive(Debug)]
struct RowSeen {
    state: String,
    badge: String,
    count: String,
    restarts: String,
    error: String,
}

async fn row_seen(c: &Client, name: &str) -> Result<Option<RowSeen>> {
    let v = c
        .execute(
            "const r = document.querySelector(arguments[0]);
             if (!r || !(r.offsetWidth || r.offsetHeight)) return null;
             const t = (sel) => { const e = r.querySelector(sel); return e ? e.innerText : ''; };
             return { state: r.dataset.state, badge: t('.mcp-state'), count: t('.mcp-count'),
                      restarts: t('.mcp-restarts'), error: t('.mcp-last-error') };",
            vec![json!(row(name))],
        )
        .await?;
    if v.is_null() {
        return Ok(None);
    }
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    Ok(Some(RowSeen {
        state: s("state"),
        badge: s("badge"),
        count: s("count"),
        restarts: s("restarts"),
        error: s("error"),
    }))
}

/// Waits for a server's row to satisfy `ok`, answering what it showed then.
async fn wait_row(
    c: &Client,
    name: &str,
    what: &str,
    timeout: Duration,
    ok: impl Fn(&RowSeen) -> bool,
) -> Result<RowSeen> {
    poll(&format!("server {name}'s row: {what}"), timeout, || async {
        Ok(row_seen(c, name).await?.filter(|r| ok(r)))
    })
    .await
}

/// The row's tools as shown: (exposed name, kind badge, description).
async fn tools_seen(c: &Client, name: &str) -> Result<Vec<(String, String, String)>> {
    let v = c
        .execute(
            "return [...document.querySelectorAll(arguments[0])]
               .filter(e => e.checkVisibility())
               .map(e => [e.querySelector('.mcp-tool-name').innerText,
                          e.querySelector('.mcp-kind').innerText,
                          (e.querySelector('.mcp-tool-desc') || {}).innerText || '']);",
            vec![json!(format!("{} .mcp-tool", row(name)))],
        )
        .await?;
    Ok(v.as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|t| {
            let s = |i: usize| t[i].as_str().unwrap_or_default().to_string();
            (s(0), s(1), s(2))
        })
        .collect())
}

/// Whether an element matching `css` is rendered (inside a closed `<details>` it is not,
/// though it keeps a layout box in Chromium, so offsetWidth cannot tell).
async fn shown(c: &Client, css: &str) -> Result<bool> {
    let v = c
        .execute(
            "return [...document.querySelectorAll(arguments[0])].some(e => e.checkVisibility());",
            vec![json!(css)],
        )
        .await?;
    Ok(v == json!(true))
}

/// The form's fields as the page holds them: name, command line, timeout.
async fn form_values(c: &Client) -> Result<(String, String, String)> {
    let v = c
        .execute(
            "return ['#mcp-name', '#mcp-command', '#mcp-timeout']
               .map(s => document.querySelector(s).value);",
            vec![],
        )
        .await?;
    let s = |i: usize| v[i].as_str().unwrap_or_default().to_string();
    Ok((s(0), s(1), s(2)))
}

async fn scenario(c: &Client, daemon: &Daemon, http: &reqwest::Client, server: &str) -> Result<()> {
    c.goto(&daemon.login_link).await?;
    c.wait()
        .at_most(SHORT)
        .for_element(Locator::Css("#mcp-form"))
        .await?;
    let details = c.find(Locator::Css("#bots-details")).await?;
    if details.attr("open").await?.is_none() {
        click(c, "#bots-details > summary").await?;
    }
    wait_text(c, "#mcp-empty", "No MCP servers yet.").await?;
    wait_text(c, "#mcp-form", "split on spaces").await?;

    // --- A bad name: the API's 422 beside the form, what was typed kept, nothing added
    fill(c, "#mcp-name", "Bad Name").await?;
    fill(c, "#mcp-command", server).await?;
    fill(c, "#mcp-timeout", "30").await?;
    click(c, "#mcp-submit").await?;
    wait_text(c, "#mcp-error", "name: 'Bad Name' is not a server name").await?;
    let kept = form_values(c).await?;
    if kept != ("Bad Name".into(), server.to_string(), "30".into()) {
        bail!("the refused form lost what was typed: {kept:?}");
    }
    let marked = c
        .execute(
            "return document.querySelector('#mcp-name').getAttribute('aria-invalid');",
            vec![],
        )
        .await?;
    if marked != json!("true") {
        bail!("the name field is not marked as the one refused: {marked}");
    }
    if !server_names(http, daemon).await?.is_empty() {
        bail!("a refused definition was stored");
    }

    // --- The corrected name adds the server; it becomes ready with its tools
    fill(c, "#mcp-name", "t").await?;
    click(c, "#mcp-submit").await?;
    wait_hidden(c, "#mcp-error", SHORT).await?;
    let ready = wait_row(c, "t", "ready", START, |r| r.state == "ready").await?;
    if ready.badge != "ready" || ready.count != "11 tools" {
        bail!("the ready row shows {ready:?}");
    }
    let emptied = form_values(c).await?;
    if emptied != (String::new(), String::new(), String::new()) {
        bail!("the form kept an added server's fields: {emptied:?}");
    }
    let stored = get(http, daemon, "/v1/mcp-servers/t").await?;
    if stored["definition"]["command"] != json!(server)
        || stored["definition"]["tool_timeout_sec"] != json!(30)
    {
        bail!(
            "the page sent an unexpected definition: {}",
            stored["definition"]
        );
    }
    if !tools_seen(c, "t").await?.is_empty() {
        bail!("the tools are listed before the row is expanded");
    }
    click(c, &format!("{} .mcp-tools > summary", row("t"))).await?;
    let tools = poll("t's tools to be listed", SHORT, || async {
        let t = tools_seen(c, "t").await?;
        Ok((t.len() == 11).then_some(t))
    })
    .await?;
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t.0 == name)
            .cloned()
            .ok_or_else(|| anyhow!("no tool {name} listed: {tools:?}"))
    };
    let echo = tool("t__echo")?;
    if echo.1 != "read-only" || echo.2 != "Returns the given text." {
        bail!("t__echo is shown as {echo:?}");
    }
    let note = tool("t__write_note")?;
    if note.1 != "effect" || !note.2.starts_with("Appends the text") {
        bail!("t__write_note is shown as {note:?}");
    }
    screenshot(c, "browser-mcp.png").await?;

    // --- Restart starts it again: counted, ready again, the tools still expanded
    click(c, &format!("{} .mcp-restart", row("t"))).await?;
    wait_row(c, "t", "ready after a restart", START, |r| {
        r.state == "ready" && r.restarts == "restarted 1 time"
    })
    .await?;
    poll("t's tools listed again", SHORT, || async {
        Ok((tools_seen(c, "t").await?.len() == 11).then_some(()))
    })
    .await?;

    // --- A server that cannot start: failed, its error, its stderr tail collapsed
    fill(c, "#mcp-name", "broken").await?;
    fill(c, "#mcp-command", &format!("{server} --no-such-flag")).await?;
    click(c, "#mcp-submit").await?;
    let failed = wait_row(c, "broken", "failed", START, |r| r.state == "failed").await?;
    if failed.badge != "failed" || failed.error.is_empty() {
        bail!("the failed row shows {failed:?}");
    }
    let stderr = format!("{} .mcp-stderr-text", row("broken"));
    let tail = c
        .execute(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : '';",
            vec![json!(stderr)],
        )
        .await?;
    if !tail
        .as_str()
        .is_some_and(|t| t.contains("mcp_test_server:"))
    {
        bail!("the failed row holds no stderr tail");
    }
    if shown(c, &stderr).await? {
        bail!("the stderr tail is shown before it is opened");
    }
    click_in(c, &row("broken"), "broken", ".mcp-stderr > summary").await?;
    wait_text(c, &stderr, "mcp_test_server:").await?;

    // --- Remove asks first; confirmed, the server goes
    click_in(c, &row("broken"), "broken", ".mcp-remove").await?;
    wait_text(c, &row("broken"), "Remove broken?").await?;
    if server_names(http, daemon).await? != ["broken", "t"] {
        bail!("Remove did not wait for its confirmation");
    }
    click_in(c, &row("broken"), "broken", ".mcp-remove-yes").await?;
    poll("broken's row to go", SHORT, || async {
        Ok(elements(c, &row("broken")).await?.is_empty().then_some(()))
    })
    .await?;
    if server_names(http, daemon).await? != ["t"] {
        bail!("Remove did not remove the server");
    }

    // --- Disable: the disabled state; Enable brings it back to ready
    click_in(c, &row("t"), "t", ".mcp-toggle").await?;
    let disabled = wait_row(c, "t", "disabled", SHORT, |r| r.state == "disabled").await?;
    if disabled.badge != "disabled" {
        bail!("the disabled row shows {disabled:?}");
    }
    wait_text(c, &format!("{} .mcp-toggle", row("t")), "Enable").await?;
    let restart_off = c
        .execute(
            "return document.querySelector(arguments[0]).disabled;",
            vec![json!(format!("{} .mcp-restart", row("t")))],
        )
        .await?;
    if restart_off != json!(true) {
        bail!("Restart is offered for a disabled server");
    }
    let t = get(http, daemon, "/v1/mcp-servers/t").await?;
    if t["definition"]["enabled"] != json!(false) || t["status"]["state"] != "disabled" {
        bail!("Disable did not disable the server: {t}");
    }
    click_in(c, &row("t"), "t", ".mcp-toggle").await?;
    wait_row(c, "t", "ready once enabled", START, |r| r.state == "ready").await?;
    wait_text(c, &format!("{} .mcp-toggle", row("t")), "Disable").await?;

    // --- By URL: the URL fields replace the command line; a bad URL is named, nothing lost
    c.find(Locator::Css("#mcp-kind"))
        .await?
        .select_by_value("url")
        .await?;
    wait_hidden(c, "#mcp-command", SHORT).await?;
    fill(c, "#mcp-name", "web").await?;
    fill(c, "#mcp-url", "localhost:8080/mcp").await?;
    fill(c, "#mcp-bearer", "MCP_TOKEN").await?;
    click(c, "#mcp-submit").await?;
    wait_text(
        c,
        "#mcp-error",
        "url: 'localhost:8080/mcp' is not an http://",
    )
    .await?;
    let kept = c
        .execute(
            "return ['#mcp-name', '#mcp-url', '#mcp-bearer']
               .map(s => document.querySelector(s).value)
               .concat([document.querySelector('#mcp-url').getAttribute('aria-invalid')]);",
            vec![],
        )
        .await?;
    if kept != json!(["web", "localhost:8080/mcp", "MCP_TOKEN", "true"]) {
        bail!("the refused URL form shows {kept}");
    }
    if server_names(http, daemon).await? != ["t"] {
        bail!("a refused URL definition was stored");
    }
    Ok(())
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
