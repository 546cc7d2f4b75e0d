//! Delegation (DEL-1…4, DEL-17, DEL-20, DEL-33): one Bot's named request to another's work on
//! a shared job. The rules here decide whether a `delegate` call may run, what the recipient
//! and sender read, and which open requests an `answered` ending settles by its words.

use crate::check_back::tool_args as args;
use crate::ids::{BotId, DelegationId};
use serde::{Deserialize, Serialize};

/// The kind of result the sender waits for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expects {
    /// Handed-over files; answered only by an approval, never by words (DEL-18).
    Deliverable,
    Review,
    Answer,
}

impl Expects {
    pub fn as_str(self) -> &'static str {
        match self {
            Expects::Deliverable => "deliverable",
            Expects::Review => "review",
            Expects::Answer => "answer",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "deliverable" => Ok(Expects::Deliverable),
            "review" => Ok(Expects::Review),
            "answer" => Ok(Expects::Answer),
            other => Err(format!(
                "unknown expects '{other}' (expected deliverable, review or answer)"
            )),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelegationState {
    Open,
    Replied,
    Cancelled,
}

impl DelegationState {
    pub fn as_str(self) -> &'static str {
        match self {
            DelegationState::Open => "open",
            DelegationState::Replied => "replied",
            DelegationState::Cancelled => "cancelled",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "open" => Ok(DelegationState::Open),
            "replied" => Ok(DelegationState::Replied),
            "cancelled" => Ok(DelegationState::Cancelled),
            other => Err(format!(
                "unknown delegation state '{other}' (expected open, replied or cancelled)"
            )),
        }
    }
}

/// `delegate`'s arguments once they parse; nothing is resolved yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelegateArgs {
    /// Id or exact name of the Bot asked.
    pub to: String,
    pub ask: String,
    pub expects: Expects,
    pub ticket: Option<i64>,
    pub parts: Vec<String>,
    pub requirement_ids: Vec<i64>,
    /// `continue: true`: the sender keeps working and no wait is made (DEL-10).
    pub continue_working: bool,
}

const DELEGATE_KEYS: &[&str] = &[
    "to",
    "ask",
    "expects",
    "ticket",
    "parts",
    "requirement_ids",
    "continue",
];

pub fn parse_delegate_args(json: &str) -> Result<DelegateArgs, String> {
    let obj = args::object("delegate", json)?;
    args::refuse_unknown("delegate", &obj, DELEGATE_KEYS)?;
    let to = args::required_text(
        &obj,
        "to",
        "the id or exact name of the Bot you ask, for example \"to\": \"Writer\"",
    )?;
    let ask = args::required_text(&obj, "ask", "what you need from that Bot, in words")?;
    let expects_raw = args::required_text(
        &obj,
        "expects",
        "one of \"deliverable\", \"review\" or \"answer\"",
    )?;
    let expects = Expects::parse(&expects_raw).map_err(|_| {
        format!(
            "`expects` is \"{expects_raw}\", which is not allowed: use \"deliverable\" \
             (files handed over), \"review\" (a verdict on work) or \"answer\" (a reply in words)."
        )
    })?;
    Ok(DelegateArgs {
        to,
        ask,
        expects,
        ticket: args::optional_int(&obj, "ticket", "the number of a ticket on this job")?,
        parts: args::string_list(&obj, "parts", "names of parts of the ticket")?,
        requirement_ids: args::int_list(&obj, "requirement_ids", "requirement numbers")?,
        continue_working: args::optional_bool(&obj, "continue")?,
    })
}

/// Why a `delegate` call was refused. A refusal is an ordinary failed call, never a bounce
/// (END-19).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelegateRefusal {
    pub code: &'static str,
    pub text: String,
}

