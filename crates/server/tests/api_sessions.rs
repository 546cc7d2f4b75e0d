//! `/v1/sessions` over HTTP: opening conversations, posting and reading lines, and refusals.

mod support;

use serde_json::{Value, json};
use support::TestApp;

fn ids(list: &Value) -> Vec<i64> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn a_direct_conversation_is_opened_listed_and_read() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot(
            "Echo",
            json!({"steps": [{"text": "ok"}], "on_exhausted": "repeat_last"}),
        )
        .await;

    let s = app
        .post(
            "/v1/sessions",
            json!({"kind": "direct", "bot_ids": [bot], "title": " Planning "}),
        )
        .await
        .expect(201);
    assert_eq!(s["kind"], "direct");
    assert_eq!(s["title"], "Planning");
    assert_eq!(s["bot_ids"], json!([bot]));
    assert_eq!(s["running"], false);
    assert!(s["paused"].is_null());
    let first = s["id"].as_i64().unwrap();
    // Without a title, the conversation is named after its Bot.
    let second = app
        .post("/v1/sessions", json!({"kind": "direct", "bot_ids": [bot]}))
        .await
        .expect(201);
    assert_eq!(second["title"], "Echo");
    let second = second["id"].as_i64().unwrap();
    let third = app.direct(bot).await;

    assert_eq!(
        app.get(&format!("/v1/sessions/{first}")).await.expect(200),
        s
    );
    assert_eq!(
        app.get(&format!("/v1/sessions/ses_{first}"))
            .await
            .expect(200)["id"],
        first
    );

    // Newest first, and limit bounds the list.
    assert_eq!(
        ids(&app.get("/v1/sessions").await.expect(200)),
        vec![third, second, first]
    );
    assert_eq!(
        ids(&app.get("/v1/sessions?limit=2").await.expect(200)),
        vec![third, second]
    );
    assert_eq!(
        ids(&app.get("/v1/sessions?limit=200").await.expect(200)).len(),
        3
    );
}

#[tokio::test]
async fn invalid_conversations_are_refused_with_422_and_write_nothing() {
    let app = TestApp::start().await;
    let a = app
        .scripted_bot("A", json!({"steps": [{"text": "a"}]}))
        .await;
    let b = app
        .scripted_bot("B", json!({"steps": [{"text": "b"}]}))
        .await;
    let gone = app
        .scripted_bot("Gone", json!({"steps": [{"text": "g"}]}))
        .await;
    app.delete(&format!("/v1/bots/{gone}")).await.expect(200);

    let cases = [
        (json!({"kind": "direct", "bot_ids": []}), "exactly one Bot"),
        (
            json!({"kind": "direct", "bot_ids": [a, b]}),
            "exactly one Bot",
        ),
        (
            json!({"kind": "direct", "bot_ids": [999999]}),
            "does not exist",
        ),
        (json!({"kind": "direct", "bot_ids": [gone]}), "archived"),
        (
            json!({"kind": "party", "bot_ids": [a]}),
            "unknown session kind",
        ),
        (json!({"kind": "group", "bot_ids": []}), "at least one"),
        (json!({"kind": "group", "bot_ids": [a, a]}), "named twice"),
        (json!({"kind": "group", "bot_ids": [a, gone]}), "archived"),
        (
            json!({"kind": "bot_direct", "bot_ids": [a, b]}),
            "opened by a Bot",
        ),
        (
            json!({"kind": "direct", "bot_ids": [a], "title": "x".repeat(201)}),
            "title",
        ),
        (
            json!({"kind": "direct", "bot_ids": [a], "mood": "sunny"}),
            "mood",
        ),
        (json!({"kind": "direct"}), "bot_ids"),
        (json!({"kind": "direct", "bot_ids": ["one"]}), "bot_ids"),
    ];
    for (body, needle) in cases {
        let r = app.post("/v1/sessions", body.clone()).await;
        r.expect_error(422, "invalid");
        assert!(
            r.message().contains(needle),
            "{body}: message {:?} should mention {needle:?}",
            r.message()
        );
    }
    app.post_raw("/v1/sessions", "{\"kind\": \"direct\", ")
        .await
        .expect_error(400, "bad_request");
    assert_eq!(
        app.get("/v1/sessions").await.expect(200),
        json!([]),
        "a refused request wrote a conversation"
    );
}

