//! Scenario tests for routing, one per rule, with scripted agents on a real session folder.

mod common;

use common::{Harness, fixture, opened, request_for};
use troupe_pipeline::route::Effect;
use troupe_pipeline::session::{BranchStatus, Budget, Fallback, Response, Session, SessionStatus};

const FINDINGS: &str = r#"{"items":["a","b"]}"#;

fn k(step: u32, parallel: u32) -> troupe_pipeline::session::BranchKey {
    Harness::key(step, parallel)
}

fn survey_done(h: &mut Harness, step: u32) -> Vec<Effect> {
    let r =
        Response::done("survey", k(step, 1)).with_field("findings", "response/data/findings.json");
    h.answer(r, &[("response/data/findings.json", FINDINGS)])
        .unwrap()
}

fn left_done(h: &mut Harness, step: u32) -> Vec<Effect> {
    let r = Response::done("left", k(step, 1)).with_field("left", "response/data/left.md");
    h.answer(r, &[("response/data/left.md", "left\n")]).unwrap()
}

fn right_done(h: &mut Harness, step: u32, parallel: u32) -> Vec<Effect> {
    let r =
        Response::done("right", k(step, parallel)).with_field("right", "response/data/right.md");
    h.answer(r, &[("response/data/right.md", "right\n")])
        .unwrap()
}

#[test]
fn done_advances_through_parallel_branches_passing_outputs_by_path() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    let effects = h.start();
    assert_eq!(
        opened(&effects),
        vec![("step-1/parallel-1".into(), "survey".into())]
    );
    let first = request_for(&effects, k(1, 1));
    assert_eq!(first.requirements["topic"], "caches");

    let effects = survey_done(&mut h, 1);
    assert_eq!(
        opened(&effects),
        vec![
            ("step-2/parallel-1".into(), "left".into()),
            ("step-2/parallel-2".into(), "right".into())
        ]
    );
    for p in [1, 2] {
        let req = request_for(&effects, k(2, p));
        assert_eq!(
            req.inputs["findings"],
            "step-1/parallel-1/response/data/findings.json"
        );
    }
    assert!(effects.contains(&Effect::ReleaseLease {
        agent: "step-1/parallel-1".into()
    }));

    // One sibling done: the step waits for the other.
    let effects = left_done(&mut h, 2);
    assert!(opened(&effects).is_empty());
    assert_eq!(h.session.state().current, vec![k(2, 2)]);

    let effects = right_done(&mut h, 2, 2);
    let merge = request_for(&effects, k(3, 1));
    assert_eq!(
        merge.inputs["left"],
        "step-2/parallel-1/response/data/left.md"
    );
    assert_eq!(
        merge.inputs["right"],
        "step-2/parallel-2/response/data/right.md"
    );

    let r = Response::done("merge", k(3, 1)).with_field("merged", "response/merged.md");
    let effects = h.answer(r, &[("response/merged.md", "both\n")]).unwrap();
    assert!(effects.contains(&Effect::Finish));
    let state = Session::open_dir(h.session.root()).unwrap().state().clone();
    assert_eq!(state.status, SessionStatus::Done);
    assert!(state.leases.is_empty());
    assert_eq!(state.chain.len(), 4);
    assert_eq!(state.request_hashes.len(), 4);
    assert_eq!(state.stopped_at.unwrap().route, "done");
}

