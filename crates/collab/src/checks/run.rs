//! Running a check and recording its run (AC-1…AC-6). A path or command reaching outside the
//! workspace is judged again at run time and is `blocked`, not run. A command runs under
//! `/bin/sh` through troupe-tools' shell runner: its own process group, ended whole at the
//! timeout, with exactly the shell's environment whitelist (no `SSH_AUTH_SOCK`, no API keys,
//! nothing of the daemon's own). One run per job at a time, one command check on the machine
//! at a time, and at most 15 minutes of checks in one quiet stretch of a job (AC-6). A run
//! never moves a ticket (AC-9): the hand-over's approval reads the results.

use super::{Checks, QUIET_AFTER_MS, QUIET_BUDGET, plan_workspace};
use crate::CollabError;
use std::path::Path;
use std::sync::PoisonError;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use troupe_core::acceptance_check::{command_inside, output_matches, path_inside};
use troupe_core::{CheckId, PlanId, SubmissionId};
use troupe_store::{CheckKind, CheckRecord, CheckRunRecord, NewCheckRun, RunOutcome};
use troupe_tools::{
    KillPolicy, ShellArgs, ShellEnv, ShellRecord, ToolContext, Workspace, run_shell,
};

/// AC-6: one command check at a time on this machine.
static COMMANDS: Semaphore = Semaphore::const_new(1);

/// The most of a file a content check reads.
const MAX_READ: u64 = 64 * 1024 * 1024;

/// How a check came out, before it is recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub outcome: RunOutcome,
    /// One line.
    pub detail: String,
    pub output_tail: String,
    pub measured: Option<f64>,
    /// The judge looked at pictures: the run is for reference only.
    pub for_reference: bool,
}

impl Outcome {
    pub(crate) fn new(outcome: RunOutcome, detail: impl Into<String>) -> Outcome {
        Outcome {
            outcome,
            detail: detail.into(),
            output_tail: String::new(),
            measured: None,
            for_reference: false,
        }
    }
}

impl Checks {
    /// Run one check now and record it (for `submission`, when a hand-over asked).
    pub async fn run_check(
        &self,
        id: CheckId,
        submission: Option<SubmissionId>,
    ) -> Result<CheckRunRecord, CollabError> {
        let check = self.store().read(|tx| tx.check(id))?;
        if check.removed_at.is_some() {
            return Err(CollabError::conflict(
                "removed",
                format!("check {id} was removed; it no longer runs"),
            ));
        }
        let lock = self.plan_lock(check.plan_id);
        let _one_per_plan = lock.lock().await;
        self.run_locked(id, submission).await
    }

    /// Run the job's checks (`only` these, if given), one after another: the board's "Run
    /// checks" (AC-5). The sample's standard runs only for a hand-over (`submission`).
    pub async fn run_plan(
        &self,
        plan: PlanId,
        only: Option<&[CheckId]>,
        submission: Option<SubmissionId>,
    ) -> Result<Vec<CheckRunRecord>, CollabError> {
        let lock = self.plan_lock(plan);
        let _one_per_plan = lock.lock().await;
        let checks = self.store().read(|tx| tx.checks_of_plan(plan, false))?;
        let mut out = Vec::new();
        // SC2: the sample's standard is judged only for a hand-over, never on a rerun.
        for c in checks
            .iter()
            .filter(|c| c.kind != CheckKind::Standard || submission.is_some())
            .filter(|c| only.is_none_or(|ids| ids.contains(&c.id)))
        {
            out.push(self.run_locked(c.id, submission).await?);
        }
        Ok(out)
    }

