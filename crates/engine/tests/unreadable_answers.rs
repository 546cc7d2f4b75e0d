//! What the model server could not read: a call it stopped inside, and an answer it could not
//! read at all. Asking again sends the same words and gets the same answer, so the model is
//! told what happened instead.

mod support;

use support::{Reply, build, call, call_results, run_task};
use troupe_core::run::EndReason;
use troupe_llm::LlmError;

/// llama.cpp's words when the model's output does not parse as text or a tool call.
const PEG: &str = "The model produced output that does not match the expected peg-native format";

fn unreadable() -> Reply {
    Reply::Error(LlmError::Server {
        status: 500,
        endpoint: "http://127.0.0.1:9/v1".into(),
        model: "qwen".into(),
        detail: PEG.into(),
    })
}

/// A reply the model server stopped inside a call it could not read: the calls before it run,
/// and the model is shown where the unreadable one stopped and how to write it whole, without
/// the same request being sent again to get the same call.
#[tokio::test]
async fn a_call_the_server_could_not_read_is_shown_where_it_stopped_and_not_run() {
    let h = build(
        vec![
            Reply::UnreadableTools(vec![
                call(
                    "a",
                    "write_file",
                    r#"{"path":"first.txt","content":"whole"}"#,
                ),
                call("b", "write_file", r#"{"path":"hi.py","content":"print("hi"#),
            ]),
            Reply::Text("mended".into()),
        ],
        |b| b,
    );
    let (_, run) = run_task(&h, "write the files").await;
    assert_eq!(run.end_reason, Some(EndReason::Completed));
    let results = call_results(&h, &run);
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("first.txt")).unwrap(),
        "whole"
    );
    assert_eq!(
        results[1],
        "write_file: the model server could not read this call and stopped your reply inside \
         its arguments, after `{\"path\":\"hi.py\",\"content\":\"print(\"hi` (36 characters \
         came); nothing was run. Send the call again as one whole JSON object: inside a string, \
         write a quote as \\\" and a line break as \\n."
    );
    assert!(!h.workspace.join("hi.py").exists());
    assert_eq!(
        h.provider.requests.lock().unwrap().len(),
        2,
        "asked once more, told why"
    );
}

/// An answer the server could not read at all (a call written as JSON in a code fence): the
/// model is told so in a note it reads, and asked again; the run goes on.
#[tokio::test]
async fn an_answer_the_server_could_not_read_is_told_to_the_model_once_and_asked_again() {
    let h = build(
        vec![unreadable(), Reply::Text("read this time".into())],
        |b| b,
    );
    let (t, run) = run_task(&h, "write the file").await;
    assert_eq!(run.end_reason, Some(EndReason::Completed));
    let requests = h.provider.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let last = format!("{:?}", requests[1].messages.last().unwrap());
    assert!(
        last.contains("could not be read by the model server") && last.contains(PEG),
        "{last}"
    );
    assert!(
        last.contains("in plain words if words are the answer"),
        "{last}"
    );
    assert!(
        last.contains("not the call written as JSON in your text"),
        "{last}"
    );
    // The note is for the model: the conversation's page does not show it.
    let msgs = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 20))
        .unwrap();
    let note = msgs
        .iter()
        .find(|m| format!("{:?}", m.origin).contains("unreadable_answer"))
        .expect("the note is stored");
    assert!(note.parts.iter().all(|p| !p.visible));
    let calls = h.engine.store().read(|tx| tx.model_calls(run.id)).unwrap();
    assert_eq!(calls.len(), 2);
    assert!(calls[0].error.as_deref().unwrap().contains(PEG));
}

/// Told once, unreadable again: the run fails as for any failed model call, so a model that
/// cannot write a readable answer does not go round for ever.
#[tokio::test]
async fn an_answer_unreadable_again_after_the_note_fails_the_run() {
    let h = build(
        vec![unreadable(), unreadable(), Reply::Text("never".into())],
        |b| b,
    );
    let (_, run) = run_task(&h, "write the file").await;
    assert!(
        matches!(&run.end_reason, Some(EndReason::ModelError(d)) if d.contains(PEG)),
        "{:?}",
        run.end_reason
    );
    assert_eq!(h.provider.requests.lock().unwrap().len(), 2);
}
