//! A complaint about some parts of a ticket (digest 003-C AT-5, S-AT-6; 003-B §5.5 CP3): the
//! reader files a line under the parts it faults, never those it praises, and the complaint
//! sends back only those parts of the hand-over; the maker hears which.

mod deliverables;
mod support;

use deliverables::*;
use serde_json::json;
use support::*;
use troupe_collab::submissions::Hooks;
use troupe_core::submission::SubmissionState;
use troupe_core::ticket::PartStage;
use troupe_store::PartRecord;

fn parts(t: &Team) -> Vec<PartRecord> {
    t.store()
        .read(|tx| tx.parts_of_ticket(t.tickets[0]))
        .unwrap()
}

/// S-AT-6, CP3: 「shot 2 is lovely, shot 3 is too dark」 on a hand-over of shots 2 and 3 files
/// the line under shot 3 only, and only shot 3 goes back to rework.
#[tokio::test]
async fn s_at_6_a_complaint_sends_back_only_the_parts_it_faults() {
    let t = Team::new(
        r#"{"steps":[{"text":"On it."}],"on_exhausted":"repeat_last"}"#,
        None,
        &[("Shots", Some(0), None), ("Poster", Some(0), None)],
    );
    t.store()
        .write(|tx| tx.add_parts(t.tickets[0], &["shot 2".into(), "shot 3".into()]))
        .unwrap();
    let sub = hand_over_files(
        &t,
        Hooks::default(),
        0,
        vec![file("01-Shots/shots.mp4", 7)],
        Vec::new(),
    )
    .await
    .unwrap();
    assert!(
        parts(&t).iter().all(|p| p.stage == PartStage::Submitted),
        "{:?}",
        parts(&t)
    );

    let plan = t.plan.to_string();
    let spec = script(
        &t.w,
        "reader-parts",
        &json!({
            "steps": [{"text": r#"{"control":"neither","objections":["shot 3 is too dark"],"let_through":[]}"#}],
            "on_exhausted": "repeat_last",
            "rules": [
                {"when_user_contains": "troupe-reader:filing",
                 "reply": {"text": json!({"belongs": "jobs", "jobs": [plan],
                     "parts": [{"job": plan, "ticket": 1, "part": "shot 3"}]}).to_string()}},
                {"when_user_contains": "troupe-reader:large_job",
                 "reply": {"text": r#"{"large": false}"#}}
            ]
        })
        .to_string(),
    );
    t.w.collab.set_role("reading", spec).unwrap();
    let line =
        t.w.collab
            .post_line(t.s, "shot 2 is lovely, shot 3 is too dark".into(), None)
            .await
            .unwrap();

    // Filed under the job, and under shot 3 of #01 only.
    let filings = t.store().read(|tx| tx.filings_of_line(line.id)).unwrap();
    let shot = |label: &str| parts(&t).into_iter().find(|p| p.label == label).unwrap();
    let filed_parts: Vec<_> = filings.iter().filter_map(|f| f.part_id.clone()).collect();
    assert_eq!(filed_parts, vec![shot("shot 3").id.0.to_string()]);

    let sub = t.store().read(|tx| tx.submission(sub.id)).unwrap();
    assert_eq!(sub.state, SubmissionState::Rework);
    assert_eq!(shot("shot 3").stage, PartStage::Rework);
    assert_eq!(
        shot("shot 2").stage,
        PartStage::Submitted,
        "praised, untouched"
    );
    // The maker hears which part, in its work on the job (queued, or read already).
    let item = job(&t.w, t.maker).expect("the maker's work on the job");
    let heard = t
        .store()
        .read(|tx| {
            Ok(format!(
                "{:?}{:?}",
                tx.inbox(item.thread_id)?,
                tx.messages_tail(item.thread_id, 50)?
            ))
        })
        .unwrap();
    assert!(heard.contains("(the part \\\"shot 3\\\")"), "{heard}");
}
