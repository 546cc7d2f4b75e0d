//! A Bot's skills (ADR 0052): kept with `write_skill`, read whole with `read_skill`, named in
//! its catalog at every model call beside the project skills that are on (QE7); under a stop,
//! reading a skill still works and writing one does not (HOLD-T1, HOLD-T2).

mod support;

use serde_json::json;
use std::time::Duration;
use support::*;
use troupe_collab::CollabError;
use troupe_collab::memories::KeptSituation;
use troupe_core::ThreadId;
use troupe_engine::extension::{ContextContributor, ContextParts};

async fn idle(w: &World, t: ThreadId) {
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .expect("the thread went idle");
}

fn situation(w: &World, t: ThreadId) -> String {
    let thread = w.collab.store().read(|tx| tx.thread(t)).unwrap();
    let mut parts = ContextParts::default();
    KeptSituation.contribute(&thread, w.collab.store(), &mut parts);
    parts.situation.join("\n")
}

#[tokio::test]
async fn a_bot_keeps_a_skill_reads_a_shared_one_whole_and_its_catalog_names_both() {
    let w = world();
    let ben = bot(&w, "Ben", r#"{"steps":[{"text":"ok"}]}"#);
    let style = w
        .collab
        .add_bot_skill(
            ben,
            "House style",
            "How we write",
            "Short sentences. No jargon.",
        )
        .unwrap();
    let unconfirmed = w.collab.share_bot_skill(style.id, false);
    assert!(
        matches!(&unconfirmed, Err(CollabError::Invalid(m)) if m.contains("confirm")),
        "QE7: sharing is confirmed once more: {unconfirmed:?}"
    );
    w.collab.share_bot_skill(style.id, true).unwrap();

    let script = json!({"steps": [
        {"tool_calls": [{"name": "write_skill", "arguments": {
            "name": "Renders", "description": "How I render",
            "body": "Render twice.\n\nCount the frames."}}]},
        {"tool_calls": [{"name": "read_skill", "arguments": {"name": "house style"}}]},
        {"tool_calls": [{"name": "write_skill", "arguments": {"name": "Captions", "body": "Burn in."}}]},
        {"tool_calls": [{"name": "read_skill", "arguments": {"name": "Fonts"}}]},
        {"text": "Done."}
    ]});
    let ada = bot(&w, "Ada", &script.to_string());
    let s = direct(&w, ada);
    let t = thread_of(&w, s, ada);
    w.collab
        .post_line(s, "keep how you render".into(), None)
        .await
        .unwrap();
    idle(&w, t).await;
    let run = runs_of(&w, t).pop().unwrap();
    let calls = calls_of(&w, run.id);
    assert!(
        calls[0]
            .result
            .contains("Kept \"Renders\" (1 of 30 skills)"),
        "{calls:?}"
    );
    assert!(
        calls[1].result.contains("(project skill, from Ben)")
            && calls[1].result.contains("Short sentences. No jargon."),
        "{}",
        calls[1].result
    );
    assert!(
        calls[2].result.contains("needs a description"),
        "a new skill needs its catalog line: {}",
        calls[2].result
    );

    assert!(
        calls[3]
            .result
            .contains("no skill \"Fonts\"; your catalog has: Renders, House style"),
        "an unknown name is answered with the catalog's names: {}",
        calls[3].result
    );

    let catalog = situation(&w, t);
    assert!(catalog.contains("- Renders: How I render"), "{catalog}");
    assert!(
        catalog.contains("- House style: How we write (from Ben)"),
        "{catalog}"
    );
    assert!(
        !catalog.contains("Count the frames"),
        "the catalog never carries a text"
    );

    // Turned off, the project skill leaves every catalog.
    let shared = w.collab.project_skills().unwrap();
    w.collab
        .set_project_skill_enabled(shared[0].id, false)
        .unwrap();
    assert!(!situation(&w, t).contains("House style"));
}

#[tokio::test]
async fn hold_t2_a_stopped_bot_still_reads_its_skill_but_cannot_write_one() {
    let w = world();
    let reader = script(
        &w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\",\"status_question\":true}"}],
            "on_exhausted":"repeat_last"}"#,
    );
    w.collab.set_role("reading", reader).unwrap();
    let b = bot(
        &w,
        "Worker",
        r#"{"steps":[
            {"tool_calls":[{"name":"read_skill","arguments":{"name":"Renders"}}]},
            {"tool_calls":[{"name":"write_skill","arguments":{"name":"Renders","body":"Render once."}}]},
            {"text":"Stopped; I would render twice."}]}"#,
    );
    w.collab
        .add_bot_skill(b, "Renders", "How I render", "Render twice.")
        .unwrap();
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    w.collab
        .post_hold(support::holds::bot_stop(b))
        .await
        .unwrap();
    w.collab
        .post_line(s, "how is it going?".into(), None)
        .await
        .unwrap();
    idle(&w, t).await;
    let run = runs_of(&w, t).pop().expect("a read-only turn ran");
    assert!(segment_of(&w, run.id).readonly);
    let calls = calls_of(&w, run.id);
    assert_eq!(calls[0].status, "ok", "{calls:?}");
    assert!(calls[0].result.contains("Render twice."));
    assert_ne!(calls[1].status, "ok", "{calls:?}");
    let kept = w.collab.bot_skills(b).unwrap();
    assert_eq!(
        kept[0].body, "Render twice.",
        "nothing was written under the stop"
    );
}
