//! A job's hand-overs over HTTP (issue 15): `GET /v1/tasks/:id/submissions` on a job with
//! 1,000 submissions of 10 files each.
//!
//! An in-process daemon (`bootstrap::build_state`, a SQLite file at `full` durability as
//! `troupe serve` opens it, or `--database postgres://…` for a fresh database on that server)
//! is filled through the store API: three Bots in a group, one job laid out in `--tickets`
//! tickets (each owned by one of two makers, reviewed by the third, with two parts), four
//! checks (two on the job, two on a ticket), and `--subs` hand-overs spread over the tickets in
//! turn, each with `--files` files. Each new hand-over supersedes its ticket's undecided one;
//! every hand-over gets a run of each job-wide check (the database keeps a check's newest
//! five), every other one a review with three verdicts, and each ticket's last is approved by
//! its reviewer. Then the route is timed over real HTTP on loopback (`reqwest` to
//! `axum::serve` with the daemon's router), from sending the request to reading the whole
//! body, one request at a time: `--warmup` requests not counted, then `--requests` counted.
//! Apart, for where the time goes: the store's read alone (`Tx::submissions_of_plan`), the
//! route's read in process (`Collab::plan_submissions`: that and the checks bound to each
//! hand-over) and its JSON encoding alone.
//!
//! cargo bench -p troupe-server --bench submissions -- [--subs 1000] [--files 10]
//!     [--tickets 50] [--warmup 20] [--requests 300] [--database postgres://…]
//!
//! Run without `--bench` (as `cargo test --benches` does) it does a tiny smoke run.

use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe_core::conversation::SessionKind;
use troupe_core::plan::{PlanSpec, RevisionCause};
use troupe_core::review::{ReviewOutcome, ReviewVerdict};
use troupe_core::submission::{ApprovedBy, CheckSource, SubmissionOrigin, SubmissionState};
use troupe_core::{BotId, PlanId, SubmissionId, TicketId};
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;
use troupe_store::{
    CheckKind, Layout, LayoutItem, NewBot, NewCheck, NewCheckRun, NewPlan, NewReview,
    NewSubmission, ReviewResult, RunOutcome, Store, SubmittedFile, VerdictRecord,
};

struct Opts {
    subs: usize,
    files: usize,
    tickets: usize,
    warmup: usize,
    requests: usize,
    database: Option<String>,
}

