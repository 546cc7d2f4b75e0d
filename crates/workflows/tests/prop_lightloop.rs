//! Property test for the Light Loop machine (workflows/src/lightloop/machine.rs): random
//! sequences of claims, reviewer bindings, verdicts from any caller, reviewer failures,
//! instruction changes and cancels never reach a state the loop's rules forbid.

use proptest::prelude::*;
use troupe_core::{MessageId, ThreadId};
use troupe_workflows::lightloop::machine::{
    Ack, LoopEffect, LoopEvent, Mail, Phase, Rejection, StopClaim, TerminalStatus, phase, step,
};
use troupe_workflows::slot::{LightLoopSlot, ReviewState};

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

#[derive(Clone, Debug)]
enum Op {
    Stop { waits: bool, empty: bool },
    Bind(i64),
    Approve(i64),
    Reject(i64),
    NoVerdict(i64),
    Interrupted(i64),
    LaunchFailed(i64),
    Update(Option<u32>),
    Cancel,
}

fn op() -> impl Strategy<Value = Op> {
    let t = || 10i64..13;
    prop_oneof![
        3 => (prop::bool::weighted(0.1), prop::bool::weighted(0.1)).prop_map(|(waits, empty)| Op::Stop { waits, empty }),
        3 => t().prop_map(Op::Bind),
        2 => t().prop_map(Op::Approve),
        3 => t().prop_map(Op::Reject),
        1 => t().prop_map(Op::NoVerdict),
        1 => t().prop_map(Op::Interrupted),
        1 => t().prop_map(Op::LaunchFailed),
        1 => prop::option::of(1u32..4).prop_map(Op::Update),
        1 => Just(Op::Cancel),
    ]
}

fn rejection() -> Rejection {
    Rejection {
        reason: "not yet".into(),
        remaining: vec!["tests".into()],
        instructions: "add tests".into(),
        completed: vec![],
    }
}

