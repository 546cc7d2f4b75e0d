//! The runner with scripted agents on the scenario definitions (`fan`: survey → left ‖ right →
//! merge): outputs passed by path, a nested exchange, each route kind, a fallback, budgets, the
//! gate, a crash before routing, and the lease guard.

mod support;

use serde_json::{Value, json};
use support::fixture_defs;
use support::{
    Rig, answer, audit, blocked, find_session, hanging_script, merge_done, plain_fan, response,
    script, side_done, survey_done, write,
};
use troupe_pipeline::session::{Budget, SessionStatus};

#[tokio::test]
async fn a_three_step_chain_with_two_parallel_branches_passes_outputs_by_path() {
    let b1 = "step-1/parallel-1";
    let waiting = answer(
        b1,
        &[("response/data/findings.json", json!({"items": ["a"]}))],
        response(
            "survey",
            b1,
            "waiting",
            json!({"awaiting": {"exchange": "review", "kind": "review"},
                   "fields": {"findings": "response/data/findings.json"}}),
        ),
    );
    let finish = vec![
        write(&format!("{b1}/response/response.md"), "Reviewed.\n"),
        write(
            &format!("{b1}/response/response.json"),
            response(
                "survey",
                b1,
                "done",
                json!({"fields": {"findings": "response/data/findings.json"},
                       "fallbacks": [{"code": "SURVEY_PARTIAL", "note": "one source skipped"}]}),
            ),
        ),
    ];
    let review = vec![
        write(&format!("{b1}/review/response/data/review.md"), "fine\n"),
        write(&format!("{b1}/review/response/response.md"), "Fine.\n"),
        write(
            &format!("{b1}/review/response/response.json"),
            response(
                "reviewer",
                b1,
                "done",
                json!({"exchange": "review", "fields": {"review": "review/response/data/review.md"}}),
            ),
        ),
    ];
    let mut rig = plain_fan()
        .script(
            "survey",
            script(waiting, vec![("exchange `review` answered", finish)]),
        )
        .script("reviewer", script(review, vec![]));
    let kept = audit(&mut rig);
    let out = rig.start("fan").await;
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());
    assert!(!out.root.exists(), "a done session's folder is removed");

    let copy = kept.path().join(&out.session_id);
    let state = rig.read(&copy, "state.json");
    assert_eq!(
        state["chain"],
        json!([
            "step-1/parallel-1",
            "step-2/parallel-1",
            "step-2/parallel-2",
            "step-3/parallel-1"
        ])
    );
    assert_eq!(state["fallbacks"][b1][0]["code"], "SURVEY_PARTIAL");
    assert_eq!(state["branches"][b1]["exchanges"], 1);
    assert_eq!(state["leases"], json!({}));
    let left = rig.read(&copy, "step-2/parallel-1/request/request.json");
    assert_eq!(
        left["inputs"]["findings"],
        "step-1/parallel-1/response/data/findings.json"
    );
    let merge = rig.read(&copy, "step-3/parallel-1/request/request.json");
    assert_eq!(
        merge["inputs"]["left"],
        "step-2/parallel-1/response/data/left.md"
    );
    assert_eq!(
        merge["inputs"]["right"],
        "step-2/parallel-2/response/data/right.md"
    );
    let log = rig.log();
    assert!(
        log.contains("step-1/parallel-1: waiting on exchange `review`"),
        "{log}"
    );
    assert!(log.contains("step-1/parallel-1/review: answered"), "{log}");
    assert!(
        log.contains("step-1/parallel-1: resumed after exchange `review`"),
        "{log}"
    );
}

#[tokio::test]
async fn blocked_routes_to_external_and_to_user_then_a_person_resumes() {
    let rig = plain_fan().script(
        "survey",
        script(
            blocked("survey", "step-1/parallel-1", "SURVEY_SOURCE_DOWN"),
            vec![],
        ),
    );
    let out = rig.start("fan").await;
    assert_eq!(out.status, SessionStatus::Blocked);
    let stopped = out.stopped.unwrap();
    assert_eq!(stopped.route, "external");
    assert_eq!(stopped.stop.as_deref(), Some("SURVEY_SOURCE_DOWN"));
    assert!(out.root.exists(), "a blocked session stays on disk");

    // For a person; after the person resumes, survey re-enters in step 2 with `resume`.
    let again = survey_done("step-2/parallel-1");
    let rig = plain_fan()
        .script(
            "survey",
            script(
                blocked("survey", "step-1/parallel-1", "SURVEY_NEEDS_PERSON"),
                vec![("This branch resumes step-1/parallel-1", again)],
            ),
        )
        .script(
            "left",
            script(side_done("left", "step-3/parallel-1"), vec![]),
        )
        .script(
            "right",
            script(side_done("right", "step-3/parallel-2"), vec![]),
        )
        .script("merge", script(merge_done("step-4/parallel-1"), vec![]));
    let out = rig.start("fan").await;
    assert_eq!(out.stopped.as_ref().unwrap().route, "user");
    let request = rig.read(&out.root, "state.json");
    assert_eq!(request["status"], "blocked");
    let out = rig.resume(&out.session_id).await;
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());
}

