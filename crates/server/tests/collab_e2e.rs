//! End to end, as a real process: Collaboration II (jobs, desks, delegation) through `troupe
//! serve` against a fake OpenAI-compatible server. In a group of Lead (its lead) and Beta, a
//! person's line reaches Lead's desk; its `delegate` call opens a job from the line, asks Beta
//! for an answer and ends the desk's turn `delegated`, leaving Lead's work on the job waiting.
//! Beta's work on the job answers with `end_turn`; Lead's work on the job is woken with the
//! answer and replies in the group. A second test kills the daemon (SIGKILL) while a job's
//! segment waits on its model call and checks what the restarted daemon shows: the turn ended
//! `interrupted`, the desk closed, the job's work needing attention, nothing written lost.
//!
//! The fake's answer is a function of the request alone: which Bot asks (its system prompt
//! starts "You are NAME, a Bot"), whether at its desk or in its work on a job (the segment's
//! situation says which), and the last user message it was given. Two requests are held: Beta's
//! answer in the first test until the test has seen Lead wait (released through a `Notify`),
//! and the job's model call in the second, never answered. Like `group_e2e.rs`, the tests run
//! `target/debug/troupe`.

mod daemon_support;

use daemon_support::*;

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

const TITLE: &str = "Launch";
const SLOGAN_LINE: &str = "Ask Beta for a slogan";
const ASK: &str = "A four-word slogan for the launch.";
const ANSWER: &str = "Fast and calm.";
const SLOGAN: &str = "Slogan: Fast and calm.";
const REPORT_LINE: &str = "Please write the report";
const REPORT_TITLE: &str = "report";
const UNEXPECTED: &str = "UNEXPECTED request";
const NEITHER: &str = r#"{"control":"neither"}"#;
const AT_DESK: &str = "You are at your desk in this conversation";
const IN_JOB: &str = "You work on this job in its folder";

// ---------- the fake model server ----------

fn tool_call(name: &str, args: Value) -> String {
    let args = args.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    let mut s = chunk(json!({"role": "assistant", "content": null}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": a}}]}),
        None,
    );
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}

fn messages(req: &Value) -> Vec<Value> {
    req["messages"].as_array().cloned().unwrap_or_default()
}

fn content(m: &Value) -> String {
    m["content"].as_str().unwrap_or_default().to_string()
}

/// Every system message, joined (the Bot's prompt and the situations).
fn system(req: &Value) -> String {
    messages(req)
        .iter()
        .filter(|m| m["role"] == "system")
        .map(content)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The Bot asking, from its system prompt ("You are Lead, a Bot working …").
fn bot_of(req: &Value) -> Option<String> {
    let s = system(req);
    let rest = s.strip_prefix("You are ")?;
    Some(rest.split_once(", a Bot")?.0.to_string())
}

fn at_desk(req: &Value) -> bool {
    system(req).contains(AT_DESK)
}

fn in_job(req: &Value) -> bool {
    system(req).contains(IN_JOB)
}

/// The app's own tool-free calls start their one user message with a tag.
fn tagged(req: &Value, tag: &str) -> bool {
    bot_of(req).is_none()
        && messages(req)
            .iter()
            .any(|m| m["role"] == "user" && content(m).starts_with(tag))
}

/// The last user message a Bot was given.
fn latest(req: &Value) -> String {
    messages(req)
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(content)
        .unwrap_or_default()
}

/// What the fake does with a request.
enum Reply {
    Now(String),
    /// Beta's answer, held until the test releases it.
    Gated(String),
    /// Never answered: the job's segment the second test kills the daemon under.
    Hang,
}

fn bot_answer(req: &Value) -> Reply {
    let bot = bot_of(req).unwrap_or_default();
    let now = latest(req);
    match bot.as_str() {
        "Lead" if at_desk(req) && now.contains(SLOGAN_LINE) => Reply::Now(tool_call(
            "delegate",
            json!({"to": "Beta", "ask": ASK, "expects": "answer"}),
        )),
        "Lead" if in_job(req) && now.contains("answered your request") => Reply::Now(text(SLOGAN)),
        "Lead" if at_desk(req) && now.contains(REPORT_LINE) => Reply::Now(tool_call(
            "work_on",
            json!({"new": {"title": REPORT_TITLE}}),
        )),
        "Lead" if in_job(req) && now.contains(REPORT_LINE) => Reply::Hang,
        "Beta" if in_job(req) && now.contains("Lead asks you") => Reply::Gated(tool_call(
            "end_turn",
            json!({"reason": "answered", "answer": ANSWER}),
        )),
        _ => Reply::Now(text(UNEXPECTED)),
    }
}

fn answer(req: &Value) -> Reply {
    let body = if tagged(req, "troupe-reader:user") {
        text(NEITHER)
    } else if tagged(req, "troupe-reader:bot") {
        text(
            r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":false,"asks_ok_only":false}"#,
        )
    } else if tagged(req, "troupe-reader:filing") {
        text(r#"{"belongs":"new"}"#)
    } else if tagged(req, "troupe-judgement") {
        text(r#"{"join":false}"#)
    } else {
        return bot_answer(req);
    };
    Reply::Now(body)
}

#[derive(Default)]
struct Fake {
    seen: Mutex<Vec<Value>>,
    /// Armed: Beta's answer waits for `release`.
    hold_beta: AtomicBool,
    release: Notify,
}

impl Fake {
    fn requests(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }

    /// `bot`'s requests at its desk (`job: false`) or in its work on a job.
    fn of(&self, bot: &str, job: bool) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| bot_of(r).as_deref() == Some(bot))
            .filter(|r| if job { in_job(r) } else { at_desk(r) })
            .collect()
    }

    /// Requests of a Bot that were neither at a desk nor in a job's work.
    fn elsewhere(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| bot_of(r).is_some() && !at_desk(r) && !in_job(r))
            .collect()
    }
}

async fn completions(State(fake): State<Arc<Fake>>, Json(req): Json<Value>) -> impl IntoResponse {
    fake.seen.lock().unwrap().push(req.clone());
    let body = match answer(&req) {
        Reply::Now(b) => b,
        Reply::Gated(b) => {
            if fake.hold_beta.swap(false, Ordering::SeqCst) {
                fake.release.notified().await;
            }
            b
        }
        Reply::Hang => std::future::pending().await,
    };
    (
        [("content-type", "text/event-stream")],
        body + "data: [DONE]\n\n",
    )
}

async fn fake_model(hold_beta: bool) -> (String, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    fake.hold_beta.store(hold_beta, Ordering::SeqCst);
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(completions))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), fake)
}

