//! The Light Loop machine and the slot controls as pure functions, one scenario per rule.

use troupe_core::{MessageId, ThreadId};
use troupe_workflows::controls::{SlotFacts, SlotRefusal, SlotRequest, decide};
use troupe_workflows::lightloop::machine::{
    Ack, LoopEffect, LoopEvent, LoopRefusal, Mail, Phase, Rejection, StopClaim, TerminalStatus,
    phase, step,
};
use troupe_workflows::slot::{LightLoopSlot, ReviewState, WorkflowSlot};

const EXEC: ThreadId = ThreadId(1);
const REVIEWER: ThreadId = ThreadId(2);

fn active(max: Option<u32>) -> LightLoopSlot {
    LightLoopSlot {
        instructions: "write the report".into(),
        max_iterations: max,
        stop_request: None,
        review: ReviewState::default(),
    }
}

fn claim(summary: &str) -> StopClaim {
    StopClaim {
        summary: summary.into(),
        completed: vec!["report.md".into()],
        evidence: vec!["wc -l report.md: 120".into()],
        limitations: vec![],
    }
}

fn stop(s: &LightLoopSlot, waits: Vec<String>) -> Result<LightLoopSlot, LoopRefusal> {
    step(
        Some(s),
        LoopEvent::LoopStop {
            claim: claim("done"),
            requester: MessageId(10),
            at: 5,
            waits,
        },
    )
    .map(|st| st.next.unwrap())
}

fn bound(s: &LightLoopSlot) -> LightLoopSlot {
    let s = stop(s, vec![]).unwrap();
    step(
        Some(&s),
        LoopEvent::ReviewerBound {
            reviewer: REVIEWER,
            requester: MessageId(10),
        },
    )
    .unwrap()
    .next
    .unwrap()
}

fn rejection() -> Rejection {
    Rejection {
        reason: "no numbers checked".into(),
        remaining: vec!["BLOCKING: verify totals".into()],
        instructions: "recompute the totals and cite them".into(),
        completed: vec![],
    }
}

#[test]
fn loop_stop_records_the_intent_without_a_reviewer() {
    let s = stop(&active(None), vec![]).unwrap();
    assert_eq!(phase(&s), Phase::StopPending);
    assert_eq!(s.stop_request.unwrap().reviewer_thread_id, None);
}

#[test]
fn loop_stop_with_a_blank_summary_is_an_argument_error() {
    let r = step(
        Some(&active(None)),
        LoopEvent::LoopStop {
            claim: claim("  "),
            requester: MessageId(10),
            at: 5,
            waits: vec![],
        },
    );
    assert!(matches!(r, Err(LoopRefusal::InvalidArguments(_))));
}

