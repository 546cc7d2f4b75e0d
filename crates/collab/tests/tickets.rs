//! Tickets in a group's jobs (digest 003-B §1–3) over a real engine and store with scripted
//! Bots: the lead's `plan_items` (refused whole on each fault), `work_on`'s ticket with its
//! dependency and sample waits, the ticket-folder guard, the large-job guard, the ticket part
//! of the situation, and delivery. A Bot's desk hears a line with a token (its script's rule)
//! and binds with `work_on`; its job's turn hears the same line (the rule again: `work_on`,
//! refused there) and then plays its steps from step 1.

mod support;

use serde_json::{Value, json};
use support::ticket_team::*;
use support::*;
use troupe_collab::tickets::{LargeJobGuard, situation::ticket_situation};
use troupe_core::submission::CheckSource;
use troupe_core::ticket::{StageSource, TicketStage};
use troupe_core::{PlanId, TicketId};
use troupe_engine::extension::{EffectGuard, GuardContext};
use troupe_store::{CheckKind, Layout, LayoutItem, NewCheck, NewCheckRun, RunOutcome};

async fn refused_whole(t: &Team, items: Value, code: &str) {
    let result = lead_lays_out(t, items).await;
    assert!(result.contains(&format!("plan_items: {code}:")), "{result}");
    assert!(result.contains("refused whole"), "{result}");
    assert!(tickets(t).is_empty(), "nothing was written");
}

#[tokio::test]
async fn plan_items_refused_whole_reviewer_is_owner() {
    let t = team();
    refused_whole(
        &t,
        json!([{"title": "Poster", "owner": "Maker"},
               {"title": "Slogans", "owner": "Maker", "reviewer": "maker"}]),
        "reviewer_is_owner",
    )
    .await;
}

#[tokio::test]
async fn plan_items_refused_whole_unknown_bot() {
    let t = team();
    refused_whole(
        &t,
        json!([{"title": "Poster", "owner": "Maker"}, {"title": "Slogans", "owner": "Nobody"}]),
        "unknown_bot",
    )
    .await;
}

#[tokio::test]
async fn plan_items_refused_whole_dependency_loop() {
    let t = team();
    refused_whole(
        &t,
        json!([{"key": "a", "title": "Poster", "owner": "Maker", "depends_on": ["b"]},
               {"key": "b", "title": "Slogans", "owner": "Checker", "depends_on": ["a"]}]),
        "dependency_loop",
    )
    .await;
}

#[tokio::test]
async fn plan_items_refused_whole_sample_duplicate() {
    let t = team();
    refused_whole(
        &t,
        json!([{"title": "Shot 1", "owner": "Maker", "sample": true},
               {"title": "Shot 2", "owner": "Maker", "sample": true}]),
        "sample_duplicate",
    )
    .await;
}

#[tokio::test]
async fn plan_items_refused_whole_layout_needs_sample() {
    let t = team();
    t.w.collab
        .choose_large(
            t.plan,
            troupe_collab::tickets::LargeChoiceRequest {
                choice: "treat_as_large".into(),
            },
        )
        .unwrap();
    // No sample at all, then a sample nobody waits for (the other one comes before it).
    refused_whole(
        &t,
        json!([{"title": "Shot 1", "owner": "Maker"}, {"title": "Shot 2", "owner": "Maker"}]),
        "layout_needs_sample",
    )
    .await;
    let t = team();
    t.w.collab
        .choose_large(
            t.plan,
            troupe_collab::tickets::LargeChoiceRequest {
                choice: "treat_as_large".into(),
            },
        )
        .unwrap();
    refused_whole(
        &t,
        json!([{"key": "one", "title": "Shot 1", "owner": "Maker"},
               {"title": "Shot 2", "owner": "Maker", "sample": true, "depends_on": ["one"]}]),
        "layout_needs_sample",
    )
    .await;
}