#[tokio::test]
async fn bad_list_limits_are_422_naming_the_parameter() {
    let app = TestApp::start().await;
    for q in ["limit=0", "limit=201", "limit=abc", "limit=-1", "limit="] {
        let r = app.get(&format!("/v1/sessions?{q}")).await;
        r.expect_error(422, "invalid");
        assert!(r.message().starts_with("limit:"), "{q}: {}", r.message());
    }
}

#[tokio::test]
async fn lines_are_posted_and_read_in_pages() {
    let app = TestApp::start().await;
    // A Bot whose model always fails quickly: its turns leave the person's lines alone.
    let bot = app
        .scripted_bot("Mute", json!({"steps": [{"error": {"kind": "auth", "message": "no"}}], "on_exhausted": "repeat_last"}))
        .await;
    let s = app.direct(bot).await;
    let first = app
        .post(
            &format!("/v1/sessions/{s}/messages"),
            json!({"body": "one"}),
        )
        .await
        .expect(201);
    assert_eq!(first["author"], "user");
    assert_eq!(first["body"], "one");
    assert_eq!(first["session_id"], s);
    assert_eq!(first["status"], "done");
    app.settle(s).await;
    let first_id = first["id"].as_i64().unwrap();
    let reply = app
        .post(
            &format!("/v1/sessions/{s}/messages"),
            json!({"body": "two", "parent_id": first_id}),
        )
        .await
        .expect(201);
    assert_eq!(reply["parent_id"], first_id);
    app.settle(s).await;

    let all = app
        .get(&format!("/v1/sessions/{s}/messages"))
        .await
        .expect(200);
    let users: Vec<&Value> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["author"] == "user")
        .collect();
    assert_eq!(users.len(), 2);
    assert_eq!(users[0]["body"], "one");
    assert_eq!(users[1]["body"], "two");

    let page = app
        .get(&format!("/v1/sessions/{s}/messages?limit=1"))
        .await
        .expect(200);
    assert_eq!(ids(&page), vec![first_id]);
    let after = app
        .get(&format!(
            "/v1/sessions/{s}/messages?after={first_id}&limit=1000"
        ))
        .await
        .expect(200);
    assert!(!ids(&after).contains(&first_id));
    assert!(ids(&after).contains(&reply["id"].as_i64().unwrap()));
}

#[tokio::test]
async fn bad_lines_and_bad_paging_are_refused() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot(
            "Quiet",
            json!({"steps": [{"text": "hm"}], "on_exhausted": "repeat_last"}),
        )
        .await;
    let s = app.direct(bot).await;
    let other = app.direct(bot).await;
    let foreign = app
        .post(
            &format!("/v1/sessions/{other}/messages"),
            json!({"body": "elsewhere"}),
        )
        .await
        .expect(201);
    app.settle(other).await;
    let path = format!("/v1/sessions/{s}/messages");

    for (body, needle) in [
        (json!({"body": ""}), "body"),
        (json!({"body": "  \n "}), "body"),
        (json!({}), "body"),
        (json!({"body": "x", "parent_id": 999999}), "parent_id"),
        (
            json!({"body": "x", "parent_id": foreign["id"]}),
            "another conversation",
        ),
        (json!({"body": "x", "urgent": true}), "urgent"),
    ] {
        let r = app.post(&path, body.clone()).await;
        r.expect_error(422, "invalid");
        assert!(
            r.message().contains(needle),
            "{body}: {:?} should mention {needle:?}",
            r.message()
        );
    }
    app.post_raw(&path, "{\"body\": ")
        .await
        .expect_error(400, "bad_request");
    assert_eq!(
        app.lines(s).await,
        Vec::<Value>::new(),
        "a refused line was written"
    );

    for q in ["limit=0", "limit=1001", "limit=x", "after=abc", "after=1.5"] {
        let r = app.get(&format!("{path}?{q}")).await;
        r.expect_error(422, "invalid");
        let param = q.split('=').next().unwrap();
        assert!(
            r.message().starts_with(&format!("{param}:")),
            "{q}: {}",
            r.message()
        );
    }
    app.get(&format!("{path}?limit=1000")).await.expect(200);
}

#[tokio::test]
async fn unknown_and_malformed_session_ids() {
    let app = TestApp::start().await;
    for r in [
        app.get("/v1/sessions/999999").await,
        app.get("/v1/sessions/999999/messages").await,
        app.post("/v1/sessions/999999/messages", json!({"body": "hi"}))
            .await,
    ] {
        r.expect_error(404, "not_found");
    }
    for r in [
        app.get("/v1/sessions/abc").await,
        app.get("/v1/sessions/abc/messages").await,
        app.post("/v1/sessions/bot_1/messages", json!({"body": "hi"}))
            .await,
    ] {
        r.expect_error(400, "bad_request");
        assert!(
            r.message().contains("not a valid SessionId"),
            "{}",
            r.message()
        );
    }
}