// ---------- talking to the daemon ----------

/// A temp dir with the data dir and a config pointing `default` at the fake.
struct Rig {
    tmp: tempfile::TempDir,
    fake: Arc<Fake>,
}

impl Rig {
    async fn new(hold_beta: bool) -> Rig {
        let tmp = tempfile::tempdir().unwrap();
        let (model, fake) = fake_model(hold_beta).await;
        write_fake_config(&tmp.path().join("config.toml"), &model, &["default"]);
        Rig { tmp, fake }
    }
    /// `troupe serve` on the rig's data dir (the same one each time), and its API.
    fn start(&self) -> (Daemon, Api) {
        self.start_with(&[])
    }
    /// `start` with more `troupe serve` arguments (`--manual-clock`: no tick but the test's).
    fn start_with(&self, extra: &[&str]) -> (Daemon, Api) {
        let p = |f: &str| self.tmp.path().join(f);
        let d = Daemon::start_with(
            &troupe_binary(),
            &p("data"),
            &p("config.toml"),
            &p("daemon.log"),
            extra,
        );
        let api = Api {
            client: d.client(),
            addr: d.addr.clone(),
        };
        (d, api)
    }
    fn log(&self) -> String {
        std::fs::read_to_string(self.tmp.path().join("daemon.log")).unwrap_or_default()
    }
}

struct Api {
    client: reqwest::Client,
    addr: String,
}

