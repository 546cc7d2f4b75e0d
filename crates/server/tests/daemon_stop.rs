//! As a new user meets it, through a real `troupe serve` and a fake OpenAI-compatible server:
//! a line runs a long command, Stop ends the turn (a hold on the Bot's work there), and the
//! person's next line lifts the hold and still gets an answer (a stopped call's unknown
//! outcome holds back only what would resume by itself).
//!
//! Runs `target/debug/troupe` (or `$TROUPE_BIN`); see daemon.rs for how it is found.

mod daemon_support;

use daemon_support::*;
use serde_json::{Value, json};

/// A "slow" line starts a command that hangs; any other line gets a reply naming whether the
/// context told the model of the cut-off call.
fn answer(req: &Value) -> String {
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let users: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect();
    let latest_person = users
        .iter()
        .rev()
        .find(|u| !u.contains("Runtime note"))
        .cloned()
        .unwrap_or_default();
    let body = if latest_person.contains("slow") && messages.last().unwrap()["role"] == "user" {
        shell_call("echo started > started.txt; exec sleep 1000")
    } else if users.iter().any(|u| u.contains("Runtime note")) {
        text("back: the slow command was cut off")
    } else {
        text("back")
    };
    body + "data: [DONE]\n\n"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn person_line_after_stop_starts_a_turn() {
    let bin = troupe_binary();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let model = serve_fake_model(answer).await;
    let config = tmp.path().join("config.toml");
    write_fake_config(&config, &model, &["default"]);
    let daemon = Daemon::start(&bin, &data, &config, &tmp.path().join("daemon.log"));
    let client = daemon.client();

    let bot = post(&client, daemon.url("/v1/bots"), json!({"name": "Runner"})).await;
    let session = post(
        &client,
        daemon.url("/v1/sessions"),
        json!({"kind": "direct", "bot_ids": [bot["id"]]}),
    )
    .await;
    let sid = session["id"].as_i64().unwrap();
    let workspace = data.join(format!("workspaces/session-{sid}"));
    let lines_url = daemon.url(&format!("/v1/sessions/{sid}/messages?limit=1000"));

    post(
        &client,
        daemon.url(&format!("/v1/sessions/{sid}/messages")),
        json!({"body": "run the slow build"}),
    )
    .await;
    wait_until("the long command runs", || async {
        workspace.join("started.txt").exists().then_some(())
    })
    .await;
    let stopped = post(
        &client,
        daemon.url("/v1/turns/stop"),
        json!({"session_id": sid}),
    )
    .await;
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    // The Stop is a hold on the Bot's work, not the pause latch; once the command's group is
    // ended, the cut-off call is what the view names.
    let view = wait_until("the stopped turn to let go", || async {
        let view = get(&client, daemon.url(&format!("/v1/sessions/{sid}"))).await;
        (view["running"] == false).then_some(view)
    })
    .await;
    assert!(view["paused"].is_null(), "{view:#}");
    assert_eq!(view["blocked_by"]["reason"], "unknown_effect", "{view:#}");
    let hold = get(
        &client,
        daemon.url(&format!("/v1/holds/{}", stopped["hold_id"])),
    )
    .await;
    assert_eq!(hold["status"], "in_force", "{hold:#}");

    post(
        &client,
        daemon.url(&format!("/v1/sessions/{sid}/messages")),
        json!({"body": "are you still there?"}),
    )
    .await;
    let reply = wait_until("the Bot answers the next line", || async {
        let lines = get(&client, lines_url.clone()).await;
        lines
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["author"] == "bot" && l["body"].as_str().unwrap_or("").starts_with("back"))
            .cloned()
    })
    .await;
    assert_eq!(
        reply["body"], "back: the slow command was cut off",
        "the model was told of the cut-off call"
    );
    let view = get(&client, daemon.url(&format!("/v1/sessions/{sid}"))).await;
    assert!(view["blocked_by"].is_null(), "{view:#}");
    assert!(view["paused"].is_null(), "{view:#}");
    let turns = get(&client, daemon.url(&format!("/v1/turns?session_id={sid}"))).await;
    assert_eq!(turns[1]["status"], "stopped", "{turns:#}");
    let hold = get(
        &client,
        daemon.url(&format!("/v1/holds/{}", stopped["hold_id"])),
    )
    .await;
    assert_eq!(
        hold["status"], "lifted",
        "the person's line lifted the stop: {hold:#}"
    );
}