/// Who `to` named, as the caller resolved it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Unknown(String),
    /// Several Bots fit the name; listed by name.
    Ambiguous(Vec<String>),
    Bot {
        id: BotId,
        name: String,
        archived: bool,
        /// Present in the segment's conversation, the work's home or the plan's home (DEL-2).
        present: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelegateCheck {
    /// DEL-1: a running work segment bound exactly to its work item and not held.
    pub caller_bound: bool,
    pub caller: BotId,
    pub target: Target,
}

fn refuse(code: &'static str, text: String) -> Result<(), DelegateRefusal> {
    Err(DelegateRefusal { code, text })
}

/// DEL-1…4 in a fixed order: an unbound caller is told so first even when `to` names nobody,
/// so a bad name can never be used to skip the binding check (DEL-4).
pub fn check_delegate(c: &DelegateCheck) -> Result<(), DelegateRefusal> {
    if !c.caller_bound {
        return refuse(
            "not_bound",
            "delegate needs your work bound to one job, and this turn is not: call work_on \
             to choose the job first, then delegate again."
                .into(),
        );
    }
    let (id, name, archived, present) = match &c.target {
        Target::Unknown(to) => {
            return refuse(
                "unknown_bot",
                format!(
                    "No Bot is called \"{to}\". Put the id or exact name of a Bot present in \
                     this conversation or the job's conversation in `to`."
                ),
            );
        }
        Target::Ambiguous(names) => {
            return refuse(
                "unknown_bot",
                format!(
                    "\"to\" fits several Bots: {}. Put exactly one of these names, or its id, \
                     in `to`.",
                    names.join(", ")
                ),
            );
        }
        Target::Bot {
            id,
            name,
            archived,
            present,
        } => (*id, name, *archived, *present),
    };
    if id == c.caller {
        // Said with the name: a model that missed who it is reads it here.
        return refuse(
            "self",
            format!(
                "You are {name}: you cannot delegate to yourself. A line that names {name} is \
                 yours to do — do this part yourself, or name another Bot in `to`."
            ),
        );
    }
    if archived {
        return refuse(
            "archived",
            format!("{name} is archived and takes no work. Name another Bot in `to`."),
        );
    }
    if !present {
        return refuse(
            "not_present",
            format!(
                "{name} is not in this conversation, the job's conversation or the plan's home \
                 conversation. Delegate to a Bot present there, or ask the user to bring {name} in."
            ),
        );
    }
    Ok(())
}

/// The waking mail the recipient reads (DEL-8). It says how to answer, since a `send_message`
/// never settles a delegation (DEL-19).
pub fn delegation_request_text(
    from: &str,
    ask: &str,
    expects: Expects,
    id: DelegationId,
) -> String {
    let how = match expects {
        Expects::Answer => {
            "Expected: an answer in words. When you have it, call end_turn with reason \
             \"answered\" and put your reply in `answer`; a send_message does not answer it."
        }
        Expects::Review => {
            "Expected: a review. Give your verdict by calling end_turn with reason \"answered\" \
             and your verdict in `answer`; work handed over for checking goes through its \
             formal review instead."
        }
        Expects::Deliverable => {
            "Expected: a deliverable. Make it and hand it over with submit; the request is \
             answered when the hand-over is approved, not by words."
        }
    };
    format!("{from} asks you ({id}): {}\n{how}", ask.trim())
}

/// How the recipient settles a request, in the words its situation and an ending's bounce use:
/// a deliverable by a hand-over, never by words (DEL-18).
pub fn how_to_answer(expects: Expects) -> &'static str {
    match expects {
        Expects::Answer => "answer it with end_turn({\"reason\":\"answered\",\"answer\":\"…\"})",
        Expects::Review => {
            "give your verdict with end_turn({\"reason\":\"answered\",\"answer\":\"…\"}); a \
             hand-over waiting for it gets the review tool instead"
        }
        Expects::Deliverable => {
            "make it and hand it over with submit; it is answered when that is approved, not \
             by words"
        }
    }
}

/// The reply mail the sender reads (DEL-20).
pub fn delegation_reply_text(to_name: &str, id: DelegationId, answer: &str) -> String {
    format!("{to_name} answered your request {id}:\n{}", answer.trim())
}

/// The mail a sender reads when its request is cancelled (DEL-33): cancellation is not an
/// answer, so it says what is left to do.
pub fn cancellation_text(to_name: &str, id: DelegationId, reason: &str) -> String {
    format!(
        "Your request {id} to {to_name} was cancelled ({}) and will not be answered. Do the \
         work yourself, delegate it to another Bot, or end with reason \"nothing_new\".",
        reason.trim()
    )
}

/// An open request to the ending segment's work item, as DEL-17 needs it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OpenRequest {
    pub id: DelegationId,
    pub expects: Expects,
    /// The ending segment read the request.
    pub read_by_segment: bool,
    /// Something within the request's reach is being checked, submitted or in review.
    pub review_in_flight: bool,
}