fn opts() -> Opts {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.iter().any(|a| a == "--bench");
    let mut o = Opts {
        subs: if full { 1000 } else { 20 },
        files: if full { 10 } else { 3 },
        tickets: if full { 50 } else { 4 },
        warmup: if full { 20 } else { 2 },
        requests: if full { 300 } else { 5 },
        database: None,
    };
    let mut i = 0;
    while i < args.len() {
        let val = || -> usize {
            args.get(i + 1)
                .and_then(|v| v.parse().ok())
                .expect("a number after the flag")
        };
        match args[i].as_str() {
            "--subs" => o.subs = val().max(1),
            "--files" => o.files = val().max(1),
            "--tickets" => o.tickets = val().max(1),
            "--warmup" => o.warmup = val(),
            "--requests" => o.requests = val().max(1),
            "--database" => o.database = Some(args.get(i + 1).expect("a URL").clone()),
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    o
}

/// The value at quantile `q` of sorted values (nearest rank, as the other benches do).
fn quantile<T: Copy>(sorted: &[T], q: f64) -> T {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

fn load1() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A SHA-256's worth of hex, different for every (hand-over, file).
fn hash(sub: usize, file: usize) -> String {
    let mut x = (sub as u64) << 20 | file as u64;
    let mut out = String::with_capacity(64);
    for _ in 0..4 {
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) ^ 0xD1B5_4A32_D192_ED03;
        out.push_str(&format!("{x:016x}"));
    }
    out
}

struct Job {
    plan: PlanId,
}

/// Fill the store as the module doc says; answers the job.
fn fill(store: &Store, jobs_dir: &std::path::Path, o: &Opts) -> Job {
    let (makers, reviewer, plan, tickets) = store
        .write(|tx| {
            let bot = |tx: &mut troupe_store::Tx<'_>, name: &str| {
                tx.create_bot(&NewBot {
                    name: name.into(),
                    persona: String::new(),
                    endpoint: None,
                    scripted: true,
                })
                .map(|b| b.id)
            };
            let ada = bot(tx, "Ada")?;
            let bo = bot(tx, "Bo")?;
            let cy = bot(tx, "Cy")?;
            let group = tx
                .create_session(SessionKind::Group, "studio", &[ada, bo, cy])?
                .id;
            let plan = tx
                .create_plan(
                    &NewPlan {
                        name: "trailer".into(),
                        original_request: "cut the trailer, shot by shot".into(),
                        home_session_id: group,
                        opening_line_id: None,
                        spec: PlanSpec::default(),
                        cause: RevisionCause::User,
                    },
                    |id| {
                        jobs_dir
                            .join(format!("{}-trailer", id.0))
                            .display()
                            .to_string()
                    },
                )?
                .id;
            let folder = tx.plan(plan)?.folder;
            let items = (0..o.tickets)
                .map(|i| LayoutItem {
                    title: format!("Scene {}", i + 1),
                    description: "the scene cut to the board".into(),
                    done_when: "- runs 20 to 30 seconds\n- no black frames".into(),
                    owner_bot_id: Some([ada, bo][i % 2]),
                    reviewer_bot_id: Some(cy),
                    parts: vec!["A".into(), "B".into()],
                    ..LayoutItem::default()
                })
                .collect();
            let laid = tx.lay_out(
                plan,
                &Layout {
                    items,
                    drops: vec![],
                },
                |n, title| format!("{folder}/{n:02}-{title}"),
            )?;
            Ok(([ada, bo], cy, plan, laid.tickets))
        })
        .unwrap();
    let ticket_ids: Vec<TicketId> = tickets.iter().map(|t| t.id).collect();
    let checks = store
        .write(|tx| {
            let mut out = Vec::new();
            for (ticket, path) in [
                (None, "01-Scene 1/cut.mp4"),
                (None, "notes.md"),
                (Some(ticket_ids[0]), "01-Scene 1/cut.mp4"),
                (Some(ticket_ids[ticket_ids.len() - 1]), "credits.txt"),
            ] {
                out.push(
                    tx.create_check(&NewCheck {
                        path: Some(path.into()),
                        ticket_id: ticket,
                        ..NewCheck::new(plan, CheckKind::FileExists, CheckSource::User)
                    })?
                    .id,
                );
            }
            Ok(out)
        })
        .unwrap();
    let mut made = 0;
    let t0 = Instant::now();
    // A batch of hand-overs per write, so the fill takes seconds, not minutes.
    while made < o.subs {
        let batch = (o.subs - made).min(100);
        store
            .write(|tx| {
                for k in made..made + batch {
                    let ti = k % o.tickets;
                    let ticket = &tickets[ti];
                    let producer: BotId = makers[ti % 2];
                    let dir = format!("{:02}-{}", ticket.number, ticket.title);
                    let files = (0..o.files)
                        .map(|f| SubmittedFile {
                            path: format!("{dir}/shot-{f:02}.mp4"),
                            sha256: hash(k, f),
                            size: 1_000_000 + (k * 31 + f * 7) as i64,
                        })
                        .collect();
                    let s = tx.create_submission(&NewSubmission {
                        ticket_id: ticket.id,
                        origin: SubmissionOrigin::Explicit,
                        producer_bot_id: Some(producer),
                        run_id: None,
                        work_item_id: None,
                        content: None,
                        note: format!("cut {} of {}", k / o.tickets + 1, ticket.title),
                        claims: vec!["runs 24 seconds".into(), "no black frames".into()],
                        files,
                        parts: vec![],
                    })?;
                    tx.supersede_undecided(ticket.id, Some(s.id))?;
                    for c in &checks[..2] {
                        tx.record_check_run(&NewCheckRun {
                            check_id: *c,
                            submission_id: Some(s.id),
                            outcome: if k % 7 == 0 {
                                RunOutcome::Failed
                            } else {
                                RunOutcome::Passed
                            },
                            detail: "checked the file".into(),
                            output_tail: String::new(),
                            measured: None,
                            for_reference: false,
                            started_at: s.created_at,
                        })?;
                    }
                    if k % 2 == 0 {
                        review(tx, s.id, reviewer)?;
                    }
                    if k + o.tickets >= o.subs {
                        // The ticket's last: its reviewer approves it.
                        tx.set_submission_state(s.id, SubmissionState::InReview)?;
                        tx.approve_submission(s.id, ApprovedBy::Reviewer, Some(reviewer), None)?;
                    }
                }
                Ok(())
            })
            .unwrap();
        made += batch;
    }
    eprintln!(
        "filled {} hand-overs × {} files over {} tickets in {:.1} s",
        o.subs,
        o.files,
        o.tickets,
        t0.elapsed().as_secs_f64()
    );
    Job { plan }
}

fn review(
    tx: &mut troupe_store::Tx<'_>,
    sub: SubmissionId,
    reviewer: BotId,
) -> troupe_store::Result<()> {
    let v = |id: &str, verdict, evidence: Option<&str>| VerdictRecord {
        requirement_id: id.into(),
        verdict,
        evidence: evidence.map(str::to_string),
    };
    tx.record_review(&NewReview {
        submission_id: sub,
        reviewer_bot_id: reviewer,
        run_id: None,
        outcome: ReviewOutcome::Reject,
        note: "the second shot runs long".into(),
        result: ReviewResult::Recorded,
        reasons: vec![],
        same_model: false,
        reviewer_model: Some("model-b".into()),
        producer_model: Some("model-a".into()),
        verdicts: vec![
            v("r1", ReviewVerdict::Pass, Some("24.0 s by ffprobe")),
            v("r2", ReviewVerdict::Fail, Some("black frames at 00:12")),
            v("r3", ReviewVerdict::NotApplicable, None),
        ],
    })?;
    Ok(())
}

fn main() {
    let o = opts();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(&o));
}

