//! Large jobs and the sample (digest B §2–3, ADR 0060, ADR 0109): whether a job can only be
//! done well in parts with a sample first, who said so, and what that forbids until the lead
//! lays it out.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Whether the job is large (§2.1 `large_state`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LargeState {
    Unread,
    Large,
    NotLarge,
}

impl LargeState {
    pub const ALL: [LargeState; 3] = [LargeState::Unread, LargeState::Large, LargeState::NotLarge];

    pub fn as_str(self) -> &'static str {
        match self {
            LargeState::Unread => "unread",
            LargeState::Large => "large",
            LargeState::NotLarge => "not_large",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        LargeState::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("large state '{s}' is not one of unread, large, not_large"))
    }
}

impl fmt::Display for LargeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who decided the job's size (§2.1 `large_source`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LargeSource {
    Reader,
    Supervisor,
    User,
}

impl LargeSource {
    pub const ALL: [LargeSource; 3] = [
        LargeSource::Reader,
        LargeSource::Supervisor,
        LargeSource::User,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LargeSource::Reader => "reader",
            LargeSource::Supervisor => "supervisor",
            LargeSource::User => "user",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        LargeSource::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("large source '{s}' is not one of reader, supervisor, user"))
    }
}

/// The job's size facts (§2.1), as stored on the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LargeJob {
    pub state: LargeState,
    pub source: Option<LargeSource>,
    pub evidence: Option<String>,
    /// Sticky (LJ2): once the user said "No need", no reading marks the job large again.
    pub user_said_no_need: bool,
    pub laid_out: bool,
}

impl LargeJob {
    pub fn unread() -> Self {
        LargeJob {
            state: LargeState::Unread,
            source: None,
            evidence: None,
            user_said_no_need: false,
            laid_out: false,
        }
    }
}

/// What a model reading of the user's words about the job found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Large, with what showed it.
    Yes { evidence: String },
    /// Not large, or unsure: unsure means no (LJ1).
    No,
    /// The reading failed (the model errored or answered nothing usable).
    Failed,
}

/// Something that may change the job's size (§2.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LargeEvent {
    /// The line reader read the user's words (LJ1).
    Reader(Reading),
    /// The supervisor's re-read (LJ3); `None` when no model could be asked at all.
    SupervisorReread(Option<Reading>),
    /// The user pressed "No need" (`POST /v1/tasks/:id/large {choice: no_need}`).
    UserNoNeed,
    /// The user pressed "Treat as large".
    UserTreatAsLarge,
    /// The lead's layout stood (see [`layout_stands`]).
    LaidOut,
}

/// The job's size facts after `event` (§2.2). Readings never override the user (LJ2) and only
/// read an unread job (LJ1, LJ3); an event that changes nothing returns the job as it was.
pub fn next_large(job: &LargeJob, event: LargeEvent) -> LargeJob {
    let mut next = job.clone();
    let set = |next: &mut LargeJob, state, source, evidence: Option<String>| {
        next.state = state;
        next.source = Some(source);
        next.evidence = evidence;
    };
    match event {
        LargeEvent::Reader(reading) => {
            if job.state != LargeState::Unread || job.source == Some(LargeSource::User) {
                return next;
            }
            match reading {
                Reading::Yes { evidence } if !job.user_said_no_need => set(
                    &mut next,
                    LargeState::Large,
                    LargeSource::Reader,
                    Some(evidence),
                ),
                Reading::Yes { .. } | Reading::No => {
                    set(&mut next, LargeState::NotLarge, LargeSource::Reader, None)
                }
                Reading::Failed => {}
            }
        }
        LargeEvent::SupervisorReread(reading) => {
            if job.state != LargeState::Unread || job.user_said_no_need || job.laid_out {
                return next;
            }
            match reading {
                Some(Reading::Yes { evidence }) => set(
                    &mut next,
                    LargeState::Large,
                    LargeSource::Supervisor,
                    Some(evidence),
                ),
                Some(Reading::No) => set(
                    &mut next,
                    LargeState::NotLarge,
                    LargeSource::Supervisor,
                    None,
                ),
                // LJ3: if nothing can read it, the supervisor marks it large itself. A failed
                // reading is "nothing could read it" too: re-asking every 15 s tick would
                // spend without end on a job that has already run three segments unread.
                None | Some(Reading::Failed) => set(
                    &mut next,
                    LargeState::Large,
                    LargeSource::Supervisor,
                    Some(
                        "no model could read the job; three segments ended with nothing \
                         approved and nothing laid out"
                            .into(),
                    ),
                ),
            }
        }
        LargeEvent::UserNoNeed => {
            set(&mut next, LargeState::NotLarge, LargeSource::User, None);
            next.user_said_no_need = true;
        }
        LargeEvent::UserTreatAsLarge => {
            // The user's latest choice wins over their earlier "No need".
            set(&mut next, LargeState::Large, LargeSource::User, None);
            next.user_said_no_need = false;
        }
        LargeEvent::LaidOut => next.laid_out = true,
    }
    next
}

