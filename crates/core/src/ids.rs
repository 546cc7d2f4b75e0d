//! Typed row ids. Integer ids keep the SQL portable (SQLite rowid, PostgreSQL identity).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = i64))]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}", $prefix, self.0)
            }
        }

        impl FromStr for $name {
            type Err = String;
            /// Accepts both the bare number and the prefixed display form.
            fn from_str(s: &str) -> Result<Self, String> {
                let digits = s.strip_prefix($prefix).unwrap_or(s);
                digits.parse::<i64>().map($name).map_err(|_| {
                    format!("'{s}' is not a valid {} id (expected {}N)", stringify!($name), $prefix)
                })
            }
        }
    };
}

id_type!(/// A kernel thread: the unit that runs a model loop.
    ThreadId, "th_");
id_type!(/// One execution of a thread's loop.
    RunId, "run_");
id_type!(/// A stored message.
    MessageId, "msg_");
id_type!(/// A durable inbox row.
    InboxItemId, "inb_");
id_type!(/// A row in the event log; monotonic.
    EventId, "ev_");
id_type!(/// A row in the effect ledger.
    EffectId, "eff_");
id_type!(/// A Bot.
    BotId, "bot_");
id_type!(/// A conversation (a "session" in the API).
    SessionId, "ses_");
id_type!(/// A line in a conversation.
    SessionMessageId, "sm_");
id_type!(/// A job (the seed's "task", a plan): the work toward one goal, across conversations.
    PlanId, "plan_");
id_type!(/// One Bot's work on a job (or its desk in a conversation).
    WorkItemId, "wi_");
id_type!(/// One Bot's named request to another's work item on a shared job.
    DelegationId, "del_");
id_type!(/// A one-time timer a Bot booked for its own work item.
    CheckBackId, "cb_");
id_type!(/// One deliverable of a job (its tickets arrive with Deliverables; holds name them already).
    TicketId, "tk_");
id_type!(/// A person's stop, kept as its own row until they lift it.
    HoldId, "hold_");
id_type!(/// One hand-over of a ticket's work: files or words, with its checks and reviews.
    SubmissionId, "sub_");
id_type!(/// A part of a ticket (a shot, a chapter), laid out by the lead or the user.
    PartId, "pt_");
id_type!(/// A Bot's verdict on a submission, made with the `review` tool.
    ReviewId, "rv_");
id_type!(/// An acceptance check on a job: the user's, or one from the user's words.
    CheckId, "ck_");
id_type!(/// A Lattice Run: one large goal aligned, planned as a Pathway and carried out Step by Step.
    LatticeRunId, "lat_");
id_type!(/// An entry of the requirements ledger, shown R-n (digest 003-C §6).
    RequirementId, "R-");
id_type!(/// One render a media server accepted, registered and polled by the app (B §8).
    ExternalJobId, "ej_");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_bare_and_prefixed() {
        assert_eq!("th_42".parse::<ThreadId>().unwrap(), ThreadId(42));
        assert_eq!("42".parse::<ThreadId>().unwrap(), ThreadId(42));
        assert!(
            "th_x"
                .parse::<ThreadId>()
                .unwrap_err()
                .contains("not a valid")
        );
        assert_eq!(RunId(7).to_string(), "run_7");
    }
}
