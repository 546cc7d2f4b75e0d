//! Who has the ball on an open ticket (digest C §13, BH-1…BH-8): the one party the ticket is
//! waiting on now, derived from its facts every time and never stored (BH-1), so the
//! supervisor wakes only that party and the board says who it is. First match wins:
//!
//! 0. its external job runs → the poller (EJ7: nobody is called back to poll);
//! 1. an open request whose recipient can take work → the recipient, unless it asks for a
//!    deliverable whose hand-over is in checks or review (then the review decides, 5);
//! 2. a question awaiting the user → the user; a ceiling card (B §7) too;
//! 3. a blocked work item → the user;
//! 4. a hold over the ticket or a ticket it depends on → the user;
//! 5. the hand-over: checks running → the app; failed checks or rework → the owner; in
//!    review → the reviewer, or the app when there is none; awaiting the user's word (or an
//!    in-review ticket with no hand-over) → the user, unless a bound check failed on its last
//!    run → the owner;
//! 6. the owner → the plan lead ("to hand it out") → nobody.
//!
//! Parked, done and dormant plans, and closed tickets, show no ball at all.

use crate::{BotId, WorkItemId};
use serde::{Deserialize, Serialize};

/// The kind of party holding the ball.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Holder {
    Bot,
    User,
    Reviewer,
    /// The app itself (its checks, or the approval with no reviewer at the next tick).
    App,
    /// The external-job poller (EJ7).
    Poller,
    /// Nobody is on it: the user has to hand it to someone.
    Nobody,
}

/// Which rule gave the ball, one value per rule.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BallWhy {
    ExternalJob,
    Request,
    Question,
    Ceiling,
    Blocked,
    Held,
    DependencyHeld,
    Checking,
    FailedCheck,
    AwaitingWord,
    InReviewUnsubmitted,
    InReview,
    NoReviewer,
    Rework,
    Owner,
    Lead,
    Unclaimed,
}

/// The ball of one open ticket: `{holder, bot_id?, work_item_id?, why, text}`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ball {
    pub holder: Holder,
    /// The Bot holding it (holder `bot` or `reviewer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_id: Option<BotId>,
    /// The holding Bot's work to wake; none when it has no work item yet (BH-3 says where to
    /// wake it then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_item_id: Option<WorkItemId>,
    pub why: BallWhy,
    /// The board's line (BH-7).
    pub text: String,
}

/// A Bot as the derivation sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotFacts {
    pub bot_id: BotId,
    pub name: String,
    /// Its work on this ticket (or the job), if it has any.
    pub work_item_id: Option<WorkItemId>,
    /// BH-2: not archived and a member of one of the job's conversations.
    pub can_take_work: bool,
}

/// An open request (delegation) on the ticket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestFacts {
    pub recipient: BotFacts,
    /// It asks for a deliverable and the recipient's hand-over is in checks or review
    /// (awaiting the user's word included): the approval answers it, not the recipient.
    pub deliverable_in_review: bool,
}

/// The ticket's latest hand-over that is still undecided or decided against (superseded and
/// approved ones are not read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandOver {
    /// Its checks are running.
    Checking,
    /// A gate failed when it was handed over.
    FailedChecks,
    /// Passed its gates; with the reviewer, or with nobody when there is none.
    InReview { reviewer: Option<BotFacts> },
    /// Waiting on the user's word (ADR 0084).
    AwaitingWord,
    /// Sent back to its maker.
    Rework,
}

/// Everything the derivation reads, as plain data gathered by the caller.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct BallFacts {
    /// The plan is parked, done or dormant: no ball is shown.
    pub plan_quiet: bool,
    /// Neither approved nor dropped/parked.
    pub ticket_open: bool,
    /// Open requests on the ticket, oldest first.
    pub requests: Vec<RequestFacts>,
    /// A Bot's question card (a live segment's ask, or a blocked item's work question) the
    /// user has not answered.
    pub question: Option<BotFacts>,
    /// A work item on the ticket only the user can move on.
    pub blocked: Option<BotFacts>,
    /// A hold in force covers the ticket.
    pub held: bool,
    /// The number (`#NN`) of a ticket it depends on that a hold covers.
    pub held_dependency: Option<u32>,
    pub hand_over: Option<HandOver>,
    /// The ticket is in review with no hand-over on record (moved there on the board).
    pub in_review_without_hand_over: bool,
    /// A check bound to the ticket (by id, or a path inside its folder) failed on its last run.
    pub bound_check_failed: bool,
    pub owner: Option<BotFacts>,
    /// The derived plan lead (never stored, BH-1), already one that can take work.
    pub lead: Option<BotFacts>,
    /// EJ7: an external job runs on the ticket (filled by the external-jobs work).
    pub external_job_running: bool,
    /// B §7: a part of the ticket stands at its capability ceiling, its card unanswered.
    pub at_ceiling: bool,
}