impl Api {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
    async fn get(&self, path: &str) -> Value {
        get(&self.client, self.url(path)).await
    }
    async fn post(&self, path: &str, body: Value) -> Value {
        post(&self.client, self.url(path), body).await
    }
    async fn put(&self, path: &str, body: Value) -> Value {
        let r = self
            .client
            .put(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "PUT {path}: {}", r.status());
        r.json().await.unwrap()
    }
    async fn list(&self, path: &str) -> Vec<Value> {
        self.get(path).await.as_array().unwrap().clone()
    }
    async fn bot(&self, name: &str) -> i64 {
        self.post("/v1/bots", json!({"name": name})).await["id"]
            .as_i64()
            .unwrap()
    }
    /// A group of `bots` led by the first.
    async fn group(&self, bots: &[i64]) -> i64 {
        let g = self
            .post(
                "/v1/sessions",
                json!({"kind": "group", "bot_ids": bots, "title": TITLE}),
            )
            .await;
        let g = g["id"].as_i64().unwrap();
        let lead = self
            .put(
                &format!("/v1/sessions/{g}/lead"),
                json!({"bot_id": bots[0], "confirmed": true}),
            )
            .await;
        assert_eq!(lead["lead"], bots[0], "{lead:#}");
        g
    }
    /// A person's line, once it is routed (the POST answers once it is stored).
    async fn say(&self, session: i64, body: &str) -> Value {
        let line = self
            .post(
                &format!("/v1/sessions/{session}/messages"),
                json!({"body": body}),
            )
            .await;
        assert_eq!(line["routing"], "reading", "{line:#}");
        until_routed(&line["id"], |path| async move { self.get(&path).await }).await
    }
    async fn lines(&self, session: i64) -> Vec<Value> {
        self.list(&format!("/v1/sessions/{session}/messages?limit=1000"))
            .await
    }
    async fn plans(&self, session: i64) -> Vec<Value> {
        self.list(&format!("/v1/tasks?session_id={session}")).await
    }
    async fn delegations(&self, plan: &Value) -> Vec<Value> {
        self.list(&format!("/v1/tasks/{}/delegations", plan["id"]))
            .await
    }
    async fn work_items(&self, bot: i64) -> Vec<Value> {
        self.list(&format!("/v1/bots/{bot}/work-items")).await
    }
    async fn turns(&self, session: i64) -> Vec<Value> {
        self.list(&format!("/v1/turns?session_id={session}")).await
    }
    /// The first line by `bot` whose body is `body`, once it is there.
    async fn line_by(&self, session: i64, bot: i64, body: &str) -> Value {
        wait_until(&format!("bot {bot} says {body:?} in {session}"), || async {
            self.lines(session)
                .await
                .into_iter()
                .find(|l| l["body"] == body && l["author"] == "bot" && l["bot_id"] == bot)
        })
        .await
    }
    /// Once `bot`'s work items are all in one of the states `want` names (desk, work).
    async fn items_once(&self, bot: i64, want: (&str, &str)) -> (Value, Value) {
        wait_until(
            &format!("bot {bot}: desk {}, work {}", want.0, want.1),
            || async {
                let items = self.work_items(bot).await;
                let desk = only(&items, "desk")?;
                let work = only(&items, "work")?;
                (desk["state"] == want.0 && work["state"] == want.1).then_some((desk, work))
            },
        )
        .await
    }
}

/// The one work item of `mode` (desk, work), when there is exactly one.
fn only(items: &[Value], mode: &str) -> Option<Value> {
    let of: Vec<&Value> = items.iter().filter(|i| i["mode"] == mode).collect();
    match of.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

fn turns_of<'a>(turns: &'a [Value], bot: i64, mode: &str) -> Vec<&'a Value> {
    turns
        .iter()
        .filter(|t| t["bot_id"] == bot && t["mode"] == mode)
        .collect()
}

/// The one turn of `bot` in `mode`.
fn one_turn<'a>(turns: &'a [Value], bot: i64, mode: &str) -> &'a Value {
    let of = turns_of(turns, bot, mode);
    assert_eq!(of.len(), 1, "bot {bot}'s {mode} turns: {turns:#?}");
    of[0]
}

