//! Who does what in a job (digest B §1.6, ADR 0086): a ticket's row says "Actually: X" when its
//! owner ran none of it and "Also X" when another Bot ran it too with no reviewer; a picked
//! ticket offers "Make X the reviewer" once a Bot that is neither owner nor reviewer ran five
//! of its turns (S-T6), with no line in the conversation; the job's view counts each Bot's
//! tickets owned and reviewed and the turns it ran, on others' tickets and under none.

mod support;

use support::*;
use troupe_collab::tickets::{TicketPatchRequest, TicketView, TurnsRun};
use troupe_core::{BotId, PlanId, SessionId, TicketId};

const REPLY: &str = r#"{"steps":[{"text":"done"}],"on_exhausted":"repeat_last"}"#;

/// `bot`'s work on one ticket: its work item and thread in the ticket's folder.
fn ticket_work(w: &World, plan: PlanId, s: SessionId, bot: BotId, ticket: TicketId) -> JobWork {
    w.collab
        .store()
        .write(|tx| {
            let t = tx.ticket(ticket)?;
            let folder =
                std::path::Path::new(&tx.plan(plan)?.folder).join(format!("{:02}", t.number));
            std::fs::create_dir_all(&folder).unwrap();
            let thread = tx.create_thread(&troupe_store::NewThread {
                workspace_root: None,
                parent_id: None,
                title: t.title.clone(),
                agent: troupe_collab::bot_binding(&tx.bot(bot)?),
                workspace: folder.display().to_string(),
                interaction: troupe_core::thread::Interaction::Interactive,
            })?;
            let item = tx.create_ticket_item(bot, plan, ticket, thread.id, Some(s))?;
            Ok(JobWork {
                plan,
                item: item.id,
                thread: thread.id,
            })
        })
        .unwrap()
}

/// `n` turns of the work, one after another.
async fn turns(w: &World, j: &JobWork, n: usize) {
    for i in 0..n {
        task_on_job(w, j, &format!("Go on ({i}).")).await;
    }
}

fn ticket(w: &World, id: TicketId) -> TicketView {
    w.collab.ticket(id).unwrap()
}

fn ran(view: &TicketView) -> Vec<(BotId, u32)> {
    view.ran_by
        .iter()
        .map(|TurnsRun { bot_id, turns }| (*bot_id, *turns))
        .collect()
}

#[tokio::test]
async fn s_t6_five_turns_by_a_bot_neither_owner_nor_reviewer_offer_it_as_reviewer_and_say_nothing_in_the_conversation()
 {
    let w = world();
    let owner = bot(&w, "Writer", REPLY);
    let helper = bot(&w, "Editor", REPLY);
    let s = group(&w, &[owner, helper]);
    let job = open_job_work(&w, s, owner, "Brochure");
    let t = supervise::add_ticket(&w, &job, "Copy", owner, None);
    let work = ticket_work(&w, job.plan, s, helper, t);

    // Four turns: the owner ran none of it, so the row says who did; no reviewer offered yet.
    turns(&w, &work, 4).await;
    let v = ticket(&w, t);
    assert_eq!(ran(&v), [(helper, 4)]);
    assert_eq!(v.ran_line.as_deref(), Some("Actually: Editor"));
    assert_eq!(v.reviewer_suggestion, None);

    // The fifth makes the offer; it is only shown.
    turns(&w, &work, 1).await;
    let v = ticket(&w, t);
    assert_eq!(ran(&v), [(helper, 5)]);
    assert_eq!(v.reviewer_suggestion, Some(helper));
    assert_eq!(v.reviewer_bot_id, None, "never applied by itself");
    assert_eq!(
        lines_said(&w, s),
        ["done"; 5],
        "only the Bot's replies: no line of the app's"
    );
    let listed = w.collab.tickets(job.plan).unwrap();
    assert_eq!(listed.tickets[0].reviewer_suggestion, Some(helper));

    // Made the reviewer, the offer goes, and its turns are reviewing, not running the ticket.
    w.collab
        .patch_ticket(
            t,
            TicketPatchRequest {
                reviewer_bot_id: Some(Some(helper)),
                ..Default::default()
            },
        )
        .unwrap();
    let v = ticket(&w, t);
    assert_eq!((v.reviewer_suggestion, v.ran_line), (None, None));
}

