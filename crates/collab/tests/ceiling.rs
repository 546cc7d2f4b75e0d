//! Capability ceiling (digest 003-B §7): hand-overs recorded as `submit` records them, settled
//! by the approval pass, sent back by the user's complaint or failed by a gate, until the
//! ticket is stuck; then the card, `ceiling_reached`, and the answers.

mod deliverables;
mod support;

use deliverables::*;
use support::*;
use troupe_collab::CollabError;
use troupe_collab::checks::{Checks, NewCheckRequest};
use troupe_collab::holds::ControlRequest;
use troupe_collab::submissions::Hooks;
use troupe_collab::submissions::handover::Refusal;
use troupe_collab::tickets::ball::ball_of;
use troupe_core::ball::Holder;
use troupe_core::conversation::{Author, SessionMessage};
use troupe_core::quality::QualityType;
use troupe_core::submission::SubmissionState;
use troupe_core::{SessionId, SessionMessageId};
use troupe_store::{FilingSource, NewFiling, NewLine, QualityFilter, SubmissionRecord};

/// A job with two tickets, both the Maker's and with no reviewer (two, so no one-go approval).
fn team() -> Team {
    Team::new(
        r#"{"steps":[{"text":"On it."}],"on_exhausted":"repeat_last"}"#,
        None,
        &[("Cut", Some(0), None), ("Poster", Some(0), None)],
    )
}

/// Hand over ticket #01 the way `submit` does, then settle it as its checks finish.
async fn hand_over(t: &Team, n: usize) -> Result<SubmissionRecord, Refusal> {
    hand_over_parts(t, n, Vec::new()).await
}

/// Hand over ticket #01 naming `parts`.
async fn hand_over_parts(
    t: &Team,
    n: usize,
    parts: Vec<troupe_core::PartId>,
) -> Result<SubmissionRecord, Refusal> {
    hand_over_files(
        t,
        Hooks::default(),
        0,
        vec![file("01-Cut/cut.mp4", n)],
        parts,
    )
    .await
}

/// The user finds fault with the hand-over under its line: the complaint sends it back.
async fn send_back(t: &Team, sub: &SubmissionRecord, words: &str) {
    send_back_in(t, t.s, sub, words).await
}

/// As `send_back`, with the hand-over's line and the complaint in conversation `at`.
async fn send_back_in(t: &Team, at: SessionId, sub: &SubmissionRecord, words: &str) {
    assert_eq!(sub.state, SubmissionState::AwaitingUser, "{sub:?}");
    let handed: SessionMessageId = t
        .store()
        .write(|tx| {
            let line = tx.insert_line(&NewLine {
                bot_id: Some(t.maker),
                ..NewLine::plain(at, Author::Bot, format!("Handed over {}", sub.id))
            })?;
            tx.file_line(&NewFiling {
                message_id: line.id,
                plan_id: t.plan,
                ticket_id: Some(t.tickets[0].0),
                part_id: None,
                source: FilingSource::Path,
                filed_by: "submit".into(),
                locked: true,
                primary: true,
            })?;
            Ok(line.id)
        })
        .unwrap();
    reader_says(
        &t.w,
        &format!(
            r#"{{"control":"neither","only_control":false,"status_question":false,"objections":["{words}"],"let_through":[],"belongs":"no_telling"}}"#
        ),
    );
    t.w.collab
        .post_line(at, words.into(), Some(handed))
        .await
        .unwrap();
    let id = sub.id;
    t.wait_for("sent back by the user", |s| {
        s.iter()
            .any(|s| s.id == id && s.state == SubmissionState::Rework)
    })
    .await;
}

fn card(t: &Team) -> SessionMessage {
    card_in(t, t.s).expect("a ceiling card in the job's conversation")
}

fn card_in(t: &Team, at: SessionId) -> Option<SessionMessage> {
    t.w.collab
        .lines(at, None, 200)
        .unwrap()
        .into_iter()
        .find(|l| l.control.as_ref().is_some_and(|c| c["kind"] == "ceiling"))
}

