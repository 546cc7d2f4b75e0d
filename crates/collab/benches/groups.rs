//! Routing a person's lines in a large group: 20 scripted Bots in one group with a confirmed
//! lead, lines that name one to three of them (and some unaddressed), an instant line reader on
//! the `reading` role. Measured per line: from the start of `post_line` to the commit of its
//! deliveries (the `line_routed` event, published at commit), while the woken Bots' turns run
//! alongside. Store: a SQLite file at full durability, as `troupe serve` opens it.
//!
//! cargo bench -p troupe-collab --bench groups -- [--lines 1000] [--bots 20]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use troupe_collab::{
    Collab, LeadRequest, NewBotRequest, NewSessionRequest, SessionProjector, SharedRoles,
};
use troupe_core::SessionMessageId;
use troupe_core::thread::EndpointSpec;
use troupe_engine::{Engine, RoleTable};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn scripted(dir: &std::path::Path, name: &str, json: &str) -> EndpointSpec {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, json).unwrap();
    EndpointSpec {
        kind: "scripted".into(),
        base_url: None,
        model: name.into(),
        api_key_env: None,
        script: Some(path.display().to_string()),
        takes_pictures: false,
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let lines = arg("--lines", 1000);
    let bots = arg("--bots", 20);
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::Store::open(
        dir.path().join("troupe.db"),
        Arc::new(troupe_core::SystemClock),
    )
    .unwrap();
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = troupe_collab::tools::ToolHost::new();
    let mut builder = Engine::builder(store, roles.clone())
        .message_observer(Arc::new(SessionProjector))
        .context(Arc::new(troupe_collab::ConversationSituation))
        .admission(Arc::new(troupe_collab::Membership));
    for t in troupe_collab::tools::registrations(&host) {
        builder = builder.tool(t).unwrap();
    }
    let collab = Collab::new(builder.build(), roles, dir.path().join("workspaces"));
    host.attach(&collab);
    collab
        .set_role(
            "reading",
            scripted(
                dir.path(),
                "reader",
                r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],"on_exhausted":"repeat_last"}"#,
            ),
        )
        .unwrap();
    let reply = r#"{"steps":[{"text":"noted"}],"on_exhausted":"repeat_last"}"#;
    let mut ids = Vec::new();
    for i in 0..bots {
        let name = format!("Bot{i:02}");
        let b = collab
            .create_bot(NewBotRequest {
                name: name.clone(),
                persona: None,
                endpoint: Some(scripted(dir.path(), &name, reply)),
            })
            .unwrap();
        ids.push((b.id, name));
    }
    let session = collab
        .create_session(NewSessionRequest {
            kind: "group".into(),
            bot_ids: ids.iter().map(|(b, _)| *b).collect(),
            title: Some("Bench".into()),
        })
        .unwrap()
        .session
        .id;
    collab
        .set_lead(
            session,
            LeadRequest {
                bot_id: Some(ids[0].0),
                confirmed: Some(true),
            },
        )
        .unwrap();

    // When each line's deliveries committed, as the event stream hears it: on a thread of its
    // own, so the moment is not one a busy runtime worker got around to polling a task.
    let routed: Arc<Mutex<HashMap<SessionMessageId, Instant>>> = Arc::default();
    let mut events = collab.store().subscribe();
    let seen = routed.clone();
    std::thread::spawn(move || {
        while let Ok(e) = events.blocking_recv() {
            if e.kind == "line_routed"
                && let Some(id) = e.payload["message_id"].as_i64()
            {
                seen.lock()
                    .unwrap()
                    .insert(SessionMessageId(id), Instant::now());
            }
        }
    });

    let mut starts = Vec::with_capacity(lines);
    let began = Instant::now();
    for n in 0..lines {
        // One to three named Bots, every fifth line unaddressed (to the lead).
        let body = match n % 5 {
            4 => format!("line {n}: status, anyone?"),
            k => {
                (0..=k.min(2))
                    .map(|j| format!("@{}", ids[(n * 7 + j * 3) % bots].1))
                    .collect::<Vec<_>>()
                    .join(" ")
                    + &format!(" line {n}: please look")
            }
        };
        let t0 = Instant::now();
        let line = collab.post_line(session, body, None).await.unwrap();
        starts.push((line.id, t0));
    }
    let wall = began.elapsed();
    let routed = routed.lock().unwrap().clone();
    let mut ms: Vec<f64> = starts
        .iter()
        .filter_map(|(id, t0)| {
            routed
                .get(id)
                .map(|t| t.duration_since(*t0).as_secs_f64() * 1e3)
        })
        .collect();
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let turns: usize = collab.turns(session, 200).map(|t| t.len()).unwrap_or(0);
    println!(
        "result bench=groups bots={bots} lines={lines} routed={} p50_ms={:.3} p99_ms={:.3} max_ms={:.3} lines_per_s={:.0} recent_turns={}",
        ms.len(),
        percentile(&ms, 0.50),
        percentile(&ms, 0.99),
        ms.last().copied().unwrap_or(0.0),
        lines as f64 / wall.as_secs_f64(),
        turns
    );
}
