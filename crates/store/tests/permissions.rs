//! Permission requests and inbox metadata, on both backends (see `troupe_store::testing`): a
//! request is decided once; what an inbox item carries joins the message it becomes.

use serde_json::json;
use std::sync::Arc;
use troupe_core::conversation::SessionKind;
use troupe_core::inbox::Delivery;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{ManualClock, SessionId};
use troupe_store::{
    COMMUNICATION, NewBot, NewThread, PermissionDecision, PermissionStatus, Store, StoreError,
};

fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

fn session(s: &Store) -> SessionId {
    s.write(|tx| {
        let bot = tx.create_bot(&NewBot {
            name: "Boss".into(),
            persona: String::new(),
            endpoint: None,
            scripted: false,
        })?;
        Ok(tx
            .create_session(SessionKind::Direct, "boss", &[bot.id])?
            .id)
    })
    .unwrap()
}

#[test]
fn a_permission_request_is_decided_once() {
    let s = store();
    let sid = session(&s);
    let push = json!({"text": "hi", "chat_id": "c2"});
    let r = s
        .write(|tx| tx.open_permission_request(sid, COMMUNICATION, &push))
        .unwrap();
    assert_eq!(r.status, PermissionStatus::Pending);
    assert_eq!(r.request, push);
    assert_eq!(r.decision, None);
    assert!(
        s.write(|tx| tx.decide_permission_request(r.id, PermissionDecision::Allow))
            .unwrap()
    );
    assert!(
        !s.write(|tx| tx.decide_permission_request(r.id, PermissionDecision::Deny))
            .unwrap(),
        "a decided request stays as it was decided"
    );
    let got = s.read(|tx| tx.permission_request(r.id)).unwrap().unwrap();
    assert_eq!(got.status, PermissionStatus::Allowed);
    assert_eq!(got.decision, Some(PermissionDecision::Allow));
    assert_eq!(got.decided_at, Some(1_000));
    let listed = s.read(|tx| tx.permission_requests(Some(sid), 10)).unwrap();
    assert_eq!(listed.len(), 1);
    let bad = s.write(|tx| tx.open_permission_request(sid, "worktree_enter", &push));
    assert!(matches!(bad, Err(StoreError::Invalid(_))), "{bad:?}");
}

#[test]
fn inbox_metadata_joins_the_message_and_stamps_win() {
    let s = store();
    let t = s
        .write(|tx| {
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
        .id;
    let d = Delivery::user_task("[Ops · Ada · 10:00] deploy").with_key("channel:acme:m1");
    let carried = json!({"channel_chat_id": "c1", "channel_message_id": "m1", "workflow": "no"});
    let item = s
        .write(|tx| {
            let d = tx.deliver(t, &d)?;
            tx.set_inbox_metadata(d.item_id, &carried)?;
            Ok(d.item_id)
        })
        .unwrap();
    let m = s
        .write(|tx| {
            tx.materialize(
                item,
                None,
                None,
                Some(json!({"workflow": {"kind": "boss"}})),
            )
        })
        .unwrap();
    let meta = m.metadata.unwrap();
    assert_eq!(meta["channel_chat_id"], "c1");
    assert_eq!(meta["workflow"], json!({"kind": "boss"}), "a stamp wins");
    assert_eq!(
        s.read(|tx| tx.latest_channel_metadata(t)).unwrap().unwrap()["channel_message_id"],
        "m1"
    );
    let not_object = s.write(|tx| {
        let d = tx.deliver(t, &Delivery::user_task("x"))?;
        tx.set_inbox_metadata(d.item_id, &json!([1]))
    });
    assert!(matches!(not_object, Err(StoreError::Invalid(_))));
}
