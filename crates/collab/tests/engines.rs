//! Engines (digest 003-B §0.3, ADR 0085/0086): a job's engine is its conversation's choice,
//! then the choice of the conversation it was opened from (a Bot↔Bot direct's origin), then
//! Settings' default; a
//! conversation that never chose follows the default as it changes; the job's view says why,
//! which steps the engine leaves off and how many conversations run it.

mod support;

use support::*;
use troupe_collab::OpenPlan;
use troupe_collab::engines::{DefaultEngine, EngineWhy, SessionEngine};
use troupe_core::plan::RevisionCause;

const REPLY: &str = r#"{"steps":[{"text":"done"}]}"#;

fn choose(w: &World, s: troupe_core::SessionId, engine: Option<&str>) {
    w.collab
        .set_session_engine(
            s,
            &SessionEngine {
                engine: engine.map(str::to_string),
            },
        )
        .unwrap();
}

#[tokio::test]
async fn a_jobs_engine_is_its_conversations_then_the_opening_ones_then_the_default() {
    let w = world();
    let a = bot(&w, "Alpha", REPLY);
    let b = bot(&w, "Beta", REPLY);
    let origin = group(&w, &[a, b]);
    // Alpha handed work to Beta from the group: the job lives in their direct.
    let home = w
        .collab
        .store()
        .write(|tx| tx.open_bot_direct(a, b, Some(origin), "delegation", "Alpha ↔ Beta"))
        .unwrap()
        .id;
    let plan = w
        .collab
        .open_plan(OpenPlan {
            home_session_id: home,
            opening_line_id: None,
            title: Some("Poster".into()),
            cause: RevisionCause::User,
        })
        .unwrap()
        .id;

    let e = w.collab.job_engine(plan).unwrap();
    assert_eq!(
        (e.engine.engine.as_str(), e.why, e.session_id),
        ("general", EngineWhy::Default, None)
    );
    assert_eq!(e.why_text, "Settings' default");
    // General leaves the scribe and the reflection off (ADR 0085's defaults); the person's
    // group runs it, the Bots' direct is not counted among their conversations.
    assert_eq!(e.engine.steps_off, ["reflection", "scribe"]);
    assert_eq!(e.engine.conversations, 1);

    // The default moves every conversation that never chose, and the job with them.
    w.collab
        .set_default_engine(&DefaultEngine {
            engine: "coding".into(),
        })
        .unwrap();
    assert_eq!(w.collab.job_engine(plan).unwrap().engine.engine, "coding");
    let s = w.collab.session_engine(home).unwrap();
    assert_eq!((s.engine.as_str(), s.chosen), ("coding", false));

    // The conversation it was opened from chooses: the job follows it.
    choose(&w, origin, Some("video"));
    let e = w.collab.job_engine(plan).unwrap();
    assert_eq!(
        (e.engine.engine.as_str(), e.why, e.session_id),
        ("video", EngineWhy::OpenedFrom, Some(origin))
    );
    assert_eq!(e.why_text, "The conversation it was opened from runs video");
    assert_eq!(
        e.engine.steps_off,
        Vec::<String>::new(),
        "video runs every step"
    );

    // The line path's one-statement read of a step agrees: the direct follows the default
    // (coding: no scribe), the group its choice (video: the scribe).
    let scribe = |s| {
        w.collab
            .store()
            .read(|tx| tx.engine_step_on(s, "scribe"))
            .unwrap()
    };
    assert_eq!((scribe(home), scribe(origin)), (false, true));
    w.collab
        .set_default_engine(&DefaultEngine {
            engine: "video".into(),
        })
        .unwrap();
    assert!(
        scribe(home),
        "a conversation that never chose follows the default"
    );
    w.collab
        .set_default_engine(&DefaultEngine {
            engine: "coding".into(),
        })
        .unwrap();

    // Its own conversation's choice comes first; going back to the default gives way again.
    choose(&w, home, Some("general"));
    let e = w.collab.job_engine(plan).unwrap();
    assert_eq!(
        (e.engine.engine.as_str(), e.why),
        ("general", EngineWhy::Conversation)
    );
    choose(&w, home, None);
    assert_eq!(
        w.collab.job_engine(plan).unwrap().why,
        EngineWhy::OpenedFrom
    );

    let all = w.collab.engines().unwrap();
    assert_eq!(all.default_engine, "coding");
    let count = |name: &str| {
        all.engines
            .iter()
            .find(|e| e.engine == name)
            .unwrap()
            .conversations
    };
    assert_eq!(
        (count("video"), count("coding"), count("general")),
        (1, 0, 0),
        "the group chose video; the Bots' direct is not one of the person's conversations"
    );
}

#[tokio::test]
async fn an_unknown_engine_is_refused_and_nothing_changes() {
    let w = world();
    let a = bot(&w, "Alpha", REPLY);
    let s = direct(&w, a);
    let bad = w.collab.set_session_engine(
        s,
        &SessionEngine {
            engine: Some("radio".into()),
        },
    );
    assert!(bad.unwrap_err().to_string().contains("radio"));
    assert!(
        w.collab
            .set_default_engine(&DefaultEngine {
                engine: "radio".into()
            })
            .is_err()
    );
    let e = w.collab.session_engine(s).unwrap();
    assert_eq!((e.engine.as_str(), e.chosen), ("general", false));
    assert_eq!(w.collab.engines().unwrap().default_engine, "general");
}
