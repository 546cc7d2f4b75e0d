//! End to end, as a real process: groups through `troupe serve` against a fake
//! OpenAI-compatible server. The lead answers an unaddressed line and names a Bot; two Bots'
//! bare acknowledgements stop after one round (the nod to a nod wakes nobody); a named roster
//! Bot is pulled in; a Bot opens a Bot↔Bot direct; a Bot asks the person and goes on with the
//! answer; every person's line is read once. A second test kills the daemon while a line is
//! being read and checks the restarted daemon routes it once.
//!
//! The fake's answer is a function of the request alone: which Bot asks (its system prompt
//! starts "You are NAME, a Bot"), where (the situation names the group or the direct) and the
//! newest line it was given. The one exception is the hold in the second test, released by the
//! test through a `Notify`. Like `daemon.rs`, the tests run `target/debug/troupe`.

mod daemon_support;
mod sse;

use daemon_support::*;

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

const TITLE: &str = "Launch";
const FIRST: &str = "What should we build first";
const QUESTION: &str = "@Beta could you draft the test plan?";
const NOD: &str = "@Alpha got it, thanks";
const NOD_BACK: &str = "@Beta thanks";
const JOIN: &str = "@Gamma please join";
const GAMMA_HELLO: &str = "Gamma here, glad to help.";
const GO_DIRECT: &str = "@Alpha ask Gamma directly about the schedule";
const DIRECT_ASK: &str = "Gamma, what is the schedule?";
const DIRECT_ANSWER: &str = "The schedule is Friday.";
const DIRECT_THANKS: &str = "Thanks";
const ASKED_DIRECT: &str = "I asked Gamma in our direct.";
const DB_LINE: &str = "@Beta which database should we use";
const DB_QUESTION: &str = "Which database should we use?";
const DB_REPLY: &str = "SQLite it is, kept small.";
const SLOW: &str = "slow: sum up where we are";
const SLOW_REPLY: &str = "All on track.";
const UNEXPECTED: &str = "UNEXPECTED request";
const NEITHER: &str = r#"{"control":"neither"}"#;

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

fn system(req: &Value) -> String {
    messages(req)
        .iter()
        .find(|m| m["role"] == "system")
        .map(content)
        .unwrap_or_default()
}

/// The Bot asking, from its system prompt ("You are Alpha, a Bot working …").
fn bot_of(req: &Value) -> Option<String> {
    let s = system(req);
    let rest = s.strip_prefix("You are ")?;
    Some(rest.split_once(", a Bot")?.0.to_string())
}

/// A Bot↔Bot direct's situation; a group's names the group instead.
fn in_direct(req: &Value) -> bool {
    system(req).contains("This is your direct conversation with")
}

/// The app's own tool-free calls start their one user message with a tag.
fn tagged(req: &Value, tag: &str) -> bool {
    bot_of(req).is_none()
        && messages(req)
            .iter()
            .any(|m| m["role"] == "user" && content(m).starts_with(tag))
}

/// The line a person's-line reading is about (the prompt also shows the lines before it).
fn read_line(req: &Value) -> Option<String> {
    if !tagged(req, "troupe-reader:user\n") {
        return None;
    }
    let prompt = messages(req)
        .iter()
        .find(|m| m["role"] == "user")
        .map(content)?;
    Some(prompt.rsplit_once("\nThe line:\n")?.1.trim().to_string())
}

/// The newest thing a Bot was given: its last user message, without the lines it only heard
/// since its last turn ("… For you now: <line>").
fn latest(req: &Value) -> String {
    let last = messages(req)
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(content)
        .unwrap_or_default();
    match last.rsplit_once("For you now:\n") {
        Some((_, now)) => now.to_string(),
        None => last,
    }
}

/// The tool the last assistant message called, when a tool result is the newest message.
fn after_tool(req: &Value) -> Option<String> {
    let all = messages(req);
    if all.last()?["role"] != "tool" {
        return None;
    }
    let call = all.iter().rev().find(|m| m["role"] == "assistant")?;
    Some(
        call["tool_calls"][0]["function"]["name"]
            .as_str()?
            .to_string(),
    )
}

