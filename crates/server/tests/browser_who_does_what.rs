//! Real-browser test of who does what in a job's view (digest B §1.6, ADR 0086; S-T6): a group
//! job whose ticket Writer owns and Editor works. The ticket's row reads "Actually: Editor";
//! "Who does what in this job" marks Writer as owning a ticket and running nothing; the picked
//! ticket says who actually ran it, and the fifth turn Editor runs while the page is open (seen
//! over the live events alone) brings "Make Editor the reviewer", which makes it the reviewer
//! on a press — with no line in the conversation. A failed check makes "1 need you" in the
//! title row, whose press lets the picked ticket go and shows the whole job again.
//!
//! Needs Debian's `chromium` and `chromium-driver`; without them the test prints a notice and
//! returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_who_does_what
//! ```
//!
//! The whole job's view, before a ticket is picked, goes to `target/browser-who-does-what.png`.

mod browser_support;
mod support;

use anyhow::{Result, bail};
use browser_support::in_process::finish;
use browser_support::page::{SHORT, elements, press, save_screenshot, wait_text};
use browser_support::{browser_in, poll};
use fantoccini::Client;
use serde_json::json;
use support::{TestApp, wait_until};
use troupe_core::inbox::Delivery;
use troupe_core::submission::CheckSource;
use troupe_core::thread::Interaction;
use troupe_core::{PlanId, SessionId, ThreadId, TicketId};
use troupe_store::{CheckKind, NewCheck, NewCheckRun, RunOutcome};

