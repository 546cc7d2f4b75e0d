//! External jobs (digest 003-B §8, EJ1…EJ9): one render a media server accepted through a
//! paired `submit_<x>` / `check_<x>` tool. The app registers it, polls it outside any turn on
//! its own schedule, and wakes the Bots that care when it settles. This module holds the rules
//! as pure functions: the state machine, the poll schedule, the three-hour give-up, what a
//! Bot's own check reads, the `job_pending` rule and the texts the Bots read.

pub mod answer;
pub mod pairing;

use serde::{Deserialize, Serialize};

pub use answer::{
    CheckAnswer, RemoteStatus, SubmitAnswer, parse_check_answer, parse_submit_answer,
};
pub use pairing::{
    Paired, canonical_arguments, check_arguments, job_ids_named, pair, part_numbers_named,
    payload_without_reason,
};

/// The first polls' delays after a submit and after each poll still pending: 30 s, 1, 2 and 4
/// minutes (EJ5); then [`POLL_EVERY_MS`].
pub const POLL_STEPS_MS: [i64; 4] = [30_000, 60_000, 120_000, 240_000];
/// The delay once the first steps are spent.
pub const POLL_EVERY_MS: i64 = 300_000;
/// Still pending this long after its submit: given up as lost (EJ6).
pub const LOST_AFTER_MS: i64 = 3 * 3_600_000;
/// The same server, tool and arguments this soon get the job already started (EJ2).
pub const DEDUPE_WINDOW_MS: i64 = 30 * 60_000;
/// The argument that overrides `job_pending`; kept on the job, never sent to the server (EJ3).
pub const RESUBMIT_REASON: &str = "resubmit_reason";

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum JobStatus {
    Pending,
    Done,
    Failed,
    /// Still pending three hours after its submit.
    Lost,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "pending",
            JobStatus::Done => "done",
            JobStatus::Failed => "failed",
            JobStatus::Lost => "lost",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "pending" => Ok(JobStatus::Pending),
            "done" => Ok(JobStatus::Done),
            "failed" => Ok(JobStatus::Failed),
            "lost" => Ok(JobStatus::Lost),
            other => Err(format!(
                "unknown external job status '{other}' (expected pending, done, failed or lost)"
            )),
        }
    }
    pub fn is_finished(self) -> bool {
        self != JobStatus::Pending
    }
}

/// The delay before poll number `step` (0 is the first poll after the submit).
pub fn poll_delay(step: u32) -> i64 {
    POLL_STEPS_MS
        .get(step as usize)
        .copied()
        .unwrap_or(POLL_EVERY_MS)
}

/// When poll `step` is due for a job submitted at `created_at`, asked at `now`: never past the
/// moment it would be lost, so the give-up is judged on time, by a last poll.
pub fn next_poll_at(created_at: i64, now: i64, step: u32) -> i64 {
    (now + poll_delay(step)).min(created_at + LOST_AFTER_MS)
}

/// What one poll found, as the machine reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum PollOutcome {
    /// The server answered; `answer.status` says how the job stands.
    Answered(CheckAnswer),
    /// The check could not be made or read (server down, tool error): the job is as it was.
    Unanswered(String),
}

/// What the poller writes after one poll.
#[derive(Clone, Debug, PartialEq)]
pub enum Settlement {
    /// Still pending: poll again at `next_poll_at`, at the next step.
    Again { next_poll_at: i64, poll_step: u32 },
    /// Settled: `status` is done, failed or lost; the submitter and waiters are woken.
    Finished { status: JobStatus },
}

/// §8.2: pending → done | failed on a poll's answer; pending → lost once three hours have
/// passed with no final answer. A settled job is never polled, so only a pending job is asked.
pub fn settle(created_at: i64, now: i64, poll_step: u32, outcome: &PollOutcome) -> Settlement {
    if let PollOutcome::Answered(a) = outcome {
        match a.status {
            RemoteStatus::Done => {
                return Settlement::Finished {
                    status: JobStatus::Done,
                };
            }
            RemoteStatus::Failed => {
                return Settlement::Finished {
                    status: JobStatus::Failed,
                };
            }
            RemoteStatus::Pending => {}
        }
    }
    if now >= created_at + LOST_AFTER_MS {
        return Settlement::Finished {
            status: JobStatus::Lost,
        };
    }
    let step = poll_step + 1;
    Settlement::Again {
        next_poll_at: next_poll_at(created_at, now, step),
        poll_step: step,
    }
}

/// A job already registered with the same server, tool and arguments, as dedupe reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Earlier {
    pub status: JobStatus,
    pub created_at: i64,
}

/// EJ2: whether an earlier job answers this submit without reaching the server. Failed and
/// lost ones do not: submitting again after a failure is a retry, not a duplicate.
pub fn dedupes(earlier: &Earlier, now: i64) -> bool {
    now - earlier.created_at < DEDUPE_WINDOW_MS
        && matches!(earlier.status, JobStatus::Pending | JobStatus::Done)
}

/// How the named part stands, for EJ3.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PartJob {
    /// A job on the part is still pending.
    Running,
    /// A job on the part finished with a result no hand-over has carried since.
    NotHandedOver,
}