/// LJ3: the supervisor re-reads a job that is unread, not laid out, with nothing approved and
/// at least three ended segments — never one the user said "No need" to (S-LJ2).
pub fn reread_eligible(job: &LargeJob, anything_approved: bool, ended_segments: u32) -> bool {
    job.state == LargeState::Unread
        && !job.laid_out
        && !job.user_said_no_need
        && !anything_approved
        && ended_segments >= 3
}

/// A layout that does not stand (LJ5, SA1).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("a job has at most one sample; this layout marks {0} tickets `sample: true`")]
    SampleDuplicate(usize),
    #[error(
        "a large job is laid out around a sample: mark exactly one ticket `sample: true` and \
         lay out at least one other ticket that waits for it (not one the sample depends on)"
    )]
    LayoutNeedsSample,
}

impl LayoutError {
    pub fn code(&self) -> &'static str {
        match self {
            LayoutError::SampleDuplicate(_) => "sample_duplicate",
            LayoutError::LayoutNeedsSample => "layout_needs_sample",
        }
    }
}

/// Whether the lead's layout stands. Any job has at most one sample (SA1); a large job's
/// layout stands only with exactly one sample and at least one ticket waiting for it (LJ5).
/// `waiting_for_sample` counts the tickets held to the sample after the layout (see
/// `ticket::dependency::held_to_sample`).
pub fn layout_stands(
    large: bool,
    samples: usize,
    waiting_for_sample: usize,
) -> Result<(), LayoutError> {
    if samples > 1 {
        return Err(LayoutError::SampleDuplicate(samples));
    }
    if large && (samples == 0 || waiting_for_sample == 0) {
        return Err(LayoutError::LayoutNeedsSample);
    }
    Ok(())
}

/// LJ4: until a large job is laid out, generating calls and `submit` are refused and its
/// ending files are not handed over.
pub fn generation_allowed(large_state: LargeState, laid_out: bool) -> bool {
    large_state != LargeState::Large || laid_out
}

/// The refusal code and text for LJ4 (S-LJ3): what the Bot is told when it may not generate
/// or hand over yet.
pub const NOT_LAID_OUT: &str = "not_laid_out";
pub const LAY_IT_OUT_FIRST: &str = "This is a large job and it is not laid out yet: lay it out \
    first. The lead lays it out with plan_items — the tickets, who makes and reviews each, and \
    one ticket marked sample: true that is made first to the full standard. Until then you may \
    read, take notes and run local scripts, but nothing is generated or handed over.";

/// Why a ticket cannot be made the sample (SA5; `PATCH /v1/tickets/:id {sample: true}`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SampleRefusal {
    #[error("only a large job, or a job that already has a sample, has a sample")]
    NotLarge,
    #[error("this ticket has been handed over already; the sample is a ticket not yet through")]
    TicketThrough,
    #[error("this ticket is already the sample")]
    AlreadySample,
}

impl SampleRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            SampleRefusal::NotLarge => "not_large",
            SampleRefusal::TicketThrough => "ticket_through",
            SampleRefusal::AlreadySample => "already_sample",
        }
    }
}

