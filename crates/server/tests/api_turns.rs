//! `/v1/turns` over HTTP, and the whole round trip: a line in, the Bot's reply out, and what
//! its turn did (model calls, shell commands, files written); stopping a running turn.

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_engine::StreamNotice;

#[tokio::test]
async fn a_line_gets_a_reply_and_the_turn_shows_its_model_calls() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Greeter", json!({"steps": [{"text": "Hello, person."}]}))
        .await;
    let s = app.direct(bot).await;
    assert_eq!(
        app.get(&format!("/v1/turns?session_id={s}"))
            .await
            .expect(200),
        json!([])
    );

    let line = app
        .post(&format!("/v1/sessions/{s}/messages"), json!({"body": "hi"}))
        .await
        .expect(201);
    let reply = app.wait_for_bot_line(s, |l| l["status"] == "done").await;
    assert_eq!(reply["body"], "Hello, person.");
    assert_eq!(reply["bot_id"], bot);
    assert!(reply["id"].as_i64() > line["id"].as_i64());
    app.settle(s).await;
    assert_eq!(
        app.get(&format!("/v1/sessions/{s}")).await.expect(200)["running"],
        false
    );

    let turns = app
        .get(&format!("/v1/turns?session_id={s}"))
        .await
        .expect(200);
    let turns = turns.as_array().unwrap();
    assert_eq!(turns.len(), 1, "{turns:?}");
    let turn = &turns[0];
    assert_eq!(turn["status"], "completed");
    assert_eq!(turn["session_id"], s);
    assert_eq!(reply["turn_id"], turn["id"]);
    let calls = turn["model_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{turn}");
    assert_eq!(calls[0]["model"], "s");
    assert!(calls[0]["error"].is_null());
    assert!(calls[0]["output_tokens"].as_u64().unwrap() > 0);
    assert_eq!(
        calls[0]["cached_input_tokens"], 0,
        "the scripted provider has no prompt cache"
    );

    let id = turn["id"].as_i64().unwrap();
    assert_eq!(&app.get(&format!("/v1/turns/{id}")).await.expect(200), turn);
    assert_eq!(
        &app.get(&format!("/v1/turns/run_{id}")).await.expect(200),
        turn
    );
    assert_eq!(
        app.get(&format!("/v1/turns/{id}/commands"))
            .await
            .expect(200),
        json!([])
    );
}

#[tokio::test]
async fn a_shell_call_shows_as_a_command_of_its_turn() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot(
            "Runner",
            json!({"steps": [
                {"text": "Running it.", "tool_calls": [{"name": "shell", "arguments": {"command": "echo hi"}}]},
                {"text": "It said hi."}
            ]}),
        )
        .await;
    let s = app.direct(bot).await;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "run echo"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "It said hi.")
        .await;
    app.settle(s).await;

    let turns = app
        .get(&format!("/v1/turns?session_id={s}"))
        .await
        .expect(200);
    let turn = &turns[0];
    assert_eq!(turn["status"], "completed", "{turn}");
    assert_eq!(turn["tool_calls"], 1);
    assert_eq!(turn["model_calls"].as_array().unwrap().len(), 2);
    let commands = app
        .get(&format!("/v1/turns/{}/commands", turn["id"]))
        .await
        .expect(200);
    let commands = commands.as_array().unwrap();
    assert_eq!(commands.len(), 1, "{commands:?}");
    assert_eq!(commands[0]["command"], "echo hi");
    assert_eq!(commands[0]["exit_code"], 0);
    assert_eq!(commands[0]["output_tail"].as_str().unwrap().trim(), "hi");
    assert_eq!(commands[0]["timed_out"], false);
    assert_eq!(commands[0]["success"], true);
    assert_eq!(commands[0]["run_id"], turn["id"]);
    let took = turn["ended_at"].as_i64().unwrap() - turn["started_at"].as_i64().unwrap();
    assert_eq!(
        turn["reply_ms"], took,
        "the reply's time is the turn's length"
    );
}