/// DEL-17/18: the open requests an `answered` ending with `answer` settles. A review with a
/// hand-over in flight goes through the formal review; a deliverable never ends by words.
pub fn answered_by_words(open: &[OpenRequest]) -> Vec<DelegationId> {
    open.iter()
        .filter(|r| match r.expects {
            Expects::Answer => true,
            Expects::Review => r.read_by_segment && !r.review_in_flight,
            Expects::Deliverable => false,
        })
        .map(|r| r.id)
        .collect()
}

/// DEL-20: a reply is committed exactly once.
pub fn reply(state: DelegationState) -> Result<DelegationState, String> {
    match state {
        DelegationState::Open => Ok(DelegationState::Replied),
        DelegationState::Replied => Err("this request is already replied".into()),
        DelegationState::Cancelled => Err("this request was cancelled".into()),
    }
}

/// DEL-33: only an open request can be cancelled; the request and its result stay recorded.
pub fn cancel(state: DelegationState) -> Result<DelegationState, String> {
    match state {
        DelegationState::Open => Ok(DelegationState::Cancelled),
        DelegationState::Replied => Err("this request is already replied".into()),
        DelegationState::Cancelled => Err("this request was already cancelled".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expects_and_state_round_trip_as_snake_case() {
        for e in [Expects::Deliverable, Expects::Review, Expects::Answer] {
            assert_eq!(Expects::parse(e.as_str()), Ok(e));
            assert_eq!(
                serde_json::to_string(&e).unwrap(),
                format!("\"{}\"", e.as_str())
            );
        }
        for s in [
            DelegationState::Open,
            DelegationState::Replied,
            DelegationState::Cancelled,
        ] {
            assert_eq!(DelegationState::parse(s.as_str()), Ok(s));
        }
        assert!(DelegationState::parse("closed").is_err());
    }

    #[test]
    fn delegate_args_parse_with_defaults() {
        let a =
            parse_delegate_args(r#"{"to":" Writer ","ask":"three slogans","expects":"answer"}"#)
                .unwrap();
        assert_eq!(a.to, "Writer");
        assert_eq!(a.expects, Expects::Answer);
        assert!(!a.continue_working);
        assert!(a.parts.is_empty() && a.requirement_ids.is_empty() && a.ticket.is_none());
        let b = parse_delegate_args(
            r#"{"to":"W","ask":"x","expects":"review","ticket":4,"parts":["a"],
                "requirement_ids":[1,2],"continue":true}"#,
        )
        .unwrap();
        assert_eq!(b.ticket, Some(4));
        assert_eq!(b.parts, vec!["a".to_string()]);
        assert_eq!(b.requirement_ids, vec![1, 2]);
        assert!(b.continue_working);
    }

    #[test]
    fn delegate_args_errors_name_the_field_and_what_is_allowed() {
        let missing_to = parse_delegate_args(r#"{"ask":"x","expects":"answer"}"#).unwrap_err();
        assert!(missing_to.contains("`to`"), "{missing_to}");
        let blank_ask =
            parse_delegate_args(r#"{"to":"W","ask":"  ","expects":"answer"}"#).unwrap_err();
        assert!(blank_ask.contains("`ask`"), "{blank_ask}");
        let bad = parse_delegate_args(r#"{"to":"W","ask":"x","expects":"files"}"#).unwrap_err();
        assert!(
            bad.contains("`expects`") && bad.contains("deliverable"),
            "{bad}"
        );
        let cont =
            parse_delegate_args(r#"{"to":"W","ask":"x","expects":"answer","continue":"yes"}"#)
                .unwrap_err();
        assert!(cont.contains("`continue`"), "{cont}");
        let not_obj = parse_delegate_args("[1]").unwrap_err();
        assert!(not_obj.contains("JSON object"), "{not_obj}");
    }

    #[test]
    fn delegate_unknown_keys_are_refused_by_name() {
        let e =
            parse_delegate_args(r#"{"to":"W","ask":"x","expects":"answer","wait":true,"due":3}"#)
                .unwrap_err();
        assert!(e.contains("`wait`") && e.contains("`due`"), "{e}");
        assert!(e.contains("requirement_ids"), "{e}");
    }

    fn bot(id: i64, name: &str) -> Target {
        Target::Bot {
            id: BotId(id),
            name: name.into(),
            archived: false,
            present: true,
        }
    }

    fn check(target: Target) -> DelegateCheck {
        DelegateCheck {
            caller_bound: true,
            caller: BotId(1),
            target,
        }
    }

    fn code(c: &DelegateCheck) -> &'static str {
        check_delegate(c).unwrap_err().code
    }

    #[test]
    fn refused_delegate_unknown_target_still_reports_not_bound_first() {
        let c = DelegateCheck {
            caller_bound: false,
            ..check(Target::Unknown("Nobody".into()))
        };
        let r = check_delegate(&c).unwrap_err();
        assert_eq!(r.code, "not_bound");
        assert!(r.text.contains("work_on"), "{}", r.text);
    }

    #[test]
    fn unknown_or_ambiguous_target_is_unknown_bot() {
        assert_eq!(code(&check(Target::Unknown("Zed".into()))), "unknown_bot");
        let r = check_delegate(&check(Target::Ambiguous(vec!["Ann".into(), "Anna".into()])))
            .unwrap_err();
        assert_eq!(r.code, "unknown_bot");
        assert!(r.text.contains("Ann, Anna"), "{}", r.text);
    }

    #[test]
    fn delegating_to_yourself_is_refused() {
        let refused = check_delegate(&check(bot(1, "Me"))).unwrap_err();
        assert_eq!(refused.code, "self");
        assert!(refused.text.starts_with("You are Me:"), "{}", refused.text);
    }

    #[test]
    fn archived_is_reported_before_absent() {
        let t = Target::Bot {
            id: BotId(2),
            name: "Old".into(),
            archived: true,
            present: false,
        };
        assert_eq!(code(&check(t)), "archived");
    }

    #[test]
    fn absent_bot_is_not_present() {
        let t = Target::Bot {
            id: BotId(2),
            name: "Far".into(),
            archived: false,
            present: false,
        };
        let r = check_delegate(&check(t)).unwrap_err();
        assert_eq!(r.code, "not_present");
        assert!(r.text.contains("Far"), "{}", r.text);
    }

    #[test]
    fn request_text_says_how_each_kind_is_answered() {
        let a = delegation_request_text("Lead", "three slogans", Expects::Answer, DelegationId(4));
        assert!(a.starts_with("Lead asks you (del_4): three slogans"), "{a}");
        assert!(a.contains("\"answered\"") && a.contains("`answer`"), "{a}");
        let d = delegation_request_text("Lead", "poster", Expects::Deliverable, DelegationId(5));
        assert!(d.contains("submit") && !d.contains("`answer`"), "{d}");
        let r = delegation_reply_text("Writer", DelegationId(4), " ok \n");
        assert_eq!(r, "Writer answered your request del_4:\nok");
        let c = cancellation_text("Writer", DelegationId(4), "Writer was archived");
        assert!(c.contains("cancelled (Writer was archived)"), "{c}");
    }

    fn open(id: i64, expects: Expects, read: bool, in_flight: bool) -> OpenRequest {
        OpenRequest {
            id: DelegationId(id),
            expects,
            read_by_segment: read,
            review_in_flight: in_flight,
        }
    }

    #[test]
    fn review_request_answered_by_words_only_when_read_and_nothing_in_review() {
        let reqs = [
            open(1, Expects::Review, true, false),
            open(2, Expects::Review, false, false),
            open(3, Expects::Review, true, true),
        ];
        assert_eq!(answered_by_words(&reqs), vec![DelegationId(1)]);
    }

    #[test]
    fn every_answer_request_is_answered_by_words_and_no_deliverable_is() {
        let reqs = [
            open(1, Expects::Answer, false, true),
            open(2, Expects::Deliverable, true, false),
            open(3, Expects::Answer, true, false),
        ];
        assert_eq!(
            answered_by_words(&reqs),
            vec![DelegationId(1), DelegationId(3)]
        );
    }

    #[test]
    fn a_request_is_replied_or_cancelled_once() {
        assert_eq!(reply(DelegationState::Open), Ok(DelegationState::Replied));
        assert!(
            reply(DelegationState::Replied)
                .unwrap_err()
                .contains("already replied")
        );
        assert!(
            reply(DelegationState::Cancelled)
                .unwrap_err()
                .contains("cancelled")
        );
        assert_eq!(
            cancel(DelegationState::Open),
            Ok(DelegationState::Cancelled)
        );
        assert!(cancel(DelegationState::Replied).is_err());
        assert!(cancel(DelegationState::Cancelled).is_err());
    }
}
