//! `read_file` on a picture: a model that takes pictures gets it with its next call, read again
//! from the workspace (the store keeps only a marker line); one that does not gets a note.

mod support;

use support::{Harness, Reply, build, call};
use troupe_core::inbox::Delivery;
use troupe_core::message::PartBody;
use troupe_core::thread::Interaction;
use troupe_llm::{ChatMessage, ImagePart, ModelRequest};

/// A 1x1 PNG, and the same bytes in base64.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f,
    0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47, 0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn read(id: &str, path: &str) -> troupe_llm::ToolCall {
    call(id, "read_file", &format!(r#"{{"path":"{path}"}}"#))
}

/// The result of call `id` as the model was sent it in `req`: its text and pictures.
fn result_in(req: &ModelRequest, id: &str) -> (String, Vec<ImagePart>) {
    req.messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::ToolResult {
                call_id,
                content,
                images,
                ..
            } if call_id == id => Some((content.clone(), images.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id} in {req:#?}"))
}

/// The result of call `id` as stored.
fn stored_result(h: &Harness, t: troupe_core::ThreadId, id: &str) -> String {
    h.engine
        .store()
        .read(|tx| tx.messages(t, None, 1000))
        .unwrap()
        .iter()
        .flat_map(|m| m.parts.clone())
        .find_map(|p| match p.body {
            PartBody::ToolResult {
                call_id, content, ..
            } if call_id == id => Some(content),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no stored result for {id}"))
}

async fn run_task(h: &Harness, task: &str) -> troupe_core::ThreadId {
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task(task))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    t
}

fn png() -> ImagePart {
    ImagePart {
        media_type: "image/png".into(),
        data: PNG_BASE64.into(),
    }
}

#[tokio::test]
async fn a_model_that_takes_pictures_gets_the_picture_with_its_next_call() {
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![read("c1", "shots/dot.png")]),
            Reply::Text("a dot".into()),
        ],
        |b| b,
    );
    h.provider.set_takes_pictures(true);
    std::fs::create_dir_all(h.workspace.join("shots")).unwrap();
    std::fs::write(h.workspace.join("shots/dot.png"), PNG).unwrap();
    let t = run_task(&h, "what is in shots/dot.png?").await;

    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 2);
    let (text, images) = result_in(&reqs[1], "c1");
    assert_eq!(images, vec![png()]);
    assert_eq!(
        text,
        "shots/dot.png: a PNG picture (image/png), 70 bytes, 1x1 pixels.\n\
         The picture is attached to this result."
    );
    // The store keeps the marker, never the bytes.
    let stored = stored_result(&h, t, "c1");
    assert!(
        stored.starts_with("[picture: shots/dot.png sha256="),
        "{stored}"
    );
    assert!(
        !stored.contains(PNG_BASE64) && !stored.contains("iVBOR"),
        "{stored}"
    );
}

#[tokio::test]
async fn a_picture_that_changed_or_is_gone_is_not_attached_again() {
    let h = build(
        vec![
            Reply::Tools(
                String::new(),
                vec![read("c1", "a.png"), read("c2", "b.png")],
            ),
            Reply::Tools(
                String::new(),
                vec![
                    call(
                        "w",
                        "write_file",
                        r#"{"path":"a.png","content":"now text"}"#,
                    ),
                    call("d", "delete_file", r#"{"path":"b.png"}"#),
                ],
            ),
            Reply::Text("done".into()),
        ],
        |b| b,
    );
    h.provider.set_takes_pictures(true);
    std::fs::write(h.workspace.join("a.png"), PNG).unwrap();
    std::fs::write(h.workspace.join("b.png"), PNG).unwrap();
    run_task(&h, "look, then tidy up").await;

    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 3);
    // Both pictures went with the call right after the reads.
    assert_eq!(result_in(&reqs[1], "c1").1, vec![png()]);
    assert_eq!(result_in(&reqs[1], "c2").1, vec![png()]);
    // The context is rebuilt from the store for the next call: the changed picture and the
    // deleted one are not attached, and a note says why.
    let (a_text, a_images) = result_in(&reqs[2], "c1");
    assert!(a_images.is_empty());
    assert!(
        a_text.ends_with(
            "(The picture is not attached: a.png has changed since it was read; read it again \
             to see it as it is now.)"
        ),
        "{a_text}"
    );
    let (b_text, b_images) = result_in(&reqs[2], "c2");
    assert!(b_images.is_empty());
    assert!(
        b_text.contains("(The picture is not attached: cannot read 'b.png'"),
        "{b_text}"
    );
}

#[tokio::test]
async fn a_model_that_does_not_take_pictures_is_told_what_the_file_is_and_gets_no_picture() {
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![read("c1", "dot.png")]),
            Reply::Text("I cannot see it".into()),
        ],
        |b| b,
    );
    std::fs::write(h.workspace.join("dot.png"), PNG).unwrap();
    let t = run_task(&h, "what is in dot.png?").await;

    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 2);
    let (text, images) = result_in(&reqs[1], "c1");
    assert!(images.is_empty());
    assert_eq!(
        text,
        "dot.png: a PNG picture (image/png), 70 bytes, 1x1 pixels. This model cannot see \
         pictures, so the picture is not shown (its bytes are not text)."
    );
    assert_eq!(stored_result(&h, t, "c1"), text, "no marker is stored");
}