fn bodies(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .map(|l| {
            (
                l["author"].as_str().unwrap_or_default().to_string(),
                l["body"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

// ---------- the tests ----------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_group_line_opens_a_job_the_lead_delegates_and_is_woken_by_the_answer() {
    let rig = Rig::new(true).await;
    let (fake, (_daemon, api)) = (&rig.fake, rig.start());
    let lead = api.bot("Lead").await;
    let beta = api.bot("Beta").await;
    let g = api.group(&[lead, beta]).await;

    // 1. The person's line reaches Lead's desk; `delegate` there opens the job from the line,
    // asks Beta, and ends the desk's turn. Beta's answer is held so the wait can be seen.
    let line = api.say(g, SLOGAN_LINE).await;
    wait_until("Beta's work on the job asked the model", || async {
        (!fake.of("Beta", true).is_empty()).then_some(())
    })
    .await;
    let plans = api.plans(g).await;
    assert_eq!(plans.len(), 1, "one job for the group: {plans:#?}");
    let plan = plans[0].clone();
    assert_eq!(plan["home_session_id"], g, "{plan:#}");
    assert_eq!(plan["opening_line_id"], line["id"], "{plan:#}");
    assert_eq!(plan["original_request"], SLOGAN_LINE, "{plan:#}");
    assert_eq!(plan["status"], "active", "{plan:#}");
    let folder = plan["folder"].as_str().unwrap().to_string();

    let delegations = api.delegations(&plan).await;
    assert_eq!(delegations.len(), 1, "{delegations:#?}");
    let d = delegations[0].clone();
    assert_eq!(d["state"], "open", "{d:#}");
    assert_eq!(d["expects"], "answer", "{d:#}");
    assert_eq!(d["ask"], ASK, "{d:#}");
    assert_eq!(d["from_bot_id"], lead, "{d:#}");
    assert_eq!(d["to_bot_id"], beta, "{d:#}");
    assert_eq!(d["plan_id"], plan["id"], "{d:#}");
    assert_eq!(d["waiting"], true, "{d:#}");
    assert!(d["due_at"].is_null(), "{d:#}");
    let del = format!("del_{}", d["id"]);

    // Lead's desk is closed, its work on the job waits on the delegation; the desk's turn
    // ended `delegated`.
    let (desk, job) = api.items_once(lead, ("closed", "waiting")).await;
    assert_eq!(desk["session_id"], g, "{desk:#}");
    assert_eq!(job["plan_id"], plan["id"], "{job:#}");
    assert_eq!(job["waiting_on"]["delegation_id"], d["id"], "{job:#}");
    assert_eq!(d["sender_work_item"], job["id"], "{d:#}");
    let turns = api.turns(g).await;
    let desk_turn = one_turn(&turns, lead, "desk");
    assert_eq!(desk_turn["end_reason"], "delegated", "{desk_turn:#}");
    assert_eq!(desk_turn["status"], "completed", "{desk_turn:#}");
    assert_eq!(desk_turn["work_item_id"], desk["id"], "{desk_turn:#}");
    assert!(
        turns_of(&turns, lead, "work").is_empty(),
        "Lead's work on the job has not run yet: {turns:#?}"
    );

    // The pair direct shows the request as the app's line.
    let pair = d["pair_session_id"].as_i64().unwrap();
    let direct = api.get(&format!("/v1/sessions/{pair}")).await;
    assert_eq!(direct["kind"], "bot_direct", "{direct:#}");
    assert_eq!(direct["opened_via"], "delegation", "{direct:#}");
    let request_record = format!("Request {del}: Lead asked Beta for answer — {ASK}");
    let said = bodies(&api.lines(pair).await);
    assert_eq!(
        said,
        [("system".to_string(), request_record.clone())],
        "the request record"
    );

    // Beta's work on the job: its own thread, in the job's folder, mailed the request.
    let beta_asked = fake.of("Beta", true);
    assert_eq!(beta_asked.len(), 1, "{beta_asked:#?}");
    let told = latest(&beta_asked[0]);
    assert!(
        told.contains(&format!("Lead asks you ({del}): {ASK}")),
        "{told}"
    );
    assert!(
        system(&beta_asked[0]).contains(&folder),
        "Beta's work runs in the job's folder {folder}: {}",
        system(&beta_asked[0])
    );
    assert!(fake.of("Beta", false).is_empty(), "Beta has no desk turn");

    // 2. Beta answers; Lead's work on the job is woken with the answer and replies.
    fake.release.notify_one();
    let reply = api.line_by(g, lead, SLOGAN).await;
    let (desk, job) = api.items_once(lead, ("closed", "idle")).await;
    assert!(job["waiting_on"].is_null(), "{job:#}");
    assert!(job["turn_id"].is_null(), "{job:#}");
    assert!(desk["turn_id"].is_null(), "{desk:#}");
    let beta_job = wait_until("Beta's work on the job settled", || async {
        let items = api.work_items(beta).await;
        only(&items, "work").filter(|w| w["state"] == "idle")
    })
    .await;
    assert_eq!(beta_job["plan_id"], plan["id"], "{beta_job:#}");
    assert_eq!(d["recipient_work_item"], beta_job["id"], "{d:#}");

    let delegations = api.delegations(&plan).await;
    assert_eq!(delegations.len(), 1, "{delegations:#?}");
    let d = &delegations[0];
    assert_eq!(d["state"], "replied", "{d:#}");
    assert_eq!(d["result"]["text"], ANSWER, "{d:#}");
    assert_eq!(d["waiting"], false, "{d:#}");
    assert!(!d["replied_at"].is_null(), "{d:#}");

    let lead_woken = fake.of("Lead", true);
    assert_eq!(lead_woken.len(), 1, "{lead_woken:#?}");
    let told = latest(&lead_woken[0]);
    assert!(
        told.contains(&format!("Beta answered your request {del}:\n{ANSWER}")),
        "{told}"
    );
    assert!(system(&lead_woken[0]).contains(&folder));

    let said = bodies(&api.lines(pair).await);
    assert_eq!(
        said,
        [
            ("system".to_string(), request_record),
            (
                "system".to_string(),
                format!("Answer to {del} from Beta: {ANSWER}")
            ),
        ],
        "the pair direct's records"
    );

    // The group: the person's line, then Lead's reply (from its work on the job).
    let lines = api.lines(g).await;
    let by_bots: Vec<&Value> = lines.iter().filter(|l| l["author"] == "bot").collect();
    assert_eq!(by_bots, [&reply], "{lines:#?}");
    assert!(lines.iter().any(|l| l["id"] == line["id"]), "{lines:#?}");
    assert!(
        lines.iter().all(|l| l["body"] != UNEXPECTED),
        "{lines:#?}\n{}",
        rig.log()
    );

    // Turns: the desk's `delegated`; Beta's `answered`, speaking in the pair direct its mail
    // came by; Lead's reply ends its work on the job in the group.
    let turns = api.turns(g).await;
    let desk_turn = one_turn(&turns, lead, "desk");
    assert_eq!(desk_turn["end_reason"], "delegated", "{desk_turn:#}");
    let pair_turns = api.turns(pair).await;
    assert_eq!(pair_turns.len(), 1, "{pair_turns:#?}");
    let beta_turn = one_turn(&pair_turns, beta, "work");
    assert_eq!(beta_turn["end_reason"], "answered", "{beta_turn:#}");
    assert_eq!(beta_turn["status"], "completed", "{beta_turn:#}");
    assert_eq!(beta_turn["work_item_id"], beta_job["id"], "{beta_turn:#}");
    let lead_turn = one_turn(&turns, lead, "work");
    assert_eq!(lead_turn["status"], "completed", "{lead_turn:#}");
    assert_eq!(lead_turn["work_item_id"], job["id"], "{lead_turn:#}");
    assert_eq!(reply["turn_id"], lead_turn["id"], "{reply:#}");
    assert_eq!(turns.len(), 2, "{turns:#?}");

    // Every request was one the script expected.
    assert_eq!(fake.of("Lead", false).len(), 1, "Lead's desk: one call");
    assert!(fake.elsewhere().is_empty(), "{:#?}", fake.elsewhere());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_mid_segment_then_restart_desk_closed_job_needs_attention_nothing_lost() {
    let rig = Rig::new(false).await;
    let (fake, (mut daemon, api)) = (&rig.fake, rig.start());
    let lead = api.bot("Lead").await;
    let beta = api.bot("Beta").await;
    let g = api.group(&[lead, beta]).await;

    // The desk opens the job with work_on; the job's segment starts with the line and its
    // model call hangs in the fake.
    let line = api.say(g, REPORT_LINE).await;
    wait_until("the job's model call reached the fake", || async {
        (!fake.of("Lead", true).is_empty()).then_some(())
    })
    .await;
    let (desk, job) = api.items_once(lead, ("closed", "running")).await;
    let turn = job["turn_id"].as_i64().expect("the job's live segment");
    let plans_before = api.plans(g).await;
    assert_eq!(plans_before.len(), 1, "{plans_before:#?}");
    let plan = &plans_before[0];
    // The person's line names the job; the Bot's title is its goal (PLAN-2).
    assert_eq!(plan["name"], REPORT_LINE, "{plan:#}");
    assert_eq!(plan["spec"]["goal"], REPORT_TITLE, "{plan:#}");
    assert_eq!(plan["opening_line_id"], line["id"], "{plan:#}");
    assert_eq!(job["plan_id"], plan["id"], "{job:#}");
    let turns_before = api.turns(g).await;
    let desk_turn = one_turn(&turns_before, lead, "desk");
    assert_eq!(desk_turn["end_reason"], "moved", "{desk_turn:#}");
    assert_eq!(desk_turn["work_item_id"], desk["id"], "{desk_turn:#}");
    let job_turn = one_turn(&turns_before, lead, "work");
    assert_eq!(job_turn["id"], turn, "{job_turn:#}");
    assert_eq!(job_turn["status"], "running", "{job_turn:#}");
    let held = fake.of("Lead", true);
    assert_eq!(held.len(), 1, "{held:#?}");
    assert!(latest(&held[0]).contains(REPORT_LINE), "{:#?}", held[0]);
    assert!(system(&held[0]).contains(plan["folder"].as_str().unwrap()));
    let lines_before = api.lines(g).await;
    let revisions_before = api
        .list(&format!("/v1/tasks/{}/revisions", plan["id"]))
        .await;

    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    let requests_at_kill = fake.requests().len();

    // Restarted on the same data: recovery ends the cut-off turn and settles its work. The
    // scheduler ticks only when the test says, so what recovery alone did is seen first.
    let (_daemon, api) = rig.start_with(&["--manual-clock"]);
    let t = wait_until("recovery ended the cut-off turn", || async {
        let t = api.get(&format!("/v1/turns/{turn}")).await;
        (t["status"] != "running").then_some(t)
    })
    .await;
    // Read after the turn's end: the work item settled with it.
    let items = api.work_items(lead).await;
    assert_eq!(t["status"], "interrupted", "{t:#}");
    assert_eq!(t["state"], "interrupted", "{t:#}");
    assert_eq!(t["mode"], "work", "{t:#}");
    assert_eq!(t["work_item_id"], job["id"], "{t:#}");
    assert!(!t["ended_at"].is_null(), "{t:#}");
    let desk_after = only(&items, "desk").expect("one desk");
    let job_after = only(&items, "work").expect("one work item");
    assert_eq!(desk_after["id"], desk["id"], "{items:#?}");
    assert_eq!(desk_after["state"], "closed", "{items:#?}");
    assert_eq!(job_after["id"], job["id"], "{items:#?}");
    assert_eq!(job_after["state"], "needs_attention", "{items:#?}");
    assert!(job_after["turn_id"].is_null(), "{items:#?}");

    // Nothing written before the kill is lost.
    let plans_after = api.plans(g).await;
    assert_eq!(plans_after, plans_before, "the job");
    let revisions_after = api
        .list(&format!("/v1/tasks/{}/revisions", plan["id"]))
        .await;
    assert_eq!(revisions_after, revisions_before, "the job's revisions");
    let lines_after = api.lines(g).await;
    for l in &lines_before {
        assert!(
            lines_after.iter().any(|a| a == l),
            "lost or changed {l:#}: {lines_after:#?}"
        );
    }
    assert!(lines_after.iter().any(|l| l["id"] == line["id"]));
    let turns_after = api.turns(g).await;
    let desk_turn = one_turn(&turns_after, lead, "desk");
    assert_eq!(desk_turn["end_reason"], "moved", "{desk_turn:#}");
    assert_eq!(turns_after.len(), 2, "nothing ran again: {turns_after:#?}");
    assert_eq!(
        fake.requests().len(),
        requests_at_kill,
        "the restarted daemon asked the model nothing: {:#?}",
        &fake.requests()[requests_at_kill..]
    );
    assert!(
        lines_after.iter().all(|l| l["body"] != UNEXPECTED),
        "{lines_after:#?}\n{}",
        rig.log()
    );

    // The first tick: the supervisor picks the crash's cut-off work up, spending budget
    // (issue 16 §3), once.
    let tick = api.post("/v1/debug/tick", json!({})).await;
    let picked: Vec<&Value> = tick["supervisor"]["work"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["work_item_id"] == job["id"])
        .collect();
    assert_eq!(picked.len(), 1, "{tick:#}");
    assert_eq!(picked[0]["pickup"]["verdict"], "pick_up", "{tick:#}");
    assert_eq!(picked[0]["pickup"]["cause"], "restart", "{tick:#}");
    assert_eq!(picked[0]["pickup"]["spends_budget"], true, "{tick:#}");
    let log = api
        .list(&format!("/v1/tasks/{}/work-log", plan["id"]))
        .await;
    assert!(
        log.iter().any(|e| e["kind"] == "supervisor_picked_up"),
        "{log:#?}"
    );
}
