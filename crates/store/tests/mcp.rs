//! MCP servers and MCP call records as rows, on both backends (see `troupe_store::testing`):
//! definitions are put, read, replaced and deleted by name; the database refuses a name the
//! tool names could not carry; a run's MCP calls are kept in order, clipped and capped, each
//! told as an event.

use serde_json::json;
use std::sync::Arc;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{EventId, ManualClock, RunId, ThreadId};
use troupe_store::{
    MCP_ERROR_KEPT_CHARS, MCP_RESULT_KEPT_CHARS, McpCallRecord, NewRun, NewThread, SqlErrorKind,
    Store, StoreError,
};

fn store(clock: &Arc<ManualClock>) -> Store {
    troupe_store::testing::open(clock.clone())
}

fn new_run(s: &Store) -> (ThreadId, RunId) {
    s.write(|tx| {
        let thread = tx.create_thread(&NewThread {
            workspace_root: None,
            parent_id: None,
            title: "t".into(),
            agent: AgentBinding::new("a", "be brief"),
            workspace: "/tmp".into(),
            interaction: Interaction::Interactive,
        })?;
        let run = tx.start_run(&NewRun {
            thread_id: thread.id,
            trigger: "test".into(),
            owner_pid: std::process::id(),
            owner_boot: "boot".into(),
        })?;
        Ok((thread.id, run.id))
    })
    .unwrap()
}

fn events(s: &Store, kind: &str) -> Vec<troupe_store::Event> {
    s.read(|tx| tx.events_after(EventId(0), None, 10_000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == kind)
        .collect()
}

fn call(run: RunId, n: usize) -> McpCallRecord {
    McpCallRecord {
        run_id: run,
        call_id: format!("call-{n}"),
        server: "files".into(),
        tool: "read_file".into(),
        read_only: n.is_multiple_of(2),
        duration_ms: 10 + n as u64,
        ok: true,
        error: None,
        result: format!("result {n}"),
    }
}

#[test]
fn server_definitions_are_put_listed_by_name_replaced_in_place_and_deleted() {
    let clock = Arc::new(ManualClock::new(1_000));
    let s = store(&clock);
    let zeta = json!({"name": "zeta", "command": "zeta-server", "args": ["--stdio"]});
    let alpha = json!({"name": "alpha", "url": "http://127.0.0.1:9/mcp"});
    assert!(s.write(|tx| tx.put_mcp_server("zeta", &zeta)).unwrap());
    assert!(s.write(|tx| tx.put_mcp_server("alpha", &alpha)).unwrap());

    let listed = s.read(|tx| tx.mcp_servers()).unwrap();
    let names: Vec<&str> = listed.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["alpha", "zeta"]);
    assert_eq!(listed[1].definition, zeta);
    assert_eq!((listed[1].created_at, listed[1].updated_at), (1_000, 1_000));

    // A replacement: not new, the definition changed, created_at kept.
    clock.advance(500);
    let changed = json!({"name": "alpha", "url": "http://127.0.0.1:9/mcp", "enabled": false});
    assert!(!s.write(|tx| tx.put_mcp_server("alpha", &changed)).unwrap());
    let row = s.read(|tx| tx.mcp_server("alpha")).unwrap().unwrap();
    assert_eq!(row.definition, changed);
    assert_eq!((row.created_at, row.updated_at), (1_000, 1_500));
    assert_eq!(s.read(|tx| tx.mcp_servers()).unwrap().len(), 2);

    assert!(s.write(|tx| tx.delete_mcp_server("alpha")).unwrap());
    assert!(!s.write(|tx| tx.delete_mcp_server("alpha")).unwrap());
    assert_eq!(s.read(|tx| tx.mcp_server("alpha")).unwrap(), None);
    assert_eq!(s.read(|tx| tx.mcp_server("nobody")).unwrap(), None);
    let names: Vec<String> = s
        .read(|tx| tx.mcp_servers())
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, ["zeta"]);

    // Each change is told: three saves (two new), one delete (the second found nothing).
    let saved: Vec<_> = events(&s, "mcp_server_saved")
        .into_iter()
        .map(|e| e.payload)
        .collect();
    assert_eq!(
        saved,
        [
            json!({"name": "zeta", "created": true}),
            json!({"name": "alpha", "created": true}),
            json!({"name": "alpha", "created": false}),
        ]
    );
    let deleted = events(&s, "mcp_server_deleted");
    assert_eq!(deleted.len(), 1);
    assert_eq!(deleted[0].payload, json!({"name": "alpha"}));
}