#[tokio::test]
async fn a_picture_read_while_the_model_took_pictures_is_noted_for_one_that_does_not() {
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![read("c1", "dot.png")]),
            Reply::Text("seen".into()),
        ],
        |b| b,
    );
    h.provider.set_takes_pictures(true);
    std::fs::write(h.workspace.join("dot.png"), PNG).unwrap();
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("look"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    // The thread's model no longer takes pictures: the stored marker gives a note instead.
    h.provider.set_takes_pictures(false);
    h.engine
        .deliver(t, Delivery::user_task("and now?"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 3);
    let (text, images) = result_in(&reqs[2], "c1");
    assert!(images.is_empty());
    assert!(
        text.ends_with("(The picture is not attached: this model cannot see pictures.)"),
        "{text}"
    );
}

#[tokio::test]
async fn only_the_latest_pictures_go_with_a_call() {
    // The engine sends at most twenty pictures a call.
    let n = 21;
    let calls = (0..n).map(|i| read(&format!("c{i}"), "dot.png")).collect();
    let h = build(
        vec![
            Reply::Tools(String::new(), calls),
            Reply::Text("many".into()),
        ],
        |b| b,
    );
    h.provider.set_takes_pictures(true);
    std::fs::write(h.workspace.join("dot.png"), PNG).unwrap();
    run_task(&h, "look many times").await;
    let reqs = h.provider.requests();
    let (first, first_images) = result_in(&reqs[1], "c0");
    assert!(first_images.is_empty());
    assert!(first.contains("only the latest 20 pictures"), "{first}");
    for i in 1..n {
        assert_eq!(result_in(&reqs[1], &format!("c{i}")).1, vec![png()], "c{i}");
    }
}

/// The marker is stored only when the thread's endpoint is marked as taking pictures: an
/// `EndpointSpec` with `takes_pictures` reaches `read_file` through the role table.
#[tokio::test]
async fn an_endpoint_marked_as_taking_pictures_gets_the_marker_stored() {
    for takes_pictures in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(workspace.join("dot.png"), PNG).unwrap();
        let script = dir.path().join("script.json");
        std::fs::write(
            &script,
            r#"{"steps":[
                {"tool_calls":[{"name":"read_file","arguments":{"path":"dot.png"}}]},
                {"text":"a dot"}
            ]}"#,
        )
        .unwrap();
        let mut roles = troupe_engine::models::RoleTable::new(std::sync::Arc::new(|_| None));
        roles
            .set_role(
                "default",
                troupe_core::thread::EndpointSpec {
                    kind: "scripted".into(),
                    base_url: None,
                    model: "eyes".into(),
                    api_key_env: None,
                    script: Some(script.display().to_string()),
                    takes_pictures,
                    thinking_levels: Vec::new(),
                    max_output_tokens: None,
                },
            )
            .unwrap();
        let clock = troupe_core::ManualClock::new(1_700_000_000_000);
        let store = troupe_store::testing::open_in(dir.path(), std::sync::Arc::new(clock.clone()));
        let engine = troupe_engine::Engine::builder(store, std::sync::Arc::new(roles)).build();
        let t = engine
            .create_thread(&troupe_store::NewThread {
                workspace_root: None,
                parent_id: None,
                title: "pictures".into(),
                agent: troupe_core::thread::AgentBinding::new("eyes", "You look."),
                workspace: workspace.display().to_string(),
                interaction: Interaction::Interactive,
            })
            .unwrap()
            .id;
        engine
            .deliver(t, Delivery::user_task("look"))
            .await
            .unwrap();
        engine.wait_idle(t).await;
        let stored = engine
            .store()
            .read(|tx| tx.messages(t, None, 1000))
            .unwrap()
            .iter()
            .flat_map(|m| m.parts.clone())
            .find_map(|p| match p.body {
                PartBody::ToolResult { content, .. } => Some(content),
                _ => None,
            })
            .unwrap();
        assert_eq!(
            stored.starts_with("[picture: dot.png sha256="),
            takes_pictures,
            "{stored}"
        );
    }
}
