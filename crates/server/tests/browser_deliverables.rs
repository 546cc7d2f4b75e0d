//! Real-browser test of a job's view (issue 15 item 11), scenario `deliverables`: a group job
//! with three tickets — one approved and made by Maker, one the lead dropped with a reason, one
//! in review with a hand-over whose user check failed and whose review gave per-item verdicts on
//! the maker's own model — and an offer from the user's words. The page must show the board
//! texts (T19) and the counter (T14), the checks and the verdicts, take a review that lands
//! while it is open (written through the store, seen over the live events alone), turn the
//! offer into a gate on Confirm, and stay usable at phone width.
//!
//! The API is served in-process on a real loopback port (tests/support), so what the test
//! writes through the store reaches the page's event stream as the daemon's own writes do.
//! Needs Debian's `chromium` and `chromium-driver`; without them the test prints a notice and
//! returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_deliverables
//! ```
//!
//! The phone-width screenshot goes to the test's temp dir (checked there), with copies of the
//! desktop and phone views in `target/browser-deliverables.png` and
//! `browser-deliverables-phone.png`; on failure one goes to
//! `target/browser-deliverables-failure.png` and the page text is printed.

mod browser_support;
mod support;

use anyhow::{Result, anyhow, bail};
use browser_support::page::{SHORT, click, elements, no_sideways_scroll, pick, press, wait_text};
use browser_support::{browser_or_skip, open_session, page_diagnostics, poll, target_dir};
use fantoccini::Client;
use serde_json::{Value, json};
use support::TestApp;
use troupe_collab::OpenPlan;
use troupe_core::conversation::Author;
use troupe_core::plan::RevisionCause;
use troupe_core::review::{ReviewOutcome, ReviewVerdict};
use troupe_core::submission::{ApprovedBy, CheckSource, SubmissionOrigin, SubmissionState};
use troupe_core::ticket::{StageSource, TicketStage};
use troupe_core::words_check::LinePlace;
use troupe_core::words_check::numbers::read_numbers;
use troupe_core::{BotId, CheckId, PlanId, SessionId, SubmissionId, TicketId};
use troupe_store::{
    CheckKind, FilingSource, Layout, NewCheck, NewCheckRun, NewFiling, NewLine, NewReview,
    NewSubmission, ReviewResult, RunOutcome, SubmittedFile, VerdictRecord, WordsStatus,
};

const DROP_REASON: &str = "the client cut the banner";
const SLOGANS_HASH: &str = "3f2a9c1d5be07a44c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192";
const CHECK_OUTPUT: &str = "grep: no line with 'calm' in slogans.md";