    /// Run and record one check; the caller holds the job's lock.
    pub(crate) async fn run_locked(
        &self,
        id: CheckId,
        submission: Option<SubmissionId>,
    ) -> Result<CheckRunRecord, CollabError> {
        let (check, plan) = self
            .store()
            .read(|tx| Ok((tx.check(id)?, tx.plan(tx.check(id)?.plan_id)?)))?;
        let started_at = self.store().now();
        let outcome = match check.kind {
            CheckKind::Words => self.measure_words(&check, &plan).await?,
            CheckKind::Standard => self.judge_standard(&check, &plan, submission).await?,
            CheckKind::Seams => self.judge_seams(&check, &plan).await?,
            _ => execute(&check, &plan_workspace(&plan.folder)).await,
        };
        self.record(&check, submission, started_at, outcome)
    }

    /// Record a run; a first pass also appends `check_first_passed`.
    pub(crate) fn record(
        &self,
        check: &CheckRecord,
        submission: Option<SubmissionId>,
        started_at: i64,
        o: Outcome,
    ) -> Result<CheckRunRecord, CollabError> {
        Ok(self.store().write(|tx| {
            let before = tx.runs_of_check(check.id)?;
            let run = tx.record_check_run(&NewCheckRun {
                check_id: check.id,
                submission_id: submission,
                outcome: o.outcome,
                detail: o.detail.clone(),
                output_tail: o.output_tail.clone(),
                measured: o.measured,
                for_reference: o.for_reference,
                started_at,
            })?;
            // Only the newest five runs are kept, so "first" is as far as they remember. A
            // model's judgement counts once it passes twice in a row.
            if first_pass(check.kind, &run, &before) {
                tx.check_first_passed(check.id, run.id)?;
            }
            Ok(run)
        })?)
    }

    /// AC-5: run the stale checks of every quiet job — 30 s with no live segment on it. A
    /// check is stale when it never ran since it was defined or changed, or the job had a
    /// segment since its last run. A job whose checks are running already is left to them;
    /// one quiet stretch spends at most 15 minutes on checks. The daemon calls this on a
    /// timer; tests call it with a manual clock.
    pub async fn tick(&self) -> Result<Vec<CheckRunRecord>, CollabError> {
        let now = self.store().now();
        let plans = self.store().read(|tx| tx.plans_with_checks())?;
        let mut ran = Vec::new();
        for plan in plans {
            let (activity, checks, created_at) = self.store().read(|tx| {
                Ok((
                    tx.plan_segment_activity(plan)?,
                    tx.checks_of_plan(plan, false)?,
                    tx.plan(plan)?.created_at,
                ))
            })?;
            let stretches = || {
                self.inner
                    .stretches
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
            };
            if activity.live > 0 {
                stretches().remove(&plan);
                continue;
            }
            let since = activity.last_at.unwrap_or(created_at);
            if now - since < QUIET_AFTER_MS {
                continue;
            }
            let stale: Vec<CheckId> = checks
                .iter()
                .filter(|c| c.kind != CheckKind::Standard && is_stale(c, activity.last_at))
                .map(|c| c.id)
                .collect();
            if stale.is_empty() {
                continue;
            }
            let lock = self.plan_lock(plan);
            let Ok(_one_per_plan) = lock.try_lock() else {
                continue;
            };
            for id in stale {
                let spent = {
                    let mut s = stretches();
                    let entry = s.entry(plan).or_insert((since, Duration::ZERO));
                    if entry.0 != since {
                        *entry = (since, Duration::ZERO);
                    }
                    entry.1
                };
                if spent >= QUIET_BUDGET {
                    break;
                }
                let t0 = Instant::now();
                let run = self.run_locked(id, None).await;
                if let Some(e) = stretches().get_mut(&plan) {
                    e.1 += t0.elapsed();
                }
                match run {
                    Ok(r) => ran.push(r),
                    Err(e) => tracing::warn!(check = %id, error = %e, "a quiet check run failed"),
                }
            }
        }
        Ok(ran)
    }

