//! `plan_items` (B §1.5, LJ5, T15): the job's lead lays out its tickets in one call — new ones
//! and changes to existing ones (by number), who makes and who reviews each, what each waits
//! for, its parts and the sample — and drops tickets with a reason. Refused whole, nothing
//! written, on any fault: `not_lead`, `unknown_bot`, `reviewer_is_owner`, `sample_duplicate`,
//! `layout_needs_sample`, `dependency_loop` (and plainer faults in the arguments).

use super::delivery::after_stage_change;
use super::folders::{folder_for, folder_name, make_folder};
use super::graph::nodes;
use super::lead::job_lead;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use troupe_core::large_job::{LargeEvent, LargeState, layout_stands, next_large};
use troupe_core::ticket::{MAX_DEPENDENCIES, TicketNode, TicketStage, find_loop, held_to_sample};
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, PlanId, RunId, TicketId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolReply};
use troupe_store::{Layout, LayoutItem, StoreError, TicketRecord, TicketRef, Tx};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    items: Vec<ItemArg>,
    #[serde(default)]
    drops: Vec<DropArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ItemArg {
    #[serde(default)]
    ticket: Option<i64>,
    #[serde(default)]
    key: Option<String>,
    title: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    done_when: Option<String>,
    owner: String,
    #[serde(default)]
    reviewer: Option<String>,
    #[serde(default)]
    depends_on: Option<Vec<Value>>,
    #[serde(default)]
    parts: Option<Vec<String>>,
    #[serde(default)]
    sample: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DropArg {
    ticket: i64,
    reason: String,
}

/// A refused layout: its code and what the lead reads.
struct Refused(&'static str, String);

type Checked<T> = Result<Result<T, Refused>, StoreError>;

macro_rules! refuse {
    ($code:expr, $($fmt:tt)*) => {
        return Ok(Err(Refused($code, format!($($fmt)*))))
    };
}

/// A job's ticket number as the lead writes it: 2, "2", "02" or "#02".
fn number_of(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().trim_start_matches('#').parse().ok(),
        _ => None,
    }
}

/// The Bots a ticket may name: the members of the job's conversation, by name (any case).
fn roster(tx: &Tx<'_>, plan: PlanId) -> Result<Vec<(BotId, String)>, StoreError> {
    let Some(home) = tx.plan(plan)?.home_session_id else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for id in tx.session(home)?.bot_ids {
        let b = tx.bot(id)?;
        if !b.archived {
            out.push((b.id, b.name));
        }
    }
    Ok(out)
}

fn bot_named(roster: &[(BotId, String)], field: &str, name: &str) -> Result<BotId, Refused> {
    let wanted = name.trim().trim_start_matches('@');
    roster
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(wanted))
        .map(|(id, _)| *id)
        .ok_or_else(|| {
            let names: Vec<&str> = roster.iter().map(|(_, n)| n.as_str()).collect();
            Refused(
                "unknown_bot",
                format!(
                    "{field}: no Bot of this job's conversation is called {wanted:?}; they are: {}",
                    names.join(", ")
                ),
            )
        })
}