#[test]
fn waiting_runs_the_nested_exchange_then_resumes_the_same_agent() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    let waiting = Response::waiting("survey", k(1, 1), "review", "review")
        .with_field("findings", "response/data/findings.json");
    let effects = h
        .answer(waiting, &[("response/data/findings.json", FINDINGS)])
        .unwrap();
    let Effect::RunExchange {
        branch,
        exchange,
        request,
    } = &effects[0]
    else {
        panic!("{effects:?}")
    };
    assert_eq!((*branch, exchange.as_str()), (k(1, 1), "review"));
    assert_eq!(request.operator_id, "reviewer");
    assert_eq!(
        request.inputs["findings"],
        "step-1/parallel-1/response/data/findings.json"
    );
    assert_eq!(
        effects[1],
        Effect::ResumeAgent {
            branch: k(1, 1),
            exchange: "review".into()
        }
    );
    let state = h.session.state();
    assert_eq!(state.branches[&k(1, 1)].status, BranchStatus::Waiting);
    assert!(state.leases.contains_key("step-1/parallel-1/review"));
    assert!(
        state
            .request_hashes
            .contains_key("step-1/parallel-1/review")
    );
    assert!(
        h.session
            .root()
            .join("step-1/parallel-1/review/request/request.json")
            .is_file()
    );

    let mut review =
        Response::done("reviewer", k(1, 1)).with_field("review", "review/response/review.md");
    review.exchange = Some("review".into());
    h.answer_exchange(
        k(1, 1),
        "review",
        review,
        &[("review/response/review.md", "fine\n")],
    );

    // The same agent resumes and finishes its branch; the exchange's lease is released.
    let effects = survey_done(&mut h, 1);
    assert!(effects.contains(&Effect::ReleaseLease {
        agent: "step-1/parallel-1/review".into()
    }));
    assert_eq!(opened(&effects).len(), 2);
}

#[test]
fn blocked_with_an_operator_route_runs_the_target_then_comes_back_with_resume() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    survey_done(&mut h, 1);
    left_done(&mut h, 2);
    let blocked = Response::blocked("right", k(2, 2), "RIGHT_NEEDS_SURVEY", "missing item c");
    let effects = h.answer(blocked, &[]).unwrap();
    let detour = request_for(&effects, k(3, 1));
    assert_eq!(detour.operator_id, "survey");
    assert_eq!(detour.cause.as_ref().unwrap().branch, k(2, 2));
    assert_eq!(detour.resume, None);

    let r = Response::done("survey", k(3, 1)).with_field("findings", "response/data/findings.json");
    let effects = h
        .answer(
            r,
            &[("response/data/findings.json", r#"{"items":["a","b","c"]}"#)],
        )
        .unwrap();
    let back = request_for(&effects, k(4, 1));
    assert_eq!(back.operator_id, "right");
    assert_eq!(back.resume.unwrap().key(), k(2, 2));
    // The nearest earlier producer now is the detour.
    assert_eq!(
        back.inputs["findings"],
        "step-3/parallel-1/response/data/findings.json"
    );
    assert_eq!(
        h.session.state().resumes[&k(4, 1)].stop,
        "RIGHT_NEEDS_SURVEY"
    );

    let effects = right_done(&mut h, 4, 1);
    let merge = request_for(&effects, k(5, 1));
    assert_eq!(
        merge.inputs["right"],
        "step-4/parallel-1/response/data/right.md"
    );
    assert_eq!(
        merge.inputs["left"],
        "step-2/parallel-1/response/data/left.md"
    );
}

#[test]
fn blocked_with_a_resume_route_reenters_the_same_operator_next_step() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    survey_done(&mut h, 1);
    let effects = h
        .answer(
            Response::blocked("left", k(2, 1), "LEFT_RETRY", "flaky"),
            &[],
        )
        .unwrap();
    assert!(opened(&effects).is_empty(), "waits for the sibling");
    let effects = right_done(&mut h, 2, 2);
    let again = request_for(&effects, k(3, 1));
    assert_eq!(again.operator_id, "left");
    assert_eq!(again.resume.unwrap().key(), k(2, 1));
    let effects = left_done(&mut h, 3);
    assert_eq!(
        opened(&effects),
        vec![("step-4/parallel-1".into(), "merge".into())]
    );
}

#[test]
fn blocked_with_a_user_route_blocks_the_session_for_a_person() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    let effects = h
        .answer(
            Response::blocked("survey", k(1, 1), "SURVEY_NEEDS_PERSON", "which cache?"),
            &[],
        )
        .unwrap();
    let Some(Effect::Block { stopped }) = effects.last() else {
        panic!("{effects:?}")
    };
    assert_eq!(stopped.route, "user");
    assert_eq!(stopped.domain.as_deref(), Some("person"));
    let state = h.session.state();
    assert_eq!(state.status, SessionStatus::Blocked);
    assert!(state.leases.is_empty());
    assert!(state.stopped_at.as_ref().unwrap().at.is_some());
}

