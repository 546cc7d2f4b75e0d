//! Who may drive the daemon: the `Host` of every request must name it (DNS rebinding), a
//! state-changing request from a browser must come from its own page (`Origin`), and an
//! endpoint may name only a credential-like variable as its key.

mod daemon_support;
mod support;

use reqwest::Method;
use reqwest::header::{HOST, HeaderMap, ORIGIN};
use serde_json::{Value, json};
use support::TestApp;
use troupe_core::thread::EndpointSpec;

struct Reply {
    status: u16,
    body: Value,
    headers: HeaderMap,
}

impl Reply {
    #[track_caller]
    fn error(&self, status: u16, code: &str) -> &str {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.body["error"]["code"], code, "{}", self.body);
        self.body["error"]["message"].as_str().unwrap()
    }
}

/// A request with the given `Host` and `Origin` headers (None: reqwest's own Host, no Origin).
async fn send(
    client: &reqwest::Client,
    base: &str,
    method: Method,
    path: &str,
    host: Option<&str>,
    origin: Option<&str>,
    body: Option<Value>,
) -> Reply {
    let mut req = client.request(method, format!("{base}{path}"));
    if let Some(h) = host {
        req = req.header(HOST, h);
    }
    if let Some(o) = origin {
        req = req.header(ORIGIN, o);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        headers,
    }
}

fn port_of(base: &str) -> u16 {
    base.rsplit_once(':').unwrap().1.parse().unwrap()
}

fn openai(var: &str) -> Value {
    json!({"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": var})
}

#[tokio::test]
async fn dns_rebinding_host_refused() {
    let app = TestApp::start().await;
    let port = port_of(&app.base);
    let before = (
        app.get("/v1/bots").await.expect(200),
        app.get("/v1/roles").await.expect(200),
    );
    let foreign = [
        format!("rebind.example:{port}"),
        "rebind.example".to_string(),
        format!("localhost.rebind.example:{port}"),
        format!("127.0.0.1:{}", port ^ 1),
        // A bare name means port 80, which is not where this daemon listens.
        "localhost".to_string(),
    ];
    for host in &foreign {
        for (method, path, body) in [
            (Method::GET, "/v1/bots", None),
            (Method::GET, "/", None),
            (Method::GET, "/v1/openapi.json", None),
            (Method::POST, "/v1/bots", Some(json!({"name": "Rebound"}))),
            (
                Method::PUT,
                "/v1/roles/default",
                Some(json!({"kind": "openai", "base_url": "http://evil.example/v1", "model": "m"})),
            ),
        ] {
            let r = send(&app.client, &app.base, method, path, Some(host), None, body).await;
            let message = r.error(421, "host_not_allowed");
            assert!(message.contains(&format!("'{host}'")), "{message}");
            assert!(
                message.contains("localhost") && message.contains(&format!("port {port}")),
                "{message}"
            );
        }
    }
    // The names that do mean this daemon.
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        format!("[::1]:{port}"),
    ] {
        let r = send(
            &app.client,
            &app.base,
            Method::GET,
            "/v1/bots",
            Some(&host),
            None,
            None,
        )
        .await;
        assert_eq!(r.status, 200, "{host}: {}", r.body);
    }
    let after = (
        app.get("/v1/bots").await.expect(200),
        app.get("/v1/roles").await.expect(200),
    );
    assert_eq!(after, before, "a refused request changed something");
}