fn bot_answer(req: &Value) -> String {
    let bot = bot_of(req).unwrap_or_default();
    let now = latest(req);
    let says = |t: &str| text(t);
    if let Some(tool) = after_tool(req) {
        return says(if tool == "create_direct" {
            ASKED_DIRECT
        } else {
            "Done."
        });
    }
    if in_direct(req) {
        // The direct: Gamma answers the question; anything else gets a bare thanks, and the
        // thanks back to a thanks wakes nobody.
        return says(if bot == "Gamma" && now.contains("what is the schedule") {
            DIRECT_ANSWER
        } else {
            DIRECT_THANKS
        });
    }
    match bot.as_str() {
        "Alpha" if now.contains(FIRST) => says(QUESTION),
        "Alpha" if now.contains("got it, thanks") => says(NOD_BACK),
        "Alpha" if now.contains("ask Gamma directly") => {
            tool_call("create_direct", json!({"to": "Gamma", "text": DIRECT_ASK}))
        }
        "Alpha" if now.contains(SLOW) => says(SLOW_REPLY),
        "Beta" if now.contains("could you draft the test plan") => says(NOD),
        "Beta" if now.contains("Answer to your question") => says(DB_REPLY),
        "Beta" if now.contains("which database") => tool_call(
            "ask_user",
            json!({"question": DB_QUESTION,
                   "options": [{"label": "Postgres"}, {"label": "SQLite"}]}),
        ),
        "Gamma" if now.contains("please join") => says(GAMMA_HELLO),
        _ => says(UNEXPECTED),
    }
}

fn answer(req: &Value) -> String {
    let body = if tagged(req, "troupe-reader:user") {
        text(NEITHER)
    } else if tagged(req, "troupe-reader:bot") {
        text(
            r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":false,"asks_ok_only":false}"#,
        )
    } else if tagged(req, "troupe-judgement") {
        text(r#"{"join":false}"#)
    } else {
        bot_answer(req)
    };
    body + "data: [DONE]\n\n"
}

#[derive(Default)]
struct Fake {
    seen: Mutex<Vec<Value>>,
    /// Armed: the first reading of the slow line waits for `release`.
    hold_slow: AtomicBool,
    release: Notify,
}

impl Fake {
    fn requests(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }

    /// Requests of `bot` in the group (`direct: false`) or in a Bot↔Bot direct.
    fn of(&self, bot: &str, direct: bool) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| bot_of(r).as_deref() == Some(bot) && in_direct(r) == direct)
            .collect()
    }

    /// Readings asked for the person's line `body`.
    fn reads_of(&self, body: &str) -> usize {
        let of = |r: &Value| read_line(r).as_deref() == Some(body);
        self.requests().iter().filter(|r| of(r)).count()
    }

    fn count(&self, tag: &str) -> usize {
        self.requests().iter().filter(|r| tagged(r, tag)).count()
    }
}

async fn completions(State(fake): State<Arc<Fake>>, Json(req): Json<Value>) -> impl IntoResponse {
    fake.seen.lock().unwrap().push(req.clone());
    let slow = read_line(&req).is_some_and(|l| l.contains(SLOW));
    if slow && fake.hold_slow.swap(false, Ordering::SeqCst) {
        fake.release.notified().await;
    }
    ([("content-type", "text/event-stream")], answer(&req))
}

