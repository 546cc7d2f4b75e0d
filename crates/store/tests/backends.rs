//! The two backends hold the same schema and the same rules: what one refuses, so does the other.

use std::sync::Arc;
use troupe_core::ManualClock;
use troupe_store::{OpenOptions, SqlErrorKind, Store, StoreError, testing};

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(1_000))
}

#[test]
fn both_backends_reach_the_same_logical_schema() {
    let Some(server) = testing::postgres_or_skip("both_backends_reach_the_same_logical_schema")
    else {
        return;
    };
    let sqlite = Store::open_in_memory(clock())
        .unwrap()
        .schema_outline()
        .unwrap();
    let url = testing::fresh_postgres_database(&server).unwrap();
    let pg = Store::open_url(&url, clock(), OpenOptions::default())
        .unwrap()
        .schema_outline()
        .unwrap();
    assert!(!sqlite.tables.is_empty());
    for (table, columns) in &sqlite.tables {
        assert_eq!(pg.tables.get(table), Some(columns), "table {table}");
    }
    assert_eq!(sqlite.tables.len(), pg.tables.len(), "the same tables");
    assert_eq!(sqlite.indexes, pg.indexes, "the same named indexes");
    assert_eq!(sqlite.views, pg.views, "the same views");
    assert_eq!(sqlite.triggers, pg.triggers, "the same triggers");
}

/// Raw writes that break a rule the schema holds, each after the rows it needs exist.
const ATTACKS: &[(&str, &str)] = &[
    (
        "a run that ends without an end reason",
        "UPDATE runs SET status = 'completed', ended_at = 1 WHERE id = 1",
    ),
    (
        "a run in a status nobody knows",
        "UPDATE runs SET status = 'sleeping' WHERE id = 1",
    ),
    (
        "a run of a thread that does not exist",
        "INSERT INTO runs (thread_id, generation, trigger_reason, status, owner_pid, owner_boot, started_at)
         VALUES (999, 1, 'x', 'running', 1, 'b', 1)",
    ),
    (
        "an inbox item of priority 9",
        "INSERT INTO inbox_items (thread_id, mode, priority, order_key, origin, body, visible, created_at)
         VALUES (1, 'task', 9, 1, 'user', 'x', 1, 1)",
    ),
    (
        "two inbox items with one delivery key",
        "INSERT INTO inbox_items (thread_id, mode, priority, order_key, delivery_key, origin, body, visible, created_at)
         VALUES (1, 'task', 2, 1, 'k', 'user', 'x', 1, 1), (1, 'task', 2, 2, 'k', 'user', 'y', 1, 1)",
    ),
    (
        "two live Bots with one name in other cases",
        "INSERT INTO bots (name, created_at, updated_at) VALUES ('Ada', 1, 1), ('ADA', 1, 1)",
    ),
    (
        "a model role nobody knows",
        "INSERT INTO model_roles (role, endpoint, updated_at) VALUES ('oracle', '{}', 1)",
    ),
    (
        "a workflow terminal in an unknown status",
        "INSERT INTO workflow_terminals (thread_id, kind, status, instructions, created_at)
         VALUES (1, 'lightloop', 'vanished', '', 1)",
    ),
    (
        "a note with a blank title",
        "INSERT INTO notes (kind, title, body, version, created_at, updated_at)
         VALUES ('note', '   ', '', 1, 1, 1)",
    ),
    (
        "an effect recorded twice under one key",
        "INSERT INTO effects (thread_id, run_id, effect_key, tool, summary, outcome, started_at)
         VALUES (1, 1, 'e', 'shell', '', 'started', 1), (1, 1, 'e', 'shell', '', 'started', 1)",
    ),
    (
        "a lead in a direct conversation",
        "UPDATE session_members SET is_lead = 1 WHERE session_id = 1",
    ),
    (
        "a lead that left the group",
        "UPDATE session_members SET is_lead = 1, left_at = 5 WHERE session_id = 2 AND bot_id = 1",
    ),
    (
        "an archived Bot made lead",
        "UPDATE session_members SET is_lead = 1 WHERE session_id = 2 AND bot_id = 2",
    ),
    (
        "two leads in one group",
        "INSERT INTO session_members (session_id, bot_id, is_lead) VALUES (2, 3, 1), (2, 4, 1)",
    ),
    (
        "an ask answered twice",
        "UPDATE session_messages SET ask_answer = '{\"options\":[1]}' WHERE id = 1",
    ),
    (
        "a second Bot↔Bot direct for one pair",
        "INSERT INTO sessions (kind, title, created_at, updated_at, opened_via, pair_key)
         VALUES ('bot_direct', 'd', 1, 1, 'create_direct', '1:3')",
    ),
    (
        "a Bot↔Bot direct that does not say how it was opened",
        "INSERT INTO sessions (kind, title, created_at, updated_at) VALUES ('bot_direct', 'd', 1, 1)",
    ),
];