#[tokio::test]
async fn plan_items_refused_whole_not_lead() {
    let t = team();
    // The group's confirmed lead is Checker, so Lead may not lay the job out.
    t.w.collab
        .store()
        .write(|tx| tx.set_lead(t.s, Some(t.checker)))
        .unwrap();
    refused_whole(
        &t,
        json!([{"title": "Poster", "owner": "Maker"}]),
        "not_lead",
    )
    .await;
}

#[tokio::test]
async fn plan_items_lays_out_with_keys_parts_and_folders() {
    let t = team();
    let result = lead_lays_out(
        &t,
        json!([{"key": "p", "title": "Poster", "owner": "Maker", "reviewer": "Checker",
                "done_when": "poster.png", "parts": ["front", "back"]},
               {"title": "Slogans", "owner": "Checker", "depends_on": ["p"]}]),
    )
    .await;
    let laid: Value = serde_json::from_str(&result).unwrap_or_else(|_| panic!("{result}"));
    assert_eq!(laid["tickets"][0]["folder"], "01-Poster");
    assert_eq!(laid["tickets"][1]["depends_on"], json!([1]));
    let all = tickets(&t);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].owner_bot_id, Some(t.maker));
    assert_eq!(all[0].reviewer_bot_id, Some(t.checker));
    assert_eq!(all[1].depends_on, vec![all[0].id]);
    let folder = t.w.collab.plan(t.plan).unwrap().folder;
    let md = std::fs::read_to_string(format!("{folder}/01-Poster/ticket.md")).unwrap();
    assert!(md.contains("poster.png"), "{md}");
    let parts =
        t.w.collab
            .store()
            .read(|tx| tx.parts_of_ticket(all[0].id))
            .unwrap();
    assert_eq!(parts.len(), 2);
}

// S-T4
#[tokio::test]
async fn s_t4_invented_ticket_folder_refused() {
    let t = team();
    rescript(
        &t.w,
        t.lead,
        &bind_lead(&[
            lay(json!([{"title": "每天一个", "owner": "Maker"}])),
            call(
                "write_file",
                json!({"path": "01-每天一个主题/x.md", "content": "draft"}),
            ),
            call(
                "write_file",
                json!({"path": "01-每天一个/x.md", "content": "draft"}),
            ),
            done(),
        ]),
    );
    say_and_wait(&t, t.lead, "ZQX", "write_file", 2).await;
    let writes: Vec<_> = all_calls(&t.w, t.lead)
        .into_iter()
        .filter(|c| c.name == "write_file")
        .collect();
    assert_eq!(writes[0].status, "refused", "{}", writes[0].result);
    assert!(
        writes[0].result.contains("not_a_ticket_folder"),
        "{}",
        writes[0].result
    );
    assert!(
        writes[0].result.contains("01-每天一个/"),
        "{}",
        writes[0].result
    );
    let folder = t.w.collab.plan(t.plan).unwrap().folder;
    assert!(!std::path::Path::new(&format!("{folder}/01-每天一个主题")).exists());
    assert_ne!(writes[1].status, "refused", "{}", writes[1].result);
    assert!(std::path::Path::new(&format!("{folder}/01-每天一个/x.md")).exists());
}