/// The plan lead among candidates in the order of §13 (stored lead, opener, a confirmed group
/// lead of the job's groups, the Bot with most turns): the first that can take work.
pub fn first_able(candidates: impl IntoIterator<Item = BotFacts>) -> Option<BotFacts> {
    candidates.into_iter().find(|b| b.can_take_work)
}

fn with_bot(holder: Holder, b: &BotFacts, why: BallWhy, text: String) -> Ball {
    Ball {
        holder,
        bot_id: Some(b.bot_id),
        work_item_id: b.work_item_id,
        why,
        text,
    }
}

fn plain(holder: Holder, why: BallWhy, text: impl Into<String>) -> Ball {
    Ball {
        holder,
        bot_id: None,
        work_item_id: None,
        why,
        text: text.into(),
    }
}

/// Whose the ball is on the ticket; `None` when nothing is shown (parked, done or dormant
/// plan, closed ticket).
pub fn ball_holder(f: &BallFacts) -> Option<Ball> {
    if f.plan_quiet || !f.ticket_open {
        return None;
    }
    if f.external_job_running {
        return Some(plain(
            Holder::Poller,
            BallWhy::ExternalJob,
            "Waiting on a render",
        ));
    }
    if let Some(r) = f
        .requests
        .iter()
        .find(|r| r.recipient.can_take_work && !r.deliverable_in_review)
    {
        let b = &r.recipient;
        let text = format!("With {}, on a delegated part", b.name);
        return Some(with_bot(Holder::Bot, b, BallWhy::Request, text));
    }
    if let Some(b) = &f.question {
        let text = format!("Waiting on you: answer {}'s question", b.name);
        return Some(plain(Holder::User, BallWhy::Question, text));
    }
    if f.at_ceiling {
        return Some(plain(
            Holder::User,
            BallWhy::Ceiling,
            "Waiting on you: it reached its capability ceiling; say how to go on",
        ));
    }
    if let Some(b) = &f.blocked {
        let text = format!(
            "Waiting on you: {} is stuck and needs something from you",
            b.name
        );
        return Some(plain(Holder::User, BallWhy::Blocked, text));
    }
    if f.held {
        return Some(plain(
            Holder::User,
            BallWhy::Held,
            "Waiting on you: stopped; lift the stop to go on",
        ));
    }
    if let Some(n) = f.held_dependency {
        let text = format!("Waiting on you: #{n:02}, which it depends on, is stopped");
        return Some(plain(Holder::User, BallWhy::DependencyHeld, text));
    }
    if let Some(ball) = review(f) {
        return Some(ball);
    }
    Some(owner_or_lead(f, BallWhy::Owner))
}

const YOUR_WORD: &str = "Waiting on your word: say it is fine, or what to fix";

/// Rule 5: what the hand-over waits for.
fn review(f: &BallFacts) -> Option<Ball> {
    let users = |why: BallWhy| {
        // A bound check failing sends it back to the maker before the user is asked.
        if f.bound_check_failed {
            owner_or_lead(f, BallWhy::FailedCheck)
        } else {
            plain(Holder::User, why, YOUR_WORD)
        }
    };
    Some(match &f.hand_over {
        Some(HandOver::Checking) => plain(
            Holder::App,
            BallWhy::Checking,
            "The app is running its checks",
        ),
        Some(HandOver::FailedChecks) => owner_or_lead(f, BallWhy::FailedCheck),
        Some(HandOver::Rework) => owner_or_lead(f, BallWhy::Rework),
        Some(HandOver::AwaitingWord) => users(BallWhy::AwaitingWord),
        Some(HandOver::InReview { reviewer: Some(r) }) if r.can_take_work => {
            let text = format!("Waiting on {}'s review", r.name);
            with_bot(Holder::Reviewer, r, BallWhy::InReview, text)
        }
        Some(HandOver::InReview { .. }) => plain(
            Holder::App,
            BallWhy::NoReviewer,
            "Approved by the app at the next tick",
        ),
        None if f.in_review_without_hand_over => users(BallWhy::InReviewUnsubmitted),
        None => return None,
    })
}

/// Rule 6, also where the owner's own rules fall when the owner cannot take work.
fn owner_or_lead(f: &BallFacts, why: BallWhy) -> Ball {
    if let Some(o) = f.owner.as_ref().filter(|o| o.can_take_work) {
        let text = match why {
            BallWhy::FailedCheck => format!("With {}: a check failed on its last run", o.name),
            BallWhy::Rework => format!("With {}, for rework", o.name),
            _ => format!("With {}", o.name),
        };
        return with_bot(Holder::Bot, o, why, text);
    }
    if let Some(l) = f.lead.as_ref().filter(|l| l.can_take_work) {
        let text = format!("Waiting on {} to hand it out", l.name);
        return with_bot(Holder::Bot, l, BallWhy::Lead, text);
    }
    plain(
        Holder::Nobody,
        BallWhy::Unclaimed,
        "Waiting on you: nobody is on it",
    )
}

#[cfg(test)]
#[path = "ball_tests.rs"]
mod tests;
