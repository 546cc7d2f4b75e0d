//! A restart cuts off two members' turns in a group: each member's work pauses on its own (the
//! member carries the pause, not the conversation), and Continue and Abandon name the member —
//! one is picked up and answers, the other is ended and says nothing. A real `troupe serve`,
//! killed with SIGKILL and started again on the same data, and a fake OpenAI-compatible model.

mod daemon_support;

use daemon_support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

const LONG_JOB: &str = "@Alpha @Beta each of you, take on the long job";
const PICKED_UP: &str = "Picked up where I was.";
const NEITHER: &str = r#"{"control":"neither"}"#;
const BOT_LINE: &str = r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":false,"asks_ok_only":false}"#;

/// Each Bot's first model call hangs (the restart cuts it off); later ones answer at once.
async fn fake() -> Arc<FakeModel> {
    let hung: Mutex<HashSet<String>> = Mutex::new(HashSet::new());
    FakeModel::serve(move |req| match bot_of(req) {
        Some(bot) if hung.lock().unwrap().insert(bot.clone()) => Reply::Hang,
        Some(_) => Reply::Now(text(PICKED_UP)),
        None if tagged(req, "troupe-reader:bot") => Reply::Now(text(BOT_LINE)),
        None => Reply::Now(text(NEITHER)),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_members_cut_off_by_a_restart_are_continued_or_abandoned_each_on_its_own() {
    let fake = fake().await;
    let rig = Rig::new(|p| write_config(p, &[("fake", &fake.url)], &[("default", "fake")], ""));
    let (mut daemon, api) = rig.start();
    let alpha = api.bot("Alpha").await;
    let beta = api.bot("Beta").await;
    let g = api.group(&[alpha, beta], "Team").await;
    api.say(g, LONG_JOB).await;
    api.running_turn(g, alpha).await;
    api.running_turn(g, beta).await;

    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    let (_daemon, api) = rig.start();

    // Each member carries its own pause; the group's own field describes no single Bot.
    let view = wait_until("both members paused after the restart", || async {
        let v = api.get(&format!("/v1/sessions/{g}")).await;
        let both = [alpha, beta]
            .iter()
            .all(|b| member(&v, *b)["paused"]["reason"] == "interrupted");
        both.then_some(v)
    })
    .await;
    assert!(view["paused"].is_null(), "{view:#}");

    // Whose work must be said in a group; a Bot that is not here is refused.
    let (status, body) = api
        .post_status(&format!("/v1/sessions/{g}/continue"), json!({}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body:#}");
    assert!(body.to_string().contains("bot_id"), "{body:#}");
    let (status, body) = api
        .post_status(&format!("/v1/sessions/{g}/abandon?bot_id=999"), json!({}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body:#}");
    assert!(body.to_string().contains("not a member"), "{body:#}");

    // Continue Alpha: its work is picked up and answers; Beta stays paused meanwhile.
    let report = api
        .post(
            &format!("/v1/sessions/{g}/continue?bot_id={alpha}"),
            json!({}),
        )
        .await;
    assert_eq!(report["latch_cleared"], true, "{report:#}");
    api.line_by(g, alpha, PICKED_UP).await;
    let view = api.get(&format!("/v1/sessions/{g}")).await;
    assert!(member(&view, alpha)["paused"].is_null(), "{view:#}");
    assert_eq!(member(&view, beta)["paused"]["reason"], "interrupted");

    // Abandon Beta: its pause is lifted and its work is not picked up.
    let report = api
        .post(
            &format!("/v1/sessions/{g}/abandon?bot_id={beta}"),
            json!({}),
        )
        .await;
    assert_eq!(report["latch_cleared"], true, "{report:#}");
    let view = api.get(&format!("/v1/sessions/{g}")).await;
    assert!(member(&view, beta)["paused"].is_null(), "{view:#}");
    let turns = api.turns(g).await;
    let beta_turns: Vec<&Value> = turns.iter().filter(|t| t["bot_id"] == beta).collect();
    assert_eq!(beta_turns.len(), 1, "{turns:#?}");
    assert_eq!(beta_turns[0]["status"], "interrupted", "{turns:#?}");
    assert_eq!(fake.of("Beta").len(), 1, "Beta's cut-off call only");
    let lines = api.lines(g).await;
    assert!(
        !lines.iter().any(|l| l["bot_id"] == beta),
        "Beta said nothing: {lines:#?}"
    );
}