#[test]
fn loop_stop_with_a_template_placeholder_is_an_argument_error() {
    let mut c = claim("fixed the median");
    c.evidence = vec!["<list of evidence here>".into()];
    let r = step(
        Some(&active(None)),
        LoopEvent::LoopStop {
            claim: c.clone(),
            requester: MessageId(10),
            at: 5,
            waits: vec![],
        },
    );
    match r {
        Err(LoopRefusal::InvalidArguments(m)) => {
            assert!(
                m.starts_with("evidence[0]: \"<list of evidence here>\""),
                "{m}"
            )
        }
        other => panic!("expected an argument error, got {other:?}"),
    }
    // Angle brackets inside real words are not a placeholder.
    c.evidence = vec!["python3 -m unittest: OK (3 tests) <stdout>".into()];
    let r = step(
        Some(&active(None)),
        LoopEvent::LoopStop {
            claim: c,
            requester: MessageId(10),
            at: 5,
            waits: vec![],
        },
    );
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn loop_stop_is_refused_while_a_blocking_wait_exists() {
    let r = stop(&active(None), vec!["agenda_cancel(id=\"a1\")".into()]);
    assert!(matches!(r, Err(LoopRefusal::Waits(w)) if w[0].contains("a1")));
}

#[test]
fn repeated_loop_stop_is_idempotent_while_pending() {
    let s = bound(&active(None));
    let st = step(
        Some(&s),
        LoopEvent::LoopStop {
            claim: claim("again"),
            requester: MessageId(11),
            at: 6,
            waits: vec![],
        },
    )
    .unwrap();
    assert_eq!(st.next.as_ref(), Some(&s));
    assert_eq!(
        st.ack,
        Ack::AlreadyPending {
            reviewer: Some(REVIEWER)
        }
    );
}

#[test]
fn reviewer_binds_only_the_claim_it_was_prepared_for() {
    let s = stop(&active(None), vec![]).unwrap();
    let st = step(
        Some(&s),
        LoopEvent::ReviewerBound {
            reviewer: REVIEWER,
            requester: MessageId(99),
        },
    )
    .unwrap();
    assert_eq!(st.ack, Ack::Unchanged);
    assert_eq!(phase(st.next.as_ref().unwrap()), Phase::StopPending);
}

#[test]
fn only_the_recorded_reviewer_may_approve() {
    let s = bound(&active(None));
    let r = step(
        Some(&s),
        LoopEvent::Approve {
            caller: EXEC,
            summary: "fine".into(),
        },
    );
    assert_eq!(r, Err(LoopRefusal::NotReviewer));
    let st = step(
        Some(&s),
        LoopEvent::Approve {
            caller: REVIEWER,
            summary: "verified".into(),
        },
    )
    .unwrap();
    assert_eq!(st.next, None);
    assert_eq!(
        st.effects[0],
        LoopEffect::RecordTerminal {
            status: TerminalStatus::Completed,
            error: None
        },
        "the terminal record comes first"
    );
    assert!(matches!(
        &st.effects[1],
        LoopEffect::MailExecutor(Mail::Approved { .. })
    ));
}

#[test]
fn approve_after_one_reject_returns_to_execution_then_completes() {
    let s = bound(&active(None));
    let st = step(
        Some(&s),
        LoopEvent::Reject {
            caller: REVIEWER,
            rejection: rejection(),
            at: 7,
        },
    )
    .unwrap();
    let s = st.next.unwrap();
    assert_eq!(phase(&s), Phase::Executing);
    assert_eq!(s.review.attempts, 1);
    assert_eq!(s.review.last_reason.as_deref(), Some("no numbers checked"));
    assert!(
        matches!(&st.effects[0], LoopEffect::MailExecutor(Mail::Rejected(r)) if r.instructions.contains("recompute"))
    );
    let s = bound(&s);
    let st = step(
        Some(&s),
        LoopEvent::Approve {
            caller: REVIEWER,
            summary: "totals verified".into(),
        },
    )
    .unwrap();
    assert_eq!(st.next, None);
}

#[test]
fn reject_reaching_max_iterations_ends_as_iteration_exhausted() {
    let mut s = active(Some(2));
    s.review.attempts = 1;
    let s = bound(&s);
    let st = step(
        Some(&s),
        LoopEvent::Reject {
            caller: REVIEWER,
            rejection: rejection(),
            at: 7,
        },
    )
    .unwrap();
    assert_eq!(st.next, None);
    assert!(matches!(
        &st.effects[0],
        LoopEffect::RecordTerminal { status: TerminalStatus::IterationExhausted, error: Some(e) } if e.starts_with("iteration_exhausted")
    ));
    assert!(matches!(
        &st.effects[1],
        LoopEffect::MailExecutor(Mail::Exhausted(_))
    ));
}

#[test]
fn reject_needs_reason_remaining_and_instructions() {
    let s = bound(&active(None));
    let mut r = rejection();
    r.remaining.clear();
    assert!(matches!(
        step(
            Some(&s),
            LoopEvent::Reject {
                caller: REVIEWER,
                rejection: r,
                at: 1
            }
        ),
        Err(LoopRefusal::InvalidArguments(_))
    ));
}

#[test]
fn silent_reviewer_gets_two_recovery_turns_then_fails() {
    let mut s = bound(&active(None));
    for n in 1..=2 {
        let st = step(
            Some(&s),
            LoopEvent::ReviewerEndedWithoutVerdict { reviewer: REVIEWER },
        )
        .unwrap();
        assert_eq!(
            st.effects,
            vec![LoopEffect::RecoveryTurn { reviewer: REVIEWER }]
        );
        s = st.next.unwrap();
        assert_eq!(s.stop_request.as_ref().unwrap().review_recovery_attempts, n);
    }
    let st = step(
        Some(&s),
        LoopEvent::ReviewerEndedWithoutVerdict { reviewer: REVIEWER },
    )
    .unwrap();
    assert_eq!(st.next, None);
    assert!(matches!(
        &st.effects[0],
        LoopEffect::RecordTerminal { status: TerminalStatus::Failed, error: Some(e) } if e.starts_with("review_terminal_tool_missing")
    ));
    assert!(matches!(
        &st.effects[1],
        LoopEffect::ReviewFailedNotice { .. }
    ));
}

#[test]
fn interrupted_reviewer_is_unbound_without_spending_the_budget() {
    let mut s = bound(&active(None));
    s.stop_request.as_mut().unwrap().review_recovery_attempts = 1;
    let st = step(
        Some(&s),
        LoopEvent::ReviewerInterrupted { reviewer: REVIEWER },
    )
    .unwrap();
    let next = st.next.unwrap();
    assert_eq!(phase(&next), Phase::StopPending);
    assert_eq!(next.stop_request.unwrap().review_recovery_attempts, 1);
}

#[test]
fn reviewer_launch_failure_fails_at_once() {
    let s = bound(&active(None));
    let st = step(
        Some(&s),
        LoopEvent::ReviewerLaunchFailed {
            reviewer: REVIEWER,
            error: "no model for role review".into(),
        },
    )
    .unwrap();
    assert!(matches!(
        &st.effects[0],
        LoopEffect::RecordTerminal { status: TerminalStatus::Failed, error: Some(e) } if e == "reviewer_launch_failed: no model for role review"
    ));
}

#[test]
fn cancel_aborts_work_before_the_terminal_path_and_is_idempotent() {
    let s = bound(&active(None));
    let st = step(Some(&s), LoopEvent::Cancel).unwrap();
    assert_eq!(
        st.effects,
        vec![
            LoopEffect::AbortWork {
                reviewer: Some(REVIEWER)
            },
            LoopEffect::RecordTerminal {
                status: TerminalStatus::Cancelled,
                error: None
            }
        ]
    );
    let again = step(None, LoopEvent::Cancel).unwrap();
    assert_eq!(again.ack, Ack::Unchanged);
    assert!(again.effects.is_empty());
}

fn facts(slot: Option<WorkflowSlot>, running: bool) -> SlotFacts {
    SlotFacts {
        slot,
        running,
        blueprint_loop_active: false,
    }
}

#[test]
fn enabling_while_running_is_refused() {
    assert_eq!(
        decide(&facts(None, true), SlotRequest::EnablePlan),
        Err(SlotRefusal::Running)
    );
    assert_eq!(
        decide(&facts(Some(WorkflowSlot::Plan), true), SlotRequest::Disable),
        Err(SlotRefusal::Running)
    );
}

#[test]
fn empty_instructions_are_refused_before_any_state_check() {
    let r = decide(
        &facts(None, true),
        SlotRequest::EnableLightLoop {
            instructions: " ".into(),
            max_iterations: None,
        },
    );
    assert!(matches!(r, Err(SlotRefusal::Invalid(_))));
}

#[test]
fn an_active_blueprint_loop_refuses_enable() {
    let f = SlotFacts {
        slot: None,
        running: false,
        blueprint_loop_active: true,
    };
    assert_eq!(
        decide(&f, SlotRequest::EnablePlan),
        Err(SlotRefusal::BlueprintLoopActive)
    );
}

#[test]
fn one_kind_at_a_time() {
    let r = decide(
        &facts(Some(WorkflowSlot::Plan), false),
        SlotRequest::EnableLightLoop {
            instructions: "x".into(),
            max_iterations: None,
        },
    );
    assert_eq!(
        r,
        Err(SlotRefusal::WorkflowActive {
            current: "plan".into()
        })
    );
}

#[test]
fn disabling_a_lightloop_records_it_cancelled() {
    let t = decide(
        &facts(Some(WorkflowSlot::LightLoop(Box::new(active(None)))), false),
        SlotRequest::Disable,
    )
    .unwrap();
    assert_eq!(t.next, None);
    assert!(t.effects.contains(&LoopEffect::RecordTerminal {
        status: TerminalStatus::Cancelled,
        error: None
    }));
}