    /// The daemon's timers: the quiet tick every `every`, and the reading of the user's
    /// filed lines for checks from words.
    pub fn start(&self, every: Duration) -> Vec<tokio::task::JoinHandle<()>> {
        let ticker = self.clone();
        let tick = tokio::spawn(async move {
            let mut t = tokio::time::interval(every);
            t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                t.tick().await;
                if let Err(e) = ticker.tick().await {
                    tracing::warn!(error = %e, "the checks' quiet tick failed");
                }
            }
        });
        vec![tick, self.listen_for_filed_lines()]
    }
}

/// Whether `run` is the check's first pass (`before`: its earlier runs, newest first). A seams
/// check is a model's judgement: it passes for the supervisor's progress once it passes twice
/// in a row (AC-17).
fn first_pass(kind: CheckKind, run: &CheckRunRecord, before: &[CheckRunRecord]) -> bool {
    let passed = |r: &CheckRunRecord| r.outcome == RunOutcome::Passed;
    if !passed(run) {
        return false;
    }
    if kind != CheckKind::Seams {
        return !before.iter().any(passed);
    }
    let twice_before = before.windows(2).any(|w| passed(&w[0]) && passed(&w[1]));
    before.first().is_some_and(passed) && !twice_before
}

/// Stale (AC-5): never run since defined or changed, or the job had a segment since.
fn is_stale(c: &CheckRecord, last_segment: Option<i64>) -> bool {
    match c.runs.first() {
        None => true,
        Some(r) => r.started_at < c.updated_at || last_segment.is_some_and(|s| s > r.started_at),
    }
}

/// Run a file or command check in `workspace`.
pub(crate) async fn execute(c: &CheckRecord, workspace: &Path) -> Outcome {
    let ws = match Workspace::open(workspace) {
        Ok(ws) => ws,
        Err(e) => return Outcome::new(RunOutcome::Error, format!("the workspace is missing: {e}")),
    };
    match c.kind {
        CheckKind::Command => command(c, ws).await,
        _ => file(c, &ws).await,
    }
}

async fn file(c: &CheckRecord, ws: &Workspace) -> Outcome {
    let path = c.path.as_deref().unwrap_or_default();
    if let Err(e) = path_inside(path, "path") {
        return Outcome::new(RunOutcome::Blocked, format!("not run: {}", e.message));
    }
    let real = match ws.resolve(path) {
        Ok(p) => p,
        Err(e) => return Outcome::new(RunOutcome::Blocked, format!("not run: {path}: {e}")),
    };
    let meta = match tokio::fs::metadata(&real).await {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Outcome::new(RunOutcome::Failed, format!("{path} does not exist"));
        }
        Err(e) => return Outcome::new(RunOutcome::Error, format!("{path} cannot be read: {e}")),
    };
    if meta.is_dir() {
        return Outcome::new(
            RunOutcome::Failed,
            format!("{path} is a folder, not a file"),
        );
    }
    if c.kind == CheckKind::FileExists {
        return if meta.len() == 0 {
            Outcome::new(RunOutcome::Failed, format!("{path} is empty"))
        } else {
            Outcome::new(
                RunOutcome::Passed,
                format!("{path} exists ({} bytes)", meta.len()),
            )
        };
    }
    if meta.len() > MAX_READ {
        return Outcome::new(
            RunOutcome::Error,
            format!("{path} is larger than {} MiB", MAX_READ >> 20),
        );
    }
    let bytes = match tokio::fs::read(&real).await {
        Ok(b) => b,
        Err(e) => return Outcome::new(RunOutcome::Error, format!("{path} cannot be read: {e}")),
    };
    let text = String::from_utf8_lossy(&bytes);
    let pattern = c.pattern.as_deref().unwrap_or_default();
    let (found, what) = if c.kind == CheckKind::FileMatchesRegex {
        match regex::Regex::new(pattern) {
            Ok(re) => (re.is_match(&text), format!("matches /{pattern}/")),
            Err(e) => {
                return Outcome::new(
                    RunOutcome::Error,
                    format!("the pattern is not a regular expression: {e}"),
                );
            }
        }
    } else {
        (text.contains(pattern), format!("contains \"{pattern}\""))
    };
    let detail = if found {
        format!("{path} {what}")
    } else {
        format!("{path} does not: {what}")
    };
    let outcome = if found != c.negate {
        RunOutcome::Passed
    } else {
        RunOutcome::Failed
    };
    Outcome::new(outcome, one_line(&detail))
}

