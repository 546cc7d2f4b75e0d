//! End to end, as a real process: the scribe and the requirements ledger (issue 16 items 7–8,
//! C §6–7) through `troupe serve --manual-clock` against a fake OpenAI-compatible server. In a
//! direct running the video engine (the scribe on), the person's opening line is read by the
//! scribe, which adds an entry; a line a minute later, filed to the job by Ada's `work_on`,
//! changes it, the change waiting for the person; their Confirm puts it in force, and a press on the version they saw before is
//! `409 requirement_changed`.

mod daemon_support;
mod e2e_rig;

use daemon_support::*;
use e2e_rig::*;
use serde_json::{Value, json};

const FIRST: &str = "Ada, cut the trailer in warm colours";
const SECOND: &str = "Ada, make it cold colours instead";

/// The scribe's answer: an add for the opening line, a change of the entry it lists for the
/// second, nothing otherwise.
fn scribe(req: &Value) -> String {
    let prompt = messages(req)
        .iter()
        .map(content)
        .find(|c| c.starts_with("troupe-scribe"))
        .unwrap_or_default();
    let line = prompt
        .rsplit_once("The user's line: ")
        .map_or("", |(_, l)| l.trim());
    let patch = if line.contains("warm colours") {
        json!({"items": [{"op": "add", "quote": "warm colours", "restatement": "warm colours",
                          "category": "colour", "nature": "choice_of_look", "polarity": "must"}]})
    } else if line.contains("cold colours") {
        let id = prompt.lines().find_map(|l| {
            l.strip_prefix("- R-")?
                .split_once(' ')
                .map(|(n, _)| n.to_string())
        });
        match id {
            Some(n) => json!({"items": [{"op": "change", "id": format!("R-{n}"),
                              "quote": "cold colours", "restatement": "cold colours",
                              "category": "colour"}]}),
            None => json!({"items": []}),
        }
    } else {
        json!({"items": []})
    };
    text(&patch.to_string())
}

fn script(req: &Value) -> Option<String> {
    if tagged(req, "troupe-scribe") {
        return Some(scribe(req));
    }
    // The second line is about the job the first opened.
    if let Some((line, jobs)) = filing_of(req)
        && line.contains(SECOND)
        && let Some((id, _)) = jobs.first()
    {
        return Some(text(&json!({"belongs": "jobs", "jobs": [id]}).to_string()));
    }
    // At her desk with the second line, Ada works on the job her desk lists (which files it).
    if bot_of(req).as_deref() == Some("Ada")
        && after_tool(req).is_none()
        && fresh_user(req).contains(SECOND)
        && let Some(plan) = listed_job(&system(req))
    {
        return Some(tool_call("work_on", json!({"plan": plan})));
    }
    ada(req, FIRST, &|_| Some(text(ON_IT)))
}

/// The job a desk lists first: `work_on({"plan":"plan_3"})`.
fn listed_job(desk: &str) -> Option<String> {
    let (_, rest) = desk.split_once(r#"work_on({"plan":""#)?;
    Some(rest.split_once('"')?.0.to_string())
}

/// Every entry of the job's "What you asked for", whatever its group.
async fn entries(api: &Api, plan: &Value) -> Vec<Value> {
    let board = api.get(&format!("/v1/tasks/{plan}/requirements")).await;
    board["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["entries"].as_array().unwrap().clone())
        .collect()
}

async fn entry_quoting(api: &Api, plan: &Value, quote: &str) -> Value {
    wait_until(&format!("an entry quoting {quote:?}"), || async {
        entries(api, plan)
            .await
            .into_iter()
            .find(|e| e["quote"] == quote)
    })
    .await
}

/// S-SC end to end: scribe add, change, confirm, and a stale press refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s_sc_scribe_adds_then_changes_and_the_confirm_of_a_stale_version_is_409() {
    let setup = Setup::new(script).await;
    let (_d, api) = setup.start();
    let bot = ada_bot(&api, &setup.fake).await;
    let s = api.direct(bot).await;
    api.put(
        &format!("/v1/sessions/{s}/engine"),
        json!({"engine": "video"}),
    )
    .await;
    api.say(s, FIRST).await;
    let item = job_item_in(&api, bot, "idle").await;
    let plan = item["plan_id"].clone();

    let warm = entry_quoting(&api, &plan, "warm colours").await;
    assert_eq!(warm["state"], "in_force", "{warm:#}");
    assert_eq!(warm["category"], "colour", "{warm:#}");

    // Said a minute later: a change replaces only words said before its own (RL-3).
    advance(&api, MINUTE).await;
    api.say(s, SECOND).await;
    let cold = entry_quoting(&api, &plan, "cold colours").await;
    assert_eq!(cold["state"], "to_confirm", "{cold:#}");
    assert_eq!(cold["replaces_id"], warm["id"], "{cold:#}");
    assert!(
        cold["actions"]
            .as_array()
            .unwrap()
            .contains(&json!("confirm")),
        "{cold:#}"
    );
    let still = entry_quoting(&api, &plan, "warm colours").await;
    assert_eq!(
        still["state"], "in_force",
        "the old stays until the person confirms"
    );

    // The person confirms the version they saw; a second press on it is stale.
    let path = format!("/v1/requirements/{}/action", cold["id"]);
    let seen = cold["version"].clone();
    let (status, confirmed) = api
        .post_status(&path, json!({"action": "confirm", "version": seen}))
        .await;
    assert_eq!(status.as_u16(), 200, "{confirmed:#}");
    assert_eq!(confirmed["state"], "in_force", "{confirmed:#}");
    assert_ne!(confirmed["version"], seen);
    let (status, stale) = api
        .post_status(&path, json!({"action": "confirm", "version": seen}))
        .await;
    assert_eq!(status.as_u16(), 409, "{stale:#}");
    assert_eq!(stale["error"]["code"], "requirement_changed", "{stale:#}");
    let after = entries(&api, &plan).await;
    assert!(
        after
            .iter()
            .all(|e| e["quote"] != "warm colours" || e["state"] != "in_force"),
        "the confirmed change replaced the old entry: {after:#?}"
    );

    // Each line was read by the scribe once, its raw answer in the work log.
    let answers: Vec<Value> = work_log(&api, &plan)
        .await
        .into_iter()
        .filter(|r| r["kind"] == "scribe_answer")
        .collect();
    assert_eq!(answers.len(), 2, "{answers:#?}\n{}", setup.rig.log());
}