#[test]
fn blocked_with_an_external_route_blocks_the_session_as_external() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    let effects = h
        .answer(
            Response::blocked("survey", k(1, 1), "SURVEY_SOURCE_DOWN", "503"),
            &[],
        )
        .unwrap();
    let Some(Effect::Block { stopped }) = effects.last() else {
        panic!("{effects:?}")
    };
    assert_eq!(stopped.route, "external");
    assert_eq!(h.session.state().status, SessionStatus::Blocked);
}

#[test]
fn a_person_reenters_a_blocked_session_in_the_next_step_with_resume() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    h.answer(
        Response::blocked("survey", k(1, 1), "SURVEY_NEEDS_PERSON", "which cache?"),
        &[],
    )
    .unwrap();
    let defs = h.defs.clone();
    let router = troupe_pipeline::route::Router::new(&defs, defs.workflow("fan").unwrap());
    let mut set = serde_json::Map::new();
    set.insert("topic".into(), "the page cache".into());
    let t = router.reenter(h.session.state(), None, set).unwrap();
    let effects = h.session.commit(t, &h.clock).unwrap();
    let req = request_for(&effects, k(2, 1));
    assert_eq!(req.resume.unwrap().key(), k(1, 1));
    assert_eq!(req.requirements["topic"], "the page cache");
    assert_eq!(h.session.state().status, SessionStatus::Running);
}

#[test]
fn a_runner_failure_blocks_at_once_and_reentry_retries_the_step_in_place() {
    use troupe_pipeline::route::GIT_FAILED;
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    survey_done(&mut h, 1);
    // Step 2 runs left and right; the runner's git step for left fails while right runs.
    let defs = h.defs.clone();
    let router = troupe_pipeline::route::Router::new(&defs, defs.workflow("fan").unwrap());
    let why = "git commit --quiet -m m failed (1): pre-commit: no";
    let t = router
        .fail(h.session.state(), Some(k(2, 1)), GIT_FAILED, why)
        .unwrap();
    let effects = h.session.commit(t, &h.clock).unwrap();
    let state = h.session.state().clone();
    assert_eq!(state.status, SessionStatus::Blocked);
    let stopped = state.stopped_at.clone().unwrap();
    assert_eq!(stopped.why, why, "git's words are the reason");
    assert_eq!(
        (
            stopped.branch,
            stopped.stop.as_deref(),
            stopped.route.as_str()
        ),
        (Some(k(2, 1)), Some(GIT_FAILED), "user")
    );
    assert!(state.leases.is_empty() && state.current.is_empty());
    assert!(effects.iter().any(|e| matches!(e, Effect::Block { .. })));
    assert_eq!(state.branches[&k(2, 1)].status, BranchStatus::Blocked);

    // Re-entered: the same step again, both branches picked up from their folders.
    let t = router
        .reenter(h.session.state(), None, serde_json::Map::new())
        .unwrap();
    let effects = h.session.commit(t, &h.clock).unwrap();
    assert_eq!(
        effects,
        vec![
            Effect::Retry { branch: k(2, 1) },
            Effect::Retry { branch: k(2, 2) }
        ]
    );
    let state = h.session.state();
    assert_eq!(state.status, SessionStatus::Running);
    assert_eq!(state.chain.len(), 3, "no new step");
    assert_eq!(state.current, vec![k(2, 1), k(2, 2)]);
    assert!(state.leases.contains_key("step-2/parallel-1"));
    assert!(state.leases.contains_key("step-2/parallel-2"));
    assert_eq!(state.branches[&k(2, 1)].status, BranchStatus::Open);
    assert_eq!(state.branches[&k(2, 1)].stop, None);
    // And the answers route as usual.
    left_done(&mut h, 2);
    let effects = right_done(&mut h, 2, 2);
    assert_eq!(request_for(&effects, k(3, 1)).operator_id, "merge");
}

