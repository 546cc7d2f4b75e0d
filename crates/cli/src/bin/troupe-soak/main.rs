//! The crash soak (issue 20): a real `troupe serve` on a temp data dir, scripted Bots doing
//! mixed work, SIGKILLed at random moments (seeded; the seed is printed) and restarted, for N
//! cycles. After every restart and at the end the database and the workspace files are checked:
//! nothing lost, no effect run twice, nothing left live, gap-free events, an intact database,
//! unknown work not resumed by itself, everything else finished.
//!
//! `cargo run -p troupe-cli --bin troupe-soak -- --cycles 200 [--seed N] [--dir PATH]`

mod checks;
mod daemon;
mod rng;
mod workload;

use anyhow::{Context, Result, bail};
use clap::Parser;
use daemon::{Daemon, Paths};
use rng::Rng;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use workload::{CONVERSATIONS, Workload};

#[derive(Parser)]
#[command(
    about = "Crash soak: SIGKILL troupe serve at random moments and check nothing is lost or repeated"
)]
struct Args {
    /// Kill-and-restart cycles.
    #[arg(long, default_value_t = 30)]
    cycles: u64,
    /// The RNG seed (default: from the clock; printed either way).
    #[arg(long)]
    seed: Option<u64>,
    /// Where the data dir, scripts and logs go (default: a new temp dir, removed on success).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The troupe binary (default: `troupe` next to this one).
    #[arg(long, env = "TROUPE_BIN")]
    troupe: Option<PathBuf>,
}

/// Where in the work the daemon dies.
#[derive(Clone, Copy, Debug)]
enum Moment {
    /// While models stream (scripted delays between pieces).
    Stream,
    /// While a shell command sleeps between its two markers.
    Shell,
    /// Right after a command's last marker: its effect happened, its settlement may not have.
    Settle,
    /// In a burst of concurrent lines, each a transaction of its own.
    Burst,
}

const MOMENTS: [Moment; 4] = [Moment::Stream, Moment::Shell, Moment::Settle, Moment::Burst];

fn main() {
    let args = Args::parse();
    let seed = args.seed.unwrap_or_else(|| workload::now_ms() as u64);
    println!("soak seed={seed} cycles={}", args.cycles);
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    match rt.block_on(run(&args, seed)) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("soak FAILED (seed={seed}): {e:#}");
            std::process::exit(1);
        }
    }
}

async fn run(args: &Args, seed: u64) -> Result<()> {
    let (root, temp) = match &args.dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            (std::fs::canonicalize(d)?, None)
        }
        None => {
            let t = std::env::temp_dir().join(format!("troupe-soak-{seed}-{}", std::process::id()));
            std::fs::create_dir_all(&t)?;
            (std::fs::canonicalize(&t)?, Some(t))
        }
    };
    println!("soak dir={}", root.display());
    let bin = match &args.troupe {
        Some(b) => b.clone(),
        None => std::env::current_exe()?
            .parent()
            .context("this binary's directory")?
            .join("troupe"),
    };
    let paths = Paths {
        bin,
        data: root.join("data"),
        config: root.join("config.toml"),
        log: root.join("daemon.log"),
    };
    write_config(&root)?;
    let db = paths.data.join("troupe.db");
    let mut rng = Rng::new(seed);
    let started = Instant::now();

    let mut d = Daemon::start(&paths)?;
    let mut w = Workload::setup(&d, &root.join("scripts"), &mut rng).await?;
    w.maybe_start_loop(&d).await?;
    let mut kills = [0u64; 4];
    for cycle in 1..=args.cycles {
        w.continue_paused(&d, &mut rng, false).await?;
        if rng.chance(1, 5) {
            w.maybe_start_loop(&d).await?;
        }
        let n = rng.range(2, 7) as usize;
        let m = rng.range(0, MOMENTS.len() as u64) as usize;
        kills[m] += 1;
        strike(MOMENTS[m], &d, &mut w, &mut rng, n, cycle, &root).await?;
        d.kill();
        d = Daemon::start(&paths)?;
        let f = checks::check(&db, &w, Some(d.pid), false)?;
        if !f.violations.is_empty() {
            d.kill();
            return fail(&f, args.cycles, cycle, &root, seed);
        }
    }
    // The end: the person continues whatever waits on them until all is quiet.
    finish(&d, &mut w, &mut rng, &db).await?;
    let f = checks::check(&db, &w, Some(d.pid), true)?;
    d.kill();
    if !f.violations.is_empty() {
        return fail(&f, args.cycles, args.cycles, &root, seed);
    }
    println!(
        "kills: stream={} shell={} settle={} burst={}; lines sent={}; light loops approved={}; child tasks cancelled at the end={}; {:.0}s",
        kills[0],
        kills[1],
        kills[2],
        kills[3],
        w.lines_sent,
        w.loops_started,
        w.children_cancelled,
        started.elapsed().as_secs_f64()
    );
    println!(
        "cycles={} tasks={} effects={} lost={} repeated={} seed={seed}",
        args.cycles, f.tasks, f.effects, f.lost, f.repeated
    );
    if let Some(t) = temp {
        let _ = std::fs::remove_dir_all(t);
    }
    Ok(())
}