async fn run(o: &Opts) {
    let dir = tempfile::tempdir().unwrap();
    let secrets: SecretSource = Arc::new(|_| None);
    let mut boot_opts =
        troupe_server::bootstrap::BootOptions::new(RoleTable::new(secrets.clone()), secrets);
    let backend = match &o.database {
        Some(server) => {
            boot_opts.database =
                Some(troupe_store::testing::fresh_postgres_database(server).unwrap());
            "postgres"
        }
        None => "sqlite",
    };
    let boot = troupe_server::bootstrap::build_state(dir.path(), boot_opts)
        .await
        .unwrap();
    let state = boot.state;
    let collab = state.collab.clone();
    let jobs_dir = dir.path().join("jobs");
    let job = {
        let store = collab.store().clone();
        let o = Opts {
            database: None,
            ..*o
        };
        tokio::task::spawn_blocking(move || fill(&store, &jobs_dir, &o))
            .await
            .unwrap()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}");
    let host_rule = troupe_server::hosts::HostRule::new(addr, &[]).unwrap();
    let app = troupe_server::app(state.clone(), host_rule);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let client = reqwest::Client::new();
    let url = format!("{base}/v1/tasks/{}/submissions", job.plan.0);

    // The answer is the whole job, newest first, each with its files, checks and reviews.
    let resp = client.get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    let list = body.as_array().expect("a list");
    assert_eq!(list.len(), o.subs, "every hand-over listed");
    assert!(
        list.iter()
            .all(|s| s["files"].as_array().unwrap().len() == o.files),
        "every hand-over with its files"
    );
    assert!(
        list[0]["id"].as_i64() > list[1]["id"].as_i64(),
        "newest first"
    );
    assert!(
        list.iter()
            .any(|s| !s["reviews"].as_array().unwrap().is_empty()),
        "reviews shown"
    );
    assert!(
        list.iter()
            .any(|s| !s["checks"].as_array().unwrap().is_empty()),
        "checks shown"
    );

    eprintln!(
        "{backend}: GET {url}, {} warm-up + {} timed requests, load1 {}",
        o.warmup,
        o.requests,
        load1()
    );
    let mut times = Vec::with_capacity(o.requests);
    let mut bytes = 0;
    for i in 0..o.warmup + o.requests {
        let t0 = Instant::now();
        let resp = client.get(&url).send().await.unwrap();
        let status = resp.status();
        let b = resp.bytes().await.unwrap();
        let took = t0.elapsed();
        assert_eq!(status, 200);
        bytes = b.len();
        if i >= o.warmup {
            times.push(took);
        }
    }
    times.sort();

    // Where the time goes: the read and the views in process, then the JSON alone.
    let (mut store_read, mut read, mut encode) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..o.requests.min(100) {
        let t0 = Instant::now();
        let subs = collab
            .store()
            .read(|tx| tx.submissions_of_plan(job.plan, None))
            .unwrap();
        store_read.push(t0.elapsed());
        assert_eq!(subs.len(), o.subs);
        let t0 = Instant::now();
        let views = collab.plan_submissions(job.plan, None).unwrap();
        read.push(t0.elapsed());
        let t1 = Instant::now();
        let json = serde_json::to_vec(&views).unwrap();
        encode.push(t1.elapsed());
        assert!(
            json.len() > bytes / 2,
            "the views' JSON is the route's body"
        );
    }
    store_read.sort();
    read.sort();
    encode.sort();
    println!(
        "result bench=submissions backend={backend} subs={} files={} tickets={} requests={} \
         load1={} body_kb={} p50_ms={:.1} p99_ms={:.1} max_ms={:.1} store_p50_ms={:.1} \
         read_p50_ms={:.1} encode_p50_ms={:.1}",
        o.subs,
        o.files,
        o.tickets,
        o.requests,
        load1(),
        bytes / 1024,
        ms(quantile(&times, 0.5)),
        ms(quantile(&times, 0.99)),
        ms(*times.last().unwrap()),
        ms(quantile(&store_read, 0.5)),
        ms(quantile(&read, 0.5)),
        ms(quantile(&encode, 0.5)),
    );
    let _ = collab.engine().shutdown(Duration::from_secs(5)).await;
}