// T17, T21, T24, B §1.2's first arrow.
#[tokio::test]
async fn t17_work_on_waits_for_dependency() {
    let t = team();
    // A number names a ticket this very layout opens (#01) as well as an existing one.
    let laid = lead_lays_out(
        &t,
        json!([{"title": "Poster", "owner": "Maker"},
               {"title": "Slogans", "owner": "Maker", "depends_on": [1]}]),
    )
    .await;
    assert!(laid.contains("\"laid_out\""), "{laid}");
    rescript(
        &t.w,
        t.maker,
        &script_of(
            "ZQY",
            json!({"name": "work_on", "arguments": {"plan": "plan_1", "ticket": 2}}),
            &[
                call("work_on", json!({"plan": "plan_1", "ticket": 1})),
                call(
                    "write_file",
                    json!({"path": "poster.md", "content": "the poster"}),
                ),
                done(),
            ],
        ),
    );
    say_and_wait(&t, t.maker, "ZQY", "write_file", 1).await;
    let ons: Vec<_> = all_calls(&t.w, t.maker)
        .into_iter()
        .filter(|c| c.name == "work_on")
        .collect();
    assert!(
        ons[0].result.contains("waits_for_dependency"),
        "{}",
        ons[0].result
    );
    assert!(
        ons[0].result.contains("Waits for #01 to be handed over"),
        "{}",
        ons[0].result
    );
    assert!(!ons[1].result.contains("waits_for"), "{}", ons[1].result);
    let all = tickets(&t);
    let on_ticket: Vec<_> = jobs(&t.w, t.maker)
        .into_iter()
        .filter(|i| i.ticket_id.is_some())
        .collect();
    assert_eq!(on_ticket.len(), 1);
    assert_eq!(on_ticket[0].ticket_id, Some(all[0].id.0));
    // T24: the ticket's turn worked in its folder.
    let folder = t.w.collab.plan(t.plan).unwrap().folder;
    assert!(std::path::Path::new(&format!("{folder}/01-Poster/poster.md")).exists());
    // Work starting moved it to in_progress, once, by the app (its ending may hand it
    // over after that).
    let log =
        t.w.collab
            .store()
            .read(|tx| tx.ticket_stage_changes(all[0].id))
            .unwrap();
    assert_eq!(
        (log[0].from.as_str(), log[0].to.as_str()),
        ("to_do", "in_progress")
    );
    assert_eq!(log[0].source, "app_started");
    assert_eq!(log.iter().filter(|c| c.source == "app_started").count(), 1);
    assert_eq!(
        all[1].stage,
        TicketStage::ToDo,
        "the waiting ticket never started"
    );
}

// LJ5, LJ6 (ADR 0109)
#[tokio::test]
async fn lj5_sample_wait_released_on_hand_over() {
    let t = team();
    t.w.collab
        .choose_large(
            t.plan,
            troupe_collab::tickets::LargeChoiceRequest {
                choice: "treat_as_large".into(),
            },
        )
        .unwrap();
    let laid = lead_lays_out(
        &t,
        json!([{"title": "Shot 1", "owner": "Maker", "sample": true},
               {"title": "Shot 2", "owner": "Maker"}]),
    )
    .await;
    assert!(laid.contains("\"laid_out\":true"), "{laid}");
    let d =
        t.w.collab
            .store()
            .read(|tx| tx.plan_deliverables(t.plan))
            .unwrap();
    assert!(d.laid_out);
    let all = tickets(&t);
    assert_eq!(d.sample_ticket_id, Some(all[0].id));
    rescript(
        &t.w,
        t.maker,
        &script_of(
            "ZQY",
            json!({"name": "work_on", "arguments": {"plan": "plan_1", "ticket": 2}}),
            &[json!({"text": "I wait for the sample."})],
        ),
    );
    say_and_wait(&t, t.maker, "ZQY", "work_on", 1).await;
    let first = all_calls(&t.w, t.maker).remove(0).result;
    assert!(
        first.contains("Waits for sample #01 to be handed over"),
        "{first}"
    );
    // The sample is handed over (not approved): the wait is released.
    t.w.collab
        .store()
        .write(|tx| tx.set_ticket_stage(all[0].id, TicketStage::Submitted, StageSource::Check))
        .unwrap();
    let mut events = t.w.collab.store().subscribe();
    t.w.collab
        .post_line(t.s, "@Maker ZQY".into(), None)
        .await
        .unwrap();
    until(&mut events, "Maker works on shot 2", || {
        jobs(&t.w, t.maker)
            .iter()
            .any(|i| i.ticket_id == Some(all[1].id.0))
    })
    .await;
}