#[tokio::test]
async fn resume_and_operator_routes_reenter_and_detour() {
    // Step 2: left blocks with a `resume` code, right with an `operator` code (→ survey).
    let rig = Rig::new(fixture_defs())
        .script(
            "survey",
            script(
                survey_done("step-1/parallel-1"),
                vec![(
                    "blocked with RIGHT_NEEDS_SURVEY",
                    survey_done("step-3/parallel-2"),
                )],
            ),
        )
        .script(
            "left",
            script(
                blocked("left", "step-2/parallel-1", "LEFT_RETRY"),
                vec![(
                    "This branch resumes step-2/parallel-1",
                    side_done("left", "step-3/parallel-1"),
                )],
            ),
        )
        .script(
            "right",
            script(
                blocked("right", "step-2/parallel-2", "RIGHT_NEEDS_SURVEY"),
                vec![(
                    "This branch resumes step-2/parallel-2",
                    side_done("right", "step-4/parallel-1"),
                )],
            ),
        )
        .script("merge", script(merge_done("step-5/parallel-1"), vec![]));
    let mut rig = rig;
    let kept = audit(&mut rig);
    let out = rig.start("fan").await;
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());
    let state = rig.read(&kept.path().join(&out.session_id), "state.json");
    assert_eq!(state["steps"]["step-3/parallel-1"], "left");
    assert_eq!(state["steps"]["step-3/parallel-2"], "survey");
    assert_eq!(
        state["branches"]["step-3/parallel-2"]["returnTo"],
        "step-2/parallel-2"
    );
    assert_eq!(
        state["resumes"]["step-3/parallel-1"]["resumes"],
        "step-2/parallel-1"
    );
    assert_eq!(
        state["resumes"]["step-4/parallel-1"]["stop"],
        "RIGHT_NEEDS_SURVEY"
    );
    let merge = rig.read(
        &kept.path().join(&out.session_id),
        "step-5/parallel-1/request/request.json",
    );
    assert_eq!(
        merge["inputs"]["left"],
        "step-3/parallel-1/response/data/left.md"
    );
    assert_eq!(
        merge["inputs"]["right"],
        "step-4/parallel-1/response/data/right.md"
    );
}

#[tokio::test]
async fn the_step_budget_blocks_with_budget_exhausted() {
    let mut rig = plain_fan();
    rig.options.budget = Budget {
        max_steps: 2,
        max_same_operator: 4,
    };
    let out = rig.start("fan").await;
    assert_eq!(out.status, SessionStatus::Blocked);
    assert_eq!(
        out.stopped.unwrap().stop.as_deref(),
        Some("BUDGET_EXHAUSTED")
    );
}

#[tokio::test]
async fn a_resume_that_reaches_the_same_wall_blocks_with_no_progress() {
    let rig = plain_fan().script(
        "left",
        script(
            blocked("left", "step-2/parallel-1", "LEFT_RETRY"),
            vec![(
                "This branch resumes",
                blocked("left", "step-3/parallel-1", "LEFT_RETRY"),
            )],
        ),
    );
    let out = rig.start("fan").await;
    assert_eq!(out.status, SessionStatus::Blocked, "{}", rig.log());
    let stopped = out.stopped.unwrap();
    assert_eq!(stopped.stop.as_deref(), Some("NO_PROGRESS"));
    assert_eq!(stopped.branch.unwrap().to_string(), "step-3/parallel-1");
}

fn bad_survey(branch: &str) -> Vec<Value> {
    answer(
        branch,
        &[("response/data/findings.json", json!({"things": 1}))],
        response(
            "survey",
            branch,
            "done",
            json!({"fields": {"findings": "response/data/findings.json"}}),
        ),
    )
}