#[tokio::test]
async fn stop_ends_the_running_turn_and_keeps_the_partial_reply() {
    let app = TestApp::start().await;
    let story = (1..=200)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let bot = app
        .scripted_bot(
            "Slow",
            json!({"steps": [{"text": story, "chunks": 200, "chunk_delay_ms": 50}]}),
        )
        .await;
    let s = app.direct(bot).await;

    // Nothing runs yet: 409 not_running, and nothing changes.
    app.post("/v1/turns/stop", json!({"session_id": s}))
        .await
        .expect_error(409, "not_running");

    let mut stream = app.state.collab.engine().subscribe_stream();
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "tell me a story"}),
    )
    .await
    .expect(201);
    support::wait_until("the session to show running", || async {
        (app.get(&format!("/v1/sessions/{s}")).await.expect(200)["running"] == true).then_some(())
    })
    .await;
    // Wait for the first streamed words, so there is a partial reply to keep.
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while !matches!(stream.recv().await, Ok(StreamNotice::TextDelta { .. })) {}
    })
    .await
    .expect("no text streamed within 20 s");

    let stopped = app
        .post("/v1/turns/stop", json!({"session_id": s}))
        .await
        .expect(200);
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    assert_eq!(stopped["session_id"], s);
    assert!(!stopped["ended_at"].is_null());
    app.settle(s).await;

    let partial = app
        .wait_for_bot_line(s, |l| l["status"] == "interrupted")
        .await;
    let body = partial["body"].as_str().unwrap();
    assert!(
        !body.is_empty() && body.len() < story.len(),
        "not a partial reply: {body:?}"
    );
    assert!(story.starts_with(body), "{body:?}");
    assert_eq!(partial["turn_id"], stopped["id"]);
    assert_eq!(
        app.get(&format!("/v1/sessions/{s}")).await.expect(200)["running"],
        false
    );
    let turns = app
        .get(&format!("/v1/turns?session_id={s}"))
        .await
        .expect(200);
    assert_eq!(turns[0]["status"], "stopped");

    // Stopping again: nothing is running.
    app.post("/v1/turns/stop", json!({"session_id": s}))
        .await
        .expect_error(409, "not_running");
}

#[tokio::test]
async fn the_files_a_turn_wrote_and_deleted_show_as_its_file_changes() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot(
            "Writer",
            json!({"steps": [
                {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes/a.txt", "content": "hi"}}]},
                {"tool_calls": [{"name": "delete_file", "arguments": {"path": "missing.txt"}}]},
                {"text": "Wrote it."}
            ]}),
        )
        .await;
    let s = app.direct(bot).await;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "write a note"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "Wrote it.").await;
    app.settle(s).await;
    let turns = app
        .get(&format!("/v1/turns?session_id={s}"))
        .await
        .expect(200);
    let files = app
        .get(&format!("/v1/turns/{}/files", turns[0]["id"]))
        .await
        .expect(200);
    let files = files.as_array().unwrap();
    assert_eq!(files.len(), 2, "{files:#?}");
    assert_eq!(files[0]["tool"], "write_file");
    assert_eq!(files[0]["outcome"], "succeeded");
    assert!(
        files[0]["summary"]
            .as_str()
            .unwrap()
            .contains("notes/a.txt"),
        "{files:#?}"
    );
    assert!(
        files[0]["detail"].as_str().unwrap().contains("notes/a.txt"),
        "{files:#?}"
    );
    assert_eq!(files[1]["tool"], "delete_file");
    assert_ne!(files[1]["outcome"], "succeeded", "no such file: {files:#?}");
    // A turn that wrote nothing has none.
    let bot = app
        .scripted_bot("Talker", json!({"steps": [{"text": "Just talk."}]}))
        .await;
    let s = app.direct(bot).await;
    app.post(&format!("/v1/sessions/{s}/messages"), json!({"body": "hi"}))
        .await
        .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "Just talk.")
        .await;
    let turns = app
        .get(&format!("/v1/turns?session_id={s}"))
        .await
        .expect(200);
    assert_eq!(
        app.get(&format!("/v1/turns/{}/files", turns[0]["id"]))
            .await
            .expect(200),
        json!([])
    );
}