#[test]
fn a_fallback_code_never_blocks() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    // Reported as the stop of a blocked response…
    let r = Response::blocked("survey", k(1, 1), "SURVEY_PARTIAL", "skipped one")
        .with_field("findings", "response/data/findings.json");
    let effects = h
        .answer(r, &[("response/data/findings.json", FINDINGS)])
        .unwrap();
    assert_eq!(opened(&effects).len(), 2, "the chain went on");
    assert_eq!(
        h.session.state().fallbacks[&k(1, 1)][0].code,
        "SURVEY_PARTIAL"
    );
    // …or listed under fallbacks of a done one.
    let mut done = Response::done("left", k(2, 1)).with_field("left", "response/data/left.md");
    done.fallbacks.push(Fallback {
        code: "PARTIAL_EVIDENCE".into(),
        note: None,
    });
    h.answer(done, &[("response/data/left.md", "l\n")]).unwrap();
    assert_eq!(
        h.session.state().fallbacks[&k(2, 1)][0].code,
        "PARTIAL_EVIDENCE"
    );
    assert_eq!(h.session.state().status, SessionStatus::Running);
}

#[test]
fn budget_of_runs_per_operator_blocks_with_budget_exhausted() {
    let budget = Budget {
        max_steps: 24,
        max_same_operator: 2,
    };
    let mut h = Harness::with_budget(&fixture("scenario"), "fan", budget);
    h.start();
    survey_done(&mut h, 1);
    left_done(&mut h, 2);
    h.answer(
        Response::blocked("right", k(2, 2), "RIGHT_NEEDS_SURVEY", "x"),
        &[],
    )
    .unwrap();
    // survey ran twice now (steps 1 and 3); a third run is over budget.
    let r = Response::done("survey", k(3, 1)).with_field("findings", "response/data/findings.json");
    h.answer(r, &[("response/data/findings.json", FINDINGS)])
        .unwrap();
    let effects = h
        .answer(
            Response::blocked("right", k(4, 1), "RIGHT_NEEDS_SURVEY", "still"),
            &[],
        )
        .unwrap();
    let Some(Effect::Block { stopped }) = effects.last() else {
        panic!("{effects:?}")
    };
    assert_eq!(stopped.stop.as_deref(), Some("BUDGET_EXHAUSTED"));
    assert_eq!(stopped.operator.as_deref(), Some("survey"));
}

#[test]
fn budget_of_steps_blocks_with_budget_exhausted() {
    let budget = Budget {
        max_steps: 2,
        max_same_operator: 4,
    };
    let mut h = Harness::with_budget(&fixture("scenario"), "fan", budget);
    h.start();
    survey_done(&mut h, 1);
    left_done(&mut h, 2);
    let effects = right_done(&mut h, 2, 2);
    let Some(Effect::Block { stopped }) = effects.last() else {
        panic!("{effects:?}")
    };
    assert_eq!(stopped.stop.as_deref(), Some("BUDGET_EXHAUSTED"));
    assert_eq!(h.session.state().status, SessionStatus::Blocked);
}

#[test]
fn budget_of_nested_exchanges_blocks_with_budget_exhausted() {
    let budget = Budget {
        max_steps: 24,
        max_same_operator: 1,
    };
    let mut h = Harness::with_budget(&fixture("scenario"), "fan", budget);
    h.start();
    let waiting = || {
        Response::waiting("survey", k(1, 1), "review", "review")
            .with_field("findings", "response/data/findings.json")
    };
    h.answer(waiting(), &[("response/data/findings.json", FINDINGS)])
        .unwrap();
    let effects = h.answer(waiting(), &[]).unwrap();
    let Some(Effect::Block { stopped }) = effects.last() else {
        panic!("{effects:?}")
    };
    assert_eq!(stopped.stop.as_deref(), Some("BUDGET_EXHAUSTED"));
}

