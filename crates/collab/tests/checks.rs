//! Acceptance checks (C §15) and checks from the user's words (§16) through the runner: real
//! commands in real process groups, a real store (SQLite, or PostgreSQL with
//! TROUPE_TEST_DATABASE), a manual clock for the quiet rule, and a `MediaProbe` double where
//! a video is measured (the real ffprobe in `ffprobe_real`).

mod support;

use async_trait::async_trait;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::*;
use troupe_collab::checks::{Checks, MediaProbe, NewCheckRequest, PatchCheckRequest};
use troupe_core::conversation::Author;
use troupe_core::submission::{
    ApprovalDecision, ApprovalFacts, CheckResult, CheckSource, OneGoFacts, SubmissionOrigin,
    approval_decision,
};
use troupe_core::words_check::probe::MediaFacts;
use troupe_core::{CheckId, ManualClock, PlanId, SessionId, SubmissionId};
use troupe_store::{
    CheckKind, FilingSource, Layout, LayoutItem, NewCheck, NewFiling, NewLine, NewSubmission,
    RunOutcome, SubmittedFile, WordsStatus,
};

const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;
const T0: i64 = 1_800_000_000_000;

/// Videos by file name, as a probe double.
#[derive(Default)]
struct Videos(Mutex<HashMap<String, MediaFacts>>);

impl Videos {
    fn put(&self, name: &str, facts: MediaFacts) {
        self.0.lock().unwrap().insert(name.into(), facts);
    }
}

#[async_trait]
impl MediaProbe for Videos {
    async fn probe(&self, file: &Path) -> Result<MediaFacts, String> {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        self.0
            .lock()
            .unwrap()
            .get(&name)
            .cloned()
            .ok_or_else(|| format!("{name} is not a video"))
    }
}

struct Rig {
    w: World,
    clock: ManualClock,
    checks: Checks,
    videos: Arc<Videos>,
    session: SessionId,
    plan: PlanId,
    /// The job's home workspace, the root check paths are relative to.
    ws: PathBuf,
    folder: PathBuf,
    bot: troupe_core::BotId,
}

fn rig(opening: &str) -> Rig {
    let clock = ManualClock::new(T0);
    let w = world_on(Arc::new(clock.clone()));
    let bot = bot(&w, "Maker", QUIET);
    let session = group(&w, &[bot]);
    let plan = open_job(&w, session, opening);
    let folder = PathBuf::from(&plan.folder);
    let ws = folder.parent().unwrap().parent().unwrap().to_path_buf();
    let videos = Arc::new(Videos::default());
    let checks = Checks::new(w.collab.store().clone(), videos.clone());
    Rig {
        clock,
        checks,
        videos,
        session,
        plan: plan.id,
        ws,
        folder,
        bot,
        w,
    }
}

fn command(cmd: &str) -> NewCheckRequest {
    NewCheckRequest {
        kind: "command".into(),
        command: Some(cmd.into()),
        ..NewCheckRequest::default()
    }
}

impl Rig {
    fn save(&self, r: &NewCheckRequest) -> CheckId {
        self.checks.create(self.plan, r).unwrap().id
    }

    async fn run(&self, id: CheckId) -> troupe_store::CheckRunRecord {
        self.checks.run_check(id, None).await.unwrap()
    }

    fn check(&self, id: CheckId) -> troupe_store::CheckRecord {
        self.w.collab.store().read(|tx| tx.check(id)).unwrap()
    }