/// Why a submit was refused (an ordinary failed call the model can act on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub text: String,
}

/// EJ3: a submit whose prompt names exactly one part, while that part has a job running or a
/// result not handed over, needs a `resubmit_reason`.
pub fn check_submit(
    named_parts: &[i64],
    part_job: Option<PartJob>,
    resubmit_reason: Option<&str>,
) -> Result<(), Refusal> {
    let [part] = named_parts else {
        return Ok(());
    };
    if resubmit_reason.is_some_and(|r| !r.trim().is_empty()) {
        return Ok(());
    }
    let why = match part_job {
        None => return Ok(()),
        Some(PartJob::Running) => "has a render still running",
        Some(PartJob::NotHandedOver) => "has a finished render not handed over yet",
    };
    Err(Refusal {
        code: "job_pending",
        text: format!(
            "job_pending: part {part} {why}; nothing was sent. Wait for it (the app wakes you \
             when it finishes) or hand its result over. To submit again anyway, call again with \
             `{RESUBMIT_REASON}` saying why (kept on the job, not sent to the server)."
        ),
    })
}

/// A registered job as the Bots read it.
#[derive(Clone, Debug, PartialEq)]
pub struct JobView<'a> {
    /// The job's display id (e.g. `ej_3`).
    pub id: &'a str,
    pub remote_id: &'a str,
    pub status: JobStatus,
    /// The server's last answer, if any was read.
    pub answer: Option<&'a CheckAnswer>,
}

/// EJ1: what a submit's caller reads once its job is registered (or deduped to one).
pub fn submitted_text(job: &JobView<'_>, deduped: bool, server_reply: &str) -> String {
    let lead = if deduped {
        format!(
            "The same request was submitted less than {} minutes ago: it is job {} (remote id \
             {}), {}; nothing was sent again.",
            DEDUPE_WINDOW_MS / 60_000,
            job.id,
            job.remote_id,
            job.status.as_str()
        )
    } else {
        format!(
            "{}\nRegistered as external job {} (remote id {}).",
            server_reply.trim_end(),
            job.id,
            job.remote_id
        )
    };
    match job.status {
        JobStatus::Pending => format!(
            "{lead} The app polls it and wakes you when it finishes: do not poll it yourself \
             or book check-backs for it; go on with other work or end your turn."
        ),
        _ => format!("{lead}\n{}", state_text(job)),
    }
}

/// EJ4: what a Bot's own check reads: the last state the app heard, without reaching the
/// server; the Bot becomes a waiter.
pub fn cached_text(job: &JobView<'_>) -> String {
    format!(
        "{}\n(The app's last word on job {}, remote id {}; the server was not asked. You are \
         on its waiting list and will be woken when it settles.)",
        state_text(job),
        job.id,
        job.remote_id
    )
}

/// EJ6: the line that wakes the submitter and the waiters.
pub fn finished_text(job: &JobView<'_>) -> String {
    format!(
        "External job {} ({}): {}",
        job.id,
        job.remote_id,
        state_text(job)
    )
}

/// The job's state in words: a line answer passed on whole, else url, duration and cost.
fn state_text(job: &JobView<'_>) -> String {
    match job.status {
        JobStatus::Pending => "still pending.".to_string(),
        JobStatus::Lost => format!(
            "lost: still pending {} hours after it was submitted, so the app stopped polling \
             it. Check the server, or submit again with `{RESUBMIT_REASON}`.",
            LOST_AFTER_MS / 3_600_000
        ),
        JobStatus::Done | JobStatus::Failed => {
            let word = if job.status == JobStatus::Done {
                "done"
            } else {
                "failed"
            };
            match job.answer {
                Some(a) => format!("{word}.\n{}", a.describe()),
                None => format!("{word}."),
            }
        }
    }
}

/// The delivery key of the wake a finished job gives one thread: a repeat tick delivers once.
pub fn wake_key(job_id: i64, thread_id: i64) -> String {
    format!("external_job:{job_id}:wake:{thread_id}")
}

/// EJ8: a check-back note naming a job being polled (by its display id or its remote id) is
/// refused: the app already wakes the Bot.
pub fn note_names_polled_job<'a>(note: &str, polled: &'a [(String, String)]) -> Option<&'a str> {
    let lower = note.to_lowercase();
    polled.iter().find_map(|(id, remote)| {
        let named = names_word(&lower, &id.to_lowercase())
            || (remote.chars().count() >= 3 && names_word(&lower, &remote.to_lowercase()));
        named.then_some(id.as_str())
    })
}

/// `needle` occurs in `hay` not as part of a longer word.
fn names_word(hay: &str, needle: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    hay.match_indices(needle).any(|(at, _)| {
        let before = hay[..at].chars().next_back();
        let after = hay[at + needle.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The refusal EJ8 gives a check-back whose note names a polled job.
pub fn polled_job_refusal(job_id: &str) -> Refusal {
    Refusal {
        code: "polled_job",
        text: format!(
            "polled_job: your note names external job {job_id}, which the app is polling; it \
             wakes you when the job finishes, so no check-back is booked. Go on with other work \
             or end your turn."
        ),
    }
}

#[cfg(test)]
mod tests;