#[tokio::test]
async fn cross_origin_post_refused() {
    let app = TestApp::start().await;
    let port = port_of(&app.base);
    let bot = app
        .scripted_bot("Kept", json!({"steps": [{"text": "hi"}]}))
        .await;
    let session = app.direct(bot).await;
    let snapshot = || async {
        (
            app.get("/v1/bots").await.expect(200),
            app.get("/v1/roles").await.expect(200),
            app.get("/v1/sessions").await.expect(200),
            app.get(&format!("/v1/sessions/{session}/messages"))
                .await
                .expect(200),
        )
    };
    let before = snapshot().await;
    for origin in [
        "http://evil.example".to_string(),
        format!("http://evil.example:{port}"),
        format!("http://rebind.example:{port}"),
        format!("http://127.0.0.1:{}", port ^ 1),
        format!("https://127.0.0.1:{port}"),
        "null".to_string(),
    ] {
        for (method, path, body) in [
            (
                Method::POST,
                "/v1/bots".to_string(),
                Some(json!({"name": "Forged"})),
            ),
            (
                Method::PUT,
                "/v1/roles/default".into(),
                Some(openai("OPENAI_API_KEY")),
            ),
            (
                Method::PATCH,
                format!("/v1/bots/{bot}"),
                Some(json!({"name": "Renamed"})),
            ),
            (Method::DELETE, format!("/v1/bots/{bot}"), None),
            (
                Method::POST,
                format!("/v1/sessions/{session}/messages"),
                Some(json!({"body": "run rm -rf ~"})),
            ),
        ] {
            let r = send(
                &app.client,
                &app.base,
                method.clone(),
                &path,
                None,
                Some(&origin),
                body,
            )
            .await;
            let message = r.error(403, "cross_origin");
            assert!(message.contains(&format!("'{origin}'")), "{message}");
        }
    }
    assert_eq!(
        snapshot().await,
        before,
        "a refused request changed something"
    );

    // Reading is not changing anything, and no CORS header lets the other site read the answer.
    let r = send(
        &app.client,
        &app.base,
        Method::GET,
        "/v1/bots",
        None,
        Some("http://evil.example"),
        None,
    )
    .await;
    assert_eq!(r.status, 200);
    let preflight = app
        .client
        .request(Method::OPTIONS, app.url("/v1/bots"))
        .header(ORIGIN, "http://evil.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    for headers in [&r.headers, preflight.headers()] {
        let cors: Vec<_> = headers
            .keys()
            .filter(|k| k.as_str().starts_with("access-control-"))
            .collect();
        assert!(cors.is_empty(), "CORS headers answered: {cors:?}");
    }
}

#[tokio::test]
async fn same_origin_page_still_works() {
    let app = TestApp::start().await;
    let port = port_of(&app.base);
    // The page, and the requests its script makes: same origin, so the browser sends it.
    let page = send(&app.client, &app.base, Method::GET, "/", None, None, None).await;
    assert_eq!(page.status, 200);
    for (host, own) in [
        (format!("127.0.0.1:{port}"), app.base.clone()),
        (
            format!("localhost:{port}"),
            format!("http://localhost:{port}"),
        ),
    ] {
        let name = format!("Mine{}", host.len());
        let (h, o) = (Some(host.as_str()), Some(own.as_str()));
        let (c, b) = (&app.client, app.base.as_str());
        let bot = send(
            c,
            b,
            Method::POST,
            "/v1/bots",
            h,
            o,
            Some(json!({"name": name})),
        )
        .await;
        assert_eq!(bot.status, 201, "{own}: {}", bot.body);
        let id = bot.body["id"].as_i64().unwrap();
        let path = format!("/v1/bots/{id}");
        let patch = Some(json!({"persona": "tidy"}));
        let r = send(c, b, Method::PATCH, &path, h, o, patch).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let role = Some(openai("OPENAI_API_KEY"));
        let r = send(c, b, Method::PUT, "/v1/roles/scribe", h, o, role).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let open = Some(json!({"kind": "direct", "bot_ids": [id]}));
        let r = send(c, b, Method::POST, "/v1/sessions", h, o, open).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let r = send(c, b, Method::DELETE, &path, h, o, None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["archived"], true);
    }
}

#[tokio::test]
async fn api_key_env_outside_patterns_refused() {
    let app = TestApp::start().await;
    let bot = app
        .post(
            "/v1/bots",
            json!({"name": "Keyed", "endpoint": openai("OPENAI_API_KEY")}),
        )
        .await
        .expect(201);
    let id = bot["id"].as_i64().unwrap();
    let before = (
        app.get("/v1/bots").await.expect(200),
        app.get("/v1/roles").await.expect(200),
    );
    for var in [
        "HOME",
        "PATH",
        "DATABASE_URL",
        "TROUPE_TOKEN",
        "lower_api_key",
        "A-B_KEY",
    ] {
        let endpoint = openai(var);
        let refusals = [
            app.put("/v1/roles/default", endpoint.clone()).await,
            app.post(
                "/v1/bots",
                json!({"name": "Leak", "endpoint": endpoint.clone()}),
            )
            .await,
            app.patch(
                &format!("/v1/bots/{id}"),
                json!({"endpoint": endpoint.clone()}),
            )
            .await,
        ];
        for r in refusals {
            r.expect_error(422, "invalid");
            assert!(r.message().contains(&format!("'{var}'")), "{}", r.text);
        }
    }
    let r = app.put("/v1/roles/default", openai("HOME")).await;
    assert!(
        r.message().contains("*_API_KEY, *_TOKEN, *_KEY"),
        "the refusal names the rule: {}",
        r.text
    );
    let after = (
        app.get("/v1/bots").await.expect(200),
        app.get("/v1/roles").await.expect(200),
    );
    assert_eq!(after, before, "a refused endpoint was kept");

    // Names that look like provider credentials are taken.
    app.put("/v1/roles/default", openai("ANTHROPIC_API_KEY"))
        .await
        .expect(200);
    app.patch(
        &format!("/v1/bots/{id}"),
        json!({"endpoint": openai("HF_TOKEN")}),
    )
    .await
    .expect(200);

    // A Bot stored before the rule (written straight to the store) is held to it when its
    // model is called: the turn fails naming the variable, and its value is never read.
    let stored = app
        .state
        .collab
        .store()
        .write(|tx| {
            tx.create_bot(&troupe_store::NewBot {
                name: "Old".into(),
                persona: String::new(),
                endpoint: Some(EndpointSpec {
                    kind: "openai".into(),
                    base_url: Some("http://127.0.0.1:9/v1".into()),
                    model: "m".into(),
                    api_key_env: Some("HOME".into()),
                    script: None,
                    takes_pictures: false,
                    thinking_levels: Vec::new(),
                    max_output_tokens: None,
                }),
                scripted: false,
            })
        })
        .unwrap();
    let s = app.direct(stored.id.0).await;
    app.post(&format!("/v1/sessions/{s}/messages"), json!({"body": "hi"}))
        .await
        .expect(201);
    let line = app.wait_for_bot_line(s, |l| l["status"] == "failed").await;
    assert!(
        line["body"].as_str().unwrap().contains("'HOME' is refused"),
        "{line}"
    );
}

