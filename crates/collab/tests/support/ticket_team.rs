//! A group of Lead, Maker and Checker with a job the person opened in it, Bots scripted to
//! answer a token in a line with one call and then play steps, and reads of their tool calls:
//! what the ticket tests share.

use super::*;
use serde_json::{Value, json};
use troupe_core::{BotId, PlanId, SessionId};

/// A script: `on` (the token in the line) makes it call `first`; then `steps` from step 1.
pub fn script_of(token: &str, first: Value, steps: &[Value]) -> String {
    let mut all = vec![json!({"text": "unused"})];
    all.extend(steps.iter().cloned());
    json!({
        "steps": all,
        "on_exhausted": "repeat_last",
        "rules": [{"when_user_contains": token, "reply": {"tool_calls": [first]}}]
    })
    .to_string()
}

pub fn call(name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": args}]})
}

pub fn done() -> Value {
    json!({"tool_calls": [{"name": "end_turn", "arguments": {"reason": "done"}}]})
}

pub struct Team {
    pub w: World,
    pub s: SessionId,
    pub lead: BotId,
    pub maker: BotId,
    pub checker: BotId,
    pub plan: PlanId,
}

/// A group of Lead, Maker and Checker and a job the person opened in it ("plan_1").
pub fn team() -> Team {
    let w = world();
    let lead = bot(&w, "Lead", r#"{"steps":[{"text":"ok"}]}"#);
    let maker = bot(&w, "Maker", r#"{"steps":[{"text":"ok"}]}"#);
    let checker = bot(&w, "Checker", r#"{"steps":[{"text":"ok"}]}"#);
    let s = group(&w, &[lead, maker, checker]);
    let plan = open_job(&w, s, "make a launch kit").id;
    Team {
        w,
        s,
        lead,
        maker,
        checker,
        plan,
    }
}

/// Every tool call the Bot's threads made, in order.
pub fn all_calls(w: &World, b: BotId) -> Vec<troupe_store::ToolCallRecord> {
    let mut out = Vec::new();
    for item in items(w, b) {
        for run in runs_of(w, item.thread_id) {
            out.extend(calls_of(w, run.id));
        }
    }
    out
}

pub fn results_of(w: &World, b: BotId, tool: &str) -> Vec<String> {
    all_calls(w, b)
        .into_iter()
        .filter(|c| c.name == tool && !c.arguments.contains("ZQ"))
        .map(|c| c.result)
        .collect()
}

/// Say `token` to the Bot and wait until its calls of `tool` number `n` (the rule's own
/// work_on calls, whose arguments carry no token, count too when `tool` is work_on).
pub async fn say_and_wait(t: &Team, b: BotId, token: &str, tool: &str, n: usize) {
    let mut events = t.w.collab.store().subscribe();
    let name = t.w.collab.bot(b).unwrap().name;
    t.w.collab
        .post_line(t.s, format!("@{name} {token}"), None)
        .await
        .unwrap();
    until(
        &mut events,
        &format!("{name} called {tool} {n} times"),
        || all_calls(&t.w, b).iter().filter(|c| c.name == tool).count() >= n,
    )
    .await;
}

pub fn lay(items: Value) -> Value {
    call("plan_items", json!({ "items": items }))
}

pub fn bind_lead(first_steps: &[Value]) -> String {
    script_of(
        "ZQX",
        json!({"name": "work_on", "arguments": {"plan": "plan_1"}}),
        first_steps,
    )
}

pub fn tickets(t: &Team) -> Vec<troupe_store::TicketRecord> {
    t.w.collab
        .store()
        .read(|tx| tx.tickets_of_plan(t.plan))
        .unwrap()
}

/// The lead lays out `items` (one call) and answers the call's result.
pub async fn lead_lays_out(t: &Team, items: Value) -> String {
    rescript(&t.w, t.lead, &bind_lead(&[lay(items), done()]));
    say_and_wait(t, t.lead, "ZQX", "plan_items", 1).await;
    results_of(&t.w, t.lead, "plan_items").pop().unwrap()
}
