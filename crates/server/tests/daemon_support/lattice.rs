//! What the Lattice end-to-end tests share (`lattice_e2e.rs`): a fake model scripted from the
//! request alone — the planner answers the one valid action its Lattice section names, the
//! executor of a Step's BlueprintLoop claims it is done, the supervisor audits (rejecting the
//! first Step's first claim once) — and waits on what the daemon shows over HTTP.

use super::mcp::{neutral_reading, tool_call_as};
use super::*;

use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub const GOAL: &str = "ship greetings: hello.txt, then bye.txt";
pub const FIRST_CLAIM: &str = "first claim: the Step is carried out";
pub const SECOND_CLAIM: &str = "second claim: the auditor's gap is closed";
pub const REJECTION: &str = "the file's contents were not shown";
pub const APPROVAL: &str = "every outcome verified";
pub const UNEXPECTED: &str = "UNEXPECTED request";
/// What the Bot says when the completion mail asks it to sum up.
pub const SUMMED_UP: &str = "Both greetings are written.";
/// The completion mail's words (the controller's `texts::completion`).
pub const COMPLETED_MAIL: &str = "The Run is completed:";

/// The Steps the planner writes: (title, objective).
pub const STEPS: [(&str, &str); 2] = [
    ("Write hello.txt", "hello.txt exists and says hello"),
    ("Write bye.txt", "bye.txt exists and says bye"),
];

const AUDITOR: &str = "independent auditor of a BlueprintLoop";
/// The start of a BlueprintLoop's first prompt to its executor.
pub const EXECUTOR_FIRST_PROMPT: &str = "Carry out the Blueprint";
const REJECTED: &str = "The supervisor rejected your stop";

/// The title of the Blueprint note the planner writes for Step `n` (1-based).
pub fn blueprint_title(n: usize) -> String {
    format!("Blueprint for step {n}")
}

fn blueprint_body(n: usize) -> String {
    troupe_workflows::notes::blueprint::SECTIONS
        .iter()
        .map(|s| format!("## {s}\nStep {n}: {}.\n", STEPS[n - 1].1))
        .collect()
}

/// The names of the tools a request offers.
pub fn tools_of(req: &Value) -> Vec<String> {
    req["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn offers(req: &Value, tool: &str) -> bool {
    tools_of(req).iter().any(|t| t == tool)
}

pub fn is_auditor(req: &Value) -> bool {
    system(req).contains(AUDITOR)
}

/// A request of the session's Bot while its Lattice section and tools are shown.
pub fn is_planner(req: &Value) -> bool {
    !is_auditor(req) && offers(req, "lattice_submit")
}

/// A request of a Step's executor (the session's Bot while its BlueprintLoop runs).
pub fn is_executor(req: &Value) -> bool {
    !is_auditor(req) && offers(req, "blueprint_loop_stop")
}

/// The one valid action the Lattice section names, as the planner reads it.
pub fn valid_action(req: &Value) -> Option<String> {
    let s = system(req);
    let rest = &s[s.find(VALID_ACTION_MARK)? + VALID_ACTION_MARK.len()..];
    let name: String = rest
        .trim_start_matches([' ', '`', '*', ':'])
        .chars()
        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// How the Lattice system section names the one action valid in its state.
const VALID_ACTION_MARK: &str = "Valid next action:";

/// How many times the assistant called `tool` in the conversation so far.
fn calls_of(req: &Value, tool: &str) -> usize {
    messages(req)
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["function"]["name"] == tool)
        .count()
}

/// The executor's claim: the first, or the second once the newest loop's audit rejected it.
fn claim(req: &Value) -> &'static str {
    let all = messages(req);
    let start = all
        .iter()
        .rposition(|m| content(m).contains(EXECUTOR_FIRST_PROMPT))
        .unwrap_or(0);
    if all[start..].iter().any(|m| content(m).contains(REJECTED)) {
        SECOND_CLAIM
    } else {
        FIRST_CLAIM
    }
}

/// The fake model's script. `hold_executor`: while set, an executor's call never answers.
pub struct Script {
    pub calls: AtomicUsize,
    pub hold_executor: AtomicBool,
    /// How many Steps the planner writes (1 or 2).
    pub steps: usize,
    /// Each request the script had no answer for, described.
    pub unexpected: Mutex<Vec<String>>,
}

impl Script {
    pub fn new(steps: usize) -> Arc<Script> {
        Arc::new(Script {
            calls: AtomicUsize::new(0),
            hold_executor: AtomicBool::new(false),
            steps,
            unexpected: Mutex::new(Vec::new()),
        })
    }

    /// A reply saying the request was not expected, noted for the test to check.
    fn unexpected(&self, what: String) -> Reply {
        self.unexpected.lock().unwrap().push(what.clone());
        Reply::Now(text(&format!("{UNEXPECTED}: {what}")))
    }

    fn call(&self, name: &str, args: Value) -> Reply {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        Reply::Now(tool_call_as(&format!("call_{n}"), name, &args))
    }

    pub fn answer(&self, req: &Value) -> Reply {
        if let Some(r) = neutral_reading(req) {
            return Reply::Now(r);
        }
        if is_auditor(req) {
            return self.audit(req);
        }
        if let Some(tool) = after_tool(req) {
            return self.after(&tool, req);
        }
        if is_executor(req) {
            if self.hold_executor.load(Ordering::SeqCst) {
                return Reply::Hang;
            }
            return self.call(
                "blueprint_loop_stop",
                json!({"summary": claim(req), "evidence": ["cat the file: as the Step says"]}),
            );
        }
        if is_planner(req) {
            return self.plan(req);
        }
        if fresh_user(req).contains(COMPLETED_MAIL) {
            return Reply::Now(text(SUMMED_UP));
        }
        self.unexpected(format!("a request of no known role: {req}"))
    }