async fn press(t: &Team, line: &SessionMessage, action: &str) -> Result<(), CollabError> {
    t.w.collab
        .press_control(
            line.id,
            ControlRequest {
                action: action.into(),
                task_id: None,
            },
        )
        .await
        .map(|_| ())
}

fn pipeline_events(t: &Team) -> usize {
    t.store()
        .read(|tx| {
            tx.quality_events(&QualityFilter {
                maintainer: true,
                limit: 1000,
                ..QualityFilter::default()
            })
        })
        .unwrap()
        .iter()
        .filter(|e| e.kind == QualityType::Pipeline && e.cause == "ceiling")
        .count()
}

/// S-CC1: the user sends ticket #01 back three times in a row with no requirement named;
/// it is blocked, the card says so with no Relax, and `submit` on it is `ceiling_reached`
/// until the card is answered; an answer restarts the count and closes the card.
#[tokio::test]
async fn s_cc1_three_send_backs_in_a_row_block_the_ticket_without_relax() {
    let t = team();
    for n in 1..=3 {
        let sub = hand_over(&t, n).await.unwrap();
        let at_ceiling = t
            .store()
            .read(|tx| tx.ticket_at_ceiling(t.tickets[0]))
            .unwrap();
        assert!(!at_ceiling, "not stuck before the third send-back");
        send_back(&t, &sub, "还是不对").await;
    }
    let stuck = t
        .store()
        .read(|tx| tx.ticket_at_ceiling(t.tickets[0]))
        .unwrap();
    assert!(stuck, "three send-backs in a row stop the ticket");
    let ball = t
        .store()
        .read(|tx| ball_of(tx, &tx.ticket(t.tickets[0])?))
        .unwrap()
        .expect("an open ticket has a ball");
    assert_eq!(ball.holder, Holder::User, "{ball:?}");

    let c = card(&t);
    assert!(
        c.body.contains("you sent it back 3 times in a row"),
        "{}",
        c.body
    );
    let offer = c.control.as_ref().unwrap()["offer"].clone();
    assert_eq!(
        offer,
        serde_json::json!(["another_way", "change_plan", "take_as_is", "carry_on"])
    );
    assert_eq!(pipeline_events(&t), 1);

    // CC1: nothing more is handed over on it until the card is answered.
    let refused = hand_over(&t, 4).await.unwrap_err();
    assert_eq!(refused.code, "ceiling_reached", "{refused}");

    // No Relax on case (b), and the refused press wrote nothing.
    let err = press(&t, &c, "relax").await.unwrap_err();
    assert!(
        matches!(&err, CollabError::Invalid(m) if m.starts_with("action_not_offered")),
        "{err:?}"
    );
    assert!(
        t.store()
            .read(|tx| tx.ticket_at_ceiling(t.tickets[0]))
            .unwrap()
    );

    press(&t, &c, "carry_on").await.unwrap();
    assert!(
        !t.store()
            .read(|tx| tx.ticket_at_ceiling(t.tickets[0]))
            .unwrap()
    );
    let answered = card(&t);
    assert_eq!(
        answered.control.as_ref().unwrap()["offer"],
        serde_json::json!([])
    );
    assert_eq!(answered.control.as_ref().unwrap()["answer"], "carry_on");
    let again = press(&t, &c, "another_way").await.unwrap_err();
    assert!(
        matches!(
            &again,
            CollabError::Conflict {
                code: "card_closed",
                ..
            }
        ),
        "{again:?}"
    );

    // The count restarted: the next hand-over is taken, and one more send-back stops nothing.
    let next = hand_over(&t, 5)
        .await
        .expect("handed over after the answer");
    send_back(&t, &next, "还是不对").await;
    assert!(
        !t.store()
            .read(|tx| tx.ticket_at_ceiling(t.tickets[0]))
            .unwrap()
    );
}

