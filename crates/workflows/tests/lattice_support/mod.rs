//! What the Lattice scenario files share: a World with the follower running, scripted replies
//! for each Lattice step, and waits on the Run's record.
#![allow(dead_code)]

use super::support::{Reply, World, call};
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use troupe_core::lattice::{LatticeRun, RunStatus, WorkState};
use troupe_core::{LatticeRunId, SessionId};
use troupe_store::{NewNote, NoteId, NoteKind};
use troupe_workflows::SetWorkflowRequest;

pub fn follow(w: &World) -> CancellationToken {
    let t = CancellationToken::new();
    w.wf.spawn_lattice_follower(t.clone());
    t
}

pub fn blueprint(w: &World, title: &str) -> NoteId {
    let body = troupe_workflows::notes::blueprint::SECTIONS
        .iter()
        .map(|s| format!("## {s}\n{title}\n"))
        .collect::<String>();
    w.wf.store()
        .write(|tx| {
            tx.create_note(&NewNote {
                kind: NoteKind::Blueprint,
                title: title.into(),
                body: body.clone(),
            })
        })
        .unwrap()
        .id
}

pub fn enable(mode: &str, goal: Option<&str>, cap: Option<u32>) -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "lattice".into(),
        instructions: None,
        max_iterations: None,
        max_model_calls: cap,
        mode: Some(mode.into()),
        goal: goal.map(str::to_string),
    }
}

pub fn disable() -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "none".into(),
        instructions: None,
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

pub fn submit(id: &str, args: serde_json::Value) -> Reply {
    Reply::Tools(vec![call(id, "lattice_submit", args)])
}

pub fn requirements(id: &str) -> Reply {
    submit(
        id,
        json!({"action": "submit_requirements", "goal": "two files", "success_criteria": ["a.txt and b.txt exist"]}),
    )
}

pub fn write_pathway(id: &str, n: usize) -> Reply {
    let steps: Vec<_> = (1..=n)
        .map(|i| json!({"title": format!("file {i}"), "objective": format!("write file {i}")}))
        .collect();
    Reply::Tools(vec![call(
        id,
        "pathway_write",
        json!({"future_steps": steps}),
    )])
}

pub fn reason(id: &str, action: &str) -> Reply {
    submit(id, json!({"action": action, "reason": "it holds"}))
}

pub fn submit_blueprint(id: &str, note: NoteId) -> Reply {
    submit(
        id,
        json!({"action": "submit_blueprint", "blueprint_id": note.0}),
    )
}

pub fn stop(id: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "blueprint_loop_stop",
        json!({"summary": "done", "evidence": ["cat"]}),
    )])
}

/// An auditor's look at the workspace: an approval needs one since the claim.
pub fn look(id: &str) -> Reply {
    Reply::Tools(vec![call(id, "list_dir", json!({"path": "."}))])
}

pub fn approve(id: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "blueprint_loop_approve",
        json!({"summary": "verified"}),
    )])
}

pub fn reject(id: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "blueprint_loop_reject",
        json!({"reason": "missing", "remaining": ["BLOCKING: the file"], "instructions": "write it"}),
    )])
}

pub fn run(w: &World, s: SessionId) -> LatticeRun {
    w.wf.lattice_current(s).unwrap().expect("a Run").run
}

pub fn run_by_id(w: &World, id: LatticeRunId) -> LatticeRun {
    w.wf.store().read(|tx| tx.lattice_run(id)).unwrap()
}

pub async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Wait until the current Run is in `state` with `status`, and the session is idle.
pub async fn reach(w: &World, s: SessionId, status: RunStatus, state: WorkState) -> LatticeRun {
    until(&format!("the Run to be {status:?} in {state:?}"), || {
        let r = run(w, s);
        r.status == status && r.state == state
    })
    .await;
    w.idle(s).await;
    run(w, s)
}

/// A Run moved to `to` through the machine and stored directly, with its slot, as a process
/// leaves it: the controller's effects for that state not carried out yet.
pub fn staged(
    w: &World,
    s: SessionId,
    mode: troupe_core::lattice::Mode,
    note: NoteId,
    steps: usize,
    to: WorkState,
) -> LatticeRun {
    use troupe_core::lattice::{
        ActionKind, ActionSource, Event, FutureStep, Requirements, SubmitFacts, Submitted, pathway,
        step, submit,
    };
    let t = w.thread(s);
    w.wf.store()
        .write(|tx| {
            let mut run = tx.create_lattice_run(t, mode, 0, None)?;
            let slot = troupe_workflows::lattice::persist::slot_for(&run);
            tx.set_workflow(
                t,
                Some(&troupe_workflows::slot::WorkflowSlot::Lattice(slot).to_value()),
            )?;
            let facts = troupe_workflows::lattice::controller::note_facts(tx, note.0)?
                .map(|(f, _)| f)
                .unwrap();
            while run.state != to {
                let now = tx.now();
                if run.state == WorkState::Planning && run.pathway.is_empty() {
                    let future: Vec<FutureStep> = (1..=steps)
                        .map(|i| FutureStep {
                            id: None,
                            title: format!("file {i}"),
                            objective: format!("write file {i}"),
                            acceptance_criteria: vec![],
                            assumptions: vec![],
                            addresses_failed_step_ids: vec![],
                        })
                        .collect();
                    run = pathway::write_future(&run, &future, now).unwrap();
                }
                let kind = match run.state {
                    WorkState::Clarifying => ActionKind::SubmitRequirements {
                        requirements: Requirements {
                            goal: "g".into(),
                            success_criteria: vec!["c".into()],
                            ..Requirements::default()
                        },
                    },
                    WorkState::Planning => ActionKind::SubmitPathway { reason: "r".into() },
                    WorkState::ReviewingPathway => {
                        ActionKind::SubmitPathwayReview { reason: "r".into() }
                    }
                    WorkState::Blueprinting => ActionKind::SubmitBlueprint {
                        blueprint_id: facts.id,
                        blueprint_version: facts.version,
                        content_digest: facts.digest.clone(),
                    },
                    WorkState::ReviewingBlueprint => ActionKind::SubmitBlueprintReview {
                        reason: "r".into(),
                        blueprint_version: facts.version,
                        content_digest: facts.digest.clone(),
                    },
                    WorkState::AwaitingExecution => ActionKind::ApproveExecution {
                        reason: "r".into(),
                        blueprint_version: facts.version,
                        content_digest: facts.digest.clone(),
                    },
                    WorkState::Executing => unreachable!(),
                };
                let sf = SubmitFacts {
                    note: Some(facts.clone()),
                    person_spoke: true,
                };
                let Ok(Submitted::Queued(q)) = submit(&run, kind, ActionSource::Panel, &sf, now)
                else {
                    panic!("staging refused in {:?}", run.state)
                };
                run = step(
                    &q,
                    Event::ConsumeAction {
                        note: Some(facts.clone()),
                    },
                    now,
                )
                .unwrap()
                .run;
            }
            // The prompt of the last state is not the point of a staged Run.
            if matches!(
                run.effect,
                Some(troupe_core::lattice::Effect::DeliverPrompt { .. })
            ) {
                run.effect = None;
            }
            tx.save_lattice_run(&run, &[])
        })
        .unwrap()
}

