//! Runtime Boss memories and projects, on both backends (see `troupe_store::testing`): a
//! memory is one per (category, title), edited in place, found by keywords; a project directory
//! is registered once.

use std::sync::Arc;
use troupe_core::conversation::SessionKind;
use troupe_core::{ManualClock, SessionId};
use troupe_store::{MemoryWrite, NewBot, Store, StoreError};

fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

fn session(s: &Store, name: &str) -> SessionId {
    s.write(|tx| {
        let bot = tx.create_bot(&NewBot {
            name: name.into(),
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
fn a_memory_is_one_per_title_edited_in_place_and_found_by_keywords() {
    let s = store();
    let (m, w) = s
        .write(|tx| tx.memory_upsert("people", "Ana", "Prefers short reports. Lives in Lisbon."))
        .unwrap();
    assert_eq!(w, MemoryWrite::Created);
    let (again, w) = s
        .write(|tx| tx.memory_upsert("people", "Ana", "Prefers short reports."))
        .unwrap();
    assert_eq!(w, MemoryWrite::Replaced);
    assert_eq!(
        again.id, m.id,
        "the same (category, title) is the same memory"
    );
    s.write(|tx| tx.memory_upsert("projects", "Deploys", "The 100% rollout goes on Fridays"))
        .unwrap();

    let edited = s
        .write(|tx| tx.memory_edit("people", "Ana", "short", "one-line"))
        .unwrap()
        .unwrap();
    assert_eq!(edited.body, "Prefers one-line reports.");
    let missing = s.write(|tx| tx.memory_edit("people", "Ana", "absent text", "x"));
    assert!(
        matches!(missing, Err(StoreError::Invalid(_))),
        "{missing:?}"
    );
    assert_eq!(
        s.write(|tx| tx.memory_edit("people", "Bo", "a", "b"))
            .unwrap(),
        None
    );

    let read = |q: &str| -> Vec<String> {
        s.read(|tx| tx.memory_search(q, 10))
            .unwrap()
            .into_iter()
            .map(|m| m.title)
            .collect()
    };
    assert_eq!(
        read("ONE-LINE"),
        vec!["Ana"],
        "case-insensitive on the body"
    );
    let both = read("fridays people");
    assert_eq!(both.len(), 2, "any keyword matches: {both:?}");
    assert_eq!(read("100%"), vec!["Deploys"], "a % is matched literally");
    assert_eq!(read("1%0"), Vec::<String>::new());
    assert_eq!(read("   "), Vec::<String>::new());
    assert_eq!(
        read("deploys rollout ana"),
        vec!["Deploys", "Ana"],
        "the memory matching more keywords comes first"
    );
    assert_eq!(s.read(|tx| tx.memory_list(1)).unwrap().len(), 1);
    let blank = s.write(|tx| tx.memory_upsert("people", "  ", "x"));
    assert!(matches!(blank, Err(StoreError::Invalid(_))), "{blank:?}");
}

#[test]
fn a_project_directory_is_registered_once() {
    let s = store();
    let a = session(&s, "Boss A");
    let b = session(&s, "Boss B");
    let (p, new) = s
        .write(|tx| tx.project_register("/srv/app", "App", a))
        .unwrap();
    assert!(new);
    assert_eq!(p.session_id, Some(a));
    let (again, new) = s
        .write(|tx| tx.project_register("/srv/app", "Other", b))
        .unwrap();
    assert!(!new);
    assert_eq!(
        again, p,
        "the repeat answers the existing project unchanged"
    );
    assert_eq!(s.read(|tx| tx.projects(10)).unwrap().len(), 1);
}