// S-LJ3
#[tokio::test]
async fn s_lj3_submit_refused_until_laid_out() {
    let t = team();
    t.w.collab
        .choose_large(
            t.plan,
            troupe_collab::tickets::LargeChoiceRequest {
                choice: "treat_as_large".into(),
            },
        )
        .unwrap();
    // A ticket the user added: the job has one, but is not laid out (no sample).
    t.w.collab
        .add_ticket(
            t.plan,
            troupe_collab::tickets::NewTicketRequest {
                title: "Cut".into(),
                description: None,
                done_when: None,
                owner_bot_id: None,
                reviewer_bot_id: None,
            },
        )
        .unwrap();
    rescript(
        &t.w,
        t.lead,
        &bind_lead(&[
            call(
                "write_file",
                json!({"path": "01-Cut/cut.mp4", "content": "frames"}),
            ),
            call("submit", json!({"artifacts": ["01-Cut/cut.mp4"]})),
            json!({"text": "I will lay it out."}),
        ]),
    );
    say_and_wait(&t, t.lead, "ZQX", "submit", 1).await;
    let wrote = results_of(&t.w, t.lead, "write_file");
    assert_eq!(wrote.len(), 1, "local work goes on (LJ4): {wrote:?}");
    let submit = results_of(&t.w, t.lead, "submit").pop().unwrap();
    assert!(submit.contains("lay it out first"), "{submit}");
    let job = job(&t.w, t.lead).unwrap();
    let run = runs_of(&t.w, job.thread_id)[0].id;
    // A generating tool is refused by the guard until the layout, and passes after it.
    let thread =
        t.w.collab
            .store()
            .read(|tx| tx.thread(job.thread_id))
            .unwrap();
    let guard = LargeJobGuard::with_generating(["render_video"]);
    let ctx = GuardContext {
        thread: &thread,
        run_id: run,
        tool: "render_video",
        summary: "render_video {}",
        arguments: "{}",
        store: t.w.collab.store(),
    };
    let refused = guard.check(&ctx).unwrap_err();
    assert!(
        refused.text.contains("lay it out first"),
        "{}",
        refused.text
    );
    let situation =
        t.w.collab
            .store()
            .read(|tx| ticket_situation(tx, t.plan, None))
            .unwrap()
            .unwrap();
    assert!(situation.contains("lay it out first"), "{situation}");
    t.w.collab
        .store()
        .write(|tx| {
            let folder = tx.plan(t.plan)?.folder;
            tx.lay_out(
                t.plan,
                &Layout {
                    items: vec![
                        LayoutItem {
                            title: "Shot 1".into(),
                            sample: true,
                            ..Default::default()
                        },
                        LayoutItem {
                            title: "Shot 2".into(),
                            ..Default::default()
                        },
                    ],
                    drops: Vec::new(),
                },
                |n, title| format!("{folder}/{n:02}-{title}"),
            )
        })
        .unwrap();
    assert!(guard.check(&ctx).is_ok());
}

/// A job the person opened with these tickets laid out by the store.
fn laid(titles: &[&str]) -> (World, PlanId, Vec<TicketId>) {
    let w = world();
    let b = bot(&w, "Lead", r#"{"steps":[{"text":"ok"}]}"#);
    let s = group(&w, &[b]);
    let plan = open_job(&w, s, "make a launch kit").id;
    let ids = w
        .collab
        .store()
        .write(|tx| {
            let folder = tx.plan(plan)?.folder;
            let items = titles
                .iter()
                .map(|t| LayoutItem {
                    title: t.to_string(),
                    ..Default::default()
                })
                .collect();
            let laid = tx.lay_out(
                plan,
                &Layout {
                    items,
                    drops: Vec::new(),
                },
                |n, title| format!("{folder}/{n:02}-{title}"),
            )?;
            Ok(laid.tickets.iter().map(|t| t.id).collect::<Vec<_>>())
        })
        .unwrap();
    (w, plan, ids)
}

fn stage(w: &World, ticket: TicketId, to: TicketStage, source: StageSource) {
    w.collab
        .store()
        .write(|tx| {
            tx.set_ticket_stage(ticket, to, source)?;
            troupe_collab::tickets::after_stage_change(tx, ticket)?;
            Ok(())
        })
        .unwrap();
}

fn delivered(w: &World, plan: PlanId) -> bool {
    w.collab
        .store()
        .read(|tx| tx.plan_deliverables(plan))
        .unwrap()
        .delivered
}

fn count(w: &World, kind: &str) -> usize {
    w.collab
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100_000))
        .unwrap()
        .iter()
        .filter(|e| e.kind == kind)
        .count()
}