#[test]
fn no_progress_when_a_resume_hits_the_same_wall_on_the_same_input() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    survey_done(&mut h, 1);
    right_done(&mut h, 2, 2);
    h.answer(
        Response::blocked("left", k(2, 1), "LEFT_RETRY", "flaky"),
        &[],
    )
    .unwrap();
    let effects = h
        .answer(
            Response::blocked("left", k(3, 1), "LEFT_RETRY", "flaky again"),
            &[],
        )
        .unwrap();
    let Some(Effect::Block { stopped }) = effects.last() else {
        panic!("{effects:?}")
    };
    assert_eq!(stopped.stop.as_deref(), Some("NO_PROGRESS"));
    assert_eq!(stopped.branch, Some(k(3, 1)));
}

#[test]
fn a_resume_that_blocks_on_new_input_is_progress() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    survey_done(&mut h, 1);
    left_done(&mut h, 2);
    h.answer(
        Response::blocked("right", k(2, 2), "RIGHT_NEEDS_SURVEY", "x"),
        &[],
    )
    .unwrap();
    let r = Response::done("survey", k(3, 1)).with_field("findings", "response/data/findings.json");
    h.answer(
        r,
        &[("response/data/findings.json", r#"{"items":["new"]}"#)],
    )
    .unwrap();
    // Same stop, but the input changed: routed again, not NO_PROGRESS.
    let effects = h
        .answer(
            Response::blocked("right", k(4, 1), "RIGHT_NEEDS_SURVEY", "x"),
            &[],
        )
        .unwrap();
    assert_eq!(
        opened(&effects),
        vec![("step-5/parallel-1".into(), "survey".into())]
    );
}

#[test]
fn a_response_refused_by_the_gate_does_not_route() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    let before = h.session.state().clone();
    // Done without its required output, and a field pointing at nothing.
    let r = Response::done("survey", k(1, 1)).with_field("extra", "response/x.md");
    let refusals = h.answer(r, &[]).unwrap_err();
    assert!(refusals.names("fields.findings"), "{refusals}");
    assert!(refusals.names("fields.extra"), "{refusals}");
    assert_eq!(h.session.state(), &before);
    assert_eq!(
        Session::open_dir(h.session.root()).unwrap().state(),
        &before
    );
}

#[test]
fn a_crash_between_response_and_routing_routes_once_on_restart() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    // The agent wrote its response; the runner died before routing it.
    let r = Response::done("survey", k(1, 1)).with_field("findings", "response/data/findings.json");
    h.session
        .write_branch_file(
            k(1, 1),
            None,
            "response/data/findings.json",
            FINDINGS.as_bytes(),
        )
        .unwrap();
    h.session.write_response(&r, "done\n").unwrap();

    // Restart: the manifest still shows the branch open; its response passes the gate again
    // and routes exactly once.
    let mut session = Session::open_dir(h.session.root()).unwrap();
    assert_eq!(session.state().current, vec![k(1, 1)]);
    let checked = troupe_pipeline::gate::check_response(&h.defs, &session, k(1, 1), None).unwrap();
    let router = troupe_pipeline::route::Router::new(&h.defs, h.defs.workflow("fan").unwrap());
    let t = router.route(session.state(), k(1, 1), &checked).unwrap();
    let effects = session.commit(t, &h.clock).unwrap();
    assert_eq!(opened(&effects).len(), 2);
    // Routing the same response again is refused: it is no longer awaiting routing.
    assert!(router.route(session.state(), k(1, 1), &checked).is_err());
}

#[test]
fn stop_ends_the_session_and_releases_every_lease() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    let router = troupe_pipeline::route::Router::new(&h.defs, h.defs.workflow("fan").unwrap());
    let t = router.stop(h.session.state(), "a person stopped it");
    let effects = h.session.commit(t, &h.clock).unwrap();
    assert!(effects.contains(&Effect::ReleaseLease {
        agent: "step-1/parallel-1".into()
    }));
    assert_eq!(h.session.state().status, SessionStatus::Stopped);
}