    fn events(&self, kind: &str) -> Vec<serde_json::Value> {
        self.w
            .collab
            .store()
            .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100_000))
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.payload)
            .collect()
    }

    /// A person's line filed under the job, as the reader or a quote files it.
    fn user_says(&self, words: &str) -> troupe_core::SessionMessageId {
        self.clock.advance(1_000);
        self.w
            .collab
            .store()
            .write(|tx| {
                let l =
                    tx.insert_line(&NewLine::plain(self.session, Author::User, words.into()))?;
                tx.file_line(&filing(l.id, self.plan))?;
                Ok(l.id)
            })
            .unwrap()
    }

    /// A Bot's line delivering `rel` (relative to the job folder), filed under the job.
    fn bot_delivers(&self, rel: &str) {
        self.clock.advance(1_000);
        let file = self.folder.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"not really a video").unwrap();
        self.w
            .collab
            .store()
            .write(|tx| {
                let l = tx.insert_line(&NewLine {
                    bot_id: Some(self.bot),
                    ..NewLine::plain(self.session, Author::Bot, format!("Here: {rel}"))
                })?;
                tx.file_line(&filing(l.id, self.plan))?;
                tx.record_line_files(l.id, &[(rel.to_string(), None)])?;
                Ok(())
            })
            .unwrap();
    }

    fn ticket(&self) -> troupe_store::TicketRecord {
        let name = self
            .w
            .collab
            .store()
            .read(|tx| tx.plan(self.plan))
            .unwrap()
            .name;
        let folder = self.folder.clone();
        self.w
            .collab
            .store()
            .write(|tx| {
                tx.lay_out(
                    self.plan,
                    &Layout {
                        items: vec![LayoutItem {
                            title: name.clone(),
                            owner_bot_id: Some(self.bot),
                            ..LayoutItem::default()
                        }],
                        drops: vec![],
                    },
                    |n, t| folder.join(format!("{n:02}-{t}")).display().to_string(),
                )
            })
            .unwrap()
            .tickets
            .remove(0)
    }

    fn submit(&self, ticket: &troupe_store::TicketRecord, rel: &str) -> SubmissionId {
        self.clock.advance(1_000);
        self.w
            .collab
            .store()
            .write(|tx| {
                tx.create_submission(&NewSubmission {
                    ticket_id: ticket.id,
                    origin: SubmissionOrigin::Explicit,
                    producer_bot_id: Some(self.bot),
                    run_id: None,
                    work_item_id: None,
                    content: None,
                    note: String::new(),
                    claims: vec![],
                    files: vec![SubmittedFile {
                        path: rel.into(),
                        sha256: "a".repeat(64),
                        size: 18,
                    }],
                    parts: vec![],
                })
            })
            .unwrap()
            .id
    }
}

fn filing(line: troupe_core::SessionMessageId, plan: PlanId) -> NewFiling {
    NewFiling {
        message_id: line,
        plan_id: plan,
        ticket_id: None,
        part_id: None,
        source: FilingSource::Reader,
        filed_by: "test".into(),
        locked: false,
        primary: true,
    }
}

#[tokio::test]
async fn s_ac_1_exit_3_fails() {
    let r = rig("Build the site");
    let id = r.save(&command("exit 3"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Failed);
    assert_eq!(run.detail, "exit 3, expected exit 0");
    let id = r.save(&NewCheckRequest {
        expected_exit: 3,
        ..command("echo bye; exit 3")
    });
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Passed);
    assert_eq!(run.output_tail, "bye\n");
    assert_eq!(r.events("check_run").len(), 2);
    assert_eq!(r.events("check_first_passed").len(), 1);
}

