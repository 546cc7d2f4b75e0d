//! `/v1/bots` over HTTP: create, list, read, patch, archive, and every refusal.

mod support;

use serde_json::json;
use support::TestApp;

fn names(list: &serde_json::Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn bots_are_created_listed_read_patched_and_archived() {
    let app = TestApp::start().await;
    let before = app.get("/v1/bots").await.expect(200);

    let bot = app
        .post("/v1/bots", json!({"name": "  Ada ", "persona": "Terse.", "endpoint": {"kind": "openai", "model": "gpt-x", "base_url": "http://127.0.0.1:9"}}))
        .await
        .expect(201);
    let id = bot["id"].as_i64().unwrap();
    assert_eq!(bot["name"], "Ada");
    assert_eq!(bot["persona"], "Terse.");
    assert_eq!(bot["endpoint"]["kind"], "openai");
    assert_eq!(bot["archived"], false);
    assert!(bot["key_present"].is_null(), "no key variable named: {bot}");

    let list = app.get("/v1/bots").await.expect(200);
    assert_eq!(
        list.as_array().unwrap().len(),
        before.as_array().unwrap().len() + 1
    );
    assert!(names(&list).contains(&"Ada".to_string()));

    assert_eq!(app.get(&format!("/v1/bots/{id}")).await.expect(200), bot);
    // The display form of the id is accepted too.
    assert_eq!(
        app.get(&format!("/v1/bots/bot_{id}")).await.expect(200)["id"],
        id
    );

    let patched = app
        .patch(&format!("/v1/bots/{id}"), json!({"persona": "Chatty."}))
        .await
        .expect(200);
    assert_eq!(patched["persona"], "Chatty.");
    assert_eq!(patched["name"], "Ada");
    assert_eq!(patched["endpoint"]["model"], "gpt-x");
    // endpoint: null clears the Bot's own endpoint.
    let cleared = app
        .patch(&format!("/v1/bots/{id}"), json!({"endpoint": null}))
        .await
        .expect(200);
    assert!(cleared["endpoint"].is_null());
    assert!(cleared["key_present"].is_null());

    let archived = app.delete(&format!("/v1/bots/{id}")).await.expect(200);
    assert_eq!(archived["archived"], true);
    assert_eq!(archived["id"], id);
    assert!(!names(&app.get("/v1/bots").await.expect(200)).contains(&"Ada".to_string()));
    // History stays: the archived Bot can still be read, but not changed.
    assert_eq!(
        app.get(&format!("/v1/bots/{id}")).await.expect(200)["archived"],
        true
    );
    app.patch(&format!("/v1/bots/{id}"), json!({"persona": "x"}))
        .await
        .expect_error(409, "archived");
    // Its name is free again.
    app.post("/v1/bots", json!({"name": "ada"}))
        .await
        .expect(201);
}

#[tokio::test]
async fn invalid_bots_are_refused_with_422_and_write_nothing() {
    let app = TestApp::start().await;
    app.post("/v1/bots", json!({"name": "Grace"}))
        .await
        .expect(201);
    let before = app.get("/v1/bots").await.expect(200);

    let cases = [
        (json!({"name": ""}), "name"),
        (json!({"name": "   "}), "name"),
        (json!({"name": "GRACE"}), "already exists"),
        (json!({"name": "grace "}), "already exists"),
        (
            json!({"name": "Kay", "endpoint": {"kind": "bard", "model": "m"}}),
            "unknown endpoint kind",
        ),
        (
            json!({"name": "Kay", "endpoint": {"kind": "scripted", "model": "s"}}),
            "script",
        ),
        (
            json!({"name": "Kay", "endpoint": {"kind": "scripted", "model": "s", "script": "/nowhere/kay.json"}}),
            "script /nowhere/kay.json: cannot read",
        ),
        (
            json!({"name": "Kay", "endpoint": {"kind": "scripted", "model": "s", "script": "{\"steps\": []}"}}),
            "not the script itself",
        ),
        (
            json!({"name": "Kay", "endpoint": {"kind": "openai", "model": "m", "base_url": "ftp://x"}}),
            "base_url",
        ),
        (
            json!({"name": "Kay", "endpoint": {"kind": "openai"}}),
            "model",
        ),
        (json!({"name": "Kay", "colour": "red"}), "colour"),
        (json!({"persona": "no name"}), "name"),
        (json!({"name": 7}), "name"),
    ];
    for (body, needle) in cases {
        let a = app.post("/v1/bots", body.clone()).await;
        a.expect_error(422, "invalid");
        assert!(
            a.message().contains(needle),
            "{body}: message {:?} should mention {needle:?}",
            a.message()
        );
    }
    assert_eq!(
        app.get("/v1/bots").await.expect(200),
        before,
        "a refused request wrote something"
    );
}

#[tokio::test]
async fn malformed_json_is_400_and_writes_nothing() {
    let app = TestApp::start().await;
    let before = app.get("/v1/bots").await.expect(200);
    app.post_raw("/v1/bots", r#"{"name": "Ada""#)
        .await
        .expect_error(400, "bad_request");
    app.post_raw("/v1/bots", "not json")
        .await
        .expect_error(400, "bad_request");
    let id = before[0]["id"].as_i64().unwrap();
    let a = app
        .send(
            reqwest::Method::PATCH,
            &format!("/v1/bots/{id}"),
            Some(support::Body::Raw("{".into())),
        )
        .await;
    a.expect_error(400, "bad_request");
    assert_eq!(app.get("/v1/bots").await.expect(200), before);
}

#[tokio::test]
async fn a_missing_content_type_is_400() {
    let app = TestApp::start().await;
    let resp = app
        .client
        .post(app.url("/v1/bots"))
        .body(r#"{"name":"Ada"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
}

#[tokio::test]
async fn unknown_and_malformed_bot_ids() {
    let app = TestApp::start().await;
    for a in [
        app.get("/v1/bots/999999").await,
        app.patch("/v1/bots/999999", json!({"persona": "x"})).await,
        app.delete("/v1/bots/999999").await,
    ] {
        a.expect_error(404, "not_found");
        assert!(a.message().contains("999999"), "{}", a.message());
    }
    for a in [
        app.get("/v1/bots/abc").await,
        app.patch("/v1/bots/abc", json!({"persona": "x"})).await,
        app.delete("/v1/bots/1.5").await,
        app.get("/v1/bots/ses_1").await,
    ] {
        a.expect_error(400, "bad_request");
        assert!(a.message().contains("not a valid BotId"), "{}", a.message());
    }
}

#[tokio::test]
async fn patch_refuses_invalid_values_and_duplicate_names() {
    let app = TestApp::start().await;
    app.post("/v1/bots", json!({"name": "Ada"}))
        .await
        .expect(201);
    let grace = app
        .post("/v1/bots", json!({"name": "Grace"}))
        .await
        .expect(201);
    let path = format!("/v1/bots/{}", grace["id"]);
    for body in [
        json!({"name": "ADA"}),
        json!({"name": ""}),
        json!({"endpoint": {"kind": "bard", "model": "m"}}),
        json!({"nickname": "G"}),
    ] {
        app.patch(&path, body).await.expect_error(422, "invalid");
    }
    assert_eq!(
        app.get(&path).await.expect(200),
        grace,
        "a refused patch changed the Bot"
    );
    // Renaming to a different case of its own name is fine.
    assert_eq!(
        app.patch(&path, json!({"name": "GRACE"})).await.expect(200)["name"],
        "GRACE"
    );
}

#[tokio::test]
async fn bot_keys_are_never_returned_only_whether_they_are_present() {
    let key_value = "sk-a-value-that-must-never-be-shown";
    let app = TestApp::start_with(None, &[("BOTS_TEST_API_KEY", key_value)]).await;
    let bot = app
        .post("/v1/bots", json!({"name": "Keyed", "endpoint": {"kind": "openai", "model": "m", "api_key_env": "BOTS_TEST_API_KEY"}}))
        .await;
    assert!(
        !bot.text.contains(key_value),
        "the key's value leaked: {}",
        bot.text
    );
    let bot = bot.expect(201);
    assert_eq!(bot["key_present"], true);
    assert_eq!(bot["endpoint"]["api_key_env"], "BOTS_TEST_API_KEY");

    let unset = "SURELY_UNSET_TEST_API_KEY";
    assert!(std::env::var(unset).is_err());
    let other = app
        .post("/v1/bots", json!({"name": "Keyless", "endpoint": {"kind": "openai", "model": "m", "api_key_env": unset}}))
        .await
        .expect(201);
    assert_eq!(other["key_present"], false);

    for path in ["/v1/bots".to_string(), format!("/v1/bots/{}", bot["id"])] {
        let a = app.get(&path).await;
        assert!(
            !a.text.contains(key_value),
            "the key's value leaked from {path}"
        );
        assert!(a.text.contains(r#""key_present":true"#), "{}", a.text);
    }
}