async fn fake_model(hold_slow: bool) -> (String, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    fake.hold_slow.store(hold_slow, Ordering::SeqCst);
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
    async fn new(hold_slow: bool) -> Rig {
        let tmp = tempfile::tempdir().unwrap();
        let (model, fake) = fake_model(hold_slow).await;
        write_fake_config(&tmp.path().join("config.toml"), &model, &["default"]);
        Rig { tmp, fake }
    }
    /// `troupe serve` on the rig's data dir (the same one each time), and its API.
    fn start(&self) -> (Daemon, Api) {
        let p = |f: &str| self.tmp.path().join(f);
        let d = Daemon::start(
            &troupe_binary(),
            &p("data"),
            &p("config.toml"),
            &p("daemon.log"),
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
    async fn list(&self, path: &str) -> Vec<Value> {
        self.get(path).await.as_array().unwrap().clone()
    }
    async fn lines(&self, session: i64) -> Vec<Value> {
        self.list(&format!("/v1/sessions/{session}/messages?limit=1000"))
            .await
    }
    /// The conversation's stored events from the first, then live ones.
    async fn events(&self, session: i64) -> sse::SseStream {
        let url = self.url(&format!("/v1/events?session_id={session}&after=0"));
        sse::SseStream::connect(&self.client, &url, None).await
    }
    /// The first line by `bot` (or by the app, bot None) whose body is `body`, once it is there.
    async fn line_by(&self, session: i64, bot: Option<i64>, body: &str) -> Value {
        wait_until(&format!("{bot:?} says {body:?} in {session}"), || async {
            self.lines(session).await.into_iter().find(|l| {
                l["body"] == body
                    && match bot {
                        Some(b) => l["author"] == "bot" && l["bot_id"] == b,
                        None => l["author"] == "system",
                    }
            })
        })
        .await
    }
    async fn turns(&self, session: i64) -> Vec<Value> {
        self.list(&format!("/v1/turns?session_id={session}")).await
    }
    /// Once nothing runs in the conversation: its turns.
    async fn settled(&self, session: i64) -> Vec<Value> {
        wait_until(&format!("conversation {session} is idle"), || async {
            let view = self.get(&format!("/v1/sessions/{session}")).await;
            let turns = self.turns(session).await;
            (view["running"] == false && turns.iter().all(|t| t["status"] != "running"))
                .then_some(turns)
        })
        .await
    }
    async fn readings(&self, line: &Value) -> Vec<Value> {
        self.list(&format!("/v1/messages/{}/readings", line["id"]))
            .await
    }
}

fn turns_of(turns: &[Value], bot: i64) -> Vec<&Value> {
    turns.iter().filter(|t| t["bot_id"] == bot).collect()
}

fn payload(m: &sse::SseMessage) -> Value {
    m.json()["payload"].clone()
}

// ---------- the tests ----------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn group_lead_mentions_pull_in_direct_and_ask_over_a_real_daemon() {
    let rig = Rig::new(false).await;
    let (fake, (_daemon, api)) = (&rig.fake, rig.start());

    // 1. Alpha, Beta, Gamma on the roster; a group of Alpha and Beta led by Alpha.
    let alpha = api.bot("Alpha").await;
    let beta = api.bot("Beta").await;
    let gamma = api.bot("Gamma").await;
    let g = api.group(&[alpha, beta]).await;
    let mut events = api.events(g).await;

    // 2. An unaddressed line reaches the lead only; Alpha names Beta with a question; Beta's
    // thanks wakes Alpha; Alpha's thanks back wakes nobody.
    let first = api.say(g, FIRST).await;
    let question = api.line_by(g, Some(alpha), QUESTION).await;
    let routed = events
        .until(WAIT, |m| {
            m.event == "line_routed" && payload(m)["message_id"] == first["id"]
        })
        .await;
    let recipients = payload(routed.last().unwrap())["recipients"].clone();
    assert_eq!(
        recipients,
        json!([{"bot_id": alpha, "how": "lead"}]),
        "only the lead hears an unaddressed line"
    );
    api.line_by(g, Some(beta), NOD).await;
    let nod_back = api.line_by(g, Some(alpha), NOD_BACK).await;
    let seen = events
        .until(WAIT, |m| m.event == "mention_nod_suppressed")
        .await;
    let quiet = payload(seen.last().unwrap());
    assert_eq!(quiet["message_id"], nod_back["id"], "{quiet:#}");
    assert_eq!(quiet["bot_id"], beta, "{quiet:#}");
    assert!(
        seen.iter().any(|m| m.event == "line_routed"
            && payload(m)["message_id"] == question["id"]
            && payload(m)["recipients"][0]["bot_id"] == beta),
        "Alpha's question woke Beta: {seen:#?}"
    );
    let turns = api.settled(g).await;
    assert_eq!(fake.of("Alpha", false).len(), 2, "Alpha: the line, the nod");
    assert_eq!(fake.of("Beta", false).len(), 1, "Beta: the question only");
    assert_eq!(turns_of(&turns, alpha).len(), 2, "{turns:#?}");
    assert_eq!(turns_of(&turns, beta).len(), 1, "{turns:#?}");
    assert!(
        turns.iter().all(|t| t["state"] == "completed"),
        "{turns:#?}"
    );
    assert!(
        !latest(&fake.of("Alpha", false)[0]).contains(QUESTION),
        "Alpha's first request answers the person's line"
    );

    // 3. Naming a roster Bot outside the group pulls it in, and it answers.
    let join = api.say(g, JOIN).await;
    api.line_by(g, None, "Gamma joined").await;
    let view = api.get(&format!("/v1/sessions/{g}")).await;
    assert_eq!(member(&view, gamma)["name"], "Gamma", "{view:#}");
    assert_eq!(member(&view, gamma)["is_lead"], false, "{view:#}");
    assert_eq!(member(&view, alpha)["is_lead"], true, "{view:#}");
    api.line_by(g, Some(gamma), GAMMA_HELLO).await;
    let lines = api.lines(g).await;
    let pos = |body: &str| lines.iter().position(|l| l["body"] == body).unwrap();
    assert!(
        pos(JOIN) < pos("Gamma joined") && pos("Gamma joined") < pos(GAMMA_HELLO),
        "{lines:#?}"
    );
    api.settled(g).await;
    assert_eq!(fake.of("Gamma", false).len(), 1);
    assert_eq!(fake.of("Alpha", false).len(), 2, "the lead is not asked");
    assert!(
        system(&fake.of("Gamma", false)[0]).contains(&format!("in the group \"{TITLE}\"")),
        "Gamma's request carries the group's situation"
    );

    // 4. Alpha opens a Bot↔Bot direct with Gamma; Gamma answers there. The thanks go one
    // round in the direct too, then the nod to a nod wakes nobody.
    let go_direct = api.say(g, GO_DIRECT).await;
    let direct = wait_until("Alpha's direct with Gamma exists", || async {
        let all = api.get("/v1/sessions").await;
        all.as_array()
            .unwrap()
            .iter()
            .find(|s| s["kind"] == "bot_direct")
            .cloned()
    })
    .await;
    let d = direct["id"].as_i64().unwrap();
    assert_eq!(direct["origin_session_id"], g, "{direct:#}");
    assert_eq!(direct["opened_by_bot_id"], alpha, "{direct:#}");
    assert_eq!(direct["opened_via"], "create_direct", "{direct:#}");
    let mut pair = direct["bot_ids"].as_array().unwrap().clone();
    pair.sort_by_key(|b| b.as_i64());
    assert_eq!(pair, [json!(alpha), json!(gamma)], "{direct:#}");
    api.line_by(g, Some(alpha), ASKED_DIRECT).await;
    wait_until("both sides said thanks in the direct", || async {
        (api.lines(d).await.len() == 4).then_some(())
    })
    .await;
    let direct_turns = api.settled(d).await;
    api.settled(g).await;
    let said: Vec<(Value, Value)> = api
        .lines(d)
        .await
        .iter()
        .map(|l| (l["bot_id"].clone(), l["body"].clone()))
        .collect();
    assert_eq!(
        said,
        vec![
            (json!(alpha), json!(DIRECT_ASK)),
            (json!(gamma), json!(DIRECT_ANSWER)),
            (json!(alpha), json!(DIRECT_THANKS)),
            (json!(gamma), json!(DIRECT_THANKS)),
        ],
        "the direct's lines"
    );
    assert_eq!(fake.of("Gamma", true).len(), 2, "the question, the thanks");
    assert_eq!(fake.of("Alpha", true).len(), 1, "the answer only");
    assert_eq!(turns_of(&direct_turns, gamma).len(), 2, "{direct_turns:#?}");
    assert_eq!(turns_of(&direct_turns, alpha).len(), 1, "{direct_turns:#?}");
    assert!(
        system(&fake.of("Gamma", true)[0]).contains(&format!("opened from \"{TITLE}\"")),
        "the direct's situation names where it was opened from"
    );
    // Alpha's group turn: the tool call, then its words after the tool's result.
    assert_eq!(fake.of("Alpha", false).len(), 4);

    // 5. Beta asks the person with options; the answer (a pick and words) reaches it.
    let db = api.say(g, DB_LINE).await;
    let ask = wait_until("Beta's ask is posted", || async {
        api.lines(g)
            .await
            .into_iter()
            .find(|l| l["kind"] == "ask" && l["bot_id"] == beta)
    })
    .await;
    assert_eq!(ask["body"], DB_QUESTION, "{ask:#}");
    assert_eq!(ask["ask"]["options"][1]["label"], "SQLite", "{ask:#}");
    assert!(ask["ask"]["answer"].is_null(), "{ask:#}");
    let waiting = wait_until("Beta waits on its ask", || async {
        let view = api.get(&format!("/v1/sessions/{g}")).await;
        let turns = api.turns(g).await;
        let asking = turns
            .iter()
            .find(|t| t["id"] == ask["turn_id"])
            .cloned()
            .unwrap_or(Value::Null);
        (member(&view, beta)["state"] == "waiting_ask" && asking["state"] == "waiting_ask")
            .then_some(asking)
    })
    .await;
    assert_eq!(waiting["bot_id"], beta, "{waiting:#}");
    let asked_requests = fake.of("Beta", false).len();
    let answered = api
        .post(
            &format!("/v1/messages/{}/answer", ask["id"]),
            json!({"options": [1], "text": "keep it small"}),
        )
        .await;
    assert_eq!(
        answered["ask"]["answer"],
        json!({"options": [1], "text": "keep it small"}),
        "{answered:#}"
    );
    api.line_by(g, Some(beta), DB_REPLY).await;
    let turns = api.settled(g).await;
    let beta_requests = fake.of("Beta", false);
    assert_eq!(
        beta_requests.len(),
        asked_requests + 1,
        "one request answers the answer"
    );
    let told = latest(beta_requests.last().unwrap());
    assert!(
        told.contains(DB_QUESTION)
            && told.contains("Picked: SQLite")
            && told.contains("keep it small"),
        "{told}"
    );
    let asking = turns.iter().find(|t| t["id"] == ask["turn_id"]).unwrap();
    assert_eq!(asking["state"], "completed", "{asking:#}");
    let view = api.get(&format!("/v1/sessions/{g}")).await;
    for b in [alpha, beta, gamma] {
        assert_eq!(member(&view, b)["state"], "idle", "{view:#}");
    }

    // 6. Each person's line was read once, by the fake's model, and the reading stored.
    let person_lines = [&first, &join, &go_direct, &db];
    assert_eq!(
        fake.count("troupe-reader:user"),
        person_lines.len(),
        "one reading request per person's line"
    );
    for line in person_lines {
        let body = line["body"].as_str().unwrap();
        assert_eq!(fake.reads_of(body), 1, "{body}");
        let readings = api.readings(line).await;
        assert_eq!(readings.len(), 1, "{body}: {readings:#?}");
        let r = &readings[0];
        assert_eq!(r["kind"], "user", "{r:#}");
        assert_eq!(r["model"], "fake", "{r:#}");
        assert!(r["failure"].is_null(), "{r:#}");
        assert_eq!(r["raw"], NEITHER, "{r:#}");
        assert_eq!(r["reading"]["control"], "neither", "{r:#}");
    }
    // Bot lines are not read as a person's; the ask's question was read once (go-ahead check);
    // a group with a lead asks for no judgement.
    assert_eq!(fake.count("troupe-reader:bot"), 1);
    assert_eq!(fake.count("troupe-judgement"), 0);

    // In all: every request was one the script expected, and no line is an unexpected one.
    let total: usize = ["Alpha", "Beta", "Gamma"]
        .iter()
        .map(|b| fake.of(b, false).len() + fake.of(b, true).len())
        .sum();
    assert_eq!(total, 4 + 3 + 1 + 1 + 2, "{:#?}", fake.requests());
    for s in [g, d] {
        let lines = api.lines(s).await;
        assert!(
            lines.iter().all(|l| l["body"] != UNEXPECTED),
            "{lines:#?}\n{}",
            rig.log()
        );
    }
    let turns = api.turns(g).await;
    assert_eq!(turns_of(&turns, alpha).len(), 3, "{turns:#?}");
    assert_eq!(turns_of(&turns, beta).len(), 3, "{turns:#?}");
    assert_eq!(turns_of(&turns, gamma).len(), 1, "{turns:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_line_cut_off_mid_reading_by_sigkill_is_routed_once_after_restart() {
    let rig = Rig::new(true).await;
    let (fake, (mut daemon, api)) = (&rig.fake, rig.start());
    let alpha = api.bot("Alpha").await;
    let beta = api.bot("Beta").await;
    let g = api.group(&[alpha, beta]).await;

    // The line is stored (the POST answers then), and its reading hangs in the fake.
    let line = api
        .post(&format!("/v1/sessions/{g}/messages"), json!({"body": SLOW}))
        .await;
    assert_eq!(line["routing"], "reading", "{line:#}");
    wait_until("the slow line's reading reached the fake", || async {
        (fake.reads_of(SLOW) == 1).then_some(())
    })
    .await;
    let stored = api.get(&format!("/v1/messages/{}", line["id"])).await;
    assert_eq!(stored["routing"], "reading", "{stored:#}");
    assert!(api.readings(&line).await.is_empty());

    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    fake.release.notify_one();
    assert!(fake.of("Alpha", false).is_empty(), "nobody heard it yet");

    // Restarted on the same data: the line is read again (now at once) and routed once.
    let (_daemon, api) = rig.start();
    let reply = api.line_by(g, Some(alpha), SLOW_REPLY).await;
    let turns = api.settled(g).await;
    let line = api.get(&format!("/v1/messages/{}", line["id"])).await;
    assert_eq!(line["routing"], "routed", "{line:#}");

    let readings = api.readings(&line).await;
    assert_eq!(readings.len(), 1, "{readings:#?}");
    assert!(readings[0]["failure"].is_null(), "{readings:#?}");
    assert_eq!(readings[0]["model"], "fake", "{readings:#?}");
    assert_eq!(
        fake.reads_of(SLOW),
        2,
        "the cut-off reading, then one after the restart"
    );

    let heard: Vec<Value> = fake
        .of("Alpha", false)
        .into_iter()
        .filter(|r| latest(r).contains(SLOW))
        .collect();
    assert_eq!(heard.len(), 1, "Alpha answered the line once");
    assert!(fake.of("Beta", false).is_empty(), "only the lead hears it");
    assert_eq!(turns_of(&turns, alpha).len(), 1, "{turns:#?}");
    assert_eq!(turns_of(&turns, alpha)[0]["status"], "completed");
    assert!(turns_of(&turns, beta).is_empty(), "{turns:#?}");
    let lines = api.lines(g).await;
    let replies: Vec<&Value> = lines.iter().filter(|l| l["author"] == "bot").collect();
    assert_eq!(replies, [&reply], "one answer");

    // The delivery: one line_routed for the line, to the lead, before the answer.
    let mut events = api.events(g).await;
    let seen = events
        .until(WAIT, |m| {
            m.event == "session_message" && payload(m)["message"]["id"] == reply["id"]
        })
        .await;
    let routed: Vec<Value> = seen
        .iter()
        .filter(|m| m.event == "line_routed" && payload(m)["message_id"] == line["id"])
        .map(payload)
        .collect();
    assert_eq!(routed.len(), 1, "{seen:#?}");
    assert_eq!(
        routed[0]["recipients"],
        json!([{"bot_id": alpha, "how": "lead"}]),
        "{routed:#?}"
    );
}