/// Run check `c`'s command `cmd` (a command check's, or a seams check's list) in its `cwd`:
/// judged against the workspace again first (AC-1: reaching outside is `blocked`, not run),
/// then under `/bin/sh` in its own process group with exactly the shell's environment
/// whitelist, one command check on the machine at a time. Err: how the run ends without it.
pub(crate) async fn run_command(
    c: &CheckRecord,
    cmd: &str,
    ws: Workspace,
) -> Result<ShellRecord, Outcome> {
    let blocked = |why: String| Outcome::new(RunOutcome::Blocked, format!("not run: {why}"));
    let depth = match c.cwd.as_deref().map(|d| path_inside(d, "cwd")).transpose() {
        Ok(d) => d.unwrap_or(0),
        Err(e) => return Err(blocked(e.message)),
    };
    if let Err(e) = command_inside(cmd, depth) {
        return Err(blocked(e.message));
    }
    if let Some(dir) = c.cwd.as_deref()
        && let Err(e) = ws.resolve(dir)
    {
        return Err(blocked(format!("cwd {dir}: {e}")));
    }
    let ctx = ToolContext {
        workspace: ws,
        cancel: CancellationToken::new(),
        // Exactly the shell's whitelist: nothing of the daemon's own reaches a check.
        env: ShellEnv::from_process_env(),
        on_spawn: None,
    };
    let args = ShellArgs {
        command: cmd.to_string(),
        timeout_secs: u64::from(c.timeout_secs),
        workdir: c.cwd.clone(),
    };
    let out = {
        let Ok(_machine_wide) = COMMANDS.acquire().await else {
            return Err(Outcome::new(
                RunOutcome::Error,
                "the command queue is closed",
            ));
        };
        run_shell(&args, &ctx, &KillPolicy::default()).await
    };
    out.shell
        .ok_or_else(|| Outcome::new(RunOutcome::Error, one_line(&out.content)))
}

async fn command(c: &CheckRecord, ws: Workspace) -> Outcome {
    let cmd = c.command.as_deref().unwrap_or_default();
    let rec = match run_command(c, cmd, ws).await {
        Ok(rec) => rec,
        Err(o) => return o,
    };
    let mut o = if rec.timed_out {
        Outcome::new(
            RunOutcome::Error,
            format!(
                "timed out after {} s; the command and its processes were ended",
                c.timeout_secs
            ),
        )
    } else if rec.exit_code != Some(c.expected_exit as i32) {
        let how = match (rec.exit_code, rec.signal) {
            (Some(code), _) => format!("exit {code}"),
            (None, Some(sig)) => format!("ended by signal {sig}"),
            (None, None) => "ended with an unknown status".into(),
        };
        Outcome::new(
            RunOutcome::Failed,
            format!("{how}, expected exit {}", c.expected_exit),
        )
    } else if let Some(expected) = c.expected_output.as_deref()
        && !output_matches(expected, &rec.output_tail)
    {
        Outcome::new(
            RunOutcome::Failed,
            format!(
                "exit {}, but the output is not the expected output",
                c.expected_exit
            ),
        )
    } else if c.expected_output.is_some() {
        Outcome::new(
            RunOutcome::Passed,
            format!("exit {}, output as expected", c.expected_exit),
        )
    } else {
        Outcome::new(RunOutcome::Passed, format!("exit {}", c.expected_exit))
    };
    o.output_tail = rec.output_tail;
    o
}

fn one_line(s: &str) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    troupe_tools::tail_chars(&line, 400)
}
