//! What the holds end-to-end tests share (`holds_e2e.rs`): the lines the person says and the
//! Bots answer, a fake model scripted from the request alone (the app's readings by the line they
//! read, a Bot's by what it was given since it last spoke), the directory the long commands
//! record their pids in, and waits on what the daemon shows (a recorded pid, a gone process
//! group, a running work item, a named job).

use super::*;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const TITLE: &str = "Launch";
pub const LONG_BUILD: &str = "run the long build";
pub const GATED_BUILD: &str = "run the gated build";
pub const REPORT: &str = "Please write the report";
pub const SUMMARY: &str = "Please write the summary";
pub const GO_ON: &str = "go on";
pub const GO_ON_REPORT: &str = "go on with the report";
pub const THERE: &str = "are you there?";
pub const STOP: &str = "stop";

pub const STILL_HERE: &str = "Still here.";
pub const BACK: &str = "Back on it.";
pub const HEARD_STOP: &str = "Heard you: stop.";
pub const BUILT: &str = "The build is done.";
pub const UNEXPECTED: &str = "UNEXPECTED request";
/// Every line a Bot may say in these tests (CL-5: the app never speaks for a Bot).
pub const SCRIPTED: &[&str] = &[STILL_HERE, BACK, HEARD_STOP, BUILT];

pub const AT_DESK: &str = "You are at your desk in this conversation";
/// The grace between SIGTERM and SIGKILL (S-STOP-1).
pub const GRACE: Duration = Duration::from_secs(3);

// ---------- the fake model ----------

/// Where a test's commands write: their pid files, and the gated build's markers.
#[derive(Clone)]
pub struct Dirs {
    pids: PathBuf,
    /// Kills what the commands left when the test ends, passed or not.
    _reaper: Arc<KillRecordedOnDrop>,
}

impl Dirs {
    pub fn new(rig: &Rig) -> Dirs {
        let pids = rig.path("pids");
        std::fs::create_dir_all(&pids).unwrap();
        Dirs {
            _reaper: Arc::new(KillRecordedOnDrop(pids.clone())),
            pids,
        }
    }
    pub fn release(&self) -> PathBuf {
        self.pids.join("release")
    }
    pub fn started(&self) -> PathBuf {
        self.pids.join("started")
    }
}

/// A command that ignores SIGTERM, records its pid as `<tag>-<pid>.pid` (written whole, then
/// renamed) and sleeps.
fn long_command(dir: &Path, tag: &str) -> String {
    let d = dir.display();
    format!(
        "trap '' TERM; echo $$ > {d}/{tag}-$$.tmp && mv {d}/{tag}-$$.tmp {d}/{tag}-$$.pid; exec sleep 1000"
    )
}

/// A plain long command (SIGTERM ends it), recording its pid the same way.
fn plain_long_command(dir: &Path, tag: &str) -> String {
    let d = dir.display();
    format!("echo $$ > {d}/{tag}-$$.tmp && mv {d}/{tag}-$$.tmp {d}/{tag}-$$.pid; exec sleep 1000")
}

/// The person's-line reading: "stop" alone is a pure stop; "go on…" a go-on.
fn user_reading(line: &str) -> String {
    if line == STOP {
        r#"{"control":"stop","only_control":true}"#.into()
    } else if line.starts_with(GO_ON) {
        json!({"control": "go_on", "only_control": line == GO_ON}).to_string()
    } else {
        r#"{"control":"neither"}"#.into()
    }
}

/// Filing: a line naming a job's subject is about the job of that name; a request with no such
/// job is new work; anything else is done in place.
fn filing(line: &str, jobs: &[(String, String)]) -> String {
    for kw in ["report", "summary", "build"] {
        if !line.contains(kw) {
            continue;
        }
        if let Some((id, _)) = jobs.iter().find(|(_, name)| name.contains(kw)) {
            return json!({"belongs": "jobs", "jobs": [id]}).to_string();
        }
        if !line.starts_with(GO_ON) {
            return r#"{"belongs":"new"}"#.into();
        }
    }
    r#"{"belongs":"done_in_place"}"#.into()
}

/// Whether a Bot was given the person's "stop" as said: a line of its own, perhaps with the
/// short id a line to working work carries ("#2 stop", END-3).
pub fn given_stop(fresh: &str) -> bool {
    fresh.lines().any(|l| {
        let l = l.trim();
        let bare = match l.strip_prefix('#').and_then(|r| r.split_once(' ')) {
            Some((n, rest)) if n.chars().all(|c| c.is_ascii_digit()) => rest,
            _ => l,
        };
        bare == STOP
    })
}

/// The subject of a request a Bot starts long work on.
fn subject(fresh: &str) -> Option<&'static str> {
    [
        (LONG_BUILD, "build"),
        (REPORT, "report"),
        (SUMMARY, "summary"),
    ]
    .into_iter()
    .find(|(line, _)| fresh.contains(line))
    .map(|(_, kw)| kw)
}

