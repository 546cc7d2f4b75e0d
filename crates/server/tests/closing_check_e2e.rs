//! End to end, as a real process: the closing check (issue 16 item 5, C §14) through
//! `troupe serve --manual-clock` against a fake OpenAI-compatible server. In her work on a job
//! Ada writes report.md and replies that the tests pass, having run no command: the reply has
//! gone out, and the check sends it back once with a note (CC-3); her next reply says the same
//! and passes, since a segment is checked once (CC-4). No model call is made for the check.

mod daemon_support;
mod e2e_rig;

use daemon_support::*;
use e2e_rig::*;
use serde_json::json;

const LINE: &str = "Ada, write the report";
const CLAIM: &str = "Wrote report.md; all tests pass.";
const AGAIN: &str = "report.md is written and the tests pass.";
/// How the note starts (troupe_core::closing_check::decide, for a reply).
const NOTE: &str = "Closing check (a reminder, once per turn)";
/// CC-3's point in the note.
const NO_COMMAND: &str = "this turn ran no command";

/// S-CC-3 end to end: "tests pass" with no command run is sent back once per segment.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s_cc_3_tests_pass_with_no_command_is_sent_back_once() {
    let setup = Setup::new(|req| {
        ada(req, LINE, &|r| {
            let fresh = fresh_user(r);
            Some(if fresh.contains(NOTE) {
                text(AGAIN)
            } else {
                match after_tool(r).as_deref() {
                    None if fresh.contains(LINE) => tool_call(
                        "write_file",
                        json!({"path": "report.md", "content": "# Report\n"}),
                    ),
                    Some("write_file") => text(CLAIM),
                    _ => text(UNEXPECTED),
                }
            })
        })
    })
    .await;
    let (_d, api) = setup.start();
    let fake = &setup.fake;
    let bot = ada_bot(&api, fake).await;
    let s = api.direct(bot).await;
    api.say(s, LINE).await;
    let item = job_item_in(&api, bot, "idle").await;
    let plan = item["plan_id"].clone();

    // Sent back once, for CC-3, as a note in Ada's loop, not in the conversation.
    let noted: Vec<_> = fake
        .job_calls()
        .into_iter()
        .filter(|r| fresh_user(r).contains(NOTE))
        .collect();
    assert_eq!(noted.len(), 1, "{}", setup.rig.log());
    assert!(
        fresh_user(&noted[0]).contains(NO_COMMAND),
        "{:#?}",
        noted[0]
    );
    let log = work_log(&api, &plan).await;
    let sent: Vec<_> = log
        .iter()
        .filter(|r| r["kind"] == "closing_check_sent_back")
        .collect();
    assert_eq!(sent.len(), 1, "{log:#?}");
    assert_eq!(sent[0]["payload"]["rules"], json!(["claimed_run"]));
    assert_eq!(sent[0]["payload"]["via"], "reply");
    assert_eq!(sent[0]["work_item_id"], item["id"]);

    // Both replies went out as written; the note is no line, and nothing else was said.
    let said: Vec<String> = api
        .lines(s)
        .await
        .iter()
        .filter(|l| l["author"] == "bot")
        .map(|l| l["body"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(said.contains(&CLAIM.to_string()), "{said:?}");
    assert!(said.contains(&AGAIN.to_string()), "{said:?}");
    assert!(
        said.iter().all(|b| !b.contains(NOTE) && b != UNEXPECTED),
        "{said:?}"
    );
    assert_eq!(
        fake.job_calls().len(),
        3,
        "write, claim, the answer to the note"
    );
    // The check called no model: every request was Ada's or a reading of the person's line.
    let others: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| bot_of(r).is_none() && readings(r).is_none())
        .collect();
    assert!(others.is_empty(), "{others:#?}");
}