/// Lattice loops of a session, oldest first.
pub fn lattice_loops(w: &World, s: SessionId) -> Vec<troupe_core::blueprint_loop::BlueprintLoop> {
    let t = w.thread(s);
    let mut v: Vec<_> =
        w.wf.store()
            .read(|tx| tx.blueprint_loops(false, 1000))
            .unwrap()
            .into_iter()
            .filter(|l| {
                l.thread_id == t && l.source == troupe_core::blueprint_loop::LoopSource::Lattice
            })
            .collect();
    v.reverse();
    v
}

/// How many times a keyed delivery reached the session (queued or taken).
pub fn delivered(w: &World, s: SessionId, key: &str) -> usize {
    let t = w.thread(s);
    w.wf.store()
        .read(|tx| {
            let queued = tx
                .inbox(t)?
                .into_iter()
                .filter(|i| i.delivery_key.as_deref() == Some(key))
                .count();
            let taken = usize::from(tx.delivery_receipt(t, key)?.is_some());
            Ok(queued + taken)
        })
        .unwrap()
}

/// Edit the Blueprint's body (a new version and digest).
pub fn edit(w: &World, note: NoteId, body: &str) {
    w.wf.store()
        .write(|tx| {
            let v = tx.note(note)?.version;
            tx.edit_note(
                note,
                &troupe_store::NoteEdit {
                    base_version: v,
                    kind: None,
                    title: None,
                    body: Some(body.into()),
                },
            )
        })
        .unwrap();
}

/// Carry a staged Run's create effect out by hand (a loop created, the attempt recorded) and,
/// when `start`, mark the loop running without its first prompt — as a crash can leave it.
pub fn handed_over(
    w: &World,
    run: &LatticeRun,
    start: bool,
) -> troupe_core::blueprint_loop::BlueprintLoop {
    use troupe_core::blueprint_loop::{LoopSource, LoopStatus, RunMode};
    use troupe_core::lattice::{Effect, Event, step};
    w.wf.store()
        .write(|tx| {
            let Some(Effect::CreateBlueprintLoop {
                note_id,
                blueprint_version,
                source_digest,
                ..
            }) = run.effect.clone()
            else {
                panic!("no create effect: {:?}", run.effect)
            };
            let mut l = tx.create_blueprint_loop(&troupe_store::NewBlueprintLoop {
                note_id,
                note_version: blueprint_version,
                title: "staged".into(),
                thread_id: run.thread_id,
                origin_thread_id: run.thread_id,
                audit_agent: "supervisor".into(),
                run_mode: RunMode::Current,
                user_prompt: None,
                max_iterations: None,
                worktree: None,
                source: LoopSource::Lattice,
                source_digest: Some(source_digest),
            })?;
            let now = tx.now();
            let mut r = step(run, Event::LoopCreated { loop_id: l.id }, now)
                .unwrap()
                .run;
            if start {
                let mut running = l.clone();
                running.status = LoopStatus::Running;
                l = tx.save_blueprint_loop(&running)?;
                r = step(&r, Event::LoopStarted { loop_id: l.id }, now)
                    .unwrap()
                    .run;
            }
            tx.save_lattice_run(&r, &[])?;
            Ok(l)
        })
        .unwrap()
}

/// End a loop as its auditor or a failure would.
pub fn end_loop(
    w: &World,
    id: troupe_core::blueprint_loop::BlueprintLoopId,
    status: troupe_core::blueprint_loop::LoopStatus,
    text: &str,
) {
    w.wf.store()
        .write(|tx| {
            let mut l = tx.blueprint_loop(id)?;
            l.status = status;
            if status == troupe_core::blueprint_loop::LoopStatus::Completed {
                l.summary = Some(text.into());
            } else {
                l.error = Some(text.into());
            }
            tx.save_blueprint_loop(&l)
        })
        .unwrap();
}