proptest! {
    #![proptest_config(cases())]

    /// Invariants under any event sequence:
    /// - the loop completes only by an approval from the reviewer bound to the pending claim
    ///   (an independent reviewer, never the executor or another session);
    /// - a verdict from anyone but the bound reviewer is refused and changes nothing; any
    ///   refusal leaves the slot as it was;
    /// - one claim at a time: a second claim while one is pending records nothing new;
    /// - a loop ends exactly when its terminal record is written, and that record comes first
    ///   (only a cancel's stopping of live work precedes it);
    /// - with a cap of N rejections the executor is sent back at most N times; a cap lowered
    ///   below the rejections already made sends nothing more back (the next one ends it);
    /// - an ended loop stays ended.
    #[test]
    fn light_loop_invariants(max in prop::option::of(1u32..4), ops in prop::collection::vec(op(), 1..50)) {
        let mut slot = Some(LightLoopSlot {
            instructions: "do it".into(),
            max_iterations: max,
            stop_request: None,
            review: ReviewState::default(),
        });
        let mut cap = max;
        let mut sent_back = 0u32;
        // Rejections already made when the cap last changed: a lower cap cannot undo them.
        let mut floor = 0u32;
        let mut msg = 100i64;
        for (i, op) in ops.into_iter().enumerate() {
            let at = i as i64;
            let before = slot.clone();
            let bound = before.as_ref().and_then(|s| match phase(s) {
                Phase::Reviewing(r) => Some(r),
                _ => None,
            });
            let pending = before.as_ref().is_some_and(|s| s.stop_request.is_some());
            msg += 1;
            let (event, caller) = match op {
                Op::Stop { waits, empty } => (LoopEvent::LoopStop {
                    claim: StopClaim {
                        summary: if empty { " ".into() } else { "done".into() },
                        completed: vec!["a".into()], evidence: vec!["b".into()], limitations: vec![],
                    },
                    requester: MessageId(msg),
                    at,
                    waits: if waits { vec!["watch 3".into()] } else { vec![] },
                }, None),
                Op::Bind(r) => {
                    let requester = before.as_ref().and_then(|s| s.stop_request.as_ref()).map(|s| s.requester_message_id).unwrap_or(MessageId(1));
                    (LoopEvent::ReviewerBound { reviewer: ThreadId(r), requester }, None)
                }
                Op::Approve(r) => (LoopEvent::Approve { caller: ThreadId(r), summary: "ok".into() }, Some(r)),
                Op::Reject(r) => (LoopEvent::Reject { caller: ThreadId(r), rejection: rejection(), at }, Some(r)),
                Op::NoVerdict(r) => (LoopEvent::ReviewerEndedWithoutVerdict { reviewer: ThreadId(r) }, None),
                Op::Interrupted(r) => (LoopEvent::ReviewerInterrupted { reviewer: ThreadId(r) }, None),
                Op::LaunchFailed(r) => (LoopEvent::ReviewerLaunchFailed { reviewer: ThreadId(r), error: "no model".into() }, None),
                Op::Update(m) => (LoopEvent::UpdateInstructions { instructions: "new".into(), max_iterations: m }, None),
                Op::Cancel => (LoopEvent::Cancel, None),
            };
            let is_update = matches!(event, LoopEvent::UpdateInstructions { .. });
            let is_stop = matches!(event, LoopEvent::LoopStop { .. });
            match step(before.as_ref(), event.clone()) {
                Err(_) => {
                    // The caller keeps the slot it had.
                }
                Ok(s) => {
                    prop_assert!(before.is_some() || s.next.is_none(), "an ended loop came back on {event:?}");
                    if let Some(c) = caller {
                        prop_assert_eq!(Some(ThreadId(c)), bound, "a verdict from {} who is not the bound reviewer was taken", c);
                    }
                    let terminal: Vec<&LoopEffect> = s.effects.iter().filter(|e| matches!(e, LoopEffect::RecordTerminal { .. })).collect();
                    if before.is_some() {
                        prop_assert_eq!(s.next.is_none(), terminal.len() == 1, "ended without its record (or the reverse): {:?}", s.effects);
                    }
                    if !terminal.is_empty() {
                        let first = s.effects.iter().position(|e| matches!(e, LoopEffect::RecordTerminal { .. })).unwrap();
                        let before_record = s.effects[..first].iter().all(|e| matches!(e, LoopEffect::AbortWork { .. }));
                        prop_assert!(before_record, "terminal record not first: {:?}", s.effects);
                    }
                    for e in &s.effects {
                        if let LoopEffect::RecordTerminal { status: TerminalStatus::Completed, .. } = e {
                            prop_assert!(matches!(event, LoopEvent::Approve { .. }), "completed by {event:?}");
                        }
                        if let LoopEffect::MailExecutor(Mail::Rejected(_)) = e {
                            sent_back += 1;
                            let attempts = s.next.as_ref().map_or(0, |n| n.review.attempts);
                            if let Some(n) = cap {
                                prop_assert!(attempts < n, "sent back at rejection {attempts} with a cap of {n}");
                            }
                        }
                    }
                    if is_stop && pending {
                        let already = matches!(s.ack, Ack::AlreadyPending { .. });
                        prop_assert!(already, "a second claim was recorded");
                        prop_assert_eq!(&s.next, &before);
                    }
                    if is_update && s.next.is_some() {
                        cap = s.next.as_ref().unwrap().max_iterations;
                        sent_back = s.next.as_ref().unwrap().review.attempts;
                        floor = sent_back;
                    }
                    slot = s.next;
                }
            }
            if let (Some(n), Some(s)) = (cap, slot.as_ref()) {
                prop_assert!(s.review.attempts <= n.max(floor), "{} rejections past a cap of {n}", s.review.attempts);
            }
            if let Some(n) = cap {
                prop_assert!(sent_back <= n.max(floor), "sent back {sent_back} times with a cap of {n}");
            }
        }
    }
}
