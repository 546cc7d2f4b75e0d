//! The quality events of hand-overs (digest 003-B §9.1), each written by the one call its
//! cause makes, in the cause's transaction: a hand-over sent back (checks, a reviewer, a
//! complaint), one the checks stopped, a user's board edit out of review or approval, and a
//! check written after the hand-over it judges.

use serde_json::json;
use troupe_core::submission::SubmissionState;
use troupe_core::ticket::{SendBack, TicketStage};
use troupe_store::{
    BoardEdit, CheckRecord, NewQualityEvent, QualityType, StoreError, SubmissionRecord, Tx,
    quality_cause,
};

fn on_handover(kind: QualityType, why: &str, s: &SubmissionRecord) -> NewQualityEvent {
    NewQualityEvent::new(kind, why)
        .run(s.run_id)
        .bot(s.producer_bot_id)
        .plan(s.plan_id)
        .ticket(s.ticket_id)
}

/// The hand-over went back to rework: checks or a reviewer's reject. A complaint's is
/// written with its line (`complained`).
pub(crate) fn sent_back(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    why: SendBack,
) -> Result<(), StoreError> {
    if why == SendBack::UserFault {
        return Ok(());
    }
    let cause = troupe_core::quality::send_back_cause(why);
    tx.quality_event(on_handover(QualityType::Execution, cause, s).source("submission", s.id.0))?;
    Ok(())
}

/// A complaint sent the hand-over back: its source is the user's line, a link a clear drops.
pub(crate) fn complained(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    line: &troupe_core::conversation::SessionMessage,
) -> Result<(), StoreError> {
    tx.quality_event(
        on_handover(QualityType::Execution, quality_cause::COMPLAINT, s)
            .source("line", line.id.0)
            .detail(json!({"submission_id": s.id})),
    )?;
    Ok(())
}

/// A gate failed when the work was handed over.
pub(crate) fn checks_failed(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    failing: &[String],
) -> Result<(), StoreError> {
    tx.quality_event(
        on_handover(QualityType::Execution, quality_cause::CHECKS_FAILED, s)
            .source("submission", s.id.0)
            .detail(json!({"failing": failing})),
    )?;
    Ok(())
}

/// The user's board edit moved a ticket out of review or approval back to work.
pub(crate) fn board_sent_back(tx: &mut Tx<'_>, edit: &BoardEdit) -> Result<(), StoreError> {
    let Some(m) = &edit.moved else {
        return Ok(());
    };
    let handed = matches!(
        m.from,
        TicketStage::Submitted | TicketStage::InReview | TicketStage::Approved
    );
    if !handed || !matches!(m.to, TicketStage::InProgress | TicketStage::ToDo) {
        return Ok(());
    }
    let last = tx
        .submissions_of_ticket(m.ticket_id)?
        .into_iter()
        .filter(|s| {
            !matches!(
                s.state,
                SubmissionState::Checking | SubmissionState::FailedChecks
            )
        })
        .max_by_key(|s| s.id.0);
    let event = match &last {
        Some(s) => on_handover(QualityType::Execution, quality_cause::USER_SENT_BACK, s),
        None => NewQualityEvent::new(QualityType::Execution, quality_cause::USER_SENT_BACK)
            .bot(edit.ticket.owner_bot_id)
            .plan(edit.ticket.plan_id)
            .ticket(m.ticket_id),
    };
    tx.quality_event(
        event
            .source("ticket", m.ticket_id.0)
            .detail(json!({"from": m.from.as_str(), "to": m.to.as_str()})),
    )?;
    Ok(())
}

/// A check the user wrote after the work it judges was handed over: the work was asked of
/// the Bot with less than it is judged by now.
pub(crate) fn check_written(tx: &mut Tx<'_>, c: &CheckRecord) -> Result<(), StoreError> {
    let tickets = match c.ticket_id {
        Some(t) => vec![t],
        None => tx
            .tickets_of_plan(c.plan_id)?
            .iter()
            .map(|t| t.id)
            .collect(),
    };
    for t in tickets {
        let last = tx
            .submissions_of_ticket(t)?
            .into_iter()
            .filter(|s| s.state != SubmissionState::Superseded)
            .max_by_key(|s| s.id.0);
        if let Some(s) = last {
            tx.quality_event(
                on_handover(
                    QualityType::Unclear,
                    quality_cause::CHECK_AFTER_HANDOVER,
                    &s,
                )
                .source("check", c.id.0)
                .detail(json!({"submission_id": s.id})),
            )?;
        }
    }
    Ok(())
}