struct Setup {
    session: i64,
    plan: PlanId,
    ticket: TicketId,
    editor: i64,
    /// Editor's work on the ticket.
    thread: ThreadId,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn who_does_what() {
    let app = TestApp::start().await;
    let setup = set_up(&app).await;
    let Some((driver, client)) = browser_in(app.dir.path()).await else {
        return;
    };
    let result = scenario(&client, &app, &setup).await;
    finish(result, driver, client, "browser-who-does-what-failure.png").await;
}

/// The group, its job, Writer's ticket and four turns of Editor's on it.
async fn set_up(app: &TestApp) -> Setup {
    let writer = app
        .scripted_bot("Writer", json!({"steps": [{"text": "on it"}]}))
        .await;
    let editor = app
        .scripted_bot(
            "Editor",
            json!({"steps": [{"text": "edited"}], "on_exhausted": "repeat_last"}),
        )
        .await;
    let session = app
        .post(
            "/v1/sessions",
            json!({"kind": "group", "bot_ids": [writer, editor], "title": "Brochure"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let plan = app.open_job(session, "Brochure");
    let ticket = app
        .post(
            &format!("/v1/tasks/{}/tickets", plan.0),
            json!({"title": "Copy", "owner_bot_id": writer}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let ticket = TicketId(ticket);
    let thread = app
        .state
        .collab
        .store()
        .write(|tx| {
            let record = tx.plan(plan)?;
            let folder = std::path::Path::new(&record.folder).join("01-Copy");
            std::fs::create_dir_all(&folder).unwrap();
            let thread = tx.create_thread(&troupe_store::NewThread {
                workspace_root: None,
                parent_id: None,
                title: "Brochure #01 Copy".into(),
                agent: troupe_collab::bot_binding(&tx.bot(troupe_core::BotId(editor))?),
                workspace: folder.display().to_string(),
                interaction: Interaction::Interactive,
            })?;
            tx.create_ticket_item(
                troupe_core::BotId(editor),
                plan,
                ticket,
                thread.id,
                Some(SessionId(session)),
            )?;
            Ok(thread.id)
        })
        .unwrap();
    // A check of the ticket whose latest run failed: one thing that needs the person.
    app.state
        .collab
        .store()
        .write(|tx| {
            let mut c = NewCheck::new(plan, CheckKind::FileExists, CheckSource::User);
            c.path = Some("copy.md".into());
            c.ticket_id = Some(ticket);
            let c = tx.create_check(&c)?;
            tx.record_check_run(&NewCheckRun {
                check_id: c.id,
                submission_id: None,
                outcome: RunOutcome::Failed,
                detail: "copy.md is missing".into(),
                output_tail: String::new(),
                measured: None,
                for_reference: false,
                started_at: 1,
            })
        })
        .unwrap();
    let s = Setup {
        session,
        plan,
        ticket,
        editor,
        thread,
    };
    for _ in 0..4 {
        turn(app, &s).await;
    }
    // Through the API: four turns are not yet enough for an offer.
    let listed = app
        .get(&format!("/v1/tasks/{}/tickets", plan.0))
        .await
        .expect(200);
    let t = &listed["tickets"][0];
    assert_eq!(t["ran_by"], json!([{"bot_id": editor, "turns": 4}]));
    assert_eq!(t["ran_line"], "Actually: Editor");
    assert_eq!(t["reviewer_suggestion"], json!(null));
    assert_eq!(listed["need_you"]["count"], 1);
    assert_eq!(listed["need_you"]["failed_checks"], 1);
    s
}

/// One more turn of Editor's on the ticket, waited for through the store.
async fn turn(app: &TestApp, s: &Setup) {
    let store = app.state.collab.store().clone();
    let ended = || {
        store
            .read(|tx| tx.runs_for_thread(s.thread, 100))
            .unwrap()
            .iter()
            .filter(|r| r.ended_at.is_some())
            .count()
    };
    let before = ended();
    app.state
        .collab
        .engine()
        .deliver(s.thread, Delivery::user_task("Go over the copy again."))
        .await
        .unwrap();
    wait_until("Editor's turn to end", || async {
        (ended() > before).then_some(())
    })
    .await;
    app.state.collab.engine().wait_idle(s.thread).await;
}

async fn scenario(c: &Client, app: &TestApp, s: &Setup) -> Result<()> {
    c.goto(&app.url(&format!("/#session={}", s.session)))
        .await?;
    press(c, "#work-toggle").await?;
    press(
        c,
        &format!("#jobs-list .job-open[data-plan-id=\"{}\"]", s.plan.0),
    )
    .await?;

    // The row says who ran it; with nothing picked, the whole job's shares show.
    wait_text(c, "#ticket-list .ticket-ran", "Actually: Editor").await?;
    wait_text(c, "#job-shares", "Who does what in this job").await?;
    wait_text(c, "#job-shares .job-share.ran-nothing", "Writer").await?;
    wait_text(c, "#job-shares .ran-nothing", "owns 1 ticket").await?;
    wait_text(
        c,
        "#job-shares .job-share",
        "ran 4 turns (4 on others' tickets)",
    )
    .await?;
    save_screenshot(c, "browser-who-does-what.png").await?;

    // Picked: who actually ran it; the whole job's shares give way to the ticket's inspector.
    press(c, "#ticket-list .ticket-head").await?;
    wait_text(c, ".ticket-ran-by", "Who actually ran it: Editor (4 turns)").await?;
    poll("the job's shares to give way", SHORT, || async {
        Ok(elements(c, "#job-shares")
            .await?
            .iter()
            .all(|e| !e.visible)
            .then_some(()))
    })
    .await?;
    if elements(c, ".make-reviewer")
        .await?
        .iter()
        .any(|e| e.visible)
    {
        bail!("four turns should not offer a reviewer");
    }

    // The fifth turn, while the page is open: the offer comes over the live events.
    turn(app, s).await;
    wait_text(c, ".ticket-ran-by", "Editor (5 turns)").await?;
    wait_text(c, ".make-reviewer", "Make Editor the reviewer").await?;
    press(c, ".make-reviewer").await?;
    let ticket = format!("/v1/tickets/{}", s.ticket.0);
    wait_until("Editor to be the reviewer", || async {
        let t = app.get(&ticket).await.expect(200);
        (t["reviewer_bot_id"] == json!(s.editor)).then_some(t)
    })
    .await;
    poll("the offer and the note to go", SHORT, || async {
        let offer = elements(c, ".make-reviewer").await?;
        let note = elements(c, "#ticket-list .ticket-ran").await?;
        Ok((offer.is_empty() && note.is_empty()).then_some(()))
    })
    .await?;
    // "1 need you" (the failed check) lets the picked ticket go: the whole job shows again.
    wait_text(c, "#job-need", "1 need you").await?;
    press(c, "#job-need").await?;
    wait_text(c, "#job-shares", "Who does what in this job").await?;
    if elements(c, ".ticket-detail")
        .await?
        .iter()
        .any(|e| e.visible)
    {
        bail!("\"need you\" should let the picked ticket go");
    }
    // Shown only: nothing in the conversation but the Bots' own replies.
    let lines = app.lines(s.session).await;
    if lines
        .iter()
        .any(|l| l["body"].as_str().unwrap_or_default().contains("reviewer"))
    {
        bail!("the offer must not write a line: {lines:?}");
    }
    Ok(())
}