#[tokio::test]
async fn s_ac_1_sleep_700_killed_group_gone() {
    let r = rig("Build the site");
    // The group's id is the shell's pid; a second sleep in the background shares the group.
    let id = r.save(&NewCheckRequest {
        timeout_secs: Some(1),
        ..command("echo $$ > group.pid; sleep 700 & sleep 700")
    });
    let started = std::time::Instant::now();
    let run = r.run(id).await;
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(run.outcome, RunOutcome::Error);
    assert!(
        run.detail.starts_with("timed out after 1 s"),
        "{}",
        run.detail
    );
    let pgid: i32 = std::fs::read_to_string(r.ws.join("group.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pgid > 1);
    assert!(
        !troupe_tools::group_alive(pgid),
        "the check's process group is gone"
    );
    // 600 s is the longest a check may take.
    let e = r
        .checks
        .create(
            r.plan,
            &NewCheckRequest {
                timeout_secs: Some(700),
                ..command("sleep 700")
            },
        )
        .unwrap_err();
    assert!(e.to_string().starts_with("timeout_secs:"), "{e}");
}

#[tokio::test]
async fn s_ac_1_home_path_cannot_be_saved() {
    let r = rig("Build the site");
    for c in [
        "cat ~/.ssh/id_rsa",
        "cat $HOME/.ssh/id_rsa",
        "cat /etc/passwd",
        "cat ../x",
    ] {
        let e = r.checks.create(r.plan, &command(c)).unwrap_err();
        assert!(
            e.to_string().starts_with("outside_workspace: command"),
            "{c}: {e}"
        );
    }
    let e = r
        .checks
        .create(
            r.plan,
            &NewCheckRequest {
                kind: "file_exists".into(),
                path: Some("~/.ssh/id_rsa".into()),
                ..NewCheckRequest::default()
            },
        )
        .unwrap_err();
    assert!(e.to_string().starts_with("outside_workspace: path"), "{e}");
    // Nothing was saved.
    assert!(
        r.w.collab
            .store()
            .read(|tx| tx.checks_of_plan(r.plan, true))
            .unwrap()
            .is_empty()
    );
    // One that got in some other way is judged again at run time: blocked, not run.
    let id =
        r.w.collab
            .store()
            .write(|tx| {
                tx.create_check(&NewCheck {
                    command: Some("cat ~/.ssh/id_rsa > leaked.txt".into()),
                    ..NewCheck::new(r.plan, CheckKind::Command, CheckSource::User)
                })
            })
            .unwrap()
            .id;
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Blocked);
    assert!(run.detail.starts_with("not run:"), "{}", run.detail);
    assert!(!r.ws.join("leaked.txt").exists(), "the command did not run");
    // A symlink inside the workspace pointing out of it is outside too.
    std::os::unix::fs::symlink("/etc/hostname", r.ws.join("host")).unwrap();
    let id = r.save(&NewCheckRequest {
        kind: "file_exists".into(),
        path: Some("host".into()),
        ..NewCheckRequest::default()
    });
    assert_eq!(r.run(id).await.outcome, RunOutcome::Blocked);
}

#[tokio::test]
async fn s_ac_3_check_follows_reworded_line_and_unmatched_still_counts() {
    let r = rig("Make a poster");
    let store = r.w.collab.store();
    let patch = |done_when: &str| {
        let p = store.read(|tx| tx.plan(r.plan)).unwrap();
        r.clock.advance(1_000);
        r.w.collab
            .patch_plan_spec(
                r.plan,
                troupe_collab::PlanPatchRequest {
                    version: p.version,
                    done_when: Some(done_when.into()),
                    ..Default::default()
                },
            )
            .unwrap();
    };
    patch("- poster.md says A4\n- a PDF is delivered");
    std::fs::write(r.folder.join("poster.md"), "size: A4\n").unwrap();
    let id = r.save(&NewCheckRequest {
        kind: "file_contains".into(),
        path: Some(format!(
            "jobs/{}/poster.md",
            r.folder.file_name().unwrap().to_string_lossy()
        )),
        pattern: Some("A4".into()),
        done_when_line: Some("poster.md says A4".into()),
        ..NewCheckRequest::default()
    });
    let view = store
        .read(|tx| troupe_collab::checks::manage::check_view(tx, id))
        .unwrap();
    assert_eq!(view.line.as_deref(), Some("poster.md says A4"));
    assert!(view.matches_line);
    // Reworded: the check follows the line.
    patch("- poster.md says A4 portrait\n- a PDF is delivered");
    let all = store
        .read(|tx| troupe_collab::checks::manage::plan_checks(tx, r.plan))
        .unwrap();
    assert_eq!(
        all.checks[0].line.as_deref(),
        Some("poster.md says A4 portrait")
    );
    assert!(all.match_no_line.is_empty());
    // Removed: listed under checks that match no line, and still runs and counts.
    patch("- a PDF is delivered");
    let all = store
        .read(|tx| troupe_collab::checks::manage::plan_checks(tx, r.plan))
        .unwrap();
    assert_eq!(all.match_no_line, vec![id]);
    assert!(!all.checks[0].matches_line);
    let runs = r.checks.run_plan(r.plan, None, None).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].outcome, RunOutcome::Passed);
    // It still binds to a hand-over of the file and counts there.
    let ticket = r.ticket();
    let sub = r.submit(&ticket, "poster.md");
    let bound = r.checks.run_bound(sub).await.unwrap();
    assert_eq!(bound.len(), 1);
    assert_eq!(bound[0].check_id, id);
    assert_eq!(bound[0].result, CheckResult::Pass);
    assert!(bound[0].gate);
}