struct Setup {
    session: i64,
    plan: PlanId,
    checker: BotId,
    other: BotId,
    slogans: TicketId,
    handover: SubmissionId,
    offer: CheckId,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliverables() {
    let Some((driver_path, _)) = browser_or_skip() else {
        return;
    };
    let app = TestApp::start().await;
    let setup = set_up(&app).await;
    let profile = app.dir.path().join("chrome-profile");
    std::fs::create_dir_all(&profile).expect("profile dir");
    let (driver, client) = open_session(&driver_path, &profile).await;
    let result = scenario(&client, &app, &setup).await;
    if let Err(err) = &result {
        let diag = page_diagnostics(&client, "browser-deliverables-failure.png").await;
        let _ = client.clone().close().await;
        panic!(
            "{err:#}\n{diag}\n--- chromedriver ---\n{}",
            driver.process.log_text()
        );
    }
    let _ = client.close().await;
}

/// The group, its job, the tickets, the hand-over with its failed check and first review, and
/// the offer from the user's words — through the API where the user can do it, the store for
/// what the Bots and the app write.
async fn set_up(app: &TestApp) -> Setup {
    let mut bots = Vec::new();
    for name in ["Maker", "Checker", "Other"] {
        bots.push(
            app.scripted_bot(name, json!({"steps": [{"text": "on it"}]}))
                .await,
        );
    }
    let session = app
        .post(
            "/v1/sessions",
            json!({"kind": "group", "bot_ids": bots, "title": "Launch kit"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let (maker, checker, other) = (BotId(bots[0]), BotId(bots[1]), BotId(bots[2]));
    let store = app.state.collab.store().clone();
    let asked = store
        .write(|tx| {
            tx.insert_line(&NewLine::plain(
                SessionId(session),
                Author::User,
                "make a launch kit: poster, banner, slogans".into(),
            ))
        })
        .unwrap();
    let plan = app
        .state
        .collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(session),
            opening_line_id: Some(asked.id),
            title: None,
            cause: RevisionCause::User,
        })
        .unwrap()
        .id;
    let mut tickets = Vec::new();
    for (title, owner, reviewer) in [
        ("Poster", bots[0], Some(bots[1])),
        ("Banner", bots[2], None),
        ("Slogans", bots[0], Some(bots[1])),
    ] {
        let t = app
            .post(
                &format!("/v1/tasks/{}/tickets", plan.0),
                json!({"title": title, "owner_bot_id": owner, "reviewer_bot_id": reviewer,
                       "done_when": format!("{title} handed over")}),
            )
            .await
            .expect(201);
        tickets.push(TicketId(t["id"].as_i64().unwrap()));
    }
    let (poster, banner, slogans) = (tickets[0], tickets[1], tickets[2]);
    let handover = |ticket: TicketId, path: &str, sha: &str| NewSubmission {
        ticket_id: ticket,
        origin: SubmissionOrigin::Explicit,
        producer_bot_id: Some(maker),
        run_id: None,
        work_item_id: None,
        content: None,
        note: "Here it is.".into(),
        claims: Vec::new(),
        files: vec![SubmittedFile {
            path: path.into(),
            sha256: sha.into(),
            size: 120,
        }],
        parts: Vec::new(),
    };
    let words = "make the video about 2 minutes long";
    let (sub, offer) = store
        .write(|tx| {
            // #01: handed over, approved by its reviewer; Maker made it.
            let s =
                tx.create_submission(&handover(poster, "01-Poster/poster.png", &"a".repeat(64)))?;
            tx.set_ticket_stage(poster, TicketStage::Submitted, StageSource::Check)?;
            tx.set_submission_state(s.id, SubmissionState::InReview)?;
            tx.set_ticket_stage(poster, TicketStage::InReview, StageSource::Check)?;
            tx.approve_submission(s.id, ApprovedBy::Reviewer, Some(checker), None)?;
            tx.set_ticket_stage(poster, TicketStage::Approved, StageSource::Review)?;
            // #02: the lead dropped it, saying why.
            tx.lay_out(
                plan,
                &Layout {
                    items: Vec::new(),
                    drops: vec![(banner, DROP_REASON.into())],
                },
                |n, t| format!("{n:02}-{t}"),
            )?;
            // #03: handed over; its user check failed; its reviewer ran on Maker's model, so
            // the approve waits on the user's word.
            let s =
                tx.create_submission(&handover(slogans, "03-Slogans/slogans.md", SLOGANS_HASH))?;
            let check = tx.create_check(&NewCheck {
                ticket_id: Some(slogans),
                command: Some("grep -q calm slogans.md".into()),
                ..NewCheck::new(plan, CheckKind::Command, CheckSource::User)
            })?;
            tx.record_check_run(&NewCheckRun {
                check_id: check.id,
                submission_id: Some(s.id),
                outcome: RunOutcome::Failed,
                detail: "exit 1, expected exit 0".into(),
                output_tail: CHECK_OUTPUT.into(),
                measured: None,
                for_reference: false,
                started_at: s.created_at,
            })?;
            tx.set_ticket_stage(slogans, TicketStage::Submitted, StageSource::Check)?;
            tx.set_submission_state(s.id, SubmissionState::InReview)?;
            tx.set_ticket_stage(slogans, TicketStage::InReview, StageSource::Check)?;
            tx.record_review(&NewReview {
                submission_id: s.id,
                reviewer_bot_id: checker,
                run_id: None,
                outcome: ReviewOutcome::Approve,
                note: "Reads well.".into(),
                result: ReviewResult::AwaitingUser,
                reasons: vec!["same model as the maker: the approve waits on your word".into()],
                same_model: true,
                reviewer_model: Some("gpt-x".into()),
                producer_model: Some("gpt-x".into()),
                verdicts: vec![
                    VerdictRecord {
                        requirement_id: "R1".into(),
                        verdict: ReviewVerdict::Pass,
                        evidence: Some("three slogans, one per line".into()),
                    },
                    VerdictRecord {
                        requirement_id: "R2".into(),
                        verdict: ReviewVerdict::Unknown,
                        evidence: Some("the brand guide was not in the folder".into()),
                    },
                ],
            })?;
            tx.set_submission_state(s.id, SubmissionState::AwaitingUser)?;
            // The user's words filed under the job, and the offer they make (as the checks'
            // reading of them makes it, so confirming reads the same offer again).
            let line = tx.insert_line(&NewLine::plain(
                SessionId(session),
                Author::User,
                words.into(),
            ))?;
            tx.file_line(&NewFiling {
                message_id: line.id,
                plan_id: plan,
                ticket_id: None,
                part_id: None,
                source: FilingSource::Reader,
                filed_by: "test".into(),
                locked: false,
                primary: true,
            })?;
            let reading = read_numbers(words, LinePlace::Job)
                .into_iter()
                .next()
                .expect("the words give a running time");
            let offer = tx.create_check(&NewCheck {
                dimension: Some(reading.dimension),
                value: Some(reading.number.value),
                bound: Some(reading.number.bound),
                min: reading.number.min,
                max: reading.number.max,
                quote_id: Some(line.id.0),
                status: Some(WordsStatus::Offer),
                said_count: 1,
                ..NewCheck::new(plan, CheckKind::Words, CheckSource::Words)
            })?;
            Ok((s.id, offer.id))
        })
        .unwrap();
    Setup {
        session,
        plan,
        checker,
        other,
        slogans,
        handover: sub,
        offer,
    }
}

/// What one ticket row shows.
#[derive(Debug)]
struct Row {
    head: String,
    stage: String,
    label: String,
    people: String,
    drop: String,
    waits: Vec<String>,
}

async fn rows(c: &Client) -> Result<Vec<Row>> {
    let v = c
        .execute(
            "return [...document.querySelectorAll('#ticket-list .ticket-row')].map(r => ({
                head: r.querySelector('.ticket-head').innerText,
                stage: r.dataset.stage,
                label: (r.querySelector('.ticket-label') || {}).innerText || '',
                people: (r.querySelector(':scope > .ticket-people') || {}).innerText || '',
                drop: (r.querySelector(':scope > .ticket-drop') || {}).innerText || '',
                waits: [...r.querySelectorAll(':scope > .ticket-waits')].map(w => w.innerText),
            }));",
            vec![],
        )
        .await?;
    let s = |x: &Value| x.as_str().unwrap_or_default().to_string();
    Ok(v.as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|r| Row {
            head: s(&r["head"]),
            stage: s(&r["stage"]),
            label: s(&r["label"]),
            people: s(&r["people"]),
            drop: s(&r["drop"]),
            waits: r["waits"]
                .as_array()
                .map(|w| w.iter().map(s).collect())
                .unwrap_or_default(),
        })
        .collect())
}

