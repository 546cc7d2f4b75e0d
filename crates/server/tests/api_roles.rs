//! `/v1/roles` over HTTP: pointing a role at an endpoint, listing roles, refusals, and keys.

mod support;

use serde_json::json;
use support::TestApp;

#[tokio::test]
async fn a_role_is_set_and_listed() {
    let app = TestApp::start().await;
    assert_eq!(app.get("/v1/roles").await.expect(200), json!([]));

    let review =
        json!({"kind": "anthropic", "model": "claude-x", "base_url": "http://127.0.0.1:9"});
    let set = app
        .put("/v1/roles/review", review.clone())
        .await
        .expect(200);
    assert_eq!(
        set,
        json!({"role": "review", "endpoint": review, "key_present": null})
    );

    // A scripted endpoint's script is read when it is given: a missing file is refused.
    let missing = json!({"kind": "scripted", "model": "s", "script": "/nowhere.json"});
    let refused = app.put("/v1/roles/default", missing).await;
    refused.expect_error(422, "invalid");
    assert!(
        refused.message().contains("/nowhere.json"),
        "{}",
        refused.message()
    );
    let path = app.script("default", json!({"steps": [{"text": "ok"}]}));
    let scripted = json!({"kind": "scripted", "model": "s", "script": path});
    app.put("/v1/roles/default", scripted.clone())
        .await
        .expect(200);
    let list = app.get("/v1/roles").await.expect(200);
    assert_eq!(
        list,
        json!([
            {"role": "default", "endpoint": scripted, "key_present": null},
            {"role": "review", "endpoint": review, "key_present": null},
        ])
    );

    // Setting again replaces; an output cap is kept as given.
    let other = json!({"kind": "openai", "model": "m2", "max_output_tokens": 16000});
    app.put("/v1/roles/review", other.clone()).await.expect(200);
    let list = app.get("/v1/roles").await.expect(200);
    assert_eq!(list[1]["endpoint"], other);
}

#[tokio::test]
async fn bad_roles_and_endpoints_are_refused_and_change_nothing() {
    let app = TestApp::start().await;
    let good = json!({"kind": "openai", "model": "m"});
    app.put("/v1/roles/scribe", good.clone()).await.expect(200);
    let before = app.get("/v1/roles").await.expect(200);

    let a = app.put("/v1/roles/reviewer", good.clone()).await;
    a.expect_error(422, "invalid");
    assert!(
        a.message().contains("unknown role 'reviewer'"),
        "{}",
        a.message()
    );

    for body in [
        json!({"kind": "bard", "model": "m"}),
        json!({"kind": "openai"}),
        json!({"kind": "openai", "model": "m", "base_url": "file:///etc"}),
        json!({"kind": "scripted", "model": "s"}),
        json!([1, 2]),
    ] {
        app.put("/v1/roles/scribe", body)
            .await
            .expect_error(422, "invalid");
    }
    for (cap, says) in [
        (
            json!(0),
            "max_output_tokens is 0; it must be from 1 to 1000000",
        ),
        (json!(-5), "max_output_tokens"),
        (json!("lots"), "max_output_tokens"),
    ] {
        let a = app
            .put(
                "/v1/roles/scribe",
                json!({"kind": "openai", "model": "m", "max_output_tokens": cap}),
            )
            .await;
        a.expect_error(422, "invalid");
        assert!(a.message().contains(says), "{cap}: {}", a.message());
    }
    let a = app
        .send(
            reqwest::Method::PUT,
            "/v1/roles/scribe",
            Some(support::Body::Raw("{\"kind\":".into())),
        )
        .await;
    a.expect_error(400, "bad_request");

    assert_eq!(
        app.get("/v1/roles").await.expect(200),
        before,
        "a refused request changed the roles"
    );
}

#[tokio::test]
async fn role_keys_are_never_returned_only_whether_they_are_present() {
    let key_value = "sk-a-value-that-must-never-be-shown";
    let app = TestApp::start_with(None, &[("ROLES_TEST_API_KEY", key_value)]).await;
    let set = app
        .put(
            "/v1/roles/default",
            json!({"kind": "openai", "model": "m", "api_key_env": "ROLES_TEST_API_KEY"}),
        )
        .await;
    assert!(
        !set.text.contains(key_value),
        "the key's value leaked: {}",
        set.text
    );
    let set = set.expect(200);
    assert_eq!(set["key_present"], true);
    assert_eq!(set["endpoint"]["api_key_env"], "ROLES_TEST_API_KEY");

    app.put(
        "/v1/roles/judgement",
        json!({"kind": "openai", "model": "m", "api_key_env": "SURELY_UNSET_TEST_API_KEY"}),
    )
    .await
    .expect(200);
    let list = app.get("/v1/roles").await;
    assert!(
        !list.text.contains(key_value),
        "the key's value leaked from the list"
    );
    let list = list.expect(200);
    assert_eq!(list[0]["role"], "default");
    assert_eq!(list[0]["key_present"], true);
    assert_eq!(list[1]["role"], "judgement");
    assert_eq!(list[1]["key_present"], false);
}