#[tokio::test]
async fn check_runs_keep_five() {
    let r = rig("Build the site");
    let id = r.save(&command("echo run"));
    let mut ids = Vec::new();
    for _ in 0..7 {
        r.clock.advance(10);
        ids.push(r.run(id).await.id);
    }
    let kept: Vec<i64> = r.check(id).runs.iter().map(|k| k.id).collect();
    let newest: Vec<i64> = ids.iter().rev().take(5).copied().collect();
    assert_eq!(kept, newest);
    assert_eq!(r.events("check_run").len(), 7);
    // A first pass is said once, on the first pass.
    assert_eq!(r.events("check_first_passed").len(), 1);
}

#[tokio::test]
async fn check_env_is_the_whitelist() {
    // SAFETY: set before any command of this test starts; the other tests read no such names.
    unsafe {
        std::env::set_var("SSH_AUTH_SOCK", "/tmp/agent.sock");
        std::env::set_var("OPENAI_API_KEY", "sk-secret");
        std::env::set_var("TROUPE_SECRET", "daemon-only");
    }
    let r = rig("Build the site");
    let id = r.save(&command("env"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Passed);
    for secret in [
        "SSH_AUTH_SOCK",
        "OPENAI_API_KEY",
        "TROUPE_SECRET",
        "sk-secret",
        "agent.sock",
    ] {
        assert!(
            !run.output_tail.contains(secret),
            "{secret} reached the check"
        );
    }
    // Only whitelisted names, and what /bin/sh sets itself.
    for line in run.output_tail.lines() {
        let name = line.split('=').next().unwrap();
        assert!(
            troupe_tools::SHELL_ENV_WHITELIST.contains(&name)
                || ["PWD", "OLDPWD", "SHLVL", "_"].contains(&name),
            "{name} is not in the whitelist"
        );
    }
    assert!(run.output_tail.contains("PATH="), "PATH is passed on");
}

#[tokio::test]
async fn ac_6_one_command_check_at_a_time() {
    // Two jobs in one conversation share its workspace: a lock directory shows overlap.
    let r = rig("Build the site");
    let other = open_job(&r.w, r.session, "Write the docs").id;
    let cmd = "mkdir one.lock || exit 9; sleep 0.3; rmdir one.lock";
    let a = r.save(&command(cmd));
    let b = r.checks.create(other, &command(cmd)).unwrap().id;
    let c = r.save(&command(cmd));
    let (x, y, z) = tokio::join!(
        r.checks.run_check(a, None),
        r.checks.run_check(b, None),
        r.checks.run_check(c, None)
    );
    for run in [x.unwrap(), y.unwrap(), z.unwrap()] {
        assert_eq!(run.outcome, RunOutcome::Passed, "{}", run.detail);
    }
}

#[tokio::test]
async fn ac_5_quiet_job_runs_stale_checks() {
    let r = rig("Build the site");
    std::fs::write(r.ws.join("out.md"), "x").unwrap();
    // Saved straight into the store: never run.
    let id =
        r.w.collab
            .store()
            .write(|tx| {
                tx.create_check(&NewCheck {
                    path: Some("out.md".into()),
                    ..NewCheck::new(r.plan, CheckKind::FileExists, CheckSource::User)
                })
            })
            .unwrap()
            .id;
    r.clock.advance(10_000);
    assert!(r.checks.tick().await.unwrap().is_empty(), "not quiet yet");
    r.clock.advance(25_000);
    let ran = r.checks.tick().await.unwrap();
    assert_eq!(ran.len(), 1);
    assert_eq!(ran[0].check_id, id);
    // Ran since it was defined and no segment since: not stale.
    r.clock.advance(60_000);
    assert!(r.checks.tick().await.unwrap().is_empty());
}

fn facts(secs: f64, w: u32, h: u32) -> MediaFacts {
    MediaFacts {
        duration_secs: Some(secs),
        width: Some(w),
        height: Some(h),
        stored_width: Some(w),
        stored_height: Some(h),
        fps: Some(25.0),
        has_video: true,
        ..MediaFacts::default()
    }
}

fn decision(bound: &[troupe_collab::checks::BoundResult]) -> ApprovalDecision {
    approval_decision(&ApprovalFacts {
        origin: SubmissionOrigin::Explicit,
        has_reviewer: false,
        checks: bound.iter().map(|b| b.to_bound_check()).collect(),
        unbacked_required_items: vec![],
        routine_plan: false,
        one_go: OneGoFacts::default(),
        large_job_last_ticket: false,
        user_let_through: false,
    })
}

async fn until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn s_cw_1_offer_measured_never_blocks_then_confirmed_gates() {
    let r = rig("剪一个产品短片");
    let listener = r.checks.listen_for_filed_lines();
    let words = |r: &Rig| -> Vec<troupe_store::CheckRecord> {
        r.w.collab
            .store()
            .read(|tx| tx.checks_of_plan(r.plan, false))
            .unwrap()
            .into_iter()
            .filter(|c| c.kind == CheckKind::Words)
            .collect()
    };
    r.user_says("片长约 2 分钟");
    until("an offer", || words(&r).len() == 1).await;
    r.user_says("记得片长约 2 分钟");
    until("said twice", || {
        words(&r).first().is_some_and(|c| c.said_count == 2)
    })
    .await;
    let offer = words(&r).remove(0);
    assert_eq!(offer.status, Some(WordsStatus::Offer));
    assert!(!offer.gate && !offer.confirmed);
    assert_eq!((offer.min, offer.max), (Some(108.0), Some(132.0)));

    // A 107-s master is delivered: bound and measured at once, Fail, shown.
    r.videos.put("EP01_MASTER.mp4", facts(107.0, 1920, 1080));
    r.bot_delivers("deliverables/EP01_MASTER.mp4");
    until("measured", || {
        words(&r)[0]
            .runs
            .first()
            .is_some_and(|k| k.measured.is_some())
    })
    .await;
    let offer = words(&r).remove(0);
    assert_eq!(
        offer
            .path
            .as_deref()
            .map(|p| p.ends_with("deliverables/EP01_MASTER.mp4")),
        Some(true)
    );
    assert_eq!(offer.runs[0].outcome, RunOutcome::Failed);
    assert_eq!(offer.runs[0].measured, Some(107.0));
    assert!(
        offer.runs[0].detail.contains("107.00 s, asked 108–132 s"),
        "{}",
        offer.runs[0].detail
    );

    // Nothing is held back: the offer is bound, fails, and is no gate.
    let ticket = r.ticket();
    let sub = r.submit(&ticket, "deliverables/EP01_MASTER.mp4");
    let bound = r.checks.run_bound(sub).await.unwrap();
    assert_eq!(bound.len(), 1);
    assert_eq!((bound[0].gate, bound[0].result), (false, CheckResult::Fail));
    assert_eq!(bound[0].measured, Some(107.0));
    assert!(!matches!(decision(&bound), ApprovalDecision::Rework { .. }));
    assert_eq!(
        r.checks
            .edit(offer.id, &PatchCheckRequest::default())
            .unwrap_err()
            .to_string(),
        "derived_check: a check from your words is confirmed or removed, not edited"
    );

    // Confirmed: in force, re-measured at once, and now it holds the master back.
    r.clock.advance(1_000);
    let newest_before = r.check(offer.id).runs[0].id;
    let confirmed = r.checks.confirm(offer.id).await.unwrap();
    assert_eq!(confirmed.status, Some(WordsStatus::InForce));
    assert!(confirmed.gate && confirmed.confirmed);
    assert!(
        confirmed.runs[0].id > newest_before,
        "measured again on confirming"
    );
    assert_eq!(confirmed.runs[0].outcome, RunOutcome::Failed);
    assert_eq!(r.events("check_confirmed").len(), 1);
    let sub = r.submit(&ticket, "deliverables/EP01_MASTER.mp4");
    let bound = r.checks.run_bound(sub).await.unwrap();
    assert_eq!((bound[0].gate, bound[0].result), (true, CheckResult::Fail));
    assert_eq!(
        decision(&bound),
        ApprovalDecision::Rework {
            reasons: vec![offer.id]
        }
    );
    // The confirmation is an input of the approval: the job's undecided hand-overs are weighed
    // again at once, and the gate now fails them.
    r.w.collab.use_checks(r.checks.clone());
    r.w.collab.reweigh_job(r.plan).await;
    let states: Vec<_> =
        r.w.collab
            .store()
            .read(|tx| tx.submissions_of_plan(r.plan, None))
            .unwrap()
            .into_iter()
            .map(|s| s.state)
            .collect();
    assert!(
        !states.is_empty()
            && states
                .iter()
                .all(|s| *s == troupe_core::submission::SubmissionState::FailedChecks),
        "{states:?}"
    );

    // A later different target makes a new offer; the old offer id can no longer be confirmed
    // once withdrawn.
    r.user_says("片长改成 3 分钟");
    until("a replacement offer", || words(&r).len() == 2).await;
    r.user_says("片长改成 4 分钟");
    until("the 3-minute offer withdrawn", || {
        words(&r).iter().any(|c| c.max == Some(264.0))
    })
    .await;
    let gone =
        r.w.collab
            .store()
            .read(|tx| tx.checks_of_plan(r.plan, true))
            .unwrap()
            .into_iter()
            .find(|c| c.max == Some(198.0))
            .unwrap();
    let e = r.checks.confirm(gone.id).await.unwrap_err();
    assert!(e.to_string().starts_with("withdrawn"), "{e}");
    listener.abort();
}

/// The real ffprobe on clips ffmpeg makes now. Skipped with a notice without them; under
/// TROUPE_REQUIRE_FFPROBE=1 their absence fails.
#[tokio::test]
async fn ffprobe_real() {
    let have = |p: &str| {
        std::process::Command::new(p)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("ffmpeg") || !have("ffprobe") {
        assert!(
            std::env::var("TROUPE_REQUIRE_FFPROBE").as_deref() != Ok("1"),
            "TROUPE_REQUIRE_FFPROBE=1 but ffmpeg or ffprobe is missing"
        );
        eprintln!("ffprobe_real skipped: ffmpeg and ffprobe are not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let make = |name: &str, args: &[&str]| {
        let out = dir.path().join(name);
        let st = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y"])
            .args(args)
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success(), "ffmpeg made {name}");
        out
    };
    let long = make(
        "long.mp4",
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=black:s=32x18:r=25:d=107",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
        ],
    );
    // A phone clip stored 1920×1080 and flagged 90°: the flag is written on a stream copy.
    let stored = make(
        "stored.mp4",
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=black:s=1920x1080:r=25:d=1",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
        ],
    );
    let turned = make(
        "turned.mp4",
        &[
            "-i",
            stored.to_str().unwrap(),
            "-c",
            "copy",
            "-metadata:s:v:0",
            "rotate=90",
        ],
    );
    let sixty = make(
        "sixty.mp4",
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=black:s=32x18:r=60:d=1",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
        ],
    );
    let probe = troupe_collab::checks::Ffprobe::default();
    let f = probe.probe(&long).await.unwrap();
    assert!((f.duration_secs.unwrap() - 107.0).abs() < 0.1, "{f:?}");
    assert_eq!((f.width, f.height), (Some(32), Some(18)));
    assert!((f.fps.unwrap() - 25.0).abs() < 0.01);
    let f = probe.probe(&turned).await.unwrap();
    assert_eq!(f.rotation % 180, 90, "{f:?}");
    assert_eq!(
        (f.width, f.height),
        (Some(1080), Some(1920)),
        "portrait as it plays: {f:?}"
    );
    let portrait = troupe_core::words_check::Number::new(
        troupe_core::words_check::Value::Orientation {
            orientation: troupe_core::words_check::Orientation::Portrait,
        },
        troupe_core::words_check::Bound::Exact,
    );
    let m = troupe_core::words_check::probe::measure(&portrait, &f);
    assert_eq!(
        m.outcome,
        troupe_core::words_check::probe::Outcome::Passed,
        "{}",
        m.detail
    );
    let f = probe.probe(&sixty).await.unwrap();
    assert!((f.fps.unwrap() - 60.0).abs() < 0.01);
    let e = probe
        .probe(&dir.path().join("missing.mp4"))
        .await
        .unwrap_err();
    assert!(e.starts_with("ffprobe could not read"), "{e}");
    let none = troupe_collab::checks::Ffprobe {
        program: "ffprobe-not-installed".into(),
        ..Default::default()
    };
    assert_eq!(
        none.probe(&long).await.unwrap_err(),
        "ffprobe-not-installed is not installed"
    );
}
