//! Checks from the user's words (C §16) through the runner: offered from a person's line,
//! measured on a Bot's delivery with a `MediaProbe` double, confirmed into a gate on the
//! hand-in; and the real ffprobe in `ffprobe_real`. A real store (SQLite, or PostgreSQL with
//! TROUPE_TEST_DATABASE) on a manual clock.

mod support;

use std::time::Duration;
use support::check_rig::*;
use troupe_collab::checks::{MediaProbe, PatchCheckRequest};
use troupe_core::submission::{
    ApprovalDecision, ApprovalFacts, CheckResult, OneGoFacts, SubmissionOrigin, approval_decision,
};
use troupe_core::words_check::probe::MediaFacts;
use troupe_store::{CheckKind, RunOutcome, WordsStatus};

fn facts(secs: f64, w: u32, h: u32) -> MediaFacts {
    MediaFacts {
        duration_secs: Some(secs),
        width: Some(w),
        height: Some(h),
        stored_width: Some(w),
        stored_height: Some(h),
        fps: Some(25.0),
        has_video: true,
        ..MediaFacts::default()
    }
}

fn decision(bound: &[troupe_collab::checks::BoundResult]) -> ApprovalDecision {
    approval_decision(&ApprovalFacts {
        origin: SubmissionOrigin::Explicit,
        has_reviewer: false,
        checks: bound.iter().map(|b| b.to_bound_check()).collect(),
        unbacked_required_items: vec![],
        routine_plan: false,
        one_go: OneGoFacts::default(),
        large_job_last_ticket: false,
        user_let_through: false,
    })
}

async fn until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn s_cw_1_offer_measured_never_blocks_then_confirmed_gates() {
    let r = rig("剪一个产品短片");
    let listener = r.checks.listen_for_filed_lines();
    let words = |r: &Rig| -> Vec<troupe_store::CheckRecord> {
        r.w.collab
            .store()
            .read(|tx| tx.checks_of_plan(r.plan, false))
            .unwrap()
            .into_iter()
            .filter(|c| c.kind == CheckKind::Words)
            .collect()
    };
    r.user_says("片长约 2 分钟");
    until("an offer", || words(&r).len() == 1).await;
    r.user_says("记得片长约 2 分钟");
    until("said twice", || {
        words(&r).first().is_some_and(|c| c.said_count == 2)
    })
    .await;
    let offer = words(&r).remove(0);
    assert_eq!(offer.status, Some(WordsStatus::Offer));
    assert!(!offer.gate && !offer.confirmed);
    assert_eq!((offer.min, offer.max), (Some(108.0), Some(132.0)));

    // A 107-s master is delivered: bound and measured at once, Fail, shown.
    r.videos.put("EP01_MASTER.mp4", facts(107.0, 1920, 1080));
    r.bot_delivers("deliverables/EP01_MASTER.mp4");
    until("measured", || {
        words(&r)[0]
            .runs
            .first()
            .is_some_and(|k| k.measured.is_some())
    })
    .await;
    let offer = words(&r).remove(0);
    assert_eq!(
        offer
            .path
            .as_deref()
            .map(|p| p.ends_with("deliverables/EP01_MASTER.mp4")),
        Some(true)
    );
    assert_eq!(offer.runs[0].outcome, RunOutcome::Failed);
    assert_eq!(offer.runs[0].measured, Some(107.0));
    assert!(
        offer.runs[0].detail.contains("107.00 s, asked 108–132 s"),
        "{}",
        offer.runs[0].detail
    );

    // Nothing is held back: the offer is bound, fails, and is no gate.
    let ticket = r.ticket();
    let sub = r.submit(&ticket, "deliverables/EP01_MASTER.mp4");
    let bound = r.checks.run_bound(sub).await.unwrap();
    assert_eq!(bound.len(), 1);
    assert_eq!((bound[0].gate, bound[0].result), (false, CheckResult::Fail));
    assert_eq!(bound[0].measured, Some(107.0));
    assert!(!matches!(decision(&bound), ApprovalDecision::Rework { .. }));
    assert_eq!(
        r.checks
            .edit(offer.id, &PatchCheckRequest::default())
            .unwrap_err()
            .to_string(),
        "derived_check: a check from your words is confirmed or removed, not edited"
    );

    // Confirmed: in force, re-measured at once, and now it holds the master back.
    r.clock.advance(1_000);
    let newest_before = r.check(offer.id).runs[0].id;
    let confirmed = r.checks.confirm(offer.id).await.unwrap();
    assert_eq!(confirmed.status, Some(WordsStatus::InForce));
    assert!(confirmed.gate && confirmed.confirmed);
    assert!(
        confirmed.runs[0].id > newest_before,
        "measured again on confirming"
    );
    assert_eq!(confirmed.runs[0].outcome, RunOutcome::Failed);
    assert_eq!(r.events("check_confirmed").len(), 1);
    let sub = r.submit(&ticket, "deliverables/EP01_MASTER.mp4");
    let bound = r.checks.run_bound(sub).await.unwrap();
    assert_eq!((bound[0].gate, bound[0].result), (true, CheckResult::Fail));
    assert_eq!(
        decision(&bound),
        ApprovalDecision::Rework {
            reasons: vec![offer.id]
        }
    );
    // The confirmation is an input of the approval: the job's undecided hand-overs are weighed
    // again at once, and the gate now fails them.
    r.w.collab.use_checks(r.checks.clone());
    r.w.collab.reweigh_job(r.plan).await;
    let states: Vec<_> =
        r.w.collab
            .store()
            .read(|tx| tx.submissions_of_plan(r.plan, None))
            .unwrap()
            .into_iter()
            .map(|s| s.state)
            .collect();
    assert!(
        !states.is_empty()
            && states
                .iter()
                .all(|s| *s == troupe_core::submission::SubmissionState::FailedChecks),
        "{states:?}"
    );

    // A later different target makes a new offer; the old offer id can no longer be confirmed
    // once withdrawn.
    r.user_says("片长改成 3 分钟");
    until("a replacement offer", || words(&r).len() == 2).await;
    r.user_says("片长改成 4 分钟");
    until("the 3-minute offer withdrawn", || {
        words(&r).iter().any(|c| c.max == Some(264.0))
    })
    .await;
    let gone =
        r.w.collab
            .store()
            .read(|tx| tx.checks_of_plan(r.plan, true))
            .unwrap()
            .into_iter()
            .find(|c| c.max == Some(198.0))
            .unwrap();
    let e = r.checks.confirm(gone.id).await.unwrap_err();
    assert!(e.to_string().starts_with("withdrawn"), "{e}");
    listener.abort();
}