fn row<'a>(rows: &'a [Row], number: &str) -> Result<&'a Row> {
    rows.iter()
        .find(|r| r.head.starts_with(number))
        .ok_or_else(|| anyhow!("no ticket row {number}: {rows:?}"))
}

/// The innerText of everything matching `css`, visible or not.
async fn texts(c: &Client, css: &str) -> Result<Vec<String>> {
    Ok(elements(c, css)
        .await?
        .into_iter()
        .map(|e| e.text)
        .collect())
}

async fn scenario(c: &Client, app: &TestApp, s: &Setup) -> Result<()> {
    c.goto(&app.url(&format!("/#session={}", s.session)))
        .await?;
    // The group opens from the link; its Jobs panel lists the job with an Open button.
    poll("the Jobs button", SHORT, || async {
        Ok(elements(c, "#work-toggle")
            .await?
            .iter()
            .any(|e| e.visible && e.text.contains("Jobs · 1"))
            .then_some(()))
    })
    .await?;
    click(c, "#work-toggle").await?;
    let open = format!("#jobs-list .job-open[data-plan-id=\"{}\"]", s.plan.0);
    poll("the job's Open button", SHORT, || async {
        Ok(elements(c, &open)
            .await?
            .iter()
            .any(|e| e.visible)
            .then_some(()))
    })
    .await?;
    press(c, &open).await?;

    // --- T14: the counter leaves the dropped ticket out; the approved share is of the rest
    wait_text(c, "#job-counter", "1 open · 2 in all · 1 dropped/set aside").await?;
    wait_text(c, "#job-counter", "50% approved").await?;
    if !elements(c, "#work-panel").await?.iter().all(|p| !p.visible) {
        bail!("the Jobs panel should close when the job's view opens");
    }

    // --- T19: labels, who made it, who reviews, no owner on the dropped ticket
    let seen = poll("the three ticket rows", SHORT, || async {
        let r = rows(c).await?;
        Ok((r.len() == 3).then_some(r))
    })
    .await?;
    let poster = row(&seen, "#01")?;
    if poster.label != "Approved" || poster.stage != "approved" {
        bail!("#01 should read Approved: {poster:?}");
    }
    if !poster.people.contains("By Maker") || poster.people.contains("Owner") {
        bail!("#01 should show \"By Maker\" and no owner: {poster:?}");
    }
    if !poster.waits.is_empty() {
        bail!("an approved ticket never waits for anything: {poster:?}");
    }
    let banner = row(&seen, "#02")?;
    if banner.label != "Dropped" || banner.drop != format!("Dropped: {DROP_REASON}") {
        bail!("#02 should read Dropped with its reason: {banner:?}");
    }
    if !banner.people.is_empty() || banner.head.contains("Other") {
        bail!("a dropped ticket shows no owner: {banner:?}");
    }
    let slogans = row(&seen, "#03")?;
    if slogans.label != "In review" {
        bail!("#03 should read In review: {slogans:?}");
    }
    if !slogans.people.contains("Owner: Maker") || !slogans.people.contains("Reviewed by Checker") {
        bail!("#03, unpicked, should name its owner and \"Reviewed by Checker\": {slogans:?}");
    }

    // --- The hand-over of #03: file with its short hash, state, checks, review and verdicts
    let head03 = format!(
        "#ticket-list .ticket-row[data-ticket-id=\"{}\"] .ticket-head",
        s.slogans.0
    );
    press(c, &head03).await?;
    let sub = format!(".submission[data-id=\"{}\"]", s.handover.0);
    wait_text(c, &sub, "Waits for your word").await?;
    wait_text(
        c,
        &format!("{sub} .submission-file"),
        "03-Slogans/slogans.md",
    )
    .await?;
    let hashes = texts(c, &format!("{sub} .file-hash")).await?;
    if hashes != [&SLOGANS_HASH[..8]] {
        bail!("the file's short hash should be its first 8 hex digits: {hashes:?}");
    }
    let checks = texts(c, &format!("{sub} .sub-check")).await?;
    let failed = checks
        .iter()
        .find(|t| t.contains("Command: grep -q calm slogans.md"))
        .ok_or_else(|| anyhow!("the hand-over's user check is not shown: {checks:?}"))?;
    for want in ["Gate", "Failed", "exit 1, expected exit 0", CHECK_OUTPUT] {
        if !failed.contains(want) {
            bail!("the failed check should show {want:?}: {failed:?}");
        }
    }
    let review = texts(c, &format!("{sub} .review[data-same-model=\"true\"]")).await?;
    let first = review
        .first()
        .ok_or_else(|| anyhow!("the first review is not shown"))?;
    for want in [
        "Checker approved it",
        "Waits for your word",
        "Same model",
        "R1",
        "Pass",
        "three slogans, one per line",
        "R2",
        "Unknown",
        "the brand guide was not in the folder",
    ] {
        if !first.contains(want) {
            bail!("the review should show {want:?}: {first:?}");
        }
    }
    // Picked, the row shows the reviewer menu instead: the conversation's Bots but the owner.
    let menu = c
        .execute(
            "const s = document.querySelector(arguments[0] + ' .reviewer-menu');
             return s ? {options: [...s.options].map(o => o.text), value: s.value} : null;",
            vec![json!(format!(
                "#ticket-list .ticket-row[data-ticket-id=\"{}\"]",
                s.slogans.0
            ))],
        )
        .await?;
    if menu["options"] != json!(["No reviewer", "Checker", "Other"])
        || menu["value"] != json!(s.checker.0.to_string())
    {
        bail!("the reviewer menu should list Checker and Other, Checker chosen: {menu}");
    }
    let people = row(&rows(c).await?, "#03")?.people.clone();
    if people.contains("Reviewed by") {
        bail!("a picked row shows the menu, not \"Reviewed by\": {people:?}");
    }

    // --- A refused press says so where it was pressed; the menu goes back to what holds
    let row03 = format!(
        "#ticket-list .ticket-row[data-ticket-id=\"{}\"]",
        s.slogans.0
    );
    c.execute(
        "window.__fetch = window.fetch;
         window.fetch = (url, opts) =>
           opts && opts.method === 'PATCH' && String(url).startsWith('/v1/tickets/')
             ? Promise.resolve(new Response(
                 JSON.stringify({ error: { code: 'internal', message: 'refused' } }),
                 { status: 500, headers: { 'content-type': 'application/json' } }))
             : window.__fetch(url, opts);",
        vec![],
    )
    .await?;
    pick(
        c,
        &format!("{row03} .reviewer-menu"),
        &s.other.0.to_string(),
    )
    .await?;
    wait_text(
        c,
        &format!("{row03} .reviewer-error"),
        "That did not work; try again",
    )
    .await?;
    c.execute("window.fetch = window.__fetch;", vec![]).await?;
    let value = c
        .execute(
            "return document.querySelector(arguments[0]).value;",
            vec![json!(format!("{row03} .reviewer-menu"))],
        )
        .await?;
    if value != json!(s.checker.0.to_string()) {
        bail!("a refused reviewer change should leave Checker chosen: {value}");
    }
    let store = app.state.collab.store().clone();
    if store.read(|tx| tx.ticket(s.slogans))?.reviewer_bot_id != Some(s.checker) {
        bail!("a refused reviewer change changed the ticket");
    }
    // Pressed again with the daemon answering: Other reviews #03 from now on.
    pick(
        c,
        &format!("{row03} .reviewer-menu"),
        &s.other.0.to_string(),
    )
    .await?;
    poll("Other as #03's reviewer", SHORT, || async {
        Ok((store.read(|tx| tx.ticket(s.slogans))?.reviewer_bot_id == Some(s.other)).then_some(()))
    })
    .await?;
    poll(
        "the refusal gone once the press went through",
        SHORT,
        || async {
            let shown = elements(c, &format!("{row03} .reviewer-error")).await?;
            let menu = c
                .execute(
                    "return document.querySelector(arguments[0]).value;",
                    vec![json!(format!("{row03} .reviewer-menu"))],
                )
                .await?;
            Ok(
                (shown.iter().all(|e| !e.visible) && menu == json!(s.other.0.to_string()))
                    .then_some(()),
            )
        },
    )
    .await?;

    // --- A review lands while the page is open: written through the store, shown live
    let (handover, other) = (s.handover, s.other);
    store.write(|tx| {
        tx.record_review(&NewReview {
            submission_id: handover,
            reviewer_bot_id: other,
            run_id: None,
            outcome: ReviewOutcome::Reject,
            note: "The second slogan is too long.".into(),
            result: ReviewResult::Recorded,
            reasons: Vec::new(),
            same_model: false,
            reviewer_model: Some("claude-y".into()),
            producer_model: Some("gpt-x".into()),
            verdicts: vec![VerdictRecord {
                requirement_id: "R3".into(),
                verdict: ReviewVerdict::Fail,
                evidence: Some("slogan 2 has eleven words".into()),
            }],
        })
    })?;
    poll("the new review on the page", SHORT, || async {
        let t = texts(c, &format!("{sub} .review[data-outcome=\"reject\"]")).await?;
        Ok(t.iter()
            .any(|r| {
                r.contains("Other sent it back")
                    && r.contains("Another model")
                    && r.contains("R3")
                    && r.contains("Fail")
                    && r.contains("slogan 2 has eleven words")
            })
            .then_some(()))
    })
    .await?;

    // --- "Checks from what you said" (CW-21): the offer, labelled by the words read, is
    // confirmed (a gate in force), shown as an offer again with a note when the words it stood
    // on are erased, and removed; it is never listed with the other checks.
    let offer = format!("#said-checks .said-check[data-check-id=\"{}\"]", s.offer.0);
    wait_text(c, &offer, "Running time: 108–132 s").await?;
    wait_text(c, &format!("{offer} .said-status"), "Offer").await?;
    if !elements(
        c,
        &format!("#job-check-list [data-check-id=\"{}\"]", s.offer.0),
    )
    .await?
    .is_empty()
    {
        bail!("a check from the user's words is listed with the other checks too");
    }
    press(c, &format!("{offer} .said-confirm")).await?;
    wait_text(c, &format!("{offer} .said-status"), "In force").await?;
    if !elements(c, &format!("{offer} .said-confirm"))
        .await?
        .is_empty()
    {
        bail!("a confirmed check has no Confirm button");
    }
    let confirmed = store.read(|tx| tx.check(s.offer))?;
    if !confirmed.confirmed || !confirmed.gate || confirmed.status != Some(WordsStatus::InForce) {
        bail!("Confirm should make the offer a gate in force: {confirmed:?}");
    }
    // CW-20: the words it stood on erased, it is an offer again — the board says so.
    store.write(|tx| {
        tx.set_words_reading(
            s.offer,
            confirmed.value.expect("a words check has its value"),
            confirmed.bound.expect("and its bound"),
            confirmed.min,
            confirmed.max,
            confirmed.quote_id,
            confirmed.said_count,
            WordsStatus::Offer,
        )
        .map(|_| ())
    })?;
    wait_text(
        c,
        "#said-checks .said-note[data-kind=\"reverted\"]",
        "it is an offer again",
    )
    .await?;
    wait_text(c, &format!("{offer} .said-status"), "Offer").await?;
    press(c, &format!("{offer} .said-remove")).await?;
    poll("the offer removed", SHORT, || async {
        let gone = elements(c, &offer).await?.is_empty();
        let removed = store.read(|tx| tx.check(s.offer))?.removed_at.is_some();
        Ok((gone && removed).then_some(()))
    })
    .await?;

    // --- The large-job banner: Treat as large shows the words and No need
    press(c, "#job-large .large-treat").await?;
    wait_text(
        c,
        "#job-large",
        "A large job: laid out in parts, with a sample made first.",
    )
    .await?;
    wait_text(c, "#job-large .large-no-need", "No need").await?;
    // SA5: #03 is through, so it cannot become the sample even in a large job.
    if !elements(c, "#ticket-list .make-sample").await?.is_empty() {
        bail!("\"Make it the sample\" shows on a ticket that was handed over");
    }

    keep(c, "browser-deliverables.png").await?;

    // --- Phone width: the view fits without sideways scrolling; a screenshot is kept
    c.set_window_size(390, 844).await?;
    wait_text(c, &sub, "Other sent it back").await?;
    no_sideways_scroll(c, "the job view at 390 px").await?;
    let png = c.screenshot().await?;
    let path = app.dir.path().join("browser-deliverables-phone.png");
    std::fs::write(&path, &png)?;
    let kept = std::fs::metadata(&path)?.len();
    if kept == 0 || !png.starts_with(b"\x89PNG") {
        bail!("the phone-width screenshot is empty or not a PNG ({kept} bytes)");
    }
    eprintln!("screenshot: {} ({kept} bytes)", path.display());
    keep(c, "browser-deliverables-phone.png").await
}

/// A copy of what the page shows in `target/<name>`, for a person to look at.
async fn keep(c: &Client, name: &str) -> Result<()> {
    let png = c.screenshot().await?;
    std::fs::create_dir_all(target_dir())?;
    let path = target_dir().join(name);
    std::fs::write(&path, png)?;
    eprintln!("screenshot: {}", path.display());
    Ok(())
}
