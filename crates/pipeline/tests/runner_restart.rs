//! The runner under crashes and limits: a crash while a nested exchange is answered, then
//! `resume`; and at most `max_agents` agents at once.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::{
    Rig, answer, audit, find_session, hanging_script, plain_fan, response, script, side_done, write,
};
use troupe_pipeline::session::SessionStatus;

const B1: &str = "step-1/parallel-1";

fn survey_waiting() -> Value {
    let waiting = answer(
        B1,
        &[("response/data/findings.json", json!({"items": ["a"]}))],
        response(
            "survey",
            B1,
            "waiting",
            json!({"awaiting": {"exchange": "review", "kind": "review"},
                   "fields": {"findings": "response/data/findings.json"}}),
        ),
    );
    let finish = vec![write(
        &format!("{B1}/response/response.json"),
        response(
            "survey",
            B1,
            "done",
            json!({"fields": {"findings": "response/data/findings.json"}}),
        ),
    )];
    script(waiting, vec![("exchange `review` answered", finish)])
}

fn review(text: &str) -> Vec<Value> {
    vec![
        write(&format!("{B1}/review/response/data/review.md"), text),
        write(&format!("{B1}/review/response/response.md"), "Reviewed.\n"),
        write(
            &format!("{B1}/review/response/response.json"),
            response(
                "reviewer",
                B1,
                "done",
                json!({"exchange": "review", "fields": {"review": "review/response/data/review.md"}}),
            ),
        ),
    ]
}

#[tokio::test]
async fn a_crash_while_an_exchange_answers_resumes_the_waiting_agent() {
    let mut rig = plain_fan()
        .script("survey", survey_waiting())
        .script("reviewer", hanging_script(review("first\n")));
    let runner = rig.runner();
    let source = rig.source.path().to_path_buf();
    let run = tokio::spawn(async move { runner.start(&source, "fan", Default::default()).await });
    let root = loop {
        if let Some(root) = find_session(&rig)
            && root.join(B1).join("review/response/response.json").exists()
        {
            break root;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    run.abort();
    let _ = run.await;
    let state = rig.read(&root, "state.json");
    assert_eq!(state["branches"][B1]["status"], "waiting");

    rig.data = tempfile::tempdir().unwrap();
    let mut rig = rig.script("reviewer", script(review("SECOND RUN\n"), vec![]));
    let kept = audit(&mut rig);
    let id = root.file_name().unwrap().to_string_lossy().into_owned();
    let out = rig.resume(&id).await;
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());
    let copy = kept.path().join(&id);
    let text =
        std::fs::read_to_string(copy.join(B1).join("review/response/data/review.md")).unwrap();
    assert_eq!(text, "first\n", "the exchange's answer on disk was used");
    let log = rig.log();
    assert!(
        log.contains("exchange `review` answered: resuming the agent"),
        "{log}"
    );
}

/// A side that takes a while, so two running at once would overlap.
fn slow_side(op: &str, branch: &str) -> Value {
    let mut s = script(side_done(op, branch), vec![]);
    s["steps"][0]["delay_ms"] = json!(150);
    s
}

async fn most_leases_at_once(mut rig: Rig, max_agents: usize) -> usize {
    rig.options.max_agents = max_agents;
    let rig = rig
        .script("left", slow_side("left", "step-2/parallel-1"))
        .script("right", slow_side("right", "step-2/parallel-2"));
    let runner = Arc::new(rig.runner());
    let most = Arc::new(AtomicUsize::new(0));
    let (r, m) = (runner.clone(), most.clone());
    let watch = tokio::spawn(async move {
        loop {
            m.fetch_max(r.leases().held().len(), Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let out = runner
        .start(rig.source.path(), "fan", Default::default())
        .await
        .unwrap();
    watch.abort();
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());
    most.load(Ordering::SeqCst)
}

#[tokio::test]
async fn at_most_max_agents_run_at_once() {
    assert_eq!(most_leases_at_once(plain_fan(), 1).await, 1);
    assert_eq!(
        most_leases_at_once(plain_fan(), 3).await,
        2,
        "the two sides overlap"
    );
}

#[tokio::test]
async fn a_session_is_resumed_by_one_process_at_a_time() {
    let rig = plain_fan()
        .script("survey", survey_waiting())
        .script("reviewer", hanging_script(review("first\n")));
    let runner = rig.runner();
    let source = rig.source.path().to_path_buf();
    let run = tokio::spawn(async move { runner.start(&source, "fan", Default::default()).await });
    let root = loop {
        if let Some(root) = find_session(&rig)
            && root.join("state.json").exists()
        {
            break root;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    run.abort();
    let _ = run.await;
    // Another process holds the session.
    let held = std::fs::File::create(root.join(".runner.lock")).unwrap();
    held.lock().unwrap();
    let id = root.file_name().unwrap().to_string_lossy().into_owned();
    let err = rig
        .runner()
        .resume(rig.source.path(), &id)
        .await
        .expect_err("a second runner must be refused");
    assert!(err.to_string().contains("another process"), "{err}");
}