/// Validate the whole layout against the job, then write it in one go.
fn lay_out(tx: &mut Tx<'_>, run: RunId, args: &Args) -> Checked<Value> {
    let Some(seg) = tx.segment_work(run)? else {
        refuse!(
            "not_on_a_job",
            "this turn is not a Bot's work in a conversation"
        );
    };
    let item = tx.work_item(seg.work_item_id)?;
    let (WorkMode::Work, Some(plan)) = (item.mode, item.plan_id) else {
        refuse!(
            "not_on_a_job",
            "you are at your desk: choose the job with work_on first, then lay it out"
        );
    };
    match job_lead(tx, plan)? {
        Some(lead) if lead == item.bot_id => {}
        Some(lead) => refuse!(
            "not_lead",
            "only the job's lead ({}) lays it out; ask them, or work on your own ticket",
            tx.bot(lead)?.name
        ),
        None => refuse!("not_lead", "this job has no lead to lay it out"),
    }
    if args.items.is_empty() && args.drops.is_empty() {
        refuse!("empty_layout", "items: give at least one item (or a drop)");
    }
    let existing = tx.tickets_of_plan(plan)?;
    let by_number: HashMap<i64, &TicketRecord> = existing.iter().map(|t| (t.number, t)).collect();
    let bots = roster(tx, plan)?;

    // Keys name items of this layout first, then existing tickets laid out with that key.
    let mut keys: HashMap<String, usize> = HashMap::new();
    for (i, it) in args.items.iter().enumerate() {
        if let Some(k) = it.key.as_deref().map(str::trim).filter(|k| !k.is_empty())
            && keys.insert(k.to_string(), i).is_some()
        {
            refuse!(
                "duplicate_key",
                "items[{i}].key: {k:?} names two items of this layout"
            );
        }
    }
    // The numbers the new items will get, in order, so a dependency may name one by number.
    let mut next = existing.iter().map(|t| t.number).max().unwrap_or(0) + 1;
    let mut future: HashMap<i64, usize> = HashMap::new();
    for (i, it) in args.items.iter().enumerate() {
        if it.ticket.is_none() {
            future.insert(next, i);
            next += 1;
        }
    }
    let mut items = Vec::with_capacity(args.items.len());
    let mut seen_tickets = HashMap::new();
    for (i, it) in args.items.iter().enumerate() {
        let title = it.title.trim();
        if title.is_empty() {
            refuse!("invalid", "items[{i}].title: must not be empty");
        }
        let ticket = match it.ticket {
            Some(n) => match by_number.get(&n) {
                Some(t) => {
                    if seen_tickets.insert(t.id, i).is_some() {
                        refuse!("invalid", "items[{i}].ticket: #{n:02} is laid out twice");
                    }
                    Some(t.id)
                }
                None => refuse!(
                    "unknown_ticket",
                    "items[{i}].ticket: this job has no ticket #{n:02}; leave `ticket` out to \
                     open a new one"
                ),
            },
            None => None,
        };
        let owner = match bot_named(&bots, &format!("items[{i}].owner"), &it.owner) {
            Ok(b) => b,
            Err(r) => return Ok(Err(r)),
        };
        let reviewer = match &it.reviewer {
            Some(r) if !r.trim().is_empty() => {
                match bot_named(&bots, &format!("items[{i}].reviewer"), r) {
                    Ok(b) => Some(b),
                    Err(r) => return Ok(Err(r)),
                }
            }
            _ => None,
        };
        if reviewer == Some(owner) {
            refuse!(
                "reviewer_is_owner",
                "items[{i}]: {} cannot review their own ticket; name another reviewer or none",
                it.owner.trim()
            );
        }
        let mut depends_on = Vec::new();
        for d in it.depends_on.iter().flatten() {
            let r = match (d, number_of(d)) {
                (_, Some(n)) => match (by_number.get(&n), future.get(&n)) {
                    (Some(t), _) => TicketRef::Existing(t.id),
                    (None, Some(j)) => TicketRef::Item(*j),
                    (None, None) => refuse!(
                        "unknown_dependency",
                        "items[{i}].depends_on: this job has no ticket #{n:02}, nor does this \
                         layout open one"
                    ),
                },
                (Value::String(k), None) => match keys.get(k.trim()) {
                    Some(j) => TicketRef::Item(*j),
                    None => match existing.iter().find(|t| t.key.as_deref() == Some(k.trim())) {
                        Some(t) => TicketRef::Existing(t.id),
                        None => refuse!(
                            "unknown_dependency",
                            "items[{i}].depends_on: no item or ticket has the key {k:?}"
                        ),
                    },
                },
                _ => refuse!(
                    "invalid",
                    "items[{i}].depends_on: give ticket numbers or item keys, not {d}"
                ),
            };
            if !depends_on.contains(&r) {
                depends_on.push(r);
            }
        }
        if depends_on.len() > MAX_DEPENDENCIES {
            refuse!(
                "too_many_dependencies",
                "items[{i}].depends_on: at most {MAX_DEPENDENCIES}, {} given",
                depends_on.len()
            );
        }
        items.push(LayoutItem {
            ticket,
            key: it
                .key
                .as_deref()
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(String::from),
            title: title.to_string(),
            description: it.description.clone().unwrap_or_default(),
            done_when: it.done_when.clone().unwrap_or_default(),
            owner_bot_id: Some(owner),
            reviewer_bot_id: reviewer,
            depends_on,
            parts: it.parts.clone().unwrap_or_default(),
            sample: it.sample,
        });
    }
    let mut drops = Vec::new();
    for (i, d) in args.drops.iter().enumerate() {
        let Some(t) = by_number.get(&d.ticket) else {
            refuse!(
                "unknown_ticket",
                "drops[{i}].ticket: this job has no ticket #{:02}",
                d.ticket
            );
        };
        if d.reason.trim().is_empty() {
            refuse!("invalid", "drops[{i}].reason: a drop says why");
        }
        drops.push((t.id, d.reason.trim().to_string()));
    }

    // The job's graph as it would stand: new items get stand-in ids below zero.
    let id_of =
        |i: usize, items: &[LayoutItem]| items[i].ticket.unwrap_or(TicketId(-(i as i64) - 1));
    let mut graph: Vec<TicketNode> = nodes(&existing);
    for (i, it) in items.iter().enumerate() {
        let deps: Vec<TicketId> = it
            .depends_on
            .iter()
            .map(|r| match r {
                TicketRef::Existing(t) => *t,
                TicketRef::Item(j) => id_of(*j, &items),
            })
            .collect();
        if deps.contains(&id_of(i, &items)) {
            refuse!(
                "depends_on_self",
                "items[{i}].depends_on: a ticket cannot wait for itself"
            );
        }
        match it.ticket.and_then(|t| graph.iter_mut().find(|n| n.id == t)) {
            Some(n) => {
                // An existing ticket keeps its dependencies unless the item names some.
                if !it.depends_on.is_empty() {
                    n.depends_on = deps;
                }
            }
            None => graph.push(TicketNode {
                id: id_of(i, &items),
                plan_id: plan,
                number: 0,
                stage: TicketStage::ToDo,
                handed_over_once: false,
                depends_on: deps,
            }),
        }
    }
    for (t, _) in &drops {
        if let Some(n) = graph.iter_mut().find(|n| n.id == *t) {
            n.stage = TicketStage::Dropped;
        }
    }
    let edges: BTreeMap<TicketId, Vec<TicketId>> =
        graph.iter().map(|n| (n.id, n.depends_on.clone())).collect();
    if let Some(cycle) = find_loop(&edges) {
        let path: Vec<String> = cycle
            .iter()
            .map(|id| label(*id, &existing, &items))
            .collect();
        refuse!(
            "dependency_loop",
            "depends_on: these wait for each other in a loop: {}",
            path.join(" → ")
        );
    }

    // SA1, LJ5: one sample at most; a large job's layout needs one with a ticket waiting.
    let marked: Vec<usize> = (0..items.len()).filter(|i| items[*i].sample).collect();
    let deliverables = tx.plan_deliverables(plan)?;
    let sample = match marked.as_slice() {
        [i] => Some(id_of(*i, &items)),
        [] => deliverables.sample_ticket_id,
        _ => None,
    };
    let large = deliverables.large_state == LargeState::Large;
    let waiting = sample.map_or(0, |s| held_to_sample(&graph, s).len());
    let samples = if marked.is_empty() {
        usize::from(sample.is_some())
    } else {
        marked.len()
    };
    if let Err(e) = layout_stands(large, samples, waiting) {
        return Ok(Err(Refused(e.code(), e.to_string())));
    }

    let record = tx.plan(plan)?;
    let plan_folder = record.folder.clone();
    let laid = tx.lay_out(plan, &Layout { items, drops }, |n, title| {
        folder_for(&plan_folder, n, title)
    })?;
    if large && !tx.plan_deliverables(plan)?.laid_out {
        let next = next_large(&deliverables.large_job(), LargeEvent::LaidOut);
        tx.set_large_job(plan, &next)?;
    }
    // SC1: tickets laid out after the sample's approval are held to its standard too.
    crate::checks::sample::attach(tx, plan)?;
    let opened: Vec<TicketId> = laid
        .tickets
        .iter()
        .filter(|t| !existing.iter().any(|e| e.id == t.id))
        .map(|t| t.id)
        .collect();
    for t in &laid.tickets {
        if opened.contains(&t.id) {
            make_folder(t, &record)?;
        }
    }
    // A new ticket in a delivered job, or a drop, may change the job's delivery (T9, T10).
    for id in opened
        .iter()
        .chain(laid.dropped.iter().map(|m| &m.ticket_id))
    {
        after_stage_change(tx, *id)?;
    }
    let names: HashMap<BotId, String> = bots.into_iter().collect();
    let all = tx.tickets_of_plan(plan)?;
    let number = |id: &TicketId| all.iter().find(|t| t.id == *id).map_or(0, |t| t.number);
    let mut shown = Vec::new();
    for t in &laid.tickets {
        let parts: Vec<String> = tx
            .parts_of_ticket(t.id)?
            .into_iter()
            .map(|p| p.label)
            .collect();
        shown.push(json!({
            "ticket": t.number,
            "id": t.id,
            "title": t.title,
            "folder": folder_name(t),
            "owner": t.owner_bot_id.and_then(|b| names.get(&b).cloned()),
            "reviewer": t.reviewer_bot_id.and_then(|b| names.get(&b).cloned()),
            "depends_on": t.depends_on.iter().map(number).collect::<Vec<_>>(),
            "parts": parts,
            "sample": t.is_sample,
            "new": opened.contains(&t.id),
        }));
    }
    let after = tx.plan_deliverables(plan)?;
    Ok(Ok(json!({
        "tickets": shown,
        "dropped": laid.dropped.iter().map(|m| number(&m.ticket_id)).collect::<Vec<_>>(),
        "laid_out": after.laid_out,
        "sample": after.sample_ticket_id.map(|s| number(&s)),
    })))
}