fn bot_answer(dirs: &Dirs, plain: bool, req: &Value) -> String {
    let bot = bot_of(req).unwrap_or_default();
    let fresh = fresh_user(req);
    if after_tool(req).is_some() && fresh.is_empty() {
        return text(BUILT);
    }
    // The reopening note says the work "has now let it go on"; a person's go-on says "go on".
    if fresh.contains(GO_ON) {
        return text(BACK);
    }
    if fresh.contains(THERE) {
        return text(STILL_HERE);
    }
    if given_stop(&fresh) {
        return text(HEARD_STOP);
    }
    if fresh.contains(GATED_BUILD) {
        let (s, r) = (dirs.started(), dirs.release());
        let cmd = format!(
            "touch {}; while [ ! -e {} ]; do sleep 0.05; done; echo built",
            s.display(),
            r.display()
        );
        return shell_call(&cmd);
    }
    if let Some(kw) = subject(&fresh) {
        if system(req).contains(AT_DESK) {
            return tool_call("work_on", json!({"new": {"title": kw}}));
        }
        let tag = format!("{bot}_{kw}");
        return shell_call(&if plain {
            plain_long_command(&dirs.pids, &tag)
        } else {
            long_command(&dirs.pids, &tag)
        });
    }
    text(UNEXPECTED)
}

fn script(dirs: &Dirs, plain: bool, req: &Value) -> Reply {
    let body = if let Some(line) = read_line(req) {
        text(&user_reading(&line))
    } else if let Some((line, jobs)) = filing_of(req) {
        text(&filing(&line, &jobs))
    } else if tagged(req, "troupe-reader:bot") {
        text(
            r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":false,"asks_ok_only":false}"#,
        )
    } else if tagged(req, "troupe-judgement") {
        text(r#"{"join":false}"#)
    } else {
        bot_answer(dirs, plain, req)
    };
    Reply::Now(body)
}

/// A rig whose `default` and `reading` roles are the fake (`reading_down`: reading goes to the
/// fake's endpoint that answers 500).
pub async fn rig_with(reading_down: bool, plain: bool) -> (Rig, Arc<FakeModel>, Dirs) {
    let tmp = Rig::new(|_| {});
    let dirs = Dirs::new(&tmp);
    let d = dirs.clone();
    let fake = FakeModel::serve(move |req| script(&d, plain, req)).await;
    let reading = if reading_down { "down" } else { "fake" };
    write_config(
        &tmp.path("config.toml"),
        &[("fake", &fake.url), ("down", &fake.failing_url)],
        &[("default", "fake"), ("reading", reading)],
        "",
    );
    (tmp, fake, dirs)
}

pub async fn rig(reading_down: bool) -> (Rig, Arc<FakeModel>, Dirs) {
    rig_with(reading_down, false).await
}

// ---------- reading the daemon ----------

/// The pid the command tagged `tag` recorded, once it has.
pub async fn pid_of(dirs: &Dirs, tag: &str) -> i32 {
    wait_until(&format!("the command {tag} recorded its pid"), || async {
        recorded_pids(&dirs.pids)
            .into_iter()
            .find(|(t, _)| t == tag)
            .map(|(_, p)| p)
    })
    .await
}

/// Once no member of group `pgid` lives: how long after `since` that was seen.
pub async fn gone(pgid: i32, since: Instant) -> Duration {
    wait_until(&format!("process group {pgid} is gone"), || async {
        (!group_alive(pgid)).then(|| since.elapsed())
    })
    .await
}

pub async fn status_of(api: &Api, turn: &Value) -> String {
    api.turn(&turn["id"]).await["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The Bot's work item on a job, once it runs a turn there: (work item, its turn id).
pub async fn running_work(api: &Api, bot: i64, plan: &Value) -> (Value, Value) {
    wait_until(
        &format!("bot {bot} runs a turn on {}", plan["id"]),
        || async {
            api.list(&format!("/v1/bots/{bot}/work-items"))
                .await
                .into_iter()
                .find(|w| {
                    w["mode"] == "work" && w["plan_id"] == plan["id"] && w["state"] == "running"
                })
                .map(|w| {
                    let t = w["turn_id"].clone();
                    (w, t)
                })
        },
    )
    .await
}

pub async fn plan_named(api: &Api, session: i64, name: &str) -> Value {
    wait_until(&format!("the job {name:?} is open"), || async {
        api.list(&format!("/v1/tasks?session_id={session}"))
            .await
            .into_iter()
            .find(|p| p["name"] == name)
    })
    .await
}

pub fn stopped_runs(hold: &Value) -> Vec<Value> {
    hold["effect"]["stopped_turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["run_id"].clone())
        .collect()
}

/// HOLD-L9, CL-5: the conversation holds no line of the app's (about a stop, a go-on or
/// anything else), and every Bot line is one its model said.
pub fn assert_no_app_line(lines: &[Value], log: &str) {
    for l in lines {
        assert_ne!(
            l["author"], "system",
            "the app posted a line: {l:#}\nall lines: {lines:#?}"
        );
        if l["author"] == "bot" {
            let body = l["body"].as_str().unwrap_or_default();
            assert!(
                SCRIPTED.contains(&body),
                "a Bot line the model never said: {l:#}\n{log}"
            );
        }
    }
}

pub fn ids(lines: &[Value]) -> Vec<Value> {
    lines.iter().map(|l| l["id"].clone()).collect()
}
/// Twenty Bots, each in its own direct, each mid shell call: (bot, direct, turn id, pid).
pub async fn twenty_mid_tool_call(api: &Api, dirs: &Dirs) -> Vec<(i64, i64, Value, i32)> {
    let mut out = Vec::new();
    for i in 1..=20 {
        let name = format!("Worker{i:02}");
        let bot = api.bot(&name).await;
        let d = api.direct(bot).await;
        api.say(d, LONG_BUILD).await;
        out.push((bot, d, name));
    }
    let mut running = Vec::new();
    for (bot, d, name) in out {
        let pid = pid_of(dirs, &format!("{name}_build")).await;
        let turn = api.running_turn(d, bot).await;
        running.push((bot, d, turn["id"].clone(), pid));
    }
    running
}
