//! External jobs end to end (B §8, S-EJ1…S-EJ4) over a real engine and store with scripted
//! Bots, against a fake media server reached over real HTTP: plain tool-source tools
//! `submit_render` / `check_render` call it, the interceptor registers and answers, and the
//! poller runs on a clock only the test moves.

mod support;

use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use troupe_collab::tools::ToolHost;
use troupe_collab::{Collab, SharedRoles};
use troupe_core::external_job::{JobStatus, LOST_AFTER_MS};
use troupe_core::message::Origin;
use troupe_core::thread::Thread;
use troupe_core::{Clock, ManualClock, SessionId, ThreadId};
use troupe_engine::extension::{
    ToolCallContext, ToolHandler, ToolRegistration, ToolReply, ToolSource,
};
use troupe_engine::{Engine, RoleTable};
use troupe_llm::ToolSpec;
use troupe_store::ExternalJobRecord;

const SEC: i64 = 1_000;
const MIN: i64 = 60_000;

/// What the fake media server answers, and what it was asked.
#[derive(Default)]
struct Media {
    submits: AtomicUsize,
    checks: AtomicUsize,
    /// The answer to a check; pending until a test sets it.
    check_answer: Mutex<Option<String>>,
    /// The last submit's body, as the server received it.
    last_submit: Mutex<String>,
}