fn every_rule_refuses_its_attack(store: &Store) {
    store
        .write(|tx| {
            tx.raw_execute(
                "INSERT INTO threads (title, agent, workspace, interaction, created_at, updated_at)
                 VALUES ('t', '{\"name\":\"a\"}', '/tmp', 'interactive', 1, 1)",
            )?;
            tx.raw_execute(
                "INSERT INTO runs (thread_id, generation, trigger_reason, status, owner_pid, owner_boot, started_at)
                 VALUES (1, 1, 'x', 'running', 1, 'b', 1)",
            )?;
            // Bots 1, 3, 4 live and 2 archived; a direct (1) and a group (2) with an answered ask.
            tx.raw_execute(
                "INSERT INTO bots (name, created_at, updated_at, archived_at)
                 VALUES ('a', 1, 1, NULL), ('b', 1, 1, 1), ('c', 1, 1, NULL), ('d', 1, 1, NULL)",
            )?;
            tx.raw_execute(
                "INSERT INTO sessions (kind, title, created_at, updated_at)
                 VALUES ('direct', 'x', 1, 1), ('group', 'g', 1, 1)",
            )?;
            tx.raw_execute(
                "INSERT INTO session_members (session_id, bot_id) VALUES (1, 1), (2, 1), (2, 2)",
            )?;
            tx.raw_execute(
                "INSERT INTO sessions (kind, title, created_at, updated_at, opened_via, pair_key)
                 VALUES ('bot_direct', 'd', 1, 1, 'create_direct', '1:3')",
            )?;
            tx.raw_execute(
                "INSERT INTO session_messages (session_id, author, bot_id, body, created_at, kind, ask, ask_answer)
                 VALUES (2, 'bot', 1, 'q', 1, 'ask', '{\"question\":\"q\"}', '{\"options\":[0]}')",
            )
        })
        .unwrap();
    for (rule, sql) in ATTACKS {
        // A rule's refusal, not a statement that is wrong in itself.
        match store.write(|tx| tx.raw_execute(sql)) {
            Err(StoreError::Sql(e)) if e.kind == SqlErrorKind::Constraint => {}
            other => panic!("{rule}: expected a constraint to refuse it, got {other:?}"),
        }
    }
    // Nothing an attack wrote stayed.
    let runs = store.read(|tx| tx.live_runs()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status.as_str(), "running");
}

#[test]
fn rules_refuse_on_sqlite() {
    every_rule_refuses_its_attack(&Store::open_in_memory(clock()).unwrap());
}

#[test]
fn triggers_refuse_on_postgres() {
    let Some(server) = testing::postgres_or_skip("triggers_refuse_on_postgres") else {
        return;
    };
    let url = testing::fresh_postgres_database(&server).unwrap();
    every_rule_refuses_its_attack(&Store::open_url(&url, clock(), OpenOptions::default()).unwrap());
}

#[test]
fn a_postgres_database_from_a_newer_troupe_is_refused() {
    let Some(server) =
        testing::postgres_or_skip("a_postgres_database_from_a_newer_troupe_is_refused")
    else {
        return;
    };
    let url = testing::fresh_postgres_database(&server).unwrap();
    let s = Store::open_url(&url, clock(), OpenOptions::default()).unwrap();
    s.write(|tx| tx.raw_execute("UPDATE troupe_schema SET version = 999"))
        .unwrap();
    drop(s);
    match Store::open_url(&url, clock(), OpenOptions::default()) {
        Err(StoreError::TooNew { found: 999, .. }) => {}
        other => panic!("expected TooNew, got {:?}", other.err()),
    }
}

#[test]
fn postgres_nodes_opening_a_new_database_at_once_migrate_it_once() {
    let Some(server) =
        testing::postgres_or_skip("postgres_nodes_opening_a_new_database_at_once_migrate_it_once")
    else {
        return;
    };
    let url = testing::fresh_postgres_database(&server).unwrap();
    let opened: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || Store::open_url(&url, clock(), OpenOptions::default()))
        })
        .collect();
    for t in opened {
        t.join().unwrap().expect("every node opens");
    }
    let s = Store::open_url(&url, clock(), OpenOptions::default()).unwrap();
    assert!(!s.schema_outline().unwrap().tables.is_empty());
}
