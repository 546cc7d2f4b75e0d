//! Work slots at scale: Bots each with three jobs and the default two work slots, so each
//! Bot's third job waits in its queue. Measured per Bot: from the end of the first of its two
//! running job segments (the slot freeing up) to the start of its queued third job's segment,
//! from the runs' stored times (1 ms resolution). Each job is opened by a person's line in a
//! group of its own, at the Bot's desk with `work_on`; each job's segment works `--work-ms`.
//! Store: a SQLite file at full durability, as `troupe serve` opens it.
//!
//! cargo bench -p troupe-collab --bench dispatch -- [--bots 1000] [--window 50] [--work-ms 1500]

use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe_collab::{Collab, NewBotRequest, NewSessionRequest, SharedRoles};
use troupe_core::BotId;
use troupe_core::thread::EndpointSpec;
use troupe_core::work_item::WorkMode;
use troupe_engine::{Engine, RoleTable};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// The desk opens the line's job; the job's first call tries `work_on` again (refused: it has
/// its job) and its second works for `work_ms`.
fn script(work_ms: usize) -> String {
    let rule = |n: &str| {
        format!(
            r#"{{"when_user_contains":"job {n}","reply":{{"tool_calls":[{{"name":"work_on","arguments":{{"new":{{"title":"{n}"}}}}}}]}}}}"#
        )
    };
    format!(
        r#"{{"steps":[{{"text":"unused"}},{{"text":"done","delay_ms":{work_ms}}}],"rules":[{},{},{}]}}"#,
        rule("one"),
        rule("two"),
        rule("three")
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bots = arg("--bots", 1000);
    let window = arg("--window", 50).max(1);
    let work_ms = arg("--work-ms", 1500);
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::Store::open(
        dir.path().join("troupe.db"),
        Arc::new(troupe_core::SystemClock),
    )
    .unwrap();
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = troupe_collab::tools::ToolHost::new();
    let builder = troupe_collab::extend(Engine::builder(store, roles.clone()), &host).unwrap();
    let collab = Collab::new(builder.build(), roles, dir.path().join("workspaces"));
    host.attach(&collab);
    let path = dir.path().join("bot.json");
    std::fs::write(&path, script(work_ms)).unwrap();
    let endpoint = EndpointSpec {
        kind: "scripted".into(),
        base_url: None,
        model: "bot".into(),
        api_key_env: None,
        script: Some(path.display().to_string()),
        takes_pictures: false,
        thinking_levels: Vec::new(),
        max_output_tokens: None,
    };
    let began = Instant::now();
    let mut gaps = Vec::with_capacity(bots);
    let mut all: Vec<BotId> = Vec::with_capacity(bots);
    for start in (0..bots).step_by(window) {
        let mut batch = Vec::new();
        for i in start..(start + window).min(bots) {
            let name = format!("Bot{i:04}");
            let b = collab
                .create_bot(NewBotRequest {
                    name: name.clone(),
                    persona: None,
                    endpoint: Some(endpoint.clone()),
                })
                .unwrap()
                .id;
            for job in ["one", "two", "three"] {
                let s = collab
                    .create_session(NewSessionRequest {
                        workspace: None,
                        kind: "group".into(),
                        bot_ids: vec![b],
                        title: Some(format!("{name} {job}")),
                    })
                    .unwrap()
                    .session
                    .id;
                collab
                    .post_line(s, format!("@{name} job {job}"), None)
                    .await
                    .unwrap();
            }
            batch.push(b);
        }
        // The batch is done when each of its Bots has three job segments ended.
        let deadline = Instant::now() + Duration::from_secs(120);
        while !batch.iter().all(|b| ended_jobs(&collab, *b) >= 3) {
            assert!(Instant::now() < deadline, "a batch did not finish in 120 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for b in &batch {
            if let Some(gap) = slot_gap(&collab, *b) {
                gaps.push(gap);
            }
        }
        all.extend(batch);
    }
    gaps.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "result bench=dispatch bots={bots} window={window} work_ms={work_ms} queued_measured={} p50_ms={:.1} p99_ms={:.1} max_ms={:.1} wall_s={:.1}",
        gaps.len(),
        percentile(&gaps, 0.50),
        percentile(&gaps, 0.99),
        gaps.last().copied().unwrap_or(0.0),
        began.elapsed().as_secs_f64()
    );
}

fn job_runs(collab: &Collab, bot: BotId) -> Vec<troupe_store::RunRecord> {
    collab
        .store()
        .read(|tx| {
            let mut out = Vec::new();
            for item in tx.work_items_of_bot(bot)? {
                if item.mode == WorkMode::Work {
                    out.extend(tx.runs_for_thread(item.thread_id, 10)?);
                }
            }
            Ok(out)
        })
        .unwrap()
}

fn ended_jobs(collab: &Collab, bot: BotId) -> usize {
    job_runs(collab, bot)
        .iter()
        .filter(|r| r.ended_at.is_some())
        .count()
}

/// The queued job's wait past the first free slot: its start minus the first end of the jobs
/// that started before it. `None` when it never waited (it started before either ended).
fn slot_gap(collab: &Collab, bot: BotId) -> Option<f64> {
    let mut runs = job_runs(collab, bot);
    runs.sort_by_key(|r| r.started_at);
    let last = runs.last()?;
    let freed = runs[..runs.len() - 1]
        .iter()
        .filter_map(|r| r.ended_at)
        .min()?;
    (freed <= last.started_at).then(|| (last.started_at - freed) as f64)
}