#[tokio::test]
async fn a_conversation_opened_on_a_folder_works_in_that_folder() {
    let app = TestApp::start().await;
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("README"), "my project\n").unwrap();
    let writer = app
        .scripted_bot(
            "Writer",
            json!({"steps": [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "README"}}]},
                {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "from the direct"}}]},
                {"text": "Wrote it."}
            ]}),
        )
        .await;
    let raw = format!("{}/../{}", project.path().display(), {
        project.path().file_name().unwrap().to_str().unwrap()
    });
    let s = app
        .post(
            "/v1/sessions",
            json!({"kind": "direct", "bot_ids": [writer], "workspace": raw}),
        )
        .await
        .expect(201);
    let folder = std::fs::canonicalize(project.path()).unwrap();
    assert_eq!(s["workspace"], folder.display().to_string());
    let id = s["id"].as_i64().unwrap();
    app.post(
        &format!("/v1/sessions/{id}/messages"),
        json!({"body": "take a note"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(id, |l| l["body"] == "Wrote it.")
        .await;
    assert_eq!(
        std::fs::read_to_string(folder.join("notes.txt")).unwrap(),
        "from the direct"
    );

    // A group's Bots share its folder, a Bot added later too.
    let first = app
        .scripted_bot("First", json!({"steps": [{"text": "here"}]}))
        .await;
    let late = app
        .scripted_bot(
            "Late",
            json!({"steps": [
                {"tool_calls": [{"name": "write_file", "arguments": {"path": "late.txt", "content": "late"}}]},
                {"text": "Late wrote."}
            ]}),
        )
        .await;
    let g = app
        .post(
            "/v1/sessions",
            json!({"kind": "group", "bot_ids": [first], "workspace": folder.display().to_string()}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    app.post(
        &format!("/v1/sessions/{g}/members"),
        json!({"bot_id": late}),
    )
    .await
    .expect(200);
    app.post(
        &format!("/v1/sessions/{g}/messages"),
        json!({"body": "@Late write your file"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(g, |l| l["body"] == "Late wrote.")
        .await;
    // A group's work on a job happens in the job's folder, under the conversation's.
    let job = std::fs::read_dir(folder.join("jobs"))
        .unwrap()
        .next()
        .expect("the job's folder is in the named folder")
        .unwrap()
        .path();
    assert_eq!(
        std::fs::read_to_string(job.join("late.txt")).unwrap(),
        "late"
    );
    let view = app.get(&format!("/v1/sessions/{g}")).await.expect(200);
    assert_eq!(view["workspace"], folder.display().to_string());

    // Without a folder, a conversation gets one of its own, which it names.
    let id = app.direct(writer).await;
    let own = app.get(&format!("/v1/sessions/{id}")).await.expect(200);
    let own = own["workspace"].as_str().unwrap();
    assert!(own.ends_with(&format!("workspaces/session-{id}")), "{own}");
    assert!(std::path::Path::new(own).is_dir());
}

#[tokio::test]
async fn a_folder_that_is_not_an_existing_absolute_directory_or_holds_the_daemon_data_is_refused() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("A", json!({"steps": [{"text": "a"}]}))
        .await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.txt");
    std::fs::write(&file, "x").unwrap();
    let cases = [
        (json!("projects/app"), "not an absolute path"),
        (json!(""), "is empty"),
        (
            json!(format!("{}/nope", dir.path().display())),
            "does not exist",
        ),
        (json!(file.display().to_string()), "not a folder"),
        (json!(7), "workspace"),
        // The folder holding the daemon's database and token.
        (
            json!(app.dir.path().display().to_string()),
            "daemon's own data",
        ),
    ];
    for (workspace, needle) in cases {
        let body = json!({"kind": "direct", "bot_ids": [bot], "workspace": workspace});
        let r = app.post("/v1/sessions", body.clone()).await;
        r.expect_error(422, "invalid");
        assert!(
            r.message().contains("workspace") && r.message().contains(needle),
            "{body}: {:?} should name the workspace and {needle:?}",
            r.message()
        );
    }
    assert_eq!(app.get("/v1/sessions").await.expect(200), json!([]));
}
