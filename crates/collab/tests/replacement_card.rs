//! The replacement card (digest 003-C §16 CW-18; S-CW-2): a check from the user's words in
//! force never changes by itself; a different later target puts a card up, reposted with the
//! count when said again, withdrawn when the old number is said again, answered once.

mod support;

use support::check_rig::*;
use troupe_collab::CollabError;
use troupe_collab::holds::ControlRequest;
use troupe_core::conversation::SessionMessage;
use troupe_store::{CheckKind, CheckRecord, WordsStatus};

async fn says(r: &Rig, words: &str) {
    r.user_says(words);
    r.checks.sync_words(r.plan).await.unwrap();
}

fn words(r: &Rig) -> Vec<CheckRecord> {
    r.w.collab
        .store()
        .read(|tx| tx.checks_of_plan(r.plan, false))
        .unwrap()
        .into_iter()
        .filter(|c| c.kind == CheckKind::Words)
        .collect()
}

fn in_force(r: &Rig) -> CheckRecord {
    let mut f: Vec<_> = words(r)
        .into_iter()
        .filter(|c| c.status == Some(WordsStatus::InForce))
        .collect();
    assert_eq!(f.len(), 1, "{f:?}");
    f.remove(0)
}

/// Every replacement card posted, oldest first.
fn cards(r: &Rig) -> Vec<SessionMessage> {
    r.w.collab
        .lines(r.session, None, 500)
        .unwrap()
        .into_iter()
        .filter(|l| {
            l.control
                .as_ref()
                .is_some_and(|c| c["kind"] == "replacement")
        })
        .collect()
}

fn open_cards(r: &Rig) -> Vec<SessionMessage> {
    cards(r)
        .into_iter()
        .filter(|l| l.control.as_ref().unwrap()["offer"] != serde_json::json!([]))
        .collect()
}

async fn press(
    r: &Rig,
    card: &SessionMessage,
    action: &str,
) -> Result<serde_json::Value, CollabError> {
    r.w.collab
        .press_control(
            card.id,
            ControlRequest {
                action: action.into(),
                task_id: None,
            },
        )
        .await
        .map(|o| serde_json::to_value(o.replacement.expect("a replacement answer")).unwrap())
}

/// About 2 minutes said and confirmed: the check in force.
async fn two_minutes_in_force() -> Rig {
    let r = rig("剪一个产品短片");
    r.w.collab.use_checks(r.checks.clone());
    says(&r, "片长约 2 分钟").await;
    let offer = words(&r).remove(0);
    r.checks.confirm(offer.id).await.unwrap();
    assert_eq!(in_force(&r).max, Some(132.0));
    r
}

/// S-CW-2: confirmed about 2 min; 「片长改成 3 分钟」 puts a card up and the old check stands;
/// said again it is reposted with the count; "Change" prefills the composer and brings no
/// card back by itself; a second press is refused; "Use the new one" replaces the check.
#[tokio::test]
async fn s_cw_2_a_later_target_asks_on_a_card_and_the_old_check_stands_until_answered() {
    let r = two_minutes_in_force().await;
    let old = in_force(&r).id;
    says(&r, "片长改成 3 分钟").await;
    let up = open_cards(&r);
    assert_eq!(up.len(), 1);
    assert!(
        up[0]
            .body
            .starts_with("片长：生效中的检查是 108–132 s，你后来说的是 162–198 s"),
        "{}",
        up[0].body
    );
    let control = up[0].control.clone().unwrap();
    assert_eq!(
        control["offer"],
        serde_json::json!(["use_new", "change", "keep_old"])
    );
    assert_eq!(in_force(&r).id, old, "the old check stays in force");
    assert!(
        r.w.collab
            .store()
            .read(|tx| tx.line_deliveries(up[0].id))
            .unwrap()
            .is_empty(),
        "a card reaches no Bot"
    );

    // Said again: the card comes back counting; the first one loses its buttons.
    says(&r, "片长改成 3 分钟吧").await;
    let all = cards(&r);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].control.as_ref().unwrap()["closed"], "reposted");
    let up = open_cards(&r);
    assert_eq!(up.len(), 1);
    assert!(
        up[0].body.starts_with("你已经说了 2 次。"),
        "{}",
        up[0].body
    );

    // Change: the composer's words, the card answered, and nothing new put up.
    let answer = press(&r, &up[0], "change").await.unwrap();
    assert_eq!(answer["prefill"], "片长改成 ");
    assert_eq!(answer["in_force_check_id"], serde_json::json!(old));
    r.checks.sync_words(r.plan).await.unwrap();
    assert!(open_cards(&r).is_empty());
    assert_eq!(cards(&r).len(), 2);
    let again = press(&r, &up[0], "use_new").await.unwrap_err();
    assert!(again.to_string().starts_with("card_closed"), "{again}");

    // Said a third time: a card again, and "Use the new one" takes it.
    says(&r, "片长就 3 分钟").await;
    let up = open_cards(&r);
    assert_eq!(up.len(), 1);
    assert!(
        up[0].body.starts_with("你已经说了 3 次。"),
        "{}",
        up[0].body
    );
    let answer = press(&r, &up[0], "use_new").await.unwrap();
    let now = in_force(&r);
    assert_ne!(now.id, old);
    assert_eq!(now.max, Some(198.0));
    assert_eq!(answer["in_force_check_id"], serde_json::json!(now.id));
    assert!(open_cards(&r).is_empty());
    assert_eq!(
        cards(&r).len(),
        3,
        "no card put up again by the press itself"
    );
    assert!(r.check(old).removed_at.is_some());
}

/// CW-18: "Keep the old one" removes the new number's offer; the check in force is unchanged.
#[tokio::test]
async fn cw_18_keep_the_old_one_removes_the_new_offer() {
    let r = two_minutes_in_force().await;
    let old = in_force(&r).id;
    says(&r, "片长改成 3 分钟").await;
    let up = open_cards(&r);
    press(&r, &up[0], "keep_old").await.unwrap();
    assert_eq!(in_force(&r).id, old);
    assert_eq!(words(&r).len(), 1, "the offer is gone");
    r.checks.sync_words(r.plan).await.unwrap();
    assert!(
        open_cards(&r).is_empty(),
        "the words said so far count no more"
    );
}

/// CW-18: saying the old number again withdraws the card; a reading that is no target makes
/// none.
#[tokio::test]
async fn cw_18_the_old_number_said_again_withdraws_the_card() {
    let r = two_minutes_in_force().await;
    says(&r, "片长改成 3 分钟").await;
    assert_eq!(open_cards(&r).len(), 1);
    says(&r, "片长还是约 2 分钟").await;
    assert!(open_cards(&r).is_empty());
    let card = cards(&r).remove(0);
    assert_eq!(card.control.as_ref().unwrap()["closed"], "withdrawn");
    let refused = press(&r, &card, "use_new").await.unwrap_err();
    assert!(refused.to_string().starts_with("card_closed"), "{refused}");
}