// T9
#[tokio::test]
async fn t9_plan_delivered_when_all_approved() {
    let (w, plan, ids) = laid(&["Poster", "Slogans", "Banner"]);
    // A job-wide gate of the user's, not yet run.
    let check = w
        .collab
        .store()
        .write(|tx| {
            let mut c = NewCheck::new(plan, CheckKind::FileExists, CheckSource::User);
            c.path = Some("poster.png".into());
            tx.create_check(&c)
        })
        .unwrap();
    stage(&w, ids[2], TicketStage::Dropped, StageSource::User);
    stage(&w, ids[0], TicketStage::Approved, StageSource::Review);
    assert!(!delivered(&w, plan), "a ticket is still open");
    stage(&w, ids[1], TicketStage::Approved, StageSource::Review);
    assert!(!delivered(&w, plan), "the job-wide gate never ran");
    w.collab
        .store()
        .write(|tx| {
            tx.record_check_run(&NewCheckRun {
                check_id: check.id,
                submission_id: None,
                outcome: RunOutcome::Passed,
                detail: "poster.png is there".into(),
                output_tail: String::new(),
                measured: None,
                for_reference: false,
                started_at: 0,
            })
        })
        .unwrap();
    stage(&w, ids[1], TicketStage::Submitted, StageSource::Check);
    stage(&w, ids[1], TicketStage::Approved, StageSource::Review);
    assert!(delivered(&w, plan));
    assert_eq!(count(&w, "plan_delivered"), 1);
}

// S-T3, T10
#[tokio::test]
async fn s_t3_reopened_on_new_hand_over() {
    let (w, plan, ids) = laid(&["Poster", "Slogans"]);
    for id in &ids {
        stage(&w, *id, TicketStage::Submitted, StageSource::Check);
        stage(&w, *id, TicketStage::Approved, StageSource::Review);
    }
    assert!(delivered(&w, plan));
    // A new hand-over on the poster: the job is active again.
    stage(&w, ids[0], TicketStage::Submitted, StageSource::Check);
    assert!(!delivered(&w, plan));
    assert_eq!(count(&w, "plan_reopened"), 1);
    stage(&w, ids[0], TicketStage::Approved, StageSource::Review);
    assert!(delivered(&w, plan));
    assert_eq!(count(&w, "plan_delivered"), 2);
}

