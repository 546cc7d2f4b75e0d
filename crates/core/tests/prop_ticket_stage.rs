//! Property tests for the ticket stage machine (core/src/ticket/stage.rs, digest B §1.2):
//! random sequences of stage events never reach a stage its rules forbid.

use proptest::prelude::*;
use troupe_core::ticket::stage::{
    AppPass, Approval, AutoApproval, SendBack, StageEvent, StageSource, TicketStage, TicketStatus,
    next_stage, stage_source,
};

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

fn event() -> impl Strategy<Value = StageEvent> {
    let pass = prop::sample::select(vec![AppPass::Checks, AppPass::Tick]);
    let auto = prop::sample::select(vec![
        AutoApproval::NoReviewer,
        AutoApproval::Routine,
        AutoApproval::OneGo,
    ]);
    prop_oneof![
        Just(StageEvent::StartedWriting),
        Just(StageEvent::HandedOver),
        pass.clone()
            .prop_map(|pass| StageEvent::QueuedToReviewer { pass }),
        any::<bool>().prop_map(|h| StageEvent::SentBack(SendBack::GateFailed {
            handed_over_before: h
        })),
        Just(StageEvent::SentBack(SendBack::Rejected)),
        Just(StageEvent::SentBack(SendBack::UserFault)),
        Just(StageEvent::SentBack(SendBack::Supervisor)),
        Just(StageEvent::Approved(Approval::Reviewer)),
        Just(StageEvent::Approved(Approval::User)),
        (auto, pass).prop_map(|(by, pass)| StageEvent::Approved(Approval::OnChecks { by, pass })),
        prop::sample::select(TicketStatus::ALL.to_vec()).prop_map(StageEvent::BoardEdit),
        Just(StageEvent::LeadDrop),
    ]
}

proptest! {
    #![proptest_config(cases())]

    /// Invariants over any event sequence from `to_do` (a refused event leaves the stage):
    /// - approved work was handed over: a non-user move into `approved` comes only from
    ///   `submitted`/`in_review`, and only by an approval;
    /// - `in_review` is entered by queueing to the reviewer (or the user's board edit);
    /// - a dropped ticket is revived only by the user's board edit or a new drop: no app
    ///   event (work starting, checks, review, supervisor) moves it;
    /// - work starting never moves a ticket anywhere but `to_do` -> `in_progress`;
    /// - every move names a source, and the user's or the lead's source only for their events;
    /// - the status shown is always the mapping of the stage.
    #[test]
    fn ticket_stage_never_reaches_a_forbidden_stage(events in prop::collection::vec(event(), 1..40)) {
        let mut stage = TicketStage::ToDo;
        for ev in events {
            let Ok(next) = next_stage(stage, ev) else { continue };
            let by_user = matches!(ev, StageEvent::BoardEdit(_) | StageEvent::LeadDrop);
            if next != stage {
                let source = stage_source(ev);
                if next == TicketStage::Approved && !by_user {
                    prop_assert!(matches!(ev, StageEvent::Approved(_)), "{ev:?} approved {stage:?}");
                    prop_assert!(matches!(stage, TicketStage::Submitted | TicketStage::InReview),
                        "approved from {stage:?}");
                }
                if next == TicketStage::InReview && !by_user {
                    let queued = matches!(ev, StageEvent::QueuedToReviewer { .. });
                    prop_assert!(queued, "{ev:?} put it in review");
                }
                if stage == TicketStage::Dropped {
                    prop_assert!(by_user, "{ev:?} revived a dropped ticket");
                }
                if matches!(ev, StageEvent::StartedWriting) {
                    prop_assert_eq!((stage, next), (TicketStage::ToDo, TicketStage::InProgress));
                }
                if matches!(source, StageSource::LeadDrop) {
                    prop_assert_eq!(next, TicketStage::Dropped);
                }
                if matches!(ev, StageEvent::BoardEdit(_)) {
                    prop_assert_eq!(source, StageSource::User);
                }
            }
            stage = next;
            prop_assert_eq!(TicketStage::parse(stage.as_str()).unwrap(), stage);
            let status = stage.status();
            prop_assert_eq!(TicketStatus::parse(status.as_str()).unwrap(), status);
        }
    }
}