fn fail(f: &checks::Findings, cycles: u64, cycle: u64, root: &Path, seed: u64) -> Result<()> {
    for v in &f.violations {
        eprintln!("VIOLATION: {v}");
    }
    println!(
        "cycles={cycles} tasks={} effects={} lost={} repeated={} seed={seed} (failed after cycle {cycle}; data kept in {})",
        f.tasks,
        f.effects,
        f.lost,
        f.repeated,
        root.display()
    );
    bail!("{} violations after cycle {cycle}", f.violations.len())
}

fn write_config(root: &Path) -> Result<()> {
    // Roles the daemon itself calls (line reading and the like) answer from a plain script.
    std::fs::write(
        root.join("default.json"),
        r#"{"steps": [{"text": "ok"}], "on_exhausted": "repeat_last"}"#,
    )?;
    std::fs::write(
        root.join("config.toml"),
        "[endpoints.script]\nkind = \"scripted\"\nmodel = \"scripted\"\nscript = \"default.json\"\n\n\
         [endpoints.reviewer]\nkind = \"scripted\"\nmodel = \"scripted\"\nscript = \"reviewer.json\"\n\n\
         [roles]\ndefault = \"script\"\nreview = \"reviewer\"\n",
    )?;
    std::fs::write(
        root.join("reviewer.json"),
        workload::reviewer_script().to_string(),
    )?;
    Ok(())
}

/// Every `a PID` marker and every `b PID` marker in the conversations' workspaces.
fn markers(root: &Path) -> (Vec<String>, Vec<String>) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    let Ok(dir) = std::fs::read_dir(root.join("data/workspaces")) else {
        return (a, b);
    };
    for e in dir.flatten() {
        let text = std::fs::read_to_string(e.path().join("effects.log")).unwrap_or_default();
        for l in text.lines() {
            if let Some(p) = l.strip_prefix("a ") {
                a.push(p.to_string());
            } else if let Some(p) = l.strip_prefix("b ") {
                b.push(p.to_string());
            }
        }
    }
    (a, b)
}

/// Give the work something to do, then wait for the chosen moment (the caller kills).
async fn strike(
    moment: Moment,
    d: &Daemon,
    w: &mut Workload,
    rng: &mut Rng,
    n: usize,
    cycle: u64,
    root: &Path,
) -> Result<()> {
    const POLL: Duration = Duration::from_millis(5);
    match moment {
        Moment::Stream => {
            w.send_lines(d, rng, n, cycle).await?;
            tokio::time::sleep(Duration::from_millis(rng.range(0, 1500))).await;
        }
        Moment::Shell => {
            w.send_lines(d, rng, n, cycle).await?;
            calm(rng).await;
            let (before, _) = markers(root);
            w.send_lines(d, rng, 1, cycle).await?;
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                let (a, b) = markers(root);
                if a.iter().any(|p| !before.contains(p) && !b.contains(p)) {
                    break;
                }
                tokio::time::sleep(POLL).await;
            }
        }
        Moment::Settle => {
            w.send_lines(d, rng, n, cycle).await?;
            calm(rng).await;
            let (_, before) = markers(root);
            w.send_lines(d, rng, 1, cycle).await?;
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline && markers(root).1.len() <= before.len() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        Moment::Burst => {
            w.send_lines(d, rng, n, cycle).await?;
            calm(rng).await;
            // Lines in flight at the kill: one stored (its POST answered) must be routed once
            // the daemon is back, which the checks see; one not stored is simply not there.
            for _ in 0..n.max(4) {
                let idx = rng.range(0, CONVERSATIONS as u64) as usize;
                let (session, body) = w.line(idx, cycle);
                let (client, base) = d.poster();
                tokio::spawn(async move {
                    daemon::post_with(
                        &client,
                        &base,
                        &format!("/v1/sessions/{session}/messages"),
                        body,
                    )
                    .await
                });
            }
            tokio::time::sleep(Duration::from_millis(rng.range(0, 40))).await;
        }
    }
    Ok(())
}

/// Let the work run a while before the strike, so kills land at every stage of it.
async fn calm(rng: &mut Rng) {
    tokio::time::sleep(Duration::from_millis(rng.range(0, 1000))).await;
}

/// No more kills: continue paused conversations until nothing runs, waits or is queued.
async fn finish(d: &Daemon, w: &mut Workload, rng: &mut Rng, db: &Path) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut quiet = 0;
    while quiet < 3 {
        if Instant::now() > deadline {
            bail!("the work did not settle within 300 s after the last cycle");
        }
        w.continue_paused(d, rng, true).await?;
        w.cancel_interrupted_children(d, db).await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let c = checks::open(db)?;
        let busy: i64 = c.query_row(
            "SELECT (SELECT COUNT(*) FROM runs WHERE status = 'running')
                  + (SELECT COUNT(*) FROM inbox_items WHERE failed_reason IS NULL AND mode <> 'context')
                  + (SELECT COUNT(*) FROM threads WHERE paused_reason IS NOT NULL)
                  + (SELECT COUNT(*) FROM session_messages WHERE routing IN ('reading', 'queued'))
                  + (SELECT COUNT(*) FROM tasks WHERE status IN ('queued', 'running') OR (status = 'interrupted' AND role = 'task'))",
            [],
            |r| r.get(0),
        )?;
        quiet = if busy == 0 { quiet + 1 } else { 0 };
    }
    Ok(())
}