/// Case (a): the same gate fails on three hand-overs in a row; the card offers Relax, whose
/// press is the user's (CC2) and restarts the count; a second press finds the card closed.
#[tokio::test]
async fn s_cc_a_the_same_requirement_failing_three_times_offers_relax() {
    let t = team();
    let checks = Checks::new(
        t.store().clone(),
        std::sync::Arc::new(support::check_rig::Videos::default()),
    );
    let check = checks
        .create(
            t.plan,
            &NewCheckRequest {
                kind: "file_exists".into(),
                path: Some("01-Cut/missing.mp4".into()),
                ticket_id: Some(t.tickets[0].0),
                ..NewCheckRequest::default()
            },
        )
        .unwrap();
    for n in 1..=3 {
        let sub = hand_over(&t, n).await.unwrap();
        assert_eq!(sub.state, SubmissionState::FailedChecks, "{sub:?}");
    }
    let c = card(&t);
    let control = c.control.clone().unwrap();
    assert_eq!(control["case"], "same_requirement");
    assert_eq!(control["requirement"], check.id.to_string());
    assert!(
        control["offer"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o == "relax"),
        "{control}"
    );
    assert!(c.body.contains(&check.id.to_string()), "{}", c.body);
    assert_eq!(hand_over(&t, 4).await.unwrap_err().code, "ceiling_reached");

    let unknown = press(&t, &c, "stop").await.unwrap_err();
    assert!(matches!(unknown, CollabError::Invalid(_)), "{unknown:?}");
    press(&t, &c, "relax").await.unwrap();
    let cards = t
        .store()
        .read(|tx| tx.ceiling_cards_of_ticket(t.tickets[0]))
        .unwrap();
    assert_eq!(cards.len(), 1);
    assert_eq!(cards[0].answer.map(|a| a.as_str()), Some("relax"));
    // A check's id is no ledger entry: the relax is recorded on the card only.
    assert_eq!(cards[0].relaxed_requirement_id, None);
    let closed = press(&t, &c, "take_as_is").await.unwrap_err();
    assert!(
        matches!(
            &closed,
            CollabError::Conflict {
                code: "card_closed",
                ..
            }
        ),
        "{closed:?}"
    );
    // Counting restarted: one more failure does not stop it again.
    let sub = hand_over(&t, 5).await.unwrap();
    assert_eq!(sub.state, SubmissionState::FailedChecks);
    assert!(
        !t.store()
            .read(|tx| tx.ticket_at_ceiling(t.tickets[0]))
            .unwrap()
    );
}

/// Take it as it is approves the ticket with the hand-over that tipped the card.
#[tokio::test]
async fn s_cc_take_as_is_approves_the_ticket() {
    let t = team();
    for n in 1..=3 {
        let sub = hand_over(&t, n).await.unwrap();
        send_back(&t, &sub, "不行").await;
    }
    let c = card(&t);
    press(&t, &c, "take_as_is").await.unwrap();
    assert_eq!(
        t.ticket(0).stage,
        troupe_core::ticket::TicketStage::Approved
    );
    let subs = t.subs();
    let tipped = subs.iter().max_by_key(|s| s.id.0).unwrap();
    assert_eq!(tipped.state, SubmissionState::Approved);
}