#[tokio::test]
async fn turn_refusals() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Idle", json!({"steps": [{"text": "x"}]}))
        .await;
    let s = app.direct(bot).await;

    let r = app.get("/v1/turns").await;
    r.expect_error(422, "invalid");
    assert!(r.message().contains("session_id"), "{}", r.message());
    for q in [
        "session_id=abc",
        "session_id=",
        &format!("session_id={s}&limit=0"),
        &format!("session_id={s}&limit=201"),
    ] {
        let r = app.get(&format!("/v1/turns?{q}")).await;
        r.expect_error(422, "invalid");
        let param = if q.contains("limit") {
            "limit:"
        } else {
            "session_id:"
        };
        assert!(r.message().starts_with(param), "{q}: {}", r.message());
    }
    app.get("/v1/turns?session_id=999999")
        .await
        .expect_error(404, "not_found");

    app.get("/v1/turns/999999")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/turns/999999/commands")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/turns/999999/files")
        .await
        .expect_error(404, "not_found");
    for r in [
        app.get("/v1/turns/abc").await,
        app.get("/v1/turns/abc/commands").await,
        app.get("/v1/turns/abc/files").await,
    ] {
        r.expect_error(400, "bad_request");
        assert!(r.message().contains("not a valid RunId"), "{}", r.message());
    }

    app.post("/v1/turns/stop", json!({"session_id": 999999}))
        .await
        .expect_error(404, "not_found");
    app.post("/v1/turns/stop", json!({}))
        .await
        .expect_error(422, "invalid");
    app.post("/v1/turns/stop", json!({"session_id": "x"}))
        .await
        .expect_error(422, "invalid");
    app.post_raw("/v1/turns/stop", "{")
        .await
        .expect_error(400, "bad_request");
    let r: Value = app
        .post("/v1/turns/stop", json!({"session_id": s}))
        .await
        .expect(409);
    assert_eq!(r["error"]["code"], "not_running");
}

#[tokio::test]
async fn refused_drive_is_visible_in_session_view() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot(
            "Builder",
            json!({"steps": [{"tool_calls": [{"name": "shell",
                "arguments": {"command": "echo started > started.txt; exec sleep 1000"}}]}]}),
        )
        .await;
    let s = app.direct(bot).await;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "build"}),
    )
    .await
    .expect(201);
    let collab = &app.state.collab;
    let thread = collab.direct_thread(troupe_core::SessionId(s)).unwrap();
    let workspace = collab
        .store()
        .read(|tx| tx.thread(thread))
        .unwrap()
        .workspace;
    support::wait_until("the command runs", || async {
        std::path::Path::new(&workspace)
            .join("started.txt")
            .exists()
            .then_some(())
    })
    .await;
    app.post("/v1/turns/stop", json!({"session_id": s}))
        .await
        .expect(200);
    app.settle(s).await;

    // The view says what holds the Bot: the cut-off call, named.
    let view = app.get(&format!("/v1/sessions/{s}")).await.expect(200);
    let blocked = &view["blocked_by"];
    assert_eq!(blocked["reason"], "unknown_effect", "{view:#}");
    assert_eq!(blocked["call"]["tool"], "shell");
    assert!(
        blocked["call"]["summary"]
            .as_str()
            .unwrap()
            .contains("exec sleep 1000"),
        "{view:#}"
    );
    assert!(blocked["message"].as_str().unwrap().contains("unknown"));
    let workflow = app
        .get(&format!("/v1/sessions/{s}/workflow"))
        .await
        .expect(200);
    assert_eq!(workflow["blocked_by"], *blocked);

    // An automatic drive (a timer, say) once the latch is gone is refused, and the refusal is an
    // event of the conversation that names the call.
    collab.store().write(|tx| tx.clear_pause(thread)).unwrap();
    let out = collab
        .engine()
        .request_drive(thread, "timer", false)
        .await
        .unwrap();
    assert_eq!(
        out,
        troupe_engine::DriveOutcome::NotHandled {
            refusal: troupe_core::drive::DriveRefusal::UnknownEffect
        }
    );
    let events = collab
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), Some(thread), 10_000))
        .unwrap();
    let refused = events
        .iter()
        .rev()
        .find(|e| e.kind == "wake_refused")
        .map(|e| json!({"payload": e.payload}))
        .expect("a wake_refused event");
    assert_eq!(refused["payload"]["check"], "unknown_effect", "{refused:#}");
    assert_eq!(refused["payload"]["call"]["tool"], "shell");
    assert_eq!(
        app.get(&format!("/v1/sessions/{s}")).await.expect(200)["blocked_by"]["reason"],
        "unknown_effect"
    );
}
