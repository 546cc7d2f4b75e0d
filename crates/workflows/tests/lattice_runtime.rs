//! Lattice scenarios (the digest's §6.9) at runtime: a real engine and store, one queued model
//! answering the session, its BlueprintLoop executor and the supervisor auditor in turn.

mod lattice_support;
mod support;

use lattice_support::*;
use support::{tool_results, user_texts, world};
use troupe_core::blueprint_loop::{LoopSource, LoopStatus};
use troupe_core::lattice::{RunStatus, StatusReason, StepStatus, WorkState};
use troupe_core::pause::PauseReason;

#[tokio::test]
async fn auto_happy_path() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    let t = w.thread(s);
    let note = blueprint(&w, "Write the files");
    for r in [
        requirements("r1"),
        write_pathway("p1", 2),
        reason("p2", "submit_pathway"),
        reason("p3", "submit_pathway_review"),
        submit_blueprint("b1", note),
        reason("b2", "submit_blueprint_review"),
        stop("x1"),
        look("l1"),
        approve("a1"),
        reason("p4", "submit_pathway_review"),
        submit_blueprint("b3", note),
        reason("b4", "submit_blueprint_review"),
        stop("x2"),
        look("l2"),
        approve("a2"),
    ] {
        w.provider.push(r);
    }
    w.wf.set_workflow(s, enable("auto", Some("write two files"), None))
        .await
        .unwrap();
    until("the Run to complete", || {
        run(&w, s).status == RunStatus::Completed
    })
    .await;
    w.idle(s).await;
    let r = run(&w, s);
    assert!(
        r.effect.is_none(),
        "the completion mail was queued and acknowledged"
    );
    assert_eq!(r.completed_steps(), 2);
    for step in &r.pathway {
        assert_eq!(step.status, StepStatus::Completed);
        let attempt = &step.loop_history[0];
        let l =
            w.wf.store()
                .read(|tx| tx.blueprint_loop(attempt.loop_id))
                .unwrap();
        assert_eq!(
            (l.source, l.status),
            (LoopSource::Lattice, LoopStatus::Completed)
        );
        assert!(
            l.user_prompt
                .unwrap()
                .contains("Only this Step is authorized")
        );
    }
    assert_eq!(r.pathway[0].result_summary.as_deref(), Some("verified"));
    let view = w.wf.workflow(s).unwrap();
    assert_eq!(view.kind, None, "a terminal Run clears its slot");
    let mails = w
        .wf
        .store()
        .read(|tx| tx.messages(t, None, 1000))
        .unwrap()
        .into_iter()
        .filter(|m| m.origin == troupe_core::message::Origin::System("lattice_completed".into()))
        .count();
    assert_eq!(mails, 1, "one completion mail");
    // LAT-14: while a Step executes, its turns see neither the Lattice tools nor its section.
    let requests = w.provider.requests();
    let executing: Vec<_> = requests
        .iter()
        .filter(|q| q.tools.iter().any(|t| t.name == "blueprint_loop_stop"))
        .collect();
    assert_eq!(executing.len(), 2, "one executor turn per Step");
    for q in &executing {
        let names: Vec<&str> = q.tools.iter().map(|t| t.name.as_str()).collect();
        assert!(!names.contains(&"lattice_submit"), "{names:?}");
        assert!(!names.contains(&"pathway_write"), "{names:?}");
        assert!(!q.system.contains("# Lattice"));
        assert!(
            user_texts(q)
                .iter()
                .any(|t| t.contains("Carry out the Blueprint"))
        );
    }
    let planning = requests
        .iter()
        .find(|q| q.tools.iter().any(|t| t.name == "pathway_write"))
        .expect("a planning turn saw the Lattice tools");
    assert!(planning.system.contains("# Lattice"));
}

#[tokio::test]
async fn duplicate_submit() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    // One hop: an action, the same action again, then a different one.
    let req = serde_json::json!({"action": "submit_requirements", "goal": "g", "success_criteria": ["c"]});
    w.provider.push(support::Reply::Tools(vec![
        support::call("d1", "lattice_submit", req.clone()),
        support::call("d2", "lattice_submit", req),
        support::call(
            "d3",
            "lattice_submit",
            serde_json::json!({"action": "submit_pathway", "reason": "r"}),
        ),
    ]));
    w.wf.set_workflow(s, enable("auto", Some("g"), None))
        .await
        .unwrap();
    reach(&w, s, RunStatus::Active, WorkState::Planning).await;
    let results: Vec<String> = w
        .provider
        .requests()
        .iter()
        .flat_map(tool_results)
        .collect();
    let codes: Vec<&str> = [
        "LATTICE_ACTION_QUEUED",
        "LATTICE_ACTION_ALREADY_QUEUED",
        "LATTICE_ACTION_CONFLICT",
    ]
    .into_iter()
    .filter(|c| results.iter().any(|r| r.contains(&format!("\"{c}\""))))
    .collect();
    assert_eq!(codes.len(), 3, "{results:?}");
    let r = run(&w, s);
    assert_eq!(
        r.state_revision, 1,
        "the duplicate changed nothing; one action was consumed"
    );
    assert!(r.requirements.is_some());
}