#[tokio::test]
async fn a_gate_refusal_goes_back_to_the_agent_once() {
    let b1 = "step-1/parallel-1";
    let rig = plain_fan().script(
        "survey",
        script(bad_survey(b1), vec![("failed the gate", survey_done(b1))]),
    );
    let out = rig.start("fan").await;
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());
    assert!(
        rig.log().contains("the gate refused the response"),
        "{}",
        rig.log()
    );

    // Refused twice: the branch blocks with INVALID_INPUT, the refusals as its reason.
    let rig = plain_fan().script(
        "survey",
        script(bad_survey(b1), vec![("failed the gate", bad_survey(b1))]),
    );
    let out = rig.start("fan").await;
    assert_eq!(out.status, SessionStatus::Blocked);
    let stopped = out.stopped.unwrap();
    assert_eq!(stopped.stop.as_deref(), Some("INVALID_INPUT"));
    let r = rig.read(&out.root, "step-1/parallel-1/response/response.json");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("failed the gate twice") && reason.contains("fields.findings"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_crash_between_a_response_and_its_routing_resumes_without_running_the_agent_again() {
    let left = side_done("left", "step-2/parallel-1");
    let mut rig = plain_fan().script("left", hanging_script(left));
    let runner = rig.runner();
    let source = rig.source.path().to_path_buf();
    let run = tokio::spawn(async move { runner.start(&source, "fan", Default::default()).await });
    let root = loop {
        if let Some(root) = find_session(&rig)
            && root
                .join("step-2/parallel-1/response/response.json")
                .exists()
            && root
                .join("step-2/parallel-2/response/response.json")
                .exists()
        {
            break root;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    run.abort(); // the process dies while left's agent is still "thinking"
    let _ = run.await;
    let state = rig.read(&root, "state.json");
    assert_eq!(
        state["branches"]["step-2/parallel-1"]["status"], "open",
        "not routed yet"
    );

    // A new process: left's script would now write something else, if it ran.
    rig.data = tempfile::tempdir().unwrap();
    let second = vec![write(
        "step-2/parallel-1/response/data/left.md",
        "SECOND RUN\n",
    )];
    let mut rig = rig.script("left", script(second, vec![]));
    let kept = audit(&mut rig);
    let id = root.file_name().unwrap().to_string_lossy().into_owned();
    let out = rig.resume(&id).await;
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());
    let copy = kept.path().join(&id);
    let left =
        std::fs::read_to_string(copy.join("step-2/parallel-1/response/data/left.md")).unwrap();
    assert_eq!(
        left, "left side\n",
        "the response on disk routed; the agent did not run again"
    );
    assert!(
        rig.log()
            .contains("step-2/parallel-1: a response is on disk"),
        "{}",
        rig.log()
    );
}

#[tokio::test]
async fn the_lease_guard_refuses_a_write_or_an_edit_outside_the_branch() {
    let earlier = "step-1/parallel-1/response/data/findings.json";
    let mut calls = vec![
        write(earlier, json!({"items": ["forged"]})),
        json!({"name": "edit_file", "arguments": {"path": earlier, "old_text": "\"a\"", "new_text": "\"forged\""}}),
    ];
    calls.extend(side_done("left", "step-2/parallel-1"));
    let mut rig = plain_fan().script("left", script(calls, vec![]));
    let kept = audit(&mut rig);
    let runner = rig.runner();
    let out = runner
        .start(rig.source.path(), "fan", Default::default())
        .await
        .unwrap();
    assert_eq!(out.status, SessionStatus::Done, "{}", rig.log());
    // The model read the refusal as its tool result.
    let log = rig.log();
    let thread: troupe_core::ThreadId = log
        .lines()
        .find_map(|l| {
            l.strip_prefix("step-2/parallel-1: agent ")?
                .split(' ')
                .next()
        })
        .unwrap()
        .parse()
        .unwrap();
    let store = runner.engine().store();
    let run = store
        .read(|tx| tx.runs_for_thread(thread, 1))
        .unwrap()
        .remove(0);
    let calls = store.read(|tx| tx.tool_calls(run.id)).unwrap();
    assert_eq!(calls[0].status, "refused", "{calls:?}");
    assert_eq!(
        (calls[1].name.as_str(), calls[1].status.as_str()),
        ("edit_file", "refused")
    );
    let seen = format!("{calls:?}");
    assert!(
        seen.contains("refused by lease") && seen.contains("lies outside it"),
        "{seen}"
    );
    let findings = rig.read(
        &kept.path().join(&out.session_id),
        "step-1/parallel-1/response/data/findings.json",
    );
    assert_eq!(
        findings,
        json!({"items": ["a", "b"]}),
        "the earlier branch is untouched"
    );
}

#[tokio::test]
async fn a_person_stops_a_session_and_status_shows_it() {
    let rig = plain_fan().script(
        "survey",
        script(
            blocked("survey", "step-1/parallel-1", "SURVEY_SOURCE_DOWN"),
            vec![],
        ),
    );
    let out = rig.start("fan").await;
    let runner = rig.runner();
    let stopped = troupe_pipeline::runner::stop_session(
        rig.source.path(),
        &out.session_id,
        "not needed any more",
        &troupe_core::ManualClock::new(0),
    )
    .unwrap();
    assert_eq!(stopped.route, "stopped");
    assert_eq!(rig.state(&out)["status"], "stopped");
    assert!(
        runner
            .resume(rig.source.path(), &out.session_id)
            .await
            .is_err()
    );
}
