//! Runtime Boss over HTTP (issue 18 items 14, 18, 19): the Runtime settings (every bad value a
//! 422 naming its field, nothing changed), provisioning after a PATCH, and opening the boss
//! session from Settings.

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_channels::{ChannelDef, ChannelKind, FilterRules};

const OFF: fn() -> Value = || json!({"boss_mode": false, "briefing_interval_days": null, "persona": null, "identity_text": null});

#[tokio::test]
async fn runtime_settings_refuse_bad_values_by_field() {
    let app = TestApp::start().await;
    assert_eq!(app.get("/v1/settings/runtime").await.expect(200), OFF());
    let bad = [
        (
            json!({"briefing_interval_days": 0}),
            "briefing_interval_days",
        ),
        (
            json!({"briefing_interval_days": 366}),
            "briefing_interval_days",
        ),
        (
            json!({"briefing_interval_days": "weekly"}),
            "briefing_interval_days",
        ),
        (json!({"boss_mode": "yes"}), "boss_mode"),
        (json!({"persona": {"preset": "pirate"}}), "persona"),
        (
            json!({"persona": {"preset": "custom", "formality": 0.5, "conciseness": 0.5, "proactiveness": 0.5, "warmth": 1.5}}),
            "persona.warmth",
        ),
        (
            json!({"persona": {"preset": "custom", "formality": 0.5, "conciseness": 0.5, "warmth": 0.5}}),
            "proactiveness",
        ),
        (json!({"identity_text": "x".repeat(4001)}), "identity_text"),
        (json!({"boss": true}), "boss"),
    ];
    for (body, field) in bad {
        let a = app.patch("/v1/settings/runtime", body.clone()).await;
        a.expect_error(422, "invalid");
        assert!(
            a.message().contains(field),
            "{body}: the message names {field}: {}",
            a.message()
        );
        assert_eq!(
            app.get("/v1/settings/runtime").await.expect(200),
            OFF(),
            "{body} changed nothing"
        );
    }
    app.patch("/v1/settings/runtime", json!(["boss_mode"]))
        .await
        .expect_error(422, "invalid");
}

#[tokio::test]
async fn runtime_settings_patch_provisions_and_clears() {
    let app = TestApp::start().await;
    app.state
        .channels
        .configure(
            &[ChannelDef {
                name: "acme".into(),
                kind: ChannelKind::Webhook,
                bot: "anyone".into(),
                secret_env: "ACME_SECRET".into(),
                outbound_url: "http://127.0.0.1:9/out".into(),
                filter: FilterRules::default(),
                enabled: true,
            }],
            &|_| Some("s3cret".into()),
        )
        .unwrap();
    let changed = app
        .patch(
            "/v1/settings/runtime",
            json!({"boss_mode": true, "briefing_interval_days": 7, "persona": {"preset": "ops_assistant"}}),
        )
        .await
        .expect(200);
    assert_eq!(changed["settings"]["boss_mode"], true);
    assert_eq!(changed["settings"]["briefing_interval_days"], 7);
    assert_eq!(
        changed["settings"]["persona"],
        json!({"preset": "ops_assistant"})
    );
    let boss = changed["provisioned"]["accounts"][0]["session_id"].clone();
    assert_eq!(changed["provisioned"]["accounts"][0]["account"], "acme");
    assert_eq!(changed["provisioned"]["created"], json!([boss]));
    // Idempotent: the same PATCH again makes nothing.
    let again = app
        .patch("/v1/settings/runtime", json!({"boss_mode": true}))
        .await
        .expect(200);
    assert_eq!(again["provisioned"]["created"], json!([]));
    assert_eq!(again["provisioned"]["accounts"][0]["session_id"], boss);
    // Open answers the account-routed session, with no greeting (RB-6).
    let opened = app
        .post("/v1/boss/session/open", json!({}))
        .await
        .expect(200);
    assert_eq!(
        opened,
        json!({"session_id": boss, "created": false, "kickoff": false})
    );
    // null clears a field; the rest stays.
    let cleared = app
        .patch(
            "/v1/settings/runtime",
            json!({"briefing_interval_days": null, "persona": null}),
        )
        .await
        .expect(200);
    assert_eq!(
        cleared["settings"],
        json!({"boss_mode": true, "briefing_interval_days": null, "persona": null, "identity_text": null})
    );
}