    /// The supervisor rejects the first Step's first claim at once; otherwise it looks at the
    /// workspace, then approves (an approval needs a look since the claim).
    fn audit(&self, req: &Value) -> Reply {
        let looked = match after_tool(req).as_deref() {
            None => false,
            Some("list_dir") => true,
            Some(_) => return Reply::Now(text("verdict given")),
        };
        let task = messages(req)
            .iter()
            .filter(|m| m["role"] != "system")
            .map(content)
            .collect::<Vec<_>>()
            .join("\n");
        let first_step = task.contains(&format!("\"{}\"", blueprint_title(1)));
        if first_step && task.contains(FIRST_CLAIM) {
            self.call(
                "blueprint_loop_reject",
                json!({"reason": REJECTION, "remaining": ["BLOCKING: show the file"],
                       "instructions": "show the file's contents as evidence"}),
            )
        } else if looked {
            self.call("blueprint_loop_approve", json!({"summary": APPROVAL}))
        } else {
            self.call("list_dir", json!({"path": "."}))
        }
    }

    /// The planner's next move once a tool answered.
    fn after(&self, tool: &str, req: &Value) -> Reply {
        let result = messages(req).last().map(content).unwrap_or_default();
        match tool {
            "note_create" => {
                let v: Value = serde_json::from_str(&result).unwrap_or(Value::Null);
                match v["note"]["id"].as_i64() {
                    Some(id) => self.call(
                        "lattice_submit",
                        json!({"action": "submit_blueprint", "blueprint_id": id}),
                    ),
                    None => self.unexpected(format!("note_create said {result}")),
                }
            }
            "pathway_write" => self.call(
                "lattice_submit",
                json!({"action": "submit_pathway", "reason": "the Steps in order"}),
            ),
            _ => Reply::Now(text("done")),
        }
    }

    fn plan(&self, req: &Value) -> Reply {
        match valid_action(req).as_deref() {
            Some("submit_requirements") => self.call(
                "lattice_submit",
                json!({"action": "submit_requirements", "goal": GOAL,
                       "success_criteria": ["both files exist with their words"]}),
            ),
            Some("submit_pathway") => {
                let steps: Vec<Value> = STEPS[..self.steps]
                    .iter()
                    .map(|(title, objective)| json!({"title": title, "objective": objective}))
                    .collect();
                self.call("pathway_write", json!({"future_steps": steps}))
            }
            Some("submit_pathway_review") => self.call(
                "lattice_submit",
                json!({"action": "submit_pathway_review", "reason": "the order holds"}),
            ),
            Some("submit_blueprint") => {
                let n = calls_of(req, "note_create") + 1;
                self.call(
                    "note_create",
                    json!({"title": blueprint_title(n), "body": blueprint_body(n), "kind": "blueprint"}),
                )
            }
            Some("submit_blueprint_review") => self.call(
                "lattice_submit",
                json!({"action": "submit_blueprint_review", "reason": "decision-complete"}),
            ),
            other => self.unexpected(format!("valid action {other:?}: {}", system(req))),
        }
    }
}

/// A rig whose `default` and `review` roles use the scripted fake, and the fake.
pub async fn lattice_rig(script: Arc<Script>) -> (Rig, Arc<FakeModel>) {
    let s = script.clone();
    let fake = FakeModel::serve(move |req| s.answer(req)).await;
    let url = fake.url.clone();
    let rig = Rig::new(|p| write_fake_config(p, &url, &["default", "review"]));
    (rig, fake)
}

/// Enable Lattice on `session` in auto mode with the goal (and a cap, if any).
pub async fn enable_auto(api: &Api, session: i64, cap: Option<u32>) -> Value {
    let mut body = json!({"kind": "lattice", "mode": "auto", "goal": GOAL});
    if let Some(cap) = cap {
        body["max_model_calls"] = json!(cap);
    }
    api.post(&format!("/v1/sessions/{session}/workflow"), body)
        .await
}

/// The session's current Run, once `ok` holds for it (the last one seen is shown on a timeout).
pub async fn run_when(api: &Api, session: i64, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let url = api.url(&format!("/v1/sessions/{session}/lattice"));
    let deadline = std::time::Instant::now() + WAIT;
    let mut last = Value::Null;
    loop {
        let r = api.client.get(&url).send().await.unwrap();
        if r.status().is_success() {
            last = r.json().await.unwrap();
            if ok(&last) {
                return last;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting until {what}; the Run: {last:#}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The `source: lattice` loops on `thread`.
pub async fn lattice_loops(api: &Api, thread: &Value) -> Vec<Value> {
    api.list("/v1/blueprint-loops?limit=200")
        .await
        .into_iter()
        .filter(|l| l["source"] == "lattice" && &l["thread_id"] == thread)
        .collect()
}

/// Requests the session's Bot made (planner or executor; not the app's readings, not audits).
pub fn bot_calls(fake: &FakeModel) -> Vec<Value> {
    fake.requests()
        .into_iter()
        .filter(|r| neutral_reading(r).is_none() && !is_auditor(r))
        .collect()
}
