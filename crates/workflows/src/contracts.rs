//! The contract texts a workflow wraps around the first text of a stamped root request. They
//! are projected when the model's context is assembled; the stored request never changes.

use crate::notes::blueprint::SECTIONS;
use crate::slot::{BOSS, LATTICE, LIGHTLOOP, PLAN};

fn plan_contract() -> String {
    let sections = SECTIONS
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {s}", i + 1))
        .collect::<Vec<_>>()
        .join("\n");
    format!(
        "This conversation is in Plan. Treat the request above as something to plan, not something to carry out.

How to work:
- Research first. Read the code and documents involved, run commands and tests that inspect, and collect the facts the plan rests on. Scratch files and throwaway experiments that help you decide are fine.
- Then write one Blueprint: a note of kind \"blueprint\" (note_create, or note_update to revise it) with these eight sections as headings, in this order:
{sections}
- Make it decision-complete. Wherever a choice would change the result — who owns a piece, the architecture, how data flows, how compatibility is kept, the method, the shape of what is delivered, what the user will see — choose exactly one route and say why: from evidence you found, from conventions already in place, or from the user's answer. No TBDs and no open questions; only incidental mechanics are left to whoever executes it.
- If a decision only the user can make blocks you, ask every such question together in one message and end your turn.
- Do not carry out the outcome: no edits to the project's files that implement it, and no actions that speak for the user outside this conversation (sending, publishing, deploying).

This is how to work here, not a limit on what you can do: your tools are the same as always."
    )
}

const LIGHTLOOP_CONTRACT: &str = "This conversation runs a Light Loop on the task above. You keep working on it across turns until an independent reviewer accepts the result; your own word does not end the loop.

How to work:
- Before ending a turn, check the requested deliverables one by one against what exists now, the evidence you have (tests run, outputs seen), errors you hit, and edge cases. Then either keep working, or claim completion.
- To claim completion, call loop_stop with a `summary`, the items `completed`, the `evidence` for each, and any `limitations` — then end your turn. A reviewer session starts after your turn ends and decides; do not wait for it or poll.
- If the reviewer rejects the claim, you receive its reason, the remaining items and instructions. Continue from them and claim again when they are done.";

const LATTICE_CONTRACT: &str = "This conversation runs Lattice on the goal above: the goal is aligned into requirements, planned as an ordered Pathway of Steps, and each Step is carried out by a reviewed Blueprint in a BlueprintLoop, replanning the unstarted rest after each result.

How to work:
- The host owns every transition. Your tools write the Pathway's unstarted Steps (pathway_write), Blueprint notes, and one action request at a time (lattice_submit); after a successful submit, end your turn.
- Do only the current state's work, as the Lattice section of your instructions says; never start a future Step.";

/// The tag that encloses the person's request for a workflow kind.
fn tag(kind: &str) -> Option<&'static str> {
    match kind {
        PLAN => Some("plan-user-request"),
        LIGHTLOOP => Some("lightloop-user-request"),
        LATTICE => Some("lattice-user-request"),
        BOSS => Some("boss-user-request"),
        _ => None,
    }
}

/// The contract for a stamped kind and version; `None` for a kind or version this build does
/// not know (the request is then shown as written).
pub fn contract(kind: &str, version: u64) -> Option<String> {
    if version != u64::from(crate::slot::CONTRACT_VERSION) {
        return None;
    }
    match kind {
        PLAN => Some(plan_contract()),
        LIGHTLOOP => Some(LIGHTLOOP_CONTRACT.to_string()),
        LATTICE => Some(LATTICE_CONTRACT.to_string()),
        BOSS => Some(crate::boss::texts::CONTRACT.to_string()),
        _ => None,
    }
}

/// The request as the model sees it: enclosed in the kind's tag, followed by the contract.
pub fn wrap(kind: &str, version: u64, text: &str) -> Option<String> {
    let tag = tag(kind)?;
    let contract = contract(kind, version)?;
    Some(format!(
        "<{tag}>\n{text}\n</{tag}>\n\n<{kind}-contract version=\"{version}\">\n{contract}\n</{kind}-contract>"
    ))
}
