//! From the whole job down to one of its tickets (DS-10, DS-15, DS-11) over a real engine and
//! store with scripted Bots: the Lead's desk hears "@Lead ZQX" and binds to the job (its rule's
//! `work_on`), its job's turn hears the same line (the rule again, refused there) and then
//! plays its steps; a ticket's turn starts the same way with the line handed down to it.

mod support;

use serde_json::{Value, json};
use support::ticket_team::*;
use support::*;
use troupe_core::ticket::ticket_folder_name;
use troupe_core::work_item::WorkMode;
use troupe_store::{Layout, LayoutItem, WorkItemRecord};

/// Tickets laid out for the job, the Lead owning each: #01 Poster, #02 Slogans.
fn lay_out_for_lead(t: &Team) {
    let folder = t.w.collab.plan(t.plan).unwrap().folder;
    let item = |title: &str| LayoutItem {
        title: title.into(),
        owner_bot_id: Some(t.lead),
        ..LayoutItem::default()
    };
    t.w.collab
        .store()
        .write(|tx| {
            tx.lay_out(
                t.plan,
                &Layout {
                    items: vec![item("Poster"), item("Slogans")],
                    drops: Vec::new(),
                },
                |n, title| format!("{folder}/{}", ticket_folder_name(n as u32, title)),
            )
        })
        .unwrap();
}

fn work_on_ticket(n: i64) -> Value {
    call("work_on", json!({ "ticket": n }))
}

/// The Lead's work items on the job: the whole job's and each ticket's.
fn lead_items(t: &Team) -> Vec<WorkItemRecord> {
    items(&t.w, t.lead)
        .into_iter()
        .filter(|i| i.mode == WorkMode::Work)
        .collect()
}

fn ticket_item(t: &Team, number: i64) -> Option<WorkItemRecord> {
    let id = tickets(t).into_iter().find(|k| k.number == number)?.id;
    lead_items(t)
        .into_iter()
        .find(|i| i.ticket_id == Some(id.0))
}

/// What the work's thread was first given.
fn first_heard(t: &Team, item: &WorkItemRecord) -> String {
    t.w.collab
        .store()
        .read(|tx| tx.messages(item.thread_id, None, 10))
        .unwrap()[0]
        .text()
}

/// S-DS-3: the whole job's segment, having already run a command, moves to the Lead's own
/// ticket; the ticket's turn starts with the line, in the ticket's folder, and writes there.
#[tokio::test]
async fn ds15_whole_job_moves_down_to_its_own_ticket_even_after_acting() {
    let t = team();
    lay_out_for_lead(&t);
    rescript(
        &t.w,
        t.lead,
        &bind_lead(&[
            call("shell", json!({"command": "echo looked"})),
            work_on_ticket(1),
            call(
                "write_file",
                json!({"path": "poster.txt", "content": "the poster"}),
            ),
            done(),
        ]),
    );
    say_and_wait(&t, t.lead, "ZQX", "write_file", 1).await;
    let moves: Vec<_> = all_calls(&t.w, t.lead)
        .into_iter()
        .filter(|c| c.name == "work_on" && c.arguments.contains("ticket"))
        .collect();
    assert!(
        moves[0]
            .result
            .contains("You moved to ticket #01 \"Poster\""),
        "{}",
        moves[0].result
    );
    let whole = lead_items(&t)
        .into_iter()
        .find(|i| i.ticket_id.is_none())
        .unwrap();
    let ended = ends(&t.w, whole.thread_id);
    assert_eq!(ended, vec!["moved"], "the whole job's segment ended moved");
    let poster = ticket_item(&t, 1).expect("the Lead's work on #01");
    let heard = first_heard(&t, &poster);
    assert!(
        heard.contains("You moved here from your work on the whole job") && heard.contains("ZQX"),
        "{heard}"
    );
    let folder = t.w.collab.plan(t.plan).unwrap().folder;
    let written = std::fs::read_to_string(format!("{folder}/01-Poster/poster.txt")).unwrap();
    assert_eq!(
        written, "the poster",
        "the ticket's turn wrote in its folder"
    );
    // DS-11: the line stays filed to the whole job.
    let line =
        t.w.collab
            .lines(t.s, None, 100)
            .unwrap()
            .into_iter()
            .find(|l| l.body.contains("ZQX"))
            .unwrap();
    let filings =
        t.w.collab
            .store()
            .read(|tx| tx.filings_of_line(line.id))
            .unwrap();
    assert!(filings.iter().all(|f| f.ticket_id.is_none()), "{filings:?}");
}

/// S-DS-10: a segment on a ticket that wrote files or ran commands keeps its ticket.
#[tokio::test]
async fn ds15_a_ticket_segment_that_acted_keeps_its_ticket() {
    let t = team();
    lay_out_for_lead(&t);
    rescript(
        &t.w,
        t.lead,
        &bind_lead(&[
            work_on_ticket(1),
            call("shell", json!({"command": "echo working"})),
            work_on_ticket(2),
            done(),
        ]),
    );
    say_and_wait(&t, t.lead, "ZQX", "end_turn", 1).await;
    let poster = ticket_item(&t, 1).expect("the Lead's work on #01");
    let results: Vec<String> = runs_of(&t.w, poster.thread_id)
        .iter()
        .flat_map(|r| calls_of(&t.w, r.id))
        .filter(|c| c.name == "work_on")
        .map(|c| c.result)
        .collect();
    assert!(
        results[1].contains("already working on ticket #01"),
        "{results:?}"
    );
    assert!(
        results[2].contains("already acted on ticket #01") && results[2].contains("#02"),
        "{results:?}"
    );
    assert!(ticket_item(&t, 2).is_none(), "nothing moved to #02");
}

/// DS-15 exception A: a ticket's segment that has done nothing yet moves to another ticket of
/// the same job.
#[tokio::test]
async fn ds15_a_ticket_segment_that_did_nothing_moves_to_another_ticket() {
    let t = team();
    lay_out_for_lead(&t);
    let script = json!({
        "steps": [{"text": "unused"}, work_on_ticket(1), work_on_ticket(2)],
        "rules": [
            // The Slogans' turn, handed the line from #01, just ends.
            {"when_user_contains": "from ticket #01", "reply": done()},
            {"when_user_contains": "ZQX", "reply": {"tool_calls": [
                {"name": "work_on", "arguments": {"plan": "plan_1"}}]}}
        ]
    });
    rescript(&t.w, t.lead, &script.to_string());
    let mut events = t.w.collab.store().subscribe();
    t.w.collab
        .post_line(t.s, "@Lead ZQX".into(), None)
        .await
        .unwrap();
    until(&mut events, "the Slogans' turn ended", || {
        ticket_item(&t, 2).is_some_and(|i| !ends(&t.w, i.thread_id).is_empty())
    })
    .await;
    let poster = ticket_item(&t, 1).unwrap();
    assert_eq!(ends(&t.w, poster.thread_id), vec!["moved"]);
    let slogans = ticket_item(&t, 2).unwrap();
    let heard = first_heard(&t, &slogans);
    assert!(
        heard.contains("You moved here from ticket #01 \"Poster\""),
        "{heard}"
    );
}