/// A media server on a local port, speaking plain HTTP/1.1: `POST /submit` answers in
/// grok-imagine's line format, `GET /check?request_id=…` with the current check answer.
async fn media_server() -> (Arc<Media>, String) {
    let media = Arc::new(Media::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("127.0.0.1:{}", listener.local_addr().unwrap().port());
    let m = media.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                break;
            };
            let m = m.clone();
            tokio::spawn(async move {
                let (head, received) = read_http(&mut sock).await;
                let body = if head.starts_with("POST /submit") {
                    *m.last_submit.lock().unwrap() = received;
                    let n = m.submits.fetch_add(1, Ordering::SeqCst) + 1;
                    let id = if n == 1 {
                        "abc".to_string()
                    } else {
                        format!("abc{n}")
                    };
                    format!("request_id: {id} (queued; renders take a few minutes)")
                } else if head.starts_with("GET /check") {
                    m.checks.fetch_add(1, Ordering::SeqCst);
                    let answer = m.check_answer.lock().unwrap().clone();
                    answer.unwrap_or_else(|| r#"{"status":"processing"}"#.into())
                } else {
                    "not found".into()
                };
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (media, base)
}

/// One HTTP message: its head and its body (by Content-Length).
async fn read_http(sock: &mut TcpStream) -> (String, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = sock.read(&mut chunk).await.unwrap();
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some(at) = text.find("\r\n\r\n") {
            let head = text[..at].to_string();
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            if buf.len() >= at + 4 + len {
                return (head, text[at + 4..at + 4 + len].to_string());
            }
        }
    }
    (String::from_utf8_lossy(&buf).to_string(), String::new())
}

/// A request to the fake server; answers its body.
async fn http(base: &str, method: &str, path: &str, body: &str) -> Result<String, String> {
    let mut sock = TcpStream::connect(base).await.map_err(|e| e.to_string())?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {base}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    sock.write_all(req.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let (head, body) = read_http(&mut sock).await;
    if head.starts_with("HTTP/1.1 200") {
        Ok(body)
    } else {
        Err(head)
    }
}

struct Submit(String);
struct Check(String);

#[async_trait]
impl ToolHandler for Submit {
    async fn call(&self, _ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        match http(&self.0, "POST", "/submit", arguments).await {
            Ok(body) => ToolReply::ok(body),
            Err(e) => ToolReply::error(e),
        }
    }
}

#[async_trait]
impl ToolHandler for Check {
    async fn call(&self, _ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let Some(id) = args.get("request_id").and_then(Value::as_str) else {
            return ToolReply::error("request_id is required");
        };
        match http(&self.0, "GET", &format!("/check?request_id={id}"), "").await {
            Ok(body) => ToolReply::ok(body),
            Err(e) => ToolReply::error(e),
        }
    }
}

/// The media server's tools, as any tool source (an MCP server's, say) would offer them.
struct MediaTools(String);

impl ToolSource for MediaTools {
    fn name(&self) -> &str {
        "media"
    }
    fn tools(&self, _thread: &Thread) -> Vec<ToolRegistration> {
        let reg = |name: &str, params: Value, effectful: bool, h: Arc<dyn ToolHandler>| {
            ToolRegistration {
                owner: "media".into(),
                spec: ToolSpec {
                    name: name.into(),
                    description: format!("{name} on the media server"),
                    parameters: params,
                },
                effectful,
                read_only: !effectful,
                available: Arc::new(|_| true),
                handler: h,
            }
        };
        vec![
            reg(
                "submit_render",
                json!({"type": "object", "properties": {"prompt": {"type": "string"},
                       "seconds": {"type": "integer"}}}),
                true,
                Arc::new(Submit(self.0.clone())),
            ),
            reg(
                "check_render",
                json!({"type": "object", "properties": {"request_id": {"type": "string"}},
                       "required": ["request_id"]}),
                false,
                Arc::new(Check(self.0.clone())),
            ),
        ]
    }
}

struct Rig {
    w: World,
    clock: ManualClock,
    media: Arc<Media>,
}

async fn rig() -> Rig {
    let clock = ManualClock::new(1_760_000_000_000);
    let (media, base) = media_server().await;
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::testing::open_in(dir.path(), Arc::new(clock.clone()));
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = ToolHost::new();
    let builder = troupe_collab::extend(Engine::builder(store, roles.clone()), &host)
        .unwrap()
        .tool_source(Arc::new(MediaTools(base)));
    let collab = Collab::new(builder.build(), roles, dir.path().join("workspaces"));
    host.attach(&collab);
    Rig {
        w: World { collab, dir },
        clock,
        media,
    }
}

fn submit_step(args: &str) -> String {
    format!(r#"{{"tool_calls":[{{"name":"submit_render","arguments":{args}}}]}}"#)
}

async fn say(w: &World, s: SessionId, thread: ThreadId, text: &str) {
    let mut events = w.collab.store().subscribe();
    w.collab.post_line(s, text.into(), None).await.unwrap();
    runs_ended(&mut events, thread, 1).await;
    w.collab.engine().wait_idle(thread).await;
}

/// Poll once and wait for the runs its wakes start on `woken`.
async fn poll(r: &Rig, woken: &[ThreadId]) -> troupe_collab::external_jobs::PollReport {
    let mut events = r.w.collab.store().subscribe();
    let report =
        r.w.collab
            .poll_external_jobs(r.clock.now_ms())
            .await
            .unwrap();
    for t in woken {
        runs_ended(&mut events, *t, 1).await;
        r.w.collab.engine().wait_idle(*t).await;
    }
    report
}

fn jobs(w: &World) -> Vec<ExternalJobRecord> {
    w.collab.external_jobs(None, 100).unwrap()
}

/// Every result of `tool` the thread's runs read, oldest first.
fn results_of(w: &World, thread: ThreadId, tool: &str) -> Vec<String> {
    w.collab
        .store()
        .read(|tx| {
            let mut out = Vec::new();
            let mut runs = tx.runs_for_thread(thread, 100)?;
            runs.sort_by_key(|r| r.id);
            for run in runs {
                for c in tx.tool_calls(run.id)? {
                    if c.name == tool {
                        out.push(c.result);
                    }
                }
            }
            Ok(out)
        })
        .unwrap()
}

/// The external-job wakes a thread was given, as (delivery key, text).
fn wakes_on(w: &World, thread: ThreadId) -> Vec<(String, String)> {
    w.collab
        .store()
        .read(|tx| tx.messages(thread, None, 1000))
        .unwrap()
        .into_iter()
        .filter_map(|m| match &m.origin {
            Origin::Timer(k) if k.starts_with("external_job:") => Some((k.clone(), m.text())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn s_ej_1_a_line_answer_registers_the_job_and_the_app_polls_it() {
    let r = rig().await;
    let ada = bot(
        &r.w,
        "Ada",
        &format!(
            r#"{{"steps":[{},{{"text":"Submitted."}},{{"text":"Render received."}}],
                "on_exhausted":"repeat_last"}}"#,
            submit_step(r#"{"prompt":"a cat walks in","seconds":8}"#)
        ),
    );
    let s = direct(&r.w, ada);
    let t = thread_of(&r.w, s, ada);
    let submitted_at = r.clock.now_ms();
    say(&r.w, s, t, "Render a cat walking in").await;

    let all = jobs(&r.w);
    assert_eq!(all.len(), 1, "{all:?}");
    let job = &all[0];
    assert_eq!(
        (job.remote_id.as_str(), job.remote_key.as_str()),
        ("abc", "request_id")
    );
    assert_eq!(
        (job.status, job.tool.as_str()),
        (JobStatus::Pending, "submit_render")
    );
    assert_eq!(job.check_tool, "check_render");
    assert_eq!(job.submitter_bot_id, Some(ada));
    assert_eq!(job.next_poll_at, submitted_at + 30 * SEC);
    let read = results_of(&r.w, t, "submit_render");
    assert!(
        read[0].starts_with("request_id: abc (queued")
            && read[0].contains(&format!("Registered as external job {}", job.id))
            && read[0].contains("wakes you when it finishes"),
        "{read:?}"
    );

    // Not due yet: no poll reaches the server.
    assert_eq!(poll(&r, &[]).await, Default::default());
    assert_eq!(r.media.checks.load(Ordering::SeqCst), 0);
    // 30 s: polled, still pending; the next poll a minute on.
    r.clock.advance(30 * SEC);
    let report = poll(&r, &[]).await;
    assert_eq!(report.pending, vec![job.id]);
    assert_eq!(r.media.checks.load(Ordering::SeqCst), 1);
    let polled = r.w.collab.external_job(job.id).unwrap();
    assert_eq!((polled.poll_step, polled.polls), (1, 1));
    assert_eq!(polled.next_poll_at, r.clock.now_ms() + MIN);

    // Done, in lines with a note: the Bot is woken with the answer passed on whole.
    let done = "status: done\nurl: https://media.example/abc.mp4 (url is TEMPORARY — fetch promptly)\nduration: 8s\ncost: $0.40";
    *r.media.check_answer.lock().unwrap() = Some(done.into());
    r.clock.advance(MIN);
    let report = poll(&r, &[t]).await;
    assert_eq!(report.finished, vec![job.id]);
    let finished = r.w.collab.external_job(job.id).unwrap();
    assert_eq!(finished.status, JobStatus::Done);
    assert_eq!(finished.finished_at, Some(r.clock.now_ms()));
    assert_eq!(
        finished.result.as_ref().unwrap()["url"],
        "https://media.example/abc.mp4"
    );
    let woke = wakes_on(&r.w, t);
    assert_eq!(woke.len(), 1, "{woke:?}");
    assert_eq!(woke[0].0, format!("external_job:{}:wake:{}", job.id.0, t.0));
    assert!(
        woke[0].1.contains("done") && woke[0].1.contains("url is TEMPORARY — fetch promptly"),
        "{}",
        woke[0].1
    );
    // Nothing in the conversation says it; the Bot's reply to it does.
    let lines = r.w.collab.lines(s, None, 100).unwrap();
    assert!(lines.iter().all(|l| !l.body.contains("External job")));
    assert!(lines.iter().any(|l| l.body == "Render received."));

    // Settled: later ticks poll nothing and wake nobody again.
    r.clock.advance(10 * MIN);
    assert_eq!(poll(&r, &[]).await, Default::default());
    assert_eq!(r.media.checks.load(Ordering::SeqCst), 2);
    assert_eq!(wakes_on(&r.w, t).len(), 1);
}

#[tokio::test]
async fn s_ej_2_the_same_arguments_within_30_minutes_get_the_same_job_without_a_server_call() {
    let r = rig().await;
    let ada = bot(
        &r.w,
        "Ada",
        &format!(
            r#"{{"steps":[{},{{"text":"Submitted."}},{},{{"text":"Same job."}},{},{{"text":"New job."}}],
                "on_exhausted":"repeat_last"}}"#,
            submit_step(r#"{"prompt":"a cat walks in","seconds":8}"#),
            // The same arguments in another order.
            submit_step(r#"{"seconds":8,"prompt":"a cat walks in"}"#),
            submit_step(r#"{"prompt":"a cat walks in","seconds":8}"#),
        ),
    );
    let s = direct(&r.w, ada);
    let t = thread_of(&r.w, s, ada);
    say(&r.w, s, t, "Render a cat walking in").await;
    assert_eq!(r.media.submits.load(Ordering::SeqCst), 1);

    r.clock.advance(10 * MIN);
    say(&r.w, s, t, "Render it again").await;
    assert_eq!(r.media.submits.load(Ordering::SeqCst), 1, "not sent again");
    let all = jobs(&r.w);
    assert_eq!(all.len(), 1, "{all:?}");
    let read = results_of(&r.w, t, "submit_render");
    assert!(
        read[1].contains(&format!("it is job {}", all[0].id))
            && read[1].contains("nothing was sent again"),
        "{read:?}"
    );

    // Past the window the same request is a new job.
    r.clock.advance(21 * MIN);
    say(&r.w, s, t, "And once more").await;
    assert_eq!(r.media.submits.load(Ordering::SeqCst), 2);
    assert_eq!(jobs(&r.w).len(), 2);
}

#[tokio::test]
async fn s_ej_4_still_pending_after_three_hours_is_lost_and_submitter_and_waiters_are_told() {
    let r = rig().await;
    let ada = bot(
        &r.w,
        "Ada",
        &format!(
            r#"{{"steps":[{},{{"text":"Submitted."}},{{"text":"Noted the loss."}}],
                "on_exhausted":"repeat_last"}}"#,
            submit_step(r#"{"prompt":"a storm at sea"}"#)
        ),
    );
    let bo = bot(
        &r.w,
        "Bo",
        r#"{"steps":[{"tool_calls":[{"name":"check_render","arguments":{"request_id":"abc"}}]},
                     {"text":"Waiting on it."},{"text":"Noted."}],
            "on_exhausted":"repeat_last"}"#,
    );
    let (sa, sb) = (direct(&r.w, ada), direct(&r.w, bo));
    let (ta, tb) = (thread_of(&r.w, sa, ada), thread_of(&r.w, sb, bo));
    let submitted_at = r.clock.now_ms();
    say(&r.w, sa, ta, "Render a storm at sea").await;
    let job = jobs(&r.w).remove(0);

    // EJ4: Bo's own check reads the cached state; the server is not asked; Bo waits on it.
    say(&r.w, sb, tb, "How is render abc doing?").await;
    assert_eq!(r.media.checks.load(Ordering::SeqCst), 0);
    let read = results_of(&r.w, tb, "check_render");
    assert!(
        read[0].contains("still pending") && read[0].contains("server was not asked"),
        "{read:?}"
    );
    let waiters = r.w.collab.external_job(job.id).unwrap().waiters;
    assert_eq!(waiters.len(), 1);
    assert_eq!((waiters[0].thread_id, waiters[0].bot_id), (tb, Some(bo)));

    // Polled on its schedule while the server keeps saying "processing".
    let mut polls = 0;
    loop {
        let due = r.w.collab.external_job(job.id).unwrap();
        if due.status != JobStatus::Pending {
            break;
        }
        r.clock.set(due.next_poll_at);
        let woken: &[ThreadId] = if due.next_poll_at >= submitted_at + LOST_AFTER_MS {
            &[ta, tb]
        } else {
            &[]
        };
        poll(&r, woken).await;
        polls += 1;
        assert!(polls < 60, "a job is never polled past three hours");
    }
    let lost = r.w.collab.external_job(job.id).unwrap();
    assert_eq!(lost.status, JobStatus::Lost);
    assert_eq!(lost.finished_at, Some(submitted_at + LOST_AFTER_MS));
    // At 0.5, 1.5, 3.5 and 7.5 minutes, every 5 minutes from 12.5 to 177.5, and at 180.
    assert_eq!(polls, 4 + 34 + 1);
    assert_eq!(r.media.checks.load(Ordering::SeqCst), 39);
    for t in [ta, tb] {
        let woke = wakes_on(&r.w, t);
        assert_eq!(woke.len(), 1, "{t}: {woke:?}");
        assert!(woke[0].1.contains("lost"), "{}", woke[0].1);
    }
}

/// Drives the director by what the line asks for.
const DIRECTOR: &str = r#"{"rules":[
    {"when_user_contains":"anyway","reply":{"tool_calls":[{"name":"submit_render","arguments":{"prompt":"shot 3, brighter","resubmit_reason":"the first was too dark"}}]}},
    {"when_user_contains":"brighter","reply":{"tool_calls":[{"name":"submit_render","arguments":{"prompt":"shot 3, brighter"}}]}},
    {"when_user_contains":"render shot 3","reply":{"tool_calls":[{"name":"submit_render","arguments":{"prompt":"shot 3: the hero walks in"}}]}},
    {"when_user_contains":"book-polled","reply":{"tool_calls":[{"name":"check_back","arguments":{"after_minutes":10,"note":"check whether render abc is done"}}]}},
    {"when_user_contains":"book-user","reply":{"tool_calls":[{"name":"check_back","arguments":{"after_minutes":10,"note":"see what the user thinks of v3"}}]}},
    {"when_user_contains":"Check-back:","reply":{"text":"Checked."}}],
  "steps":[{"text":"Done."}],"on_exhausted":"repeat_last"}"#;

struct Job {
    plan: troupe_core::PlanId,
    ticket: troupe_core::TicketId,
    item: troupe_core::WorkItemId,
    thread: ThreadId,
    director: troupe_core::BotId,
}

/// The director's work on ticket #01 of a job opened in its direct with the person.
fn ticket_job(r: &Rig) -> Job {
    let director = bot(&r.w, "Director", DIRECTOR);
    let s = direct(&r.w, director);
    let plan = open_job(&r.w, s, "make the music video").id;
    let b = r.w.collab.bot(director).unwrap();
    let (ticket, item, thread) =
        r.w.collab
            .store()
            .write(|tx| {
                let folder = tx.plan(plan)?.folder;
                let laid = tx.lay_out(
                    plan,
                    &troupe_store::Layout {
                        items: vec![troupe_store::LayoutItem {
                            title: "Shots".into(),
                            owner_bot_id: Some(director),
                            parts: vec!["one".into(), "two".into(), "three".into()],
                            ..Default::default()
                        }],
                        drops: Vec::new(),
                    },
                    |n, t| format!("{folder}/{n:02}-{t}"),
                )?;
                let ticket = laid.tickets[0].id;
                let thread = tx.create_thread(&troupe_store::NewThread {
                    workspace_root: None,
                    parent_id: None,
                    title: "#01".into(),
                    agent: troupe_collab::bot_binding(&b),
                    workspace: r.w.dir.path().display().to_string(),
                    interaction: troupe_core::thread::Interaction::Interactive,
                })?;
                let item = tx.create_ticket_item(director, plan, ticket, thread.id, Some(s))?;
                Ok((ticket, item.id, thread.id))
            })
            .unwrap();
    Job {
        plan,
        ticket,
        item,
        thread,
        director,
    }
}

/// Hand the thread a task and wait for its run.
async fn task(w: &World, thread: ThreadId, text: &str) {
    let mut events = w.collab.store().subscribe();
    w.collab
        .engine()
        .deliver(thread, troupe_core::inbox::Delivery::user_task(text))
        .await
        .unwrap();
    runs_ended(&mut events, thread, 1).await;
    w.collab.engine().wait_idle(thread).await;
}

#[tokio::test]
async fn ej3_a_part_with_a_running_job_takes_a_reason_before_it_is_submitted_again() {
    let r = rig().await;
    let j = ticket_job(&r);
    task(&r.w, j.thread, "render shot 3").await;
    let first = jobs(&r.w).remove(0);
    assert_eq!(
        (first.plan_id, first.ticket_id, first.part_number),
        (Some(j.plan), Some(j.ticket), Some(3))
    );
    assert_eq!(first.submitter_work_item_id, Some(j.item));
    // EJ7: the poller holds the ball on the ticket while the job runs.
    let running = |r: &Rig| {
        r.w.collab
            .store()
            .read(|tx| tx.running_job_on_ticket(j.ticket))
            .unwrap()
    };
    assert!(running(&r));

    task(&r.w, j.thread, "render shot 3 brighter").await;
    let read = results_of(&r.w, j.thread, "submit_render");
    assert!(read[1].starts_with("job_pending: part 3"), "{read:?}");
    assert_eq!(
        r.media.submits.load(Ordering::SeqCst),
        1,
        "nothing was sent"
    );
    assert_eq!(jobs(&r.w).len(), 1);

    task(&r.w, j.thread, "render shot 3 brighter anyway").await;
    assert_eq!(r.media.submits.load(Ordering::SeqCst), 2);
    let again = jobs(&r.w).remove(0);
    assert_eq!(
        again.resubmit_reason.as_deref(),
        Some("the first was too dark")
    );
    let sent: Value = serde_json::from_str(&r.media.last_submit.lock().unwrap()).unwrap();
    assert_eq!(
        sent,
        json!({"prompt": "shot 3, brighter"}),
        "the reason is not sent"
    );

    // Settled, the first job's result is not handed over yet: still pending for EJ3.
    *r.media.check_answer.lock().unwrap() =
        Some(r#"{"status":"done","url":"https://media.example/v.mp4"}"#.into());
    r.clock.advance(30 * SEC);
    poll(&r, &[j.thread]).await;
    assert!(!running(&r));
    let part =
        r.w.collab
            .store()
            .read(|tx| tx.part_job(j.plan, Some(j.ticket), 3))
            .unwrap();
    assert_eq!(
        part,
        Some(troupe_core::external_job::PartJob::NotHandedOver)
    );
    let log =
        r.w.collab
            .store()
            .read(|tx| tx.work_log_of_plan(j.plan, 0, 100))
            .unwrap();
    let finished: Vec<_> = log
        .iter()
        .filter(|e| e.kind == "external_job_finished")
        .collect();
    assert_eq!(finished.len(), 2, "{log:?}");
    assert!(finished.iter().all(|e| e.payload["status"] == "done"));
    assert_eq!(finished[0].ticket_id, Some(j.ticket));
}

#[tokio::test]
async fn ej8_a_check_back_naming_a_polled_job_is_refused() {
    let r = rig().await;
    let j = ticket_job(&r);
    task(&r.w, j.thread, "render shot 3").await;
    task(&r.w, j.thread, "book-polled").await;
    let read = results_of(&r.w, j.thread, "check_back");
    assert!(read[0].starts_with("polled_job:"), "{read:?}");
    let booked = r.w.collab.check_backs(&Default::default(), 10).unwrap();
    assert!(booked.is_empty(), "{booked:?}");
}

#[tokio::test]
async fn s_ej_3_a_check_back_while_the_ticket_waits_on_the_users_word_is_refused_and_a_due_one_voided()
 {
    use troupe_core::check_back::CheckBackState;
    use troupe_core::submission::{SubmissionOrigin, SubmissionState};
    let r = rig().await;
    let j = ticket_job(&r);
    // Booked earlier, before the hand-over.
    let session =
        r.w.collab
            .store()
            .read(|tx| Ok(tx.work_item(j.item)?.speaks_in.unwrap()))
            .unwrap();
    let earlier =
        r.w.collab
            .store()
            .write(|tx| {
                tx.book_check_back(&troupe_store::NewCheckBack {
                    bot_id: j.director,
                    work_item_id: j.item,
                    session_id: session,
                    plan_id: Some(j.plan),
                    dedupe_key: troupe_core::check_back::dedupe_key(j.item),
                    due_at: tx.now() + 30 * MIN,
                    note: "look at v3 again".into(),
                    booked_by_run_id: None,
                })
            })
            .unwrap();
    // The director hands v3 over; it waits on the user's word.
    r.w.collab
        .store()
        .write(|tx| {
            let s = tx.create_submission(&troupe_store::NewSubmission {
                ticket_id: j.ticket,
                origin: SubmissionOrigin::Answer,
                producer_bot_id: Some(j.director),
                run_id: None,
                work_item_id: Some(j.item),
                content: Some("v3 is cut".into()),
                note: String::new(),
                claims: Vec::new(),
                files: Vec::new(),
                parts: Vec::new(),
            })?;
            tx.set_submission_state(s.id, SubmissionState::AwaitingUser)
        })
        .unwrap();

    task(&r.w, j.thread, "book-user").await;
    let read = results_of(&r.w, j.thread, "check_back");
    assert!(read[0].starts_with("ball_is_yours:"), "{read:?}");
    let booked = r.w.collab.check_backs(&Default::default(), 10).unwrap();
    assert_eq!(booked.len(), 1, "only the earlier one: {booked:?}");

    // The earlier one comes due while the ticket still waits: voided, waking nobody.
    r.clock.advance(30 * MIN);
    let runs_before = runs(&r.w, j.thread);
    let report = r.w.collab.fire_due_check_backs().unwrap();
    assert_eq!(report.voided, vec![earlier.id]);
    assert!(report.fired.is_empty());
    let cb =
        r.w.collab
            .store()
            .read(|tx| tx.check_back(earlier.id))
            .unwrap();
    assert_eq!(cb.state, CheckBackState::Voided);
    let inbox = r.w.collab.store().read(|tx| tx.inbox(j.thread)).unwrap();
    assert!(inbox.iter().all(|i| !i.text.contains("Check-back")));
    assert_eq!(runs(&r.w, j.thread), runs_before);
    let log =
        r.w.collab
            .store()
            .read(|tx| tx.work_log_of_plan(j.plan, 0, 100))
            .unwrap();
    let voided: Vec<_> = log
        .iter()
        .filter(|e| e.kind == "check_back_voided")
        .collect();
    assert_eq!(voided.len(), 1, "{log:?}");
    assert_eq!(voided[0].payload["reason"], "ball_is_yours");
    assert_eq!(voided[0].payload["check_back_id"], json!(earlier.id));
}
