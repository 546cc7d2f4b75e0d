//! Runtime Boss rows on both backends (see `troupe_store::testing`): one session per account
//! (RB-1) while local rows may be many, the briefing record, and the Runtime settings — stored
//! whole, and seeded from the config only where nothing is stored.

use std::sync::Arc;
use troupe_core::conversation::SessionKind;
use troupe_core::runtime_boss::{Persona, RuntimeSettings, RuntimeSettingsPatch};
use troupe_core::{ManualClock, SessionId};
use troupe_store::{NewBot, Store};

fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

fn sessions(s: &Store, n: usize) -> Vec<SessionId> {
    static BOTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n_bot = BOTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    s.write(|tx| {
        let bot = tx.create_bot(&NewBot {
            name: format!("Boss {n_bot}"),
            persona: String::new(),
            endpoint: None,
            scripted: false,
        })?;
        (0..n)
            .map(|i| {
                Ok(tx
                    .create_session(SessionKind::Direct, &format!("b{i}"), &[bot.id])?
                    .id)
            })
            .collect()
    })
    .unwrap()
}

#[test]
fn one_runtime_boss_session_per_account() {
    let s = store();
    let ids = sessions(&s, 4);
    s.write(|tx| {
        tx.insert_runtime_boss_session(ids[0], Some("acme"), "boss")?;
        tx.insert_runtime_boss_session(ids[1], Some("zeta"), "boss")?;
        // Channel-less local sessions: account NULL, any number.
        tx.insert_runtime_boss_session(ids[2], None, "boss")?;
        tx.insert_runtime_boss_session(ids[3], None, "boss")
    })
    .unwrap();
    let other = sessions(&s, 1)[0];
    assert!(
        s.write(|tx| tx.insert_runtime_boss_session(other, Some("acme"), "boss"))
            .is_err(),
        "RB-1: a second session for acme is refused by the database"
    );
    assert!(
        s.write(|tx| tx.insert_runtime_boss_session(ids[0], Some("new"), "boss"))
            .is_err(),
        "a session is one runtime boss"
    );
    assert!(
        s.write(|tx| tx.insert_runtime_boss_session(other, Some(" "), "boss"))
            .is_err()
    );
    s.read(|tx| {
        assert_eq!(tx.runtime_boss_session("acme")?, Some(ids[0]));
        assert_eq!(tx.runtime_boss_session("nobody")?, None);
        assert!(tx.is_runtime_boss_session(ids[3])?);
        assert!(!tx.is_runtime_boss_session(other)?);
        let all = tx.runtime_boss_sessions()?;
        assert_eq!(all.len(), 4);
        assert_eq!(all[2].account, None);
        assert_eq!(all[0].scope_key, "boss");
        assert_eq!(all[0].chat_id.as_deref(), Some("boss"));
        assert_eq!(all[0].briefings, 0);
        Ok(())
    })
    .unwrap();
    let n = s
        .write(|tx| tx.record_runtime_boss_briefing(ids[0], "abc"))
        .unwrap();
    assert_eq!(n, 1);
    let n = s
        .write(|tx| tx.record_runtime_boss_briefing(ids[0], "def"))
        .unwrap();
    assert_eq!(n, 2);
    let row = s.read(|tx| tx.runtime_boss_row(ids[0])).unwrap().unwrap();
    assert_eq!(row.briefed_identity.as_deref(), Some("def"));
    assert!(
        s.write(|tx| tx.record_runtime_boss_briefing(other, "x"))
            .is_err()
    );
}

#[test]
fn runtime_settings_round_trip_and_seed_only_the_unstored() {
    let s = store();
    assert_eq!(
        s.read(|tx| tx.runtime_settings()).unwrap(),
        RuntimeSettings::default()
    );
    let on = RuntimeSettings {
        boss_mode: true,
        briefing_interval_days: Some(3),
        persona: Some(Persona::ProjectManager),
        identity_text: None,
    };
    s.write(|tx| tx.set_runtime_settings(&on)).unwrap();
    assert_eq!(s.read(|tx| tx.runtime_settings()).unwrap(), on);
    // A value that breaks a rule is refused and changes nothing.
    let bad = RuntimeSettings {
        briefing_interval_days: Some(0),
        ..on.clone()
    };
    assert!(s.write(|tx| tx.set_runtime_settings(&bad)).is_err());
    assert_eq!(s.read(|tx| tx.runtime_settings()).unwrap(), on);

    // The config seed: stored keys win, unstored ones are written.
    let seed: RuntimeSettingsPatch = serde_json::from_value(serde_json::json!({
        "boss_mode": false, "briefing_interval_days": 9, "identity_text": "steady"}))
    .unwrap();
    let written = s.write(|tx| tx.seed_runtime_settings(&seed)).unwrap();
    assert_eq!(written, vec!["experimental.boss_identity_text"]);
    let now = s.read(|tx| tx.runtime_settings()).unwrap();
    assert!(now.boss_mode, "the stored switch wins over the file's");
    assert_eq!(now.briefing_interval_days, Some(3));
    assert_eq!(now.identity_text.as_deref(), Some("steady"));
    // Cleared settings remove their rows; a later seed then fills them.
    let cleared = RuntimeSettings {
        briefing_interval_days: None,
        ..now
    };
    s.write(|tx| tx.set_runtime_settings(&cleared)).unwrap();
    let written = s.write(|tx| tx.seed_runtime_settings(&seed)).unwrap();
    assert_eq!(written, vec!["experimental.boss_briefing_interval_days"]);
    assert_eq!(
        s.read(|tx| tx.runtime_settings())
            .unwrap()
            .briefing_interval_days,
        Some(9)
    );
    let bad_seed: RuntimeSettingsPatch =
        serde_json::from_value(serde_json::json!({"briefing_interval_days": 400})).unwrap();
    assert!(s.write(|tx| tx.seed_runtime_settings(&bad_seed)).is_err());
}