/// Counting is per part: the part that keeps failing is blocked and refused, another part is
/// still handed over, and a hand-over naming no part is refused while a part is stuck.
#[tokio::test]
async fn s_cc_a_stuck_part_blocks_itself_and_part_less_hand_overs_only() {
    let t = team();
    let parts = t
        .store()
        .write(|tx| tx.add_parts(t.tickets[0], &["Verse".into(), "Chorus".into()]))
        .unwrap();
    let (verse, chorus) = (parts[0].id, parts[1].id);
    let checks = Checks::new(
        t.store().clone(),
        std::sync::Arc::new(support::check_rig::Videos::default()),
    );
    checks
        .create(
            t.plan,
            &NewCheckRequest {
                kind: "file_exists".into(),
                path: Some("01-Cut/missing.mp4".into()),
                ticket_id: Some(t.tickets[0].0),
                ..NewCheckRequest::default()
            },
        )
        .unwrap();
    for n in 1..=3 {
        hand_over_parts(&t, n, vec![verse]).await.unwrap();
    }
    let blocked = |id| t.store().read(|tx| tx.part(id)).unwrap().blocked;
    assert!(blocked(verse), "the verse failed three times");
    assert!(!blocked(chorus), "the chorus was never handed over");
    let c = card(&t);
    assert!(c.body.starts_with("Part \"Verse\""), "{}", c.body);
    let refused = hand_over_parts(&t, 4, vec![verse]).await.unwrap_err();
    assert_eq!(refused.code, "ceiling_reached");
    assert!(refused.text.contains("Verse"), "{refused}");
    assert_eq!(hand_over(&t, 5).await.unwrap_err().code, "ceiling_reached");
    hand_over_parts(&t, 6, vec![chorus])
        .await
        .expect("another part is still handed over");

    press(&t, &c, "change_plan").await.unwrap();
    assert!(!blocked(verse), "answering the card lifts the block");
    hand_over_parts(&t, 7, vec![verse])
        .await
        .expect("handed over once the card is answered");
}

/// A ticket closed another way (the user's board edit to done): the card still asking says why,
/// loses its buttons, unblocks, and takes no answer.
#[tokio::test]
async fn s_cc_a_card_still_asking_closes_with_its_ticket() {
    let t = team();
    for n in 1..=3 {
        let sub = hand_over(&t, n).await.unwrap();
        send_back(&t, &sub, "不对").await;
    }
    let c = card(&t);
    t.w.collab
        .patch_ticket(
            t.tickets[0],
            troupe_collab::tickets::TicketPatchRequest {
                status: Some(troupe_core::ticket::TicketStatus::Done),
                ..Default::default()
            },
        )
        .unwrap();
    let closed = card(&t);
    let control = closed.control.unwrap();
    assert_eq!(control["offer"], serde_json::json!([]));
    assert!(
        control["closed"].as_str().unwrap().contains("approved"),
        "{control}"
    );
    assert!(
        !t.store()
            .read(|tx| tx.ticket_at_ceiling(t.tickets[0]))
            .unwrap()
    );
    let err = press(&t, &c, "carry_on").await.unwrap_err();
    assert!(
        matches!(&err, CollabError::Conflict { code: "card_closed", message } if message.contains("approved")),
        "{err:?}"
    );
}

/// B §5.8: the user last spoke about the job in their direct with the maker, so the card is
/// posted there, and answered there it has the rework run in that direct.
#[tokio::test]
async fn s_cc_a_card_answered_in_the_direct_with_the_maker_has_the_rework_run_there() {
    let t = team();
    let d = direct(&t.w, t.maker);
    for n in 1..=3 {
        let sub = hand_over(&t, n).await.unwrap();
        if n == 3 {
            // The user's latest word on the job is in the direct with the maker.
            t.store()
                .write(|tx| {
                    let line = tx.insert_line(&NewLine::plain(
                        d,
                        Author::User,
                        "about the cut: keep it under a minute".into(),
                    ))?;
                    tx.file_line(&NewFiling {
                        message_id: line.id,
                        plan_id: t.plan,
                        ticket_id: Some(t.tickets[0].0),
                        part_id: None,
                        source: FilingSource::Desk,
                        filed_by: "user".into(),
                        locked: true,
                        primary: true,
                    })
                })
                .unwrap();
        }
        let at = if n == 3 { d } else { t.s };
        send_back_in(&t, at, &sub, "还是不对").await;
    }
    assert!(card_in(&t, t.s).is_none(), "the card went to the group");
    let c = card_in(&t, d).expect("a ceiling card in the direct with the maker");
    press(&t, &c, "another_way").await.unwrap();
    let work = t
        .store()
        .read(|tx| tx.work_items_of_bot(t.maker))
        .unwrap()
        .into_iter()
        .find(|w| w.plan_id == Some(t.plan) && w.mode == troupe_core::work_item::WorkMode::Work)
        .expect("the maker's work on the job");
    assert_eq!(work.speaks_in, Some(d), "the rework speaks in the direct");
}