// S-T7, T20
#[tokio::test]
async fn s_t7_situation_wording() {
    let (w, plan, ids) = laid(&["Slogans", "Poster", "Banner", "Video"]);
    let writer = bot(&w, "文案", r#"{"steps":[{"text":"ok"}]}"#);
    let designer = bot(&w, "设计师", r#"{"steps":[{"text":"ok"}]}"#);
    w.collab
        .store()
        .write(|tx| {
            let owned = |id: TicketId, title: &str| LayoutItem {
                ticket: Some(id),
                title: title.into(),
                owner_bot_id: Some(designer),
                ..Default::default()
            };
            tx.lay_out(
                plan,
                &Layout {
                    items: vec![owned(ids[1], "Poster"), owned(ids[3], "Video")],
                    drops: Vec::new(),
                },
                |_, _| String::new(),
            )?;
            tx.set_ticket_maker(ids[0], Some(writer))?;
            tx.add_parts(ids[3], &["shot 1".into(), "shot 2".into()])?;
            Ok(())
        })
        .unwrap();
    stage(&w, ids[0], TicketStage::Approved, StageSource::Review);
    w.collab
        .patch_ticket(
            ids[1],
            troupe_collab::tickets::TicketPatchRequest {
                status: Some(troupe_core::ticket::TicketStatus::Parked),
                ..Default::default()
            },
        )
        .unwrap();
    w.collab
        .store()
        .write(|tx| tx.drop_ticket(ids[2], "not needed"))
        .unwrap();
    stage(&w, ids[3], TicketStage::InProgress, StageSource::AppStarted);
    let text = w
        .collab
        .store()
        .read(|tx| ticket_situation(tx, plan, Some(ids[3])))
        .unwrap()
        .unwrap();
    assert!(text.contains("#01 Slogans — approved, by 文案"), "{text}");
    assert!(
        text.contains("#02 Poster — set aside by the user; nobody on it"),
        "{text}"
    );
    assert!(!text.contains("parked; 设计师 on it"), "{text}");
    assert!(!text.contains("approved; 文案 on it"), "{text}");
    assert!(
        !text.contains("Banner"),
        "a lead's drop is left out: {text}"
    );
    assert!(
        text.contains("#04 Video — in_progress; 设计师 on it"),
        "{text}"
    );
    assert!(text.contains("This turn's ticket: #04 Video"), "{text}");
    assert!(text.contains("1 shot 1 — in_progress"), "{text}");
    assert!(
        text.contains("(1 open · 2 in all · 2 dropped/set aside)"),
        "{text}"
    );
    // This turn's own dropped ticket is shown.
    let own = w
        .collab
        .store()
        .read(|tx| ticket_situation(tx, plan, Some(ids[2])))
        .unwrap()
        .unwrap();
    assert!(own.contains("#03 Banner — dropped (not needed)"), "{own}");
}

// DS-9: work_on may open a ticket of the chosen job for the Bot itself.
#[tokio::test]
async fn ds9_work_on_opens_a_ticket_for_itself() {
    let t = team();
    rescript(
        &t.w,
        t.maker,
        &script_of(
            "ZQN",
            json!({"name": "work_on", "arguments": {"plan": "plan_1", "ticket": {"new": {"title": ""}}}}),
            &[
                call(
                    "work_on",
                    json!({"plan": "plan_1", "ticket": {"new": {"title": "Poster"}}}),
                ),
                call(
                    "write_file",
                    json!({"path": "poster.md", "content": "the poster"}),
                ),
                done(),
            ],
        ),
    );
    say_and_wait(&t, t.maker, "ZQN", "write_file", 1).await;
    let ons: Vec<_> = all_calls(&t.w, t.maker)
        .into_iter()
        .filter(|c| c.name == "work_on")
        .collect();
    assert!(
        ons[0].result.contains("ticket.new.title"),
        "{}",
        ons[0].result
    );
    let all = tickets(&t);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].title, "Poster");
    assert_eq!(all[0].owner_bot_id, Some(t.maker));
    // Its work there, told the same again, found the ticket it had opened: no twin.
    assert!(
        ons[3].result.contains("already working on ticket #01"),
        "{}",
        ons[3].result
    );
    let on_ticket: Vec<_> = jobs(&t.w, t.maker)
        .into_iter()
        .filter(|i| i.ticket_id.is_some())
        .collect();
    assert_eq!(on_ticket.len(), 1);
    assert_eq!(on_ticket[0].ticket_id, Some(all[0].id.0));
    let folder = t.w.collab.plan(t.plan).unwrap().folder;
    assert!(std::path::Path::new(&format!("{folder}/01-Poster/poster.md")).exists());
}
