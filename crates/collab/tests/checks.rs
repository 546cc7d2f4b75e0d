//! Acceptance checks (C §15) through the runner: real commands in real process groups, a real
//! store (SQLite, or PostgreSQL with TROUPE_TEST_DATABASE) and a manual clock for the quiet
//! rule. The checks from the user's words (§16) are in `checks_words.rs`.

mod support;

use std::time::Duration;
use support::check_rig::*;
use support::*;
use troupe_collab::checks::NewCheckRequest;
use troupe_core::submission::{CheckResult, CheckSource};
use troupe_store::{CheckKind, NewCheck, RunOutcome};

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
