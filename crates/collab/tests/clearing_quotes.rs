//! Clearing a conversation with `erase_quotes` (UQ-2; CW-20; "clearing or deleting a session
//! together with what you said there removes the offers standing on those words at once, and
//! turns the checks you confirmed on them back into offers"). A real store on a manual clock
//! (SQLite, or PostgreSQL with TROUPE_TEST_DATABASE).

mod support;

use support::check_rig::*;
use support::*;
use troupe_core::words_check::Dimension;
use troupe_store::{CheckKind, CheckRecord, WordsStatus};

fn words(r: &Rig) -> Vec<CheckRecord> {
    r.w.collab
        .store()
        .read(|tx| tx.checks_of_plan(r.plan, true))
        .unwrap()
        .into_iter()
        .filter(|c| c.kind == CheckKind::Words)
        .collect()
}

fn live(r: &Rig, d: Dimension) -> Option<CheckRecord> {
    words(r)
        .into_iter()
        .find(|c| c.dimension == Some(d) && c.removed_at.is_none())
}

/// A job whose running time the person confirmed and whose frame rate is only offered, both
/// said in the rig's group; a line in another conversation keeps the job through a clear.
async fn job_with_words() -> Rig {
    let r = rig("剪一个产品短片");
    r.user_says("片长约 2 分钟");
    r.user_says("30 fps");
    r.checks.sync_words(r.plan).await.unwrap();
    let length = live(&r, Dimension::RunningTime).expect("a running-time offer");
    r.clock.advance(1_000);
    r.checks.confirm(length.id).await.unwrap();
    let other = direct(&r.w, bot(&r.w, "Helper", QUIET));
    let there = person_line(&r.w, other, "the film also goes on the site");
    r.w.collab
        .store()
        .write(|tx| tx.file_line(&filing(there.id, r.plan)))
        .unwrap();
    r
}

#[tokio::test]
async fn uq_2_erase_quotes_withdraws_offers_and_reverts_confirmed_checks() {
    let r = job_with_words().await;
    let length = live(&r, Dimension::RunningTime).unwrap();
    assert_eq!(length.status, Some(WordsStatus::InForce));
    let rate = words(&r)
        .into_iter()
        .find(|c| c.status == Some(WordsStatus::Offer) && c.removed_at.is_none())
        .expect("a frame-rate offer");

    r.clock.advance(1_000);
    let out = r.w.collab.clear_session(r.session, true).await.unwrap();
    assert_eq!(out.plans_kept, vec![r.plan]);
    assert_eq!(out.checks_reverted, vec![length.id]);
    assert_eq!(out.offers_withdrawn, vec![rate.id]);

    // The offer is gone at once; the confirmed check is an offer again, on no words, with
    // its number, and no gate.
    assert!(r.check(rate.id).removed_at.is_some());
    let reverted = r.check(length.id);
    assert_eq!(reverted.status, Some(WordsStatus::Offer));
    assert_eq!(reverted.quote_id, None);
    assert!(!reverted.gate && !reverted.confirmed);
    assert_eq!((reverted.min, reverted.max), (length.min, length.max));

    // Settling the job's words again does not quietly drop it (CW-20), and nothing else
    // comes back from the erased words.
    r.checks.sync_words(r.plan).await.unwrap();
    let after: Vec<_> = words(&r)
        .into_iter()
        .filter(|c| c.removed_at.is_none())
        .map(|c| (c.id, c.status))
        .collect();
    assert_eq!(after, vec![(length.id, Some(WordsStatus::Offer))]);
    // The person can confirm it again.
    r.clock.advance(1_000);
    let again = r.checks.confirm(length.id).await.unwrap();
    assert_eq!(again.status, Some(WordsStatus::InForce));

    // A second clear finds nothing more to erase.
    let twice = r.w.collab.clear_session(r.session, true).await.unwrap();
    assert!(twice.checks_reverted.is_empty() && twice.offers_withdrawn.is_empty());
}

/// UQ-1: without the box ticked, a clear leaves what stands on the person's words alone.
#[tokio::test]
async fn uq_1_clear_without_erase_quotes_leaves_the_checks_on_the_words() {
    let r = job_with_words().await;
    let before: Vec<_> = words(&r)
        .into_iter()
        .map(|c| (c.id, c.status, c.quote_id, c.removed_at))
        .collect();
    let out = r.w.collab.clear_session(r.session, false).await.unwrap();
    assert!(out.checks_reverted.is_empty() && out.offers_withdrawn.is_empty());
    let after: Vec<_> = words(&r)
        .into_iter()
        .map(|c| (c.id, c.status, c.quote_id, c.removed_at))
        .collect();
    assert_eq!(after, before);
}
