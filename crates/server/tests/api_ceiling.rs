//! The ceiling card answered over `POST /v1/messages/:id/control` (B §7.3): the user sends
//! ticket #01 back three times in a row, the card shows no Relax (`422 action_not_offered`,
//! nothing written), an answer lifts the block, a second answer is `409 card_closed`, and an
//! unknown line is 404.

mod support;

use serde_json::json;
use support::{TestApp, wait_until};
use troupe_collab::OpenPlan;
use troupe_collab::submissions::handover::{HandOver, Refusal, record};
use troupe_collab::submissions::{Hooks, SubmissionPass};
use troupe_core::conversation::Author;
use troupe_core::plan::RevisionCause;
use troupe_core::submission::{SubmissionOrigin, SubmissionState};
use troupe_core::thread::EndpointSpec;
use troupe_core::ticket::{AppPass, ticket_folder_name};
use troupe_core::{BotId, PlanId, SessionId, SessionMessageId, TicketId};
use troupe_store::{FilingSource, Layout, LayoutItem, NewFiling, NewLine, SubmittedFile};

struct Job {
    s: SessionId,
    plan: PlanId,
    maker: BotId,
    ticket: TicketId,
}

/// A direct with the Maker, a job opened on a line of it, two tickets of the Maker's with no
/// reviewer (two, so no one-go approval), and a reader that hears fault in every line.
async fn job(app: &TestApp) -> Job {
    let maker = app
        .scripted_bot(
            "Maker",
            json!({"steps": [{"text": "On it."}], "on_exhausted": "repeat_last"}),
        )
        .await;
    let s = app.direct(maker).await;
    let line = app
        .post(
            &format!("/v1/sessions/{s}/messages"),
            json!({"body": "cut the video"}),
        )
        .await
        .expect(201);
    let line = SessionMessageId(line["id"].as_i64().unwrap());
    let collab = &app.state.collab;
    let plan = collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: Some(line),
            title: None,
            cause: RevisionCause::Message(line),
        })
        .unwrap();
    let folder = plan.folder.clone();
    let item = |title: &str| LayoutItem {
        title: title.into(),
        owner_bot_id: Some(BotId(maker)),
        ..LayoutItem::default()
    };
    let laid = collab
        .store()
        .write(|tx| {
            tx.lay_out(
                plan.id,
                &Layout {
                    items: vec![item("Cut"), item("Poster")],
                    drops: Vec::new(),
                },
                |n, title| format!("{folder}/{}", ticket_folder_name(n as u32, title)),
            )
        })
        .unwrap();
    let reader = app.script(
        "reader",
        json!({"steps": [{"text": json!({"control": "neither", "only_control": false,
            "status_question": false, "objections": ["还是不对"], "let_through": [],
            "belongs": "no_telling"}).to_string()}], "on_exhausted": "repeat_last"}),
    );
    collab
        .set_role(
            "reading",
            EndpointSpec {
                kind: "scripted".into(),
                base_url: None,
                model: "s".into(),
                api_key_env: None,
                script: Some(reader),
                takes_pictures: false,
                thinking_levels: Vec::new(),
                max_output_tokens: None,
            },
        )
        .unwrap();
    Job {
        s: SessionId(s),
        plan: plan.id,
        maker: BotId(maker),
        ticket: laid.tickets[0].id,
    }
}

/// Hand #01 over as `submit` does and settle it: with no check and no reviewer it waits on
/// the user's word.
async fn hand_over(app: &TestApp, j: &Job, n: usize) -> Result<i64, Refusal> {
    let hooks = Hooks::default();
    let h = HandOver {
        ticket: j.ticket,
        origin: SubmissionOrigin::Explicit,
        producer: j.maker,
        run: None,
        work_item: None,
        files: vec![SubmittedFile {
            path: "01-Cut/cut.mp4".into(),
            sha256: format!("{n:064x}"),
            size: 1,
        }],
        content: None,
        parts: Vec::new(),
        note: String::new(),
        claims: Vec::new(),
        post_in: None,
    };
    let store = app.state.collab.store();
    let sub = store.write(|tx| record(tx, &hooks, &h)).unwrap()?;
    SubmissionPass::new(hooks)
        .run(store, sub.id, AppPass::Checks)
        .await
        .unwrap();
    Ok(sub.id.0)
}

/// The user finds fault with the hand-over, replying to its line.
async fn send_back(app: &TestApp, j: &Job, sub: i64) {
    let store = app.state.collab.store();
    let handed = store
        .write(|tx| {
            let line = tx.insert_line(&NewLine {
                bot_id: Some(j.maker),
                ..NewLine::plain(j.s, Author::Bot, format!("Handed over S{sub}"))
            })?;
            tx.file_line(&NewFiling {
                message_id: line.id,
                plan_id: j.plan,
                ticket_id: Some(j.ticket.0),
                part_id: None,
                source: FilingSource::Path,
                filed_by: "submit".into(),
                locked: true,
                primary: true,
            })?;
            Ok(line.id)
        })
        .unwrap();
    app.post(
        &format!("/v1/sessions/{}/messages", j.s.0),
        json!({"body": "还是不对", "parent_id": handed.0}),
    )
    .await
    .expect(201);
    wait_until("the hand-over sent back", || async {
        let state = store
            .read(|tx| tx.submission(troupe_core::SubmissionId(sub)))
            .unwrap()
            .state;
        (state == SubmissionState::Rework).then_some(())
    })
    .await;
}

#[tokio::test]
async fn api_ceiling_card_refuses_relax_on_case_b_and_closes_once_answered() {
    let app = TestApp::start().await;
    let j = job(&app).await;
    for n in 1..=3 {
        let sub = hand_over(&app, &j, n).await.unwrap();
        send_back(&app, &j, sub).await;
    }
    assert_eq!(
        hand_over(&app, &j, 4).await.unwrap_err().code,
        "ceiling_reached"
    );
    let card = app
        .lines(j.s.0)
        .await
        .into_iter()
        .find(|l| l["control"]["kind"] == "ceiling")
        .expect("the ceiling card in the job's conversation");
    let id = card["id"].as_i64().unwrap();
    assert!(
        card["body"]
            .as_str()
            .unwrap()
            .contains("you sent it back 3 times in a row"),
        "{card}"
    );
    let path = format!("/v1/messages/{id}/control");
    let press = |action: &str| app.post(&path, json!({"action": action}));

    press("relax").await.expect_error(422, "action_not_offered");
    press("jump").await.expect_error(422, "action_not_offered");
    let still = app.get(&format!("/v1/messages/{id}")).await.expect(200);
    assert_eq!(
        still["control"]["offer"],
        json!(["another_way", "change_plan", "take_as_is", "carry_on"]),
        "a refused press writes nothing"
    );

    let done = press("another_way").await.expect(200);
    assert_eq!(done["ceiling"]["action"], "another_way");
    assert_eq!(done["ceiling"]["ticket_approved"], false);
    let after = app.get(&format!("/v1/messages/{id}")).await.expect(200);
    assert_eq!(after["control"]["offer"], json!([]));
    assert_eq!(after["control"]["answer"], "another_way");
    press("carry_on").await.expect_error(409, "card_closed");
    hand_over(&app, &j, 5)
        .await
        .expect("handed over once the card is answered");

    app.post("/v1/messages/987654/control", json!({"action": "carry_on"}))
        .await
        .expect_error(404, "not_found");
}
