//! The sample's standard check (digest 003-B §3.3, SC1–SC10). Once a large job's sample is
//! approved, every ticket held to it gets a check "Holds to the standard of sample #NN …"
//! (`attach`, called on every stage change and layout); moving the sample takes the old ones
//! down (SA4, in the store). The check runs only for a hand-over of its ticket, as one of the
//! checks bound to it (SC2), never on a quiet job's rerun: the evidence of both hand-overs is
//! gathered (`evidence`), the picture judge compares them (`judge`), and every call is kept
//! with its cost against the day's picture budget. A gate: a failure sends the hand-over back
//! with its shortfalls, a pass backs an approval like a user check, and "not judged" holds
//! nothing, so the hand-over waits on the user's word (SC5, SC6).

pub mod evidence;
pub mod judge;

pub use judge::{JudgeCall, PictureJudge, RoleJudge};

use super::Checks;
use super::run::Outcome;
use crate::CollabError;
use troupe_core::sample_standard::{
    NotJudged, Verdict, budget_left, held_to_standard, judge_prompt, parse_verdict,
};
use troupe_core::submission::{CheckSource, SubmissionState};
use troupe_core::ticket::TicketStage;
use troupe_core::{PlanId, SubmissionId};
use troupe_store::{
    CheckKind, CheckRecord, NewCheck, NewPictureJudgement, PlanRecord, RunOutcome, StoreError, Tx,
};

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// SC1: once the job's sample is approved, each ticket held to it that has no check for this
/// sample gets one.
pub(crate) fn attach(tx: &mut Tx<'_>, plan: PlanId) -> Result<(), StoreError> {
    let Some(sample) = tx.plan_deliverables(plan)?.sample_ticket_id else {
        return Ok(());
    };
    let tickets = tx.tickets_of_plan(plan)?;
    if !tickets
        .iter()
        .any(|t| t.id == sample && t.stage == TicketStage::Approved)
    {
        return Ok(());
    }
    let graph = crate::tickets::graph::nodes(&tickets);
    let have: Vec<_> = tx
        .checks_of_plan(plan, false)?
        .into_iter()
        .filter(|c| c.kind == CheckKind::Standard && c.sample_ticket_id == Some(sample))
        .filter_map(|c| c.ticket_id)
        .collect();
    for t in held_to_standard(&graph, sample) {
        if have.contains(&t) {
            continue;
        }
        tx.create_check(&NewCheck {
            ticket_id: Some(t),
            sample_ticket_id: Some(sample),
            ..NewCheck::new(plan, CheckKind::Standard, CheckSource::Sample)
        })?;
    }
    Ok(())
}

/// How the check's run reads.
fn not_judged(why: NotJudged) -> Outcome {
    Outcome::new(RunOutcome::Error, why.to_string())
}

impl Checks {
    /// Judge the hand-over `sub` of the check's ticket against the sample's approved hand-over.
    pub(crate) async fn judge_standard(
        &self,
        check: &CheckRecord,
        plan: &PlanRecord,
        sub: Option<SubmissionId>,
    ) -> Result<Outcome, CollabError> {
        let Some(sub) = sub else {
            // SC2: never on a rerun of the job's checks, only for a hand-over.
            return Ok(not_judged(NotJudged::NothingHandedOver));
        };
        let facts = self.store().read(|tx| {
            let s = tx.submission(sub)?;
            let sample_ticket = check
                .sample_ticket_id
                .ok_or_else(|| StoreError::Invalid("a standard check names its sample".into()))?;
            let sample_sub = tx
                .submissions_of_ticket(sample_ticket)?
                .into_iter()
                .find(|x| x.state == SubmissionState::Approved);
            let stopped = match s.work_item_id {
                Some(w) => {
                    let thread = tx.work_item(w)?.thread_id;
                    !crate::holds::holds_over(tx, thread)?.is_empty()
                }
                None => false,
            };
            let now = tx.now();
            let spent = tx.picture_spend_since(now - now.rem_euclid(DAY_MS))?;
            let name = |id| -> Result<String, StoreError> {
                let t = tx.ticket(id)?;
                Ok(format!("#{:02} {}", t.number, t.title))
            };
            Ok((
                s.clone(),
                sample_sub,
                stopped,
                spent,
                name(sample_ticket)?,
                name(s.ticket_id)?,
            ))
        })?;
        let (s, sample_sub, stopped, spent, sample_name, ticket_name) = facts;
        if stopped {
            return Ok(not_judged(NotJudged::Stopped));
        }
        let Some(sample_sub) = sample_sub else {
            return Ok(not_judged(NotJudged::NothingHandedOver));
        };
        let folder = std::path::Path::new(&plan.folder);
        let (sample_ev, mut pictures) =
            evidence::gather(self.probe(), folder, &sample_sub.files).await;
        let (handed_ev, handed_pictures) = evidence::gather(self.probe(), folder, &s.files).await;
        if handed_ev.is_empty() || sample_ev.is_empty() {
            return Ok(not_judged(NotJudged::NothingHandedOver));
        }
        pictures.extend(handed_pictures);
        if !pictures.is_empty() && !budget_left(spent) {
            return Ok(not_judged(NotJudged::BudgetSpent));
        }
        let Some(judge) = self.judge() else {
            return Ok(not_judged(NotJudged::NoModel(
                "no picture judge is set up".into(),
            )));
        };
        let prompt = judge_prompt(&sample_name, &sample_ev, &ticket_name, &handed_ev);
        let call = judge.judge(prompt, pictures).await;
        let Some(model) = call.model.clone() else {
            let why = call.raw.clone().err().unwrap_or_default();
            return Ok(not_judged(NotJudged::NoModel(why)));
        };
        let (verdict, outcome) = match &call.raw {
            Err(why) => ("failed", not_judged(NotJudged::NoModel(why.clone()))),
            Ok(raw) => match parse_verdict(raw) {
                Err(why) => ("unreadable", not_judged(NotJudged::Unreadable(why))),
                Ok(Verdict::Holds { unsure }) => (
                    if unsure { "unsure" } else { "holds" },
                    Outcome::new(
                        RunOutcome::Passed,
                        format!(
                            "holds to the standard of {sample_name}{}",
                            if unsure {
                                " (the judge was unsure)"
                            } else {
                                ""
                            }
                        ),
                    ),
                ),
                Ok(Verdict::Short(shortfalls)) => (
                    "short",
                    Outcome::new(
                        RunOutcome::Failed,
                        format!("falls short of {sample_name}: {}", shortfalls.join("; ")),
                    ),
                ),
            },
        };
        self.store().write(|tx| {
            tx.record_picture_judgement(&NewPictureJudgement {
                check_id: check.id,
                submission_id: sub,
                model,
                pictures: call.pictures_sent,
                input_tokens: call.input_tokens,
                output_tokens: call.output_tokens,
                verdict,
                raw: call.raw.clone().ok(),
            })
        })?;
        Ok(outcome)
    }
}