#[tokio::test]
async fn open_is_409_while_off_then_idempotent() {
    let app = TestApp::start().await;
    app.post("/v1/boss/session/open", json!({}))
        .await
        .expect_error(409, "boss_disabled");
    let sessions = app.get("/v1/sessions").await.expect(200);
    app.patch("/v1/settings/runtime", json!({"boss_mode": true}))
        .await
        .expect(200);
    let first = app
        .post("/v1/boss/session/open", json!({}))
        .await
        .expect(200);
    assert_eq!(first["created"], true);
    assert_eq!(
        first["kickoff"], false,
        "no model configured: no greeting, no error"
    );
    let second = app
        .post("/v1/boss/session/open", json!({}))
        .await
        .expect(200);
    assert_eq!(second["session_id"], first["session_id"]);
    assert_eq!(second["created"], false);
    let after = app.get("/v1/sessions").await.expect(200);
    assert_ne!(after, sessions, "the local boss session is listed");
    // Off again: 409, and the session is kept (RB-7).
    app.patch("/v1/settings/runtime", json!({"boss_mode": false}))
        .await
        .expect(200);
    app.post("/v1/boss/session/open", json!({}))
        .await
        .expect_error(409, "boss_disabled");
    let id = first["session_id"].as_i64().unwrap();
    app.get(&format!("/v1/sessions/{id}")).await.expect(200);
}

#[tokio::test]
async fn boss_name_route_checks_and_keeps_it() {
    let app = TestApp::start().await;
    assert_eq!(
        app.get("/v1/boss/name").await.expect(200),
        json!({"name": null})
    );
    for body in [
        json!({}),
        json!({"name": null}),
        json!({"name": ""}),
        json!({"name": "  "}),
        json!({"name": "x".repeat(65)}),
        json!({"name": "a\nb"}),
        json!({"name": 7}),
        json!({"name": "Ada", "title": "boss"}),
    ] {
        let a = app.put("/v1/boss/name", body.clone()).await;
        a.expect_error(422, "invalid");
        assert!(
            a.message().contains("name") || a.message().contains("title"),
            "{body}: {}",
            a.message()
        );
        assert_eq!(
            app.get("/v1/boss/name").await.expect(200),
            json!({"name": null})
        );
    }
    let put = app
        .put("/v1/boss/name", json!({"name": " Ada "}))
        .await
        .expect(200);
    assert_eq!(put, json!({"name": "Ada"}));
    assert_eq!(
        app.get("/v1/boss/name").await.expect(200),
        json!({"name": "Ada"})
    );
    let long = "é".repeat(64);
    app.put("/v1/boss/name", json!({"name": long}))
        .await
        .expect(200);
    assert_eq!(app.get("/v1/boss/name").await.expect(200)["name"], long);
}

/// The daemon's start: `[experimental]` seeds what is not stored, then `ensure` makes the
/// accounts' boss sessions; a later start with other file values keeps the stored ones.
#[tokio::test]
async fn startup_seeds_then_the_stored_settings_win() {
    use std::sync::Arc;
    use troupe_core::runtime_boss::RuntimeSettingsPatch;
    use troupe_engine::RoleTable;
    use troupe_engine::models::SecretSource;

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let acme = ChannelDef {
        name: "acme".into(),
        kind: ChannelKind::Webhook,
        bot: "anyone".into(),
        secret_env: "ACME_SECRET".into(),
        outbound_url: "http://127.0.0.1:9/out".into(),
        filter: FilterRules::default(),
        enabled: true,
    };
    let boot = |seed: Value| {
        let data = data.clone();
        let acme = acme.clone();
        async move {
            let secrets: SecretSource =
                Arc::new(|name| (name == "ACME_SECRET").then(|| "s".into()));
            troupe_server::bootstrap::build_state(
                &data,
                troupe_server::bootstrap::BootOptions {
                    database: Some(troupe_store::testing::database_url_in(&data)),
                    channels: vec![acme],
                    runtime_boss: serde_json::from_value::<RuntimeSettingsPatch>(seed).unwrap(),
                    ..troupe_server::bootstrap::BootOptions::new(
                        RoleTable::new(secrets.clone()),
                        secrets,
                    )
                },
            )
            .await
            .unwrap()
            .state
        }
    };
    let first = boot(json!({"boss_mode": true, "briefing_interval_days": 5})).await;
    let (settings, boss) = first
        .collab
        .store()
        .read(|tx| Ok((tx.runtime_settings()?, tx.runtime_boss_session("acme")?)))
        .unwrap();
    assert!(settings.boss_mode);
    assert_eq!(settings.briefing_interval_days, Some(5));
    let boss = boss.expect("ensure ran at startup");
    first.shutdown.cancel();
    drop(first);

    let second =
        boot(json!({"boss_mode": false, "briefing_interval_days": 30, "identity_text": "new"}))
            .await;
    let (settings, again, all) = second
        .collab
        .store()
        .read(|tx| {
            Ok((
                tx.runtime_settings()?,
                tx.runtime_boss_session("acme")?,
                tx.runtime_boss_sessions()?.len(),
            ))
        })
        .unwrap();
    assert!(settings.boss_mode, "the stored switch wins over the file's");
    assert_eq!(settings.briefing_interval_days, Some(5));
    assert_eq!(
        settings.identity_text.as_deref(),
        Some("new"),
        "an unstored key is seeded"
    );
    assert_eq!(again, Some(boss));
    assert_eq!(all, 1, "a restart makes no second session");
    second.shutdown.cancel();
}
