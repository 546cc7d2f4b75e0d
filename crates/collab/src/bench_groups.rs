//! The groups benchmark (`troupe bench groups`; `cargo bench -p troupe-collab --bench groups`
//! runs the same): routing a person's lines in a large group. Scripted Bots in one group with
//! a confirmed lead, lines that name one to three of them (every fifth unaddressed, so the
//! lead's), an instant line reader on the `reading` role. Measured per line: from the start of
//! `post_line` to the commit of its deliveries (the `line_routed` event, published at commit),
//! while the woken Bots' turns run alongside. Store: a SQLite file at full durability, as
//! `troupe serve` opens it (or `normal`, to compare).

use crate::{Collab, LeadRequest, NewBotRequest, NewSessionRequest, SessionProjector, SharedRoles};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use troupe_core::SessionMessageId;
use troupe_core::thread::EndpointSpec;
use troupe_engine::{Engine, RoleTable};

/// How big a run.
#[derive(Clone, Copy, Debug)]
pub struct GroupsBench {
    /// Lines posted, one after another.
    pub lines: usize,
    /// Bots in the group (the first is the lead).
    pub bots: usize,
    /// The store's durability: `Full` (the goal's setting, and `troupe serve`'s default), or
    /// `Normal` to see how much of a line's time is the disk's sync.
    pub durability: troupe_store::Durability,
}

/// What a run measured (milliseconds, over the lines routed).
#[derive(Clone, Debug)]
pub struct GroupsReport {
    pub bots: usize,
    pub durability: troupe_store::Durability,
    pub lines: usize,
    pub routed: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub lines_per_s: f64,
}

impl GroupsReport {
    /// One line, `key=value`, for scripts and docs/PERFORMANCE.md.
    pub fn result_line(&self) -> String {
        format!(
            "result bench=groups bots={} lines={} durability={} routed={} p50_ms={:.3} p99_ms={:.3} max_ms={:.3} lines_per_s={:.0}",
            self.bots,
            self.lines,
            self.durability.as_str(),
            self.routed,
            self.p50_ms,
            self.p99_ms,
            self.max_ms,
            self.lines_per_s
        )
    }
}

/// Run it with its store and scripts under `dir` (left for the caller to remove).
pub async fn run(dir: &Path, opts: GroupsBench) -> Result<GroupsReport, String> {
    if opts.lines == 0 || opts.bots == 0 {
        return Err("the groups bench needs at least one line and one Bot".into());
    }
    let store = troupe_store::Store::open_with(
        dir.join("troupe.db"),
        Arc::new(troupe_core::SystemClock),
        troupe_store::OpenOptions {
            durability: opts.durability,
        },
    )
    .map_err(|e| e.to_string())?;
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = crate::tools::ToolHost::new();
    let mut builder = Engine::builder(store, roles.clone())
        .message_observer(Arc::new(SessionProjector::default()))
        .context(Arc::new(crate::ConversationSituation))
        .admission(Arc::new(crate::Membership));
    for t in crate::tools::registrations(&host) {
        builder = builder.tool(t).map_err(|e| e.to_string())?;
    }
    let collab = Collab::new(builder.build(), roles, dir.join("workspaces"));
    host.attach(&collab);
    let reader = scripted(
        dir,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],"on_exhausted":"repeat_last"}"#,
    )?;
    collab
        .set_role("reading", reader)
        .map_err(|e| e.to_string())?;
    let reply = r#"{"steps":[{"text":"noted"}],"on_exhausted":"repeat_last"}"#;
    let mut ids = Vec::new();
    for i in 0..opts.bots {
        let name = format!("Bot{i:02}");
        let b = collab
            .create_bot(NewBotRequest {
                name: name.clone(),
                persona: None,
                endpoint: Some(scripted(dir, &name, reply)?),
            })
            .map_err(|e| e.to_string())?;
        ids.push((b.id, name));
    }
    let session = collab
        .create_session(NewSessionRequest {
            workspace: None,
            kind: "group".into(),
            bot_ids: ids.iter().map(|(b, _)| *b).collect(),
            title: Some("Bench".into()),
        })
        .map_err(|e| e.to_string())?
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
        .map_err(|e| e.to_string())?;

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
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(SessionMessageId(id), Instant::now());
            }
        }
    });

    let mut starts = Vec::with_capacity(opts.lines);
    let began = Instant::now();
    for n in 0..opts.lines {
        let t0 = Instant::now();
        let line = collab
            .post_line(session, line_text(n, &ids), None)
            .await
            .map_err(|e| e.to_string())?;
        starts.push((line.id, t0));
    }
    let wall = began.elapsed();
    // The last line's event may still be on its way to the listening thread.
    let deadline = Instant::now() + std::time::Duration::from_secs(5);
    while Instant::now() < deadline {
        let all = {
            let seen = routed.lock().unwrap_or_else(|p| p.into_inner());
            starts.iter().all(|(id, _)| seen.contains_key(id))
        };
        if all {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let routed = routed.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut ms: Vec<f64> = starts
        .iter()
        .filter_map(|(id, t0)| {
            routed
                .get(id)
                .map(|t| t.duration_since(*t0).as_secs_f64() * 1e3)
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    Ok(GroupsReport {
        bots: opts.bots,
        durability: opts.durability,
        lines: opts.lines,
        routed: ms.len(),
        p50_ms: percentile(&ms, 0.50),
        p99_ms: percentile(&ms, 0.99),
        max_ms: ms.last().copied().unwrap_or(0.0),
        lines_per_s: opts.lines as f64 / wall.as_secs_f64(),
    })
}

/// Line `n`: one to three named Bots, every fifth line unaddressed (to the lead).
fn line_text(n: usize, ids: &[(troupe_core::BotId, String)]) -> String {
    let bots = ids.len();
    match n % 5 {
        4 => format!("line {n}: status, anyone?"),
        k => {
            (0..=k.min(2))
                .map(|j| format!("@{}", ids[(n * 7 + j * 3) % bots].1))
                .collect::<Vec<_>>()
                .join(" ")
                + &format!(" line {n}: please look")
        }
    }
}

fn scripted(dir: &Path, name: &str, json: &str) -> Result<EndpointSpec, String> {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, json).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(EndpointSpec {
        kind: "scripted".into(),
        base_url: None,
        model: name.into(),
        api_key_env: None,
        script: Some(path.display().to_string()),
        takes_pictures: false,
        thinking_levels: Vec::new(),
        max_output_tokens: None,
    })
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}
