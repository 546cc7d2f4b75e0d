//! Writes sent without waiting for their answer (on PostgreSQL a model call's record, a tool
//! call's, a message's parts): a refusal still fails the write that sent it, and only that
//! write, whether it commits alone or in a group-commit batch with others. On SQLite the same
//! statements are plain ones, so the same tests hold there.

use std::sync::Arc;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{ManualClock, RunId, ThreadId};
use troupe_store::{ModelCallRecord, NewThread, SqlErrorKind, Store, StoreError};

fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

fn thread(s: &Store) -> ThreadId {
    s.write(|tx| {
        tx.create_thread(&NewThread {
            workspace_root: None,
            parent_id: None,
            title: "t".into(),
            agent: AgentBinding::new("a", "be brief"),
            workspace: "/tmp".into(),
            interaction: Interaction::Interactive,
        })
    })
    .unwrap()
    .id
}

/// A record of a model call for a run that does not exist: its foreign key refuses it.
fn orphan_call() -> ModelCallRecord {
    ModelCallRecord {
        run_id: RunId(987_654_321),
        role: "main".into(),
        endpoint: "http://127.0.0.1:1/v1".into(),
        model: "m".into(),
        input_tokens: 1,
        cached_input_tokens: 0,
        output_tokens: 1,
        latency_ms: 1,
        attempts: 1,
        error: None,
        attempt_errors: Vec::new(),
        started_at: 1_000,
        finish: Some("stop".into()),
    }
}

fn refused(e: &StoreError) -> bool {
    matches!(e, StoreError::Sql(s) if s.kind == SqlErrorKind::Constraint)
}

#[test]
fn a_refused_record_fails_the_write_that_sent_it() {
    let s = store();
    let t = thread(&s);
    let out = s.write(|tx| {
        tx.record_model_call(t, &orphan_call())?;
        tx.event("after_the_record", Some(t), None, serde_json::json!({}))
    });
    let e = out.expect_err("the record's refusal is the write's");
    assert!(refused(&e), "a constraint refusal: {e}");
    // Nothing of that write stands, and the next write is not blamed for it.
    s.write(|tx| tx.event("next", Some(t), None, serde_json::json!({})))
        .expect("the next write commits");
    let kinds: Vec<String> = s
        .read(|tx| tx.events_after(troupe_core::EventId(0), Some(t), 100))
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert!(kinds.contains(&"next".to_string()), "{kinds:?}");
    assert!(
        !kinds.contains(&"after_the_record".to_string()),
        "{kinds:?}"
    );
    assert!(!kinds.contains(&"model_call".to_string()), "{kinds:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_record_in_a_batch_fails_only_its_own_caller() {
    let s = store();
    let t = thread(&s);
    // Queued at once from many tasks, so the writer takes several into one transaction
    // (how many is the writer's choice: on SQLite, those that find the lock taken).
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                s.write_async(move |tx| {
                    if i % 4 == 1 {
                        // Its closure ends with the refused record still unanswered.
                        tx.event("doomed", Some(t), None, serde_json::json!({"i": i}))?;
                        tx.record_model_call(t, &orphan_call())
                    } else {
                        // An answered statement: a refusal another write left unanswered
                        // would surface here if each write were not settled on its own.
                        tx.thread(t)?;
                        tx.event("kept", Some(t), None, serde_json::json!({"i": i}))
                    }
                })
                .await
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await.unwrap() {
            Ok(()) => assert_ne!(i % 4, 1, "write {i} should have been refused"),
            Err(e) => {
                assert_eq!(i % 4, 1, "write {i} failed for another's refusal: {e}");
                assert!(refused(&e), "write {i}: {e}");
            }
        }
    }
    let events = s
        .read(|tx| tx.events_after(troupe_core::EventId(0), Some(t), 1000))
        .unwrap();
    assert_eq!(events.iter().filter(|e| e.kind == "kept").count(), 30);
    assert_eq!(events.iter().filter(|e| e.kind == "doomed").count(), 0);
}