/// The real `troupe serve`: `--allowed-host` and the config file's `serve.allowed_hosts` and
/// `keys.env_patterns` reach the daemon, on the port a port-0 bind got.
#[tokio::test]
async fn troupe_serve_takes_allowed_hosts_and_key_patterns() {
    use daemon_support::{Daemon, troupe_binary};
    let bin = troupe_binary();
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(
        &config,
        "[keys]\nenv_patterns = [\"ONLY_THIS_KEY\"]\n\n[serve]\nallowed_hosts = [\"from-config.test\"]\n",
    )
    .unwrap();
    let daemon = Daemon::start_with(
        &bin,
        &tmp.path().join("data"),
        &config,
        &tmp.path().join("daemon.log"),
        &["--allowed-host", "From-Flag.test"],
    );
    let base = format!("http://{}", daemon.addr);
    let port = port_of(&base);
    assert_ne!(port, 0);
    let client = daemon.client();
    for host in [
        format!("from-flag.test:{port}"),
        format!("from-config.test:{port}"),
    ] {
        let r = send(
            &client,
            &base,
            Method::GET,
            "/v1/bots",
            Some(&host),
            None,
            None,
        )
        .await;
        assert_eq!(r.status, 200, "{host}: {}", r.body);
        let origin = format!("http://{host}");
        let name = format!("Via{}", host.len());
        let r = send(
            &client,
            &base,
            Method::POST,
            "/v1/bots",
            Some(&host),
            Some(&origin),
            Some(json!({"name": name})),
        )
        .await;
        assert_eq!(r.status, 201, "{host}: {}", r.body);
    }
    for host in [
        format!("rebind.example:{port}"),
        "from-flag.test".to_string(),
    ] {
        let r = send(
            &client,
            &base,
            Method::GET,
            "/v1/bots",
            Some(&host),
            None,
            None,
        )
        .await;
        r.error(421, "host_not_allowed");
    }
    let r = send(
        &client,
        &base,
        Method::PUT,
        "/v1/roles/default",
        None,
        None,
        Some(openai("OPENAI_API_KEY")),
    )
    .await;
    assert!(
        r.error(422, "invalid").contains("ONLY_THIS_KEY"),
        "{}",
        r.body
    );
    let r = send(
        &client,
        &base,
        Method::PUT,
        "/v1/roles/default",
        None,
        None,
        Some(openai("ONLY_THIS_KEY")),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);

    // A config file naming a variable outside the patterns stops the daemon before it listens.
    let bad = tmp.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[endpoints.x]\nkind = \"openai\"\nmodel = \"m\"\napi_key_env = \"HOME\"\n\n[roles]\ndefault = \"x\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(&bin)
        .args(["serve", "--addr", "127.0.0.1:0", "--config"])
        .arg(&bad)
        .arg("--data-dir")
        .arg(tmp.path().join("data2"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("endpoint 'x'") && stderr.contains("'HOME'") && stderr.contains("*_KEY"),
        "{stderr}"
    );
    // And a bad --allowed-host is refused with what it should look like.
    let out = std::process::Command::new(&bin)
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--allowed-host",
            "http://x.test:80",
        ])
        .arg("--data-dir")
        .arg(tmp.path().join("data3"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--allowed-host") && stderr.contains("bare name"),
        "{stderr}"
    );
}