#[tokio::test]
async fn an_owner_who_ran_it_with_another_bot_reads_also_until_the_ticket_has_a_reviewer() {
    let w = world();
    let owner = bot(&w, "Writer", REPLY);
    let helper = bot(&w, "Editor", REPLY);
    let third = bot(&w, "Checker", REPLY);
    let s = group(&w, &[owner, helper, third]);
    let job = open_job_work(&w, s, owner, "Brochure");
    let t = supervise::add_ticket(&w, &job, "Copy", owner, None);
    turns(&w, &ticket_work(&w, job.plan, s, owner, t), 2).await;
    turns(&w, &ticket_work(&w, job.plan, s, helper, t), 1).await;

    let v = ticket(&w, t);
    assert_eq!(ran(&v), [(owner, 2), (helper, 1)]);
    assert_eq!(v.ran_line.as_deref(), Some("Also Editor"));

    w.collab
        .patch_ticket(
            t,
            TicketPatchRequest {
                reviewer_bot_id: Some(Some(third)),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(ticket(&w, t).ran_line, None);
}

#[tokio::test]
async fn who_does_what_counts_tickets_owned_and_reviewed_and_where_each_bots_turns_went() {
    let w = world();
    let lead = bot(&w, "Lead", REPLY);
    let maker = bot(&w, "Maker", REPLY);
    let idle = bot(&w, "Idle", REPLY);
    let s = group(&w, &[lead, maker, idle]);
    let job = open_job_work(&w, s, lead, "Site");
    let home = supervise::add_ticket(&w, &job, "Home page", maker, Some(lead));
    let about = supervise::add_ticket(&w, &job, "About page", idle, None);
    // The maker runs its own ticket twice and the idle Bot's once; the lead works under no
    // ticket once and reviews once.
    turns(&w, &ticket_work(&w, job.plan, s, maker, home), 2).await;
    turns(&w, &ticket_work(&w, job.plan, s, maker, about), 1).await;
    turns(&w, &job, 1).await;
    turns(&w, &ticket_work(&w, job.plan, s, lead, home), 1).await;

    let listed = w.collab.tickets(job.plan).unwrap();
    let shares: Vec<(&str, u32, u32, u32, u32, u32, bool)> = listed
        .who_does_what
        .iter()
        .map(|b| {
            (
                b.name.as_str(),
                b.owns,
                b.reviews,
                b.turns,
                b.on_others,
                b.unticketed,
                b.ran_nothing,
            )
        })
        .collect();
    assert_eq!(
        shares,
        [
            ("Lead", 0, 1, 2, 1, 1, false),
            ("Maker", 1, 0, 3, 1, 0, false),
            ("Idle", 1, 0, 0, 0, 0, true),
        ]
    );
    // The idle Bot's ticket was run by the maker alone; the lead reviewing "Home page" is not
    // running it.
    let by_id = |id: TicketId| listed.tickets.iter().find(|t| t.id == id).unwrap();
    assert_eq!(by_id(about).ran_line.as_deref(), Some("Actually: Maker"));
    assert_eq!(by_id(home).ran_line, None);
}

#[tokio::test]
async fn a_dropped_ticket_says_nothing_about_who_ran_it() {
    let w = world();
    let owner = bot(&w, "Writer", REPLY);
    let helper = bot(&w, "Editor", REPLY);
    let s = group(&w, &[owner, helper]);
    let job = open_job_work(&w, s, owner, "Brochure");
    let t = supervise::add_ticket(&w, &job, "Copy", owner, None);
    turns(&w, &ticket_work(&w, job.plan, s, helper, t), 5).await;
    w.collab
        .patch_ticket(
            t,
            TicketPatchRequest {
                status: Some(troupe_core::ticket::TicketStatus::Parked),
                ..Default::default()
            },
        )
        .unwrap();
    let v = ticket(&w, t);
    assert_eq!(ran(&v), [(helper, 5)], "the turns stay on record");
    assert_eq!((v.ran_line, v.reviewer_suggestion), (None, None));
    let shares = w.collab.tickets(job.plan).unwrap().who_does_what;
    assert_eq!(shares.iter().map(|b| b.owns).sum::<u32>(), 0, "{shares:?}");
}