#[test]
fn the_database_refuses_a_server_name_tool_names_cannot_carry() {
    let clock = Arc::new(ManualClock::new(1_000));
    let s = store(&clock);
    let def = json!({"command": "x"});
    let too_long = "a".repeat(33);
    for bad in [
        "",
        "Files",
        "my server",
        "files.v2",
        "fïles",
        too_long.as_str(),
    ] {
        match s.write(|tx| tx.put_mcp_server(bad, &def)) {
            Err(StoreError::Sql(e)) if e.kind == SqlErrorKind::Constraint => {}
            other => panic!("name {bad:?} was not refused by the CHECK: {other:?}"),
        }
    }
    // The edges of the pattern are allowed.
    let longest = "a".repeat(32);
    for good in ["a", "my-server_2", "0", "-", longest.as_str()] {
        assert!(
            s.write(|tx| tx.put_mcp_server(good, &def)).unwrap(),
            "{good}"
        );
    }
    assert_eq!(s.read(|tx| tx.mcp_servers()).unwrap().len(), 5);
}

#[test]
fn a_definition_must_be_a_json_object() {
    let clock = Arc::new(ManualClock::new(1_000));
    let s = store(&clock);
    match s.write(|tx| tx.put_mcp_server("files", &json!(["npx"]))) {
        Err(StoreError::Invalid(m)) => assert!(m.contains("JSON object"), "{m}"),
        other => panic!("an array definition was taken: {other:?}"),
    }
    // Past the method's check, the database holds the same rule.
    for text in ["'[1]'", "'not json'"] {
        let raw = format!(
            "INSERT INTO mcp_servers (name, definition, created_at, updated_at) VALUES ('files', {text}, 1, 1)"
        );
        assert!(
            s.write(|tx| tx.raw_execute(&raw)).is_err(),
            "{text} was stored"
        );
    }
    assert!(s.read(|tx| tx.mcp_servers()).unwrap().is_empty());
}

#[test]
fn mcp_calls_are_kept_in_order_clipped_at_character_boundaries_with_events() {
    let clock = Arc::new(ManualClock::new(1_000));
    let s = store(&clock);
    let (thread, run) = new_run(&s);
    let (_, other_run) = new_run(&s);

    let first = call(run, 0);
    // Two-byte characters past both limits: clipping counts characters and never splits one.
    let second = McpCallRecord {
        ok: false,
        error: Some("é".repeat(MCP_ERROR_KEPT_CHARS + 100)),
        result: "ü".repeat(MCP_RESULT_KEPT_CHARS + 1),
        ..call(run, 1)
    };
    assert!(s.write(|tx| tx.record_mcp_call(thread, &first)).unwrap());
    assert!(s.write(|tx| tx.record_mcp_call(thread, &second)).unwrap());
    assert!(
        s.write(|tx| tx.record_mcp_call(thread, &call(other_run, 7)))
            .unwrap()
    );

    let kept = s.read(|tx| tx.mcp_calls(run)).unwrap();
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0], first);
    assert_eq!(kept[1].call_id, "call-1");
    assert!(!kept[1].ok && !kept[1].read_only && kept[0].read_only);
    assert_eq!(kept[1].duration_ms, 11);
    assert_eq!(kept[1].result, "ü".repeat(MCP_RESULT_KEPT_CHARS));
    assert_eq!(
        kept[1].error.as_deref(),
        Some("é".repeat(MCP_ERROR_KEPT_CHARS).as_str())
    );
    // The other run's call is its own.
    let others = s.read(|tx| tx.mcp_calls(other_run)).unwrap();
    assert_eq!(others, [call(other_run, 7)]);

    let told = events(&s, "mcp_call_finished");
    assert_eq!(told.len(), 3);
    assert_eq!(told[1].thread_id, Some(thread));
    assert_eq!(told[1].run_id, Some(run));
    assert_eq!(
        told[1].payload,
        json!({"call_id": "call-1", "server": "files", "tool": "read_file", "ok": false, "duration_ms": 11})
    );
}

#[test]
fn a_run_keeps_its_first_mcp_calls_and_tells_every_one() {
    let clock = Arc::new(ManualClock::new(1_000));
    let s = store(&clock);
    let (thread, run) = new_run(&s);
    let cap = 80;
    for n in 0..cap {
        assert!(
            s.write(|tx| tx.record_mcp_call(thread, &call(run, n)))
                .unwrap(),
            "call {n} was not kept"
        );
    }
    assert!(
        !s.write(|tx| tx.record_mcp_call(thread, &call(run, cap)))
            .unwrap(),
        "the call past the cap was kept"
    );
    let kept = s.read(|tx| tx.mcp_calls(run)).unwrap();
    assert_eq!(kept.len(), cap);
    let ids: Vec<String> = kept.into_iter().map(|c| c.call_id).collect();
    let expected: Vec<String> = (0..cap).map(|n| format!("call-{n}")).collect();
    assert_eq!(ids, expected);
    // The call not kept is still told, so a live view sees it.
    let told = events(&s, "mcp_call_finished");
    assert_eq!(told.len(), cap + 1);
    assert_eq!(told[cap].payload["call_id"], json!(format!("call-{cap}")));
}