/// SA5: "Make it the sample" is allowed only in a large job or a job that has a sample, on a
/// ticket that is not through and is not already the sample. Moving the sample (SA4) is the
/// caller's write: the old sample's standard checks go with it.
pub fn can_make_sample(
    large_state: LargeState,
    job_has_sample: bool,
    ticket_through: bool,
    ticket_is_sample: bool,
) -> Result<(), SampleRefusal> {
    if large_state != LargeState::Large && !job_has_sample {
        return Err(SampleRefusal::NotLarge);
    }
    if ticket_is_sample {
        return Err(SampleRefusal::AlreadySample);
    }
    if ticket_through {
        return Err(SampleRefusal::TicketThrough);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yes() -> Reading {
        Reading::Yes {
            evidence: "a 5-minute MV".into(),
        }
    }

    #[test]
    fn stored_values_round_trip() {
        for s in LargeState::ALL {
            assert_eq!(LargeState::parse(s.as_str()), Ok(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        for s in LargeSource::ALL {
            assert_eq!(LargeSource::parse(s.as_str()), Ok(s));
        }
        assert!(LargeState::parse("big").unwrap_err().contains("'big'"));
        assert!(LargeSource::parse("bot").is_err());
    }

    #[test]
    fn lj1_reader_reads_only_unread_jobs() {
        // S-LJ1: "make a 5-minute MV" marks it large with evidence.
        let large = next_large(&LargeJob::unread(), LargeEvent::Reader(yes()));
        assert_eq!(large.state, LargeState::Large);
        assert_eq!(large.source, Some(LargeSource::Reader));
        assert_eq!(large.evidence.as_deref(), Some("a 5-minute MV"));
        // Unsure is no; a failed reading leaves it unread.
        let no = next_large(&LargeJob::unread(), LargeEvent::Reader(Reading::No));
        assert_eq!(no.state, LargeState::NotLarge);
        let failed = next_large(&LargeJob::unread(), LargeEvent::Reader(Reading::Failed));
        assert_eq!(failed, LargeJob::unread());
        // A read job is not read again.
        assert_eq!(next_large(&no, LargeEvent::Reader(yes())), no);
    }

    #[test]
    fn lj2_no_need_is_sticky() {
        let no_need = next_large(&LargeJob::unread(), LargeEvent::UserNoNeed);
        assert_eq!(no_need.state, LargeState::NotLarge);
        assert_eq!(no_need.source, Some(LargeSource::User));
        assert!(no_need.user_said_no_need);
        assert_eq!(next_large(&no_need, LargeEvent::Reader(yes())), no_need);
        assert_eq!(
            next_large(&no_need, LargeEvent::SupervisorReread(None)),
            no_need
        );
        // Even if a stored row were unread with the flag set, no reading marks it large.
        let odd = LargeJob {
            user_said_no_need: true,
            ..LargeJob::unread()
        };
        assert_eq!(
            next_large(&odd, LargeEvent::Reader(yes())).state,
            LargeState::NotLarge
        );
        // The user's own "Treat as large" still works, and is the user's choice too.
        let treat = next_large(&no_need, LargeEvent::UserTreatAsLarge);
        assert_eq!(treat.state, LargeState::Large);
        assert_eq!(treat.source, Some(LargeSource::User));
        assert!(!treat.user_said_no_need);
    }

    #[test]
    fn lj3_supervisor_reread() {
        let job = LargeJob::unread();
        assert!(reread_eligible(&job, false, 3));
        assert!(!reread_eligible(&job, false, 2));
        assert!(!reread_eligible(&job, true, 3));
        let laid_out = LargeJob {
            laid_out: true,
            ..LargeJob::unread()
        };
        assert!(!reread_eligible(&laid_out, false, 5));
        // S-LJ2: after "No need" it is never re-read.
        let no_need = next_large(&job, LargeEvent::UserNoNeed);
        assert!(!reread_eligible(&no_need, false, 3));
        // S-LJ4: no model able to read → large, by the supervisor.
        let marked = next_large(&job, LargeEvent::SupervisorReread(None));
        assert_eq!(marked.state, LargeState::Large);
        assert_eq!(marked.source, Some(LargeSource::Supervisor));
        assert!(marked.evidence.is_some());
        let read_no = next_large(&job, LargeEvent::SupervisorReread(Some(Reading::No)));
        assert_eq!(read_no.state, LargeState::NotLarge);
        let read_yes = next_large(&job, LargeEvent::SupervisorReread(Some(yes())));
        assert_eq!(
            (read_yes.state, read_yes.source),
            (LargeState::Large, Some(LargeSource::Supervisor))
        );
    }

    #[test]
    fn layout_stands_lj5() {
        assert_eq!(layout_stands(true, 1, 2), Ok(()));
        assert_eq!(
            layout_stands(true, 0, 3),
            Err(LayoutError::LayoutNeedsSample)
        );
        assert_eq!(
            layout_stands(true, 1, 0),
            Err(LayoutError::LayoutNeedsSample)
        );
        assert_eq!(
            layout_stands(true, 2, 3),
            Err(LayoutError::SampleDuplicate(2))
        );
        assert_eq!(
            layout_stands(false, 2, 3).unwrap_err().code(),
            "sample_duplicate"
        );
        assert_eq!(layout_stands(false, 0, 0), Ok(()));
        assert_eq!(
            layout_stands(true, 0, 0).unwrap_err().code(),
            "layout_needs_sample"
        );
    }

    #[test]
    fn lj4_generation_allowed() {
        assert!(!generation_allowed(LargeState::Large, false));
        assert!(generation_allowed(LargeState::Large, true));
        assert!(generation_allowed(LargeState::Unread, false));
        assert!(generation_allowed(LargeState::NotLarge, false));
        assert!(LAY_IT_OUT_FIRST.contains("lay it out first"));
        let laid = next_large(
            &next_large(&LargeJob::unread(), LargeEvent::UserTreatAsLarge),
            LargeEvent::LaidOut,
        );
        assert!(generation_allowed(laid.state, laid.laid_out));
    }

    #[test]
    fn sa5_make_it_the_sample() {
        assert_eq!(
            can_make_sample(LargeState::Large, false, false, false),
            Ok(())
        );
        assert_eq!(
            can_make_sample(LargeState::NotLarge, true, false, false),
            Ok(())
        );
        assert_eq!(
            can_make_sample(LargeState::NotLarge, false, false, false),
            Err(SampleRefusal::NotLarge)
        );
        assert_eq!(
            can_make_sample(LargeState::Large, true, true, false)
                .unwrap_err()
                .code(),
            "ticket_through"
        );
        assert_eq!(
            can_make_sample(LargeState::Large, true, false, true)
                .unwrap_err()
                .code(),
            "already_sample"
        );
    }
}
