//! Chat channels as rows, on both backends (see `troupe_store::testing`): one conversation per
//! (account, chat), an inbound message kept once per (account, message id), and the outbound
//! ledger — recorded once per key, pending until settled, settled once.

use std::sync::Arc;
use troupe_core::conversation::{Author, SessionKind};
use troupe_core::{BotId, ManualClock, SessionId};
use troupe_store::{
    ChannelChat, ChannelMessage, NewBot, NewChannelOutbound, NewLine, OutboundKind, OutboundStatus,
    Store, StoreError,
};

fn store() -> (Store, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000));
    (troupe_store::testing::open(clock.clone()), clock)
}

fn conversation(s: &Store, name: &str) -> (BotId, SessionId) {
    s.write(|tx| {
        let bot = tx.create_bot(&NewBot {
            name: name.into(),
            persona: String::new(),
            endpoint: None,
            scripted: false,
        })?;
        let session = tx.create_session(SessionKind::Direct, name, &[bot.id])?;
        Ok((bot.id, session.id))
    })
    .unwrap()
}

fn chat(account: &str, chat_id: &str, bot: BotId, session: SessionId) -> ChannelChat {
    ChannelChat {
        account: account.into(),
        chat_id: chat_id.into(),
        chat_type: "dm".into(),
        chat_name: Some("Ada".into()),
        session_id: session,
        bot_id: bot,
        created_at: 0,
    }
}

#[test]
fn a_chat_keeps_its_first_conversation() {
    let (s, _) = store();
    let (bot, first) = conversation(&s, "One");
    let (_, second) = conversation(&s, "Two");
    let (row, made) = s
        .write(|tx| tx.insert_channel_chat(&chat("acme", "c1", bot, first)))
        .unwrap();
    assert!(made);
    assert_eq!(row.session_id, first);
    assert_eq!(row.created_at, 1_000);
    let (again, made) = s
        .write(|tx| tx.insert_channel_chat(&chat("acme", "c1", bot, second)))
        .unwrap();
    assert!(!made, "a chat has one conversation");
    assert_eq!(again.session_id, first);
    // Another account's chat of the same id is another chat.
    let (other, made) = s
        .write(|tx| tx.insert_channel_chat(&chat("beta", "c1", bot, second)))
        .unwrap();
    assert!(made);
    assert_eq!(other.session_id, second);
    let found = s
        .read(|tx| tx.channel_chat_of_session(first))
        .unwrap()
        .unwrap();
    assert_eq!(
        (found.account.as_str(), found.chat_id.as_str()),
        ("acme", "c1")
    );
    let bad = s.write(|tx| {
        tx.insert_channel_chat(&ChannelChat {
            chat_type: "channel".into(),
            ..chat("acme", "c2", bot, first)
        })
    });
    assert!(matches!(bad, Err(StoreError::Invalid(m)) if m.contains("chat_type")));
}

#[test]
fn an_inbound_message_is_kept_once() {
    let (s, _) = store();
    let (_, session) = conversation(&s, "One");
    let line = s
        .write(|tx| tx.insert_line(&NewLine::plain(session, Author::User, "hi".into())))
        .unwrap();
    let m = ChannelMessage {
        account: "acme".into(),
        message_id: "m1".into(),
        chat_id: "c1".into(),
        sender_id: "u1".into(),
        session_id: session,
        line_id: line.id,
        created_at: 0,
    };
    assert!(s.write(|tx| tx.insert_channel_message(&m)).unwrap());
    assert!(!s.write(|tx| tx.insert_channel_message(&m)).unwrap());
    let kept = s
        .read(|tx| tx.channel_message("acme", "m1"))
        .unwrap()
        .unwrap();
    assert_eq!(kept.line_id, line.id);
    assert_eq!(
        s.read(|tx| tx.channel_message_of_line(line.id)).unwrap(),
        Some(kept)
    );
    assert!(
        s.read(|tx| tx.channel_message("beta", "m1"))
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_send_is_recorded_once_and_settled_once() {
    let (s, clock) = store();
    let new = NewChannelOutbound {
        idempotency_key: "channel:acme:reply:7".into(),
        account: "acme".into(),
        chat_id: "c1".into(),
        kind: OutboundKind::Reply,
        text: "hello".into(),
        reply_to_message_id: Some("m1".into()),
        line_id: None,
    };
    let (row, made) = s.write(|tx| tx.record_channel_outbound(&new)).unwrap();
    assert!(made);
    assert_eq!(row.status, OutboundStatus::Pending);
    let (again, made) = s
        .write(|tx| {
            tx.record_channel_outbound(&NewChannelOutbound {
                text: "other".into(),
                ..new.clone()
            })
        })
        .unwrap();
    assert!(!made, "a key is recorded once");
    assert_eq!((again.id, again.text.as_str()), (row.id, "hello"));
    let pending = s.read(|tx| tx.pending_channel_outbound()).unwrap();
    assert_eq!(pending.iter().map(|p| p.id).collect::<Vec<_>>(), [row.id]);

    assert!(s.write(|tx| tx.attempt_channel_outbound(row.id)).unwrap());
    clock.advance(5);
    assert!(
        s.write(|tx| tx.settle_channel_outbound(row.id, None))
            .unwrap()
    );
    // Settled: neither attempted nor settled again, and no longer pending.
    assert!(!s.write(|tx| tx.attempt_channel_outbound(row.id)).unwrap());
    assert!(
        !s.write(|tx| tx.settle_channel_outbound(row.id, Some("late")))
            .unwrap()
    );
    let sent = s.read(|tx| tx.channel_outbound(row.id)).unwrap();
    assert_eq!(sent.status, OutboundStatus::Sent);
    assert_eq!(
        (sent.attempts, sent.error.clone(), sent.updated_at),
        (1, None, 1_005)
    );
    assert!(
        s.read(|tx| tx.pending_channel_outbound())
            .unwrap()
            .is_empty()
    );

    let (failing, _) = s
        .write(|tx| {
            tx.record_channel_outbound(&NewChannelOutbound {
                idempotency_key: "channel:acme:message:1".into(),
                kind: OutboundKind::Message,
                reply_to_message_id: None,
                ..new.clone()
            })
        })
        .unwrap();
    assert!(
        s.write(|tx| tx.settle_channel_outbound(failing.id, Some("HTTP 500")))
            .unwrap()
    );
    let failed = s.read(|tx| tx.channel_outbound(failing.id)).unwrap();
    assert_eq!(failed.status, OutboundStatus::Failed);
    assert_eq!(failed.error.as_deref(), Some("HTTP 500"));
}

#[test]
fn a_reply_names_what_it_answers_and_a_send_has_a_key() {
    let (s, _) = store();
    let base = NewChannelOutbound {
        idempotency_key: "k".into(),
        account: "acme".into(),
        chat_id: "c1".into(),
        kind: OutboundKind::Reply,
        text: "x".into(),
        reply_to_message_id: None,
        line_id: None,
    };
    let e = s.write(|tx| tx.record_channel_outbound(&base)).unwrap_err();
    assert!(
        matches!(&e, StoreError::Invalid(m) if m.contains("reply_to_message_id")),
        "{e}"
    );
    let e = s
        .write(|tx| {
            tx.record_channel_outbound(&NewChannelOutbound {
                idempotency_key: String::new(),
                kind: OutboundKind::Message,
                ..base.clone()
            })
        })
        .unwrap_err();
    assert!(
        matches!(&e, StoreError::Invalid(m) if m.contains("idempotency_key")),
        "{e}"
    );
}