/// The real ffprobe on clips ffmpeg makes now. Skipped with a notice without them; under
/// TROUPE_REQUIRE_FFPROBE=1 their absence fails.
#[tokio::test]
async fn ffprobe_real() {
    let have = |p: &str| {
        std::process::Command::new(p)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("ffmpeg") || !have("ffprobe") {
        assert!(
            std::env::var("TROUPE_REQUIRE_FFPROBE").as_deref() != Ok("1"),
            "TROUPE_REQUIRE_FFPROBE=1 but ffmpeg or ffprobe is missing"
        );
        eprintln!("ffprobe_real skipped: ffmpeg and ffprobe are not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let make = |name: &str, args: &[&str]| {
        let out = dir.path().join(name);
        let st = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y"])
            .args(args)
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success(), "ffmpeg made {name}");
        out
    };
    let long = make(
        "long.mp4",
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=black:s=32x18:r=25:d=107",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
        ],
    );
    // A phone clip stored 1920×1080 and flagged 90°: the flag is written on a stream copy.
    let stored = make(
        "stored.mp4",
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=black:s=1920x1080:r=25:d=1",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
        ],
    );
    let turned = make(
        "turned.mp4",
        &[
            "-i",
            stored.to_str().unwrap(),
            "-c",
            "copy",
            "-metadata:s:v:0",
            "rotate=90",
        ],
    );
    let sixty = make(
        "sixty.mp4",
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=black:s=32x18:r=60:d=1",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
        ],
    );
    let probe = troupe_collab::checks::Ffprobe::default();
    let f = probe.probe(&long).await.unwrap();
    assert!((f.duration_secs.unwrap() - 107.0).abs() < 0.1, "{f:?}");
    assert_eq!((f.width, f.height), (Some(32), Some(18)));
    assert!((f.fps.unwrap() - 25.0).abs() < 0.01);
    let f = probe.probe(&turned).await.unwrap();
    assert_eq!(f.rotation % 180, 90, "{f:?}");
    assert_eq!(
        (f.width, f.height),
        (Some(1080), Some(1920)),
        "portrait as it plays: {f:?}"
    );
    let portrait = troupe_core::words_check::Number::new(
        troupe_core::words_check::Value::Orientation {
            orientation: troupe_core::words_check::Orientation::Portrait,
        },
        troupe_core::words_check::Bound::Exact,
    );
    let m = troupe_core::words_check::probe::measure(&portrait, &f);
    assert_eq!(
        m.outcome,
        troupe_core::words_check::probe::Outcome::Passed,
        "{}",
        m.detail
    );
    let f = probe.probe(&sixty).await.unwrap();
    assert!((f.fps.unwrap() - 60.0).abs() < 0.01);
    let e = probe
        .probe(&dir.path().join("missing.mp4"))
        .await
        .unwrap_err();
    assert!(e.starts_with("ffprobe could not read"), "{e}");
    let none = troupe_collab::checks::Ffprobe {
        program: "ffprobe-not-installed".into(),
        ..Default::default()
    };
    assert_eq!(
        none.probe(&long).await.unwrap_err(),
        "ffprobe-not-installed is not installed"
    );
}