#[tokio::test]
async fn a_submit_before_the_pathway_is_written_is_dropped_with_a_repair_prompt() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    w.provider.push(requirements("r1"));
    w.provider.push(reason("p1", "submit_pathway"));
    w.wf.set_workflow(s, enable("auto", Some("g"), None))
        .await
        .unwrap();
    until("the repair", || {
        w.provider.requests().iter().any(|r| {
            support::user_texts(r)
                .iter()
                .any(|t| t.contains("could not be taken") && t.contains("no pending Step"))
        })
    })
    .await;
    w.idle(s).await;
    assert_eq!(run(&w, s).state, WorkState::Planning);
}

#[tokio::test]
async fn disable_user_exit() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    w.provider.push(requirements("r1"));
    w.wf.set_workflow(s, enable("collaborative", Some("g"), None))
        .await
        .unwrap();
    reach(&w, s, RunStatus::Active, WorkState::Planning).await;
    let id = run(&w, s).id;
    w.wf.set_workflow(s, disable()).await.unwrap();
    let r = run_by_id(&w, id);
    assert_eq!(
        (r.status, r.status_reason),
        (RunStatus::Paused, Some(StatusReason::UserExit))
    );
    assert_eq!(w.wf.workflow(s).unwrap().kind, None);
    assert!(
        w.wf.workflow(s).unwrap().paused.is_none(),
        "a user exit latches nothing"
    );
    let again =
        w.wf.set_workflow(s, enable("auto", None, None))
            .await
            .unwrap_err();
    assert!(again.to_string().contains("resume"), "{again}");
    // A pristine Run is cancelled by a disable, and replaced by the next enable.
    let s2 = w.session();
    w.wf.set_workflow(s2, enable("auto", None, None))
        .await
        .unwrap();
    let first = run(&w, s2).id;
    w.wf.set_workflow(s2, disable()).await.unwrap();
    assert_eq!(run_by_id(&w, first).status, RunStatus::Cancelled);
    w.wf.set_workflow(s2, enable("auto", None, None))
        .await
        .unwrap();
    assert_ne!(run(&w, s2).id, first, "LAT-1: a new Run, the old one kept");
    assert_eq!(w.wf.lattice_runs(Some(s2), 10).unwrap().len(), 2);
}

#[tokio::test]
async fn budget_plus_one() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    // Each turn answers in prose: the continuation would go on, the cap stops it.
    w.wf.set_workflow(s, enable("auto", Some("g"), Some(2)))
        .await
        .unwrap();
    until("the budget pause", || {
        run(&w, s).status == RunStatus::Paused
    })
    .await;
    w.idle(s).await;
    let r = run(&w, s);
    assert_eq!(
        r.status_reason,
        Some(StatusReason::ModelCallBudgetExhausted)
    );
    assert_eq!(r.model_call_count, 2);
    let paused = w.wf.workflow(s).unwrap().paused.unwrap();
    assert_eq!(paused.reason, PauseReason::Workflow);
    assert_eq!(
        paused.description.as_deref(),
        Some("Lattice run paused: model call budget exhausted")
    );
    // The person talks to the Bot while the Run is paused: that call counts too, so the resume
    // that follows still grants exactly one more.
    w.turn(s, "what is left?").await;
    let calls = w.provider.calls();
    assert_eq!(calls, 3);
    let v = w.wf.resume_lattice_run(r.id).await.unwrap();
    assert_eq!(v.run.max_model_calls, 4);
    until("the next budget pause", || {
        run(&w, s).status == RunStatus::Paused
    })
    .await;
    w.idle(s).await;
    assert_eq!(w.provider.calls(), calls + 1, "exactly one more call");
}

#[tokio::test]
async fn abandon_exact_run() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    w.wf.set_workflow(s, enable("auto", Some("g"), Some(1)))
        .await
        .unwrap();
    until("the budget pause", || {
        run(&w, s).status == RunStatus::Paused
    })
    .await;
    w.idle(s).await;
    let id = run(&w, s).id;
    let report = w.wf.abandon(s).await.unwrap();
    assert_eq!(report.workflow_cancelled.as_deref(), Some("lattice"));
    assert_eq!(run_by_id(&w, id).status, RunStatus::Cancelled);
    let view = w.wf.workflow(s).unwrap();
    assert_eq!(view.kind, None);
    assert!(
        view.paused.is_none(),
        "the workflow latch went with the Run"
    );
    // Cancel is terminal and idempotent.
    let again = w.wf.cancel_lattice_run(id).await.unwrap();
    assert_eq!(again.run.status, RunStatus::Cancelled);
    assert!(w.wf.resume_lattice_run(id).await.is_err());
}