/// How a loop names a ticket: `#NN` for one the job has, the item's key or index otherwise.
fn label(id: TicketId, existing: &[TicketRecord], items: &[LayoutItem]) -> String {
    if let Some(t) = existing.iter().find(|t| t.id == id) {
        return format!("#{:02}", t.number);
    }
    let i = (-id.0 - 1) as usize;
    match items.get(i).and_then(|it| it.key.clone()) {
        Some(k) => format!("{k:?}"),
        None => format!("items[{i}]"),
    }
}

/// The `plan_items` tool.
pub(crate) struct PlanItems;

#[async_trait]
impl ToolHandler for PlanItems {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: Args = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => {
                return ToolReply::error(crate::tools::bad_arguments("plan_items", &e, &spec()));
            }
        };
        let run = ctx.run_id;
        match ctx.store.write(|tx| lay_out(tx, run, &args)) {
            Ok(Ok(laid)) => ToolReply::ok(laid.to_string()),
            Ok(Err(Refused(code, text))) => ToolReply::error(format!(
                "plan_items: {code}: {text}. The layout was refused whole; nothing was written."
            )),
            Err(e) => ToolReply::error(format!("plan_items: {e}; nothing was written")),
        }
    }
}

pub(crate) fn spec() -> Value {
    json!({
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "description": "The tickets: new ones, and existing ones (by `ticket` number) to change.",
                "items": {
                    "type": "object",
                    "properties": {
                        "ticket": {"type": "integer", "description": "An existing ticket's number, to change it."},
                        "key": {"type": "string", "description": "A name for this item, so others in this layout can depend on it."},
                        "title": {"type": "string"},
                        "description": {"type": "string"},
                        "done_when": {"type": "string", "description": "What to hand over and how it is judged."},
                        "owner": {"type": "string", "description": "The Bot who makes it, by name."},
                        "reviewer": {"type": "string", "description": "The Bot who reviews it, by name; never the owner."},
                        "depends_on": {"type": "array", "items": {"type": ["integer", "string"]}, "description": "Ticket numbers or item keys this waits for."},
                        "parts": {"type": "array", "items": {"type": "string"}, "description": "Its parts (shots, chapters), by label."},
                        "sample": {"type": "boolean", "description": "The sample of a large job: made first, the others wait for it."}
                    },
                    "required": ["title", "owner"],
                    "additionalProperties": false
                }
            },
            "drops": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "ticket": {"type": "integer"},
                        "reason": {"type": "string"}
                    },
                    "required": ["ticket", "reason"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["items"],
        "additionalProperties": false
    })
}
