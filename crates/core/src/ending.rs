//! The ending contract (END-1…19, DEL-22/23, ASK-6…9, DS-13, MSG-2): whether a segment may
//! end the way it asks to, and what it is told when it may not. A bounce sends the ending
//! back with words the Bot can act on; a shared budget keeps it from cycling for ever.

use crate::check_back::tool_args as args;
use serde::{Deserialize, Serialize};

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndKind {
    #[default]
    Done,
    Answered,
    NothingNew,
    /// Only for what the user alone can give (END-4).
    Blocked,
    GaveUp,
}

impl EndKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EndKind::Done => "done",
            EndKind::Answered => "answered",
            EndKind::NothingNew => "nothing_new",
            EndKind::Blocked => "blocked",
            EndKind::GaveUp => "gave_up",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "done" => Ok(EndKind::Done),
            "answered" => Ok(EndKind::Answered),
            "nothing_new" => Ok(EndKind::NothingNew),
            "blocked" => Ok(EndKind::Blocked),
            "gave_up" => Ok(EndKind::GaveUp),
            other => Err(format!(
                "unknown end reason '{other}' (expected done, answered, nothing_new, blocked \
                 or gave_up)"
            )),
        }
    }
}

/// What the Bot did with one piece of user mail it read.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    Adopted,
    Answered,
    Declined,
    Deferred,
}

impl Disposition {
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Adopted => "adopted",
            Disposition::Answered => "answered",
            Disposition::Declined => "declined",
            Disposition::Deferred => "deferred",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "adopted" => Ok(Disposition::Adopted),
            "answered" => Ok(Disposition::Answered),
            "declined" => Ok(Disposition::Declined),
            "deferred" => Ok(Disposition::Deferred),
            other => Err(format!(
                "unknown disposition '{other}' (expected adopted, answered, declined or deferred)"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxDisposition {
    /// The short id the Bot was shown for the mail.
    pub id: String,
    pub disposition: Disposition,
    pub why: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndTurnArgs {
    pub reason: EndKind,
    pub answer: Option<String>,
    pub note: Option<String>,
    pub needs_from_user: Option<String>,
    pub inbox: Vec<InboxDisposition>,
}

const END_TURN_KEYS: &[&str] = &["reason", "answer", "note", "needs_from_user", "inbox"];
const INBOX_KEYS: &[&str] = &["id", "disposition", "why"];

/// END-2: `end_turn`'s arguments. A thrown error here is a malformed call (END-18 decides
/// whether a desk spends budget on it).
pub fn parse_end_turn_args(json: &str) -> Result<EndTurnArgs, String> {
    use serde_json::Value;
    let obj = args::object("end_turn", json)?;
    args::refuse_unknown("end_turn", &obj, END_TURN_KEYS)?;
    let allowed = "one of \"done\", \"answered\", \"nothing_new\", \"blocked\" or \"gave_up\"";
    let raw = args::required_text(&obj, "reason", allowed)?;
    let reason = EndKind::parse(&raw)
        .map_err(|_| format!("`reason` is \"{raw}\", which is not allowed: use {allowed}."))?;
    let answer = args::optional_text(&obj, "answer")?;
    let note = args::optional_text(&obj, "note")?;
    let needs_from_user = args::optional_text(&obj, "needs_from_user")?;
    if reason == EndKind::Blocked && needs_from_user.is_none() {
        return Err(
            "`needs_from_user` is required when reason is \"blocked\": say what only the user \
             can give (an account, a permission, a decision that is theirs). If you are waiting \
             on another Bot, delegate to it or end with reason \"nothing_new\" instead."
                .into(),
        );
    }
    if reason == EndKind::GaveUp && note.is_none() {
        return Err(
            "`note` is required when reason is \"gave_up\": say what you tried and why you \
             are giving up."
                .into(),
        );
    }
    let mut inbox = Vec::new();
    let entries = match obj.get("inbox") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => {
            return Err(
                "`inbox` must be a list like [{\"id\": \"a1\", \"disposition\": \"adopted\"}]."
                    .into(),
            );
        }
    };
    for (n, entry) in entries.iter().enumerate() {
        let at = format!("`inbox` entry {}", n + 1);
        let Some(e) = entry.as_object() else {
            return Err(format!(
                "{at} must be an object like {{\"id\": \"a1\", \"disposition\": \"adopted\"}}."
            ));
        };
        if let Some(bad) = e.keys().find(|k| !INBOX_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "{at} has `{bad}`, which is not allowed; an entry takes id, disposition and why."
            ));
        }
        let id = match e.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(format!("{at} needs `id`: the id of a line you read.")),
        };
        let disposition = match e.get("disposition").and_then(Value::as_str) {
            Some(d) => Disposition::parse(d.trim()).map_err(|_| {
                format!(
                    "{at} (id {id}) has disposition \"{d}\": use adopted, answered, declined or \
                     deferred."
                )
            })?,
            None => {
                return Err(format!(
                    "{at} (id {id}) needs `disposition`: adopted, answered, declined or deferred."
                ));
            }
        };
        let why = args::optional_text(e, "why").map_err(|m| format!("{at}: {m}"))?;
        if disposition == Disposition::Declined && why.is_none() {
            return Err(format!(
                "{at} (id {id}) is declined without `why`: say why you will not do it."
            ));
        }
        inbox.push(InboxDisposition {
            id,
            disposition,
            why,
        });
    }
    Ok(EndTurnArgs {
        reason,
        answer,
        note,
        needs_from_user,
        inbox,
    })
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BounceKind {
    UnacknowledgedInbox,
    UnfinishedObligations,
    UnansweredRequest,
    AsksGoAhead,
    PromisedLater,
    SaidNothing,
    DeskRefusal,
}

impl BounceKind {
    pub fn code(self) -> &'static str {
        match self {
            BounceKind::UnacknowledgedInbox => "unacknowledged_inbox",
            BounceKind::UnfinishedObligations => "unfinished_obligations",
            BounceKind::UnansweredRequest => "unanswered_request",
            BounceKind::AsksGoAhead => "asks_go_ahead",
            BounceKind::PromisedLater => "promised_later",
            BounceKind::SaidNothing => "said_nothing",
            BounceKind::DeskRefusal => "desk_refusal",
        }
    }
}

/// Bounces (and desk refusals) a segment is shown before it needs a person.
pub const BOUNCE_BUDGET: u32 = 2;

/// END-7: a prose ending answers at a desk and counts as `done` in work.
pub fn prose_reason(mode_is_desk: bool) -> EndKind {
    if mode_is_desk {
        EndKind::Answered
    } else {
        EndKind::Done
    }
}

/// Everything the caller gathered about an ending attempt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndingFacts {
    /// Ignored for a prose ending, whose reason is [`prose_reason`].
    pub reason: EndKind,
    pub prose: bool,
    pub desk: bool,
    pub answer_given: bool,
    /// Short ids of user mail this segment read and gave no disposition (see [`unacknowledged`]).
    pub unacknowledged: Vec<String>,
    /// What it still owes, one description each.
    pub obligations: Vec<String>,
    pub has_valid_wait: bool,
    /// Requests it read that expect an answer in words, each naming who waits (DEL-22).
    pub unanswered_requests: Vec<String>,
    /// Its last words to the user, when the reading found they say it is still going.
    pub promised_later: Option<String>,
    /// Eligible for END-13 and no words reached the user.
    pub said_nothing: bool,
    pub budget_used: u32,
    /// Kinds already bounced in this segment; the caller adds each bounce it returns.
    pub bounced_once: Vec<BounceKind>,
    /// Its closing reply already went out (END-16).
    pub reply_already_out: bool,
    /// For the app's lines and the needs-attention text.
    pub bot_name: String,
    /// The conversation is the user's direct with this Bot: the user just tells it, no @.
    pub in_user_direct: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndingVerdict {
    /// The ending is refused; the segment goes on. When `counts`, the caller adds one to the
    /// budget.
    Bounce {
        kind: BounceKind,
        text: String,
        counts: bool,
    },
    /// The segment ends with this end reason; `app_line` is posted in the conversation.
    End {
        code: String,
        app_line: Option<String>,
    },
    /// The budget is spent: end the segment `needs_attention`, telling the user this.
    NeedsAttention { text: String },
}

/// END-16: a bounce after the reply went out must not make the Bot repeat itself.
const REPLY_OUT_PREFIX: &str = "Your reply has gone out as written; do not say it again.";

fn bounce(f: &EndingFacts, kind: BounceKind, text: String, counts: bool) -> EndingVerdict {
    if counts && f.budget_used >= BOUNCE_BUDGET {
        return EndingVerdict::NeedsAttention {
            text: format!(
                "{} could not end its turn: its ending was sent back {BOUNCE_BUDGET} times and \
                 still {}. Continue it or tell it what to do.",
                name_or_default(&f.bot_name),
                describe(kind)
            ),
        };
    }
    let text = if f.reply_already_out {
        format!("{REPLY_OUT_PREFIX} {text}")
    } else {
        text
    };
    EndingVerdict::Bounce { kind, text, counts }
}

fn describe(kind: BounceKind) -> &'static str {
    match kind {
        BounceKind::UnacknowledgedInbox => "left lines from you without a disposition",
        BounceKind::UnfinishedObligations => "left work it owes unfinished",
        BounceKind::UnansweredRequest => "left a request unanswered",
        _ => "could not end",
    }
}

fn name_or_default(name: &str) -> &str {
    if name.trim().is_empty() {
        "This Bot"
    } else {
        name.trim()
    }
}

/// A whole call to copy, with the ids the bounce names: a small model repeats the call it
/// made unless it is shown the one it should make instead.
fn inbox_example(reason: EndKind, ids: &[String]) -> String {
    let disposition = if reason == EndKind::Answered {
        "answered"
    } else {
        "adopted"
    };
    // Written out by hand so the reason comes first, as the model would write it.
    let inbox: Vec<String> = ids
        .iter()
        .map(|id| {
            let id = serde_json::Value::from(id.as_str());
            format!(r#"{{"id":{id},"disposition":"{disposition}"}}"#)
        })
        .collect();
    format!(
        r#"{{"reason":"{}","inbox":[{}]}}"#,
        reason.as_str(),
        inbox.join(",")
    )
}

fn bullets(items: &[String]) -> String {
    items.iter().map(|i| format!("\n- {}", i.trim())).collect()
}

/// Checks an ending attempt, in order: unacknowledged inbox (not prose), unanswered requests,
/// unfinished obligations (a `done` or prose ending, once), then `promised_later` and
/// `said_nothing`, which bounce once outside the budget and then let the ending through with
/// a line from the app, so the user knows the work stopped.
pub fn evaluate(f: &EndingFacts) -> EndingVerdict {
    let reason = if f.prose {
        prose_reason(f.desk)
    } else {
        f.reason
    };
    let once = |k: BounceKind| f.bounced_once.contains(&k);
    let mut code = reason.as_str().to_string();

    if !f.prose && !f.unacknowledged.is_empty() {
        return bounce(
            f,
            BounceKind::UnacknowledgedInbox,
            format!(
                "You read lines from the user and gave them no disposition: {}. End again with \
                 `inbox` listing each id with a disposition: \"adopted\" (you acted on it), \
                 \"answered\" (you replied to it), \"declined\" (you will not do it; give `why`) \
                 or \"deferred\" (later). For example: end_turn({})",
                f.unacknowledged.join(", "),
                inbox_example(reason, &f.unacknowledged)
            ),
            true,
        );
    }
    if reason == EndKind::Answered && !f.answer_given && !f.unanswered_requests.is_empty() {
        return bounce(
            f,
            BounceKind::UnansweredRequest,
            format!(
                "You read requests that wait for your answer, and ending \"answered\" without \
                 `answer` leaves them unanswered (a send_message does not answer them):{}\nEnd \
                 again with reason \"answered\" and put your reply in `answer`.",
                bullets(&f.unanswered_requests)
            ),
            true,
        );
    }
    let owes = !f.obligations.is_empty() && !f.has_valid_wait;
    if owes && (reason == EndKind::Done || f.prose) {
        if once(BounceKind::UnfinishedObligations) {
            // END-10: the retry is not a hand-over; it ends as having nothing new.
            code = EndKind::NothingNew.as_str().to_string();
        } else {
            return bounce(
                f,
                BounceKind::UnfinishedObligations,
                format!(
                    "You cannot end as done: you still owe{}\nFinish them now. If you are \
                     waiting on another Bot, delegate to it or end with reason \"nothing_new\"; \
                     \"blocked\" is only for what the user alone can give. To answer a request \
                     you read, end with reason \"answered\" and put your reply in `answer`.",
                    bullets(&f.obligations)
                ),
                true,
            );
        }
    }
    let quiet_ending = matches!(
        reason,
        EndKind::Done | EndKind::Answered | EndKind::NothingNew
    );
    let mut app_lines: Vec<String> = Vec::new();
    let name = name_or_default(&f.bot_name);
    if let (Some(words), true) = (
        &f.promised_later,
        quiet_ending && !owes && !f.has_valid_wait,
    ) {
        let words = words.trim();
        if !once(BounceKind::PromisedLater) {
            return bounce(
                f,
                BounceKind::PromisedLater,
                format!(
                    "You said \"{words}\", as if you were still working, but your turn is ending \
                     and nothing will bring you back to it. Choose one: do it now, in this turn; \
                     book a check_back and end with reason \"nothing_new\"; or name the Bot that \
                     takes it over."
                ),
                false,
            );
        }
        let how = if f.in_user_direct {
            "Tell it to continue.".to_string()
        } else {
            format!("Mention @{name} to have it continue.")
        };
        app_lines.push(format!(
            "{name} said \"{words}\", but its turn has ended and nobody is carrying it on. {how}"
        ));
    }
    if f.said_nothing && quiet_ending {
        if !once(BounceKind::SaidNothing) {
            return bounce(
                f,
                BounceKind::SaidNothing,
                "The user's line woke you and you are ending without a word to them: `answer`, \
                 `note` and `inbox` never reach the user, and files alone are not a reply. \
                 Reply to the user in the conversation, then end your turn."
                    .into(),
                false,
            );
        }
        app_lines.push(format!(
            "{name} ended its turn without replying. Say it again to get an answer."
        ));
    }
    EndingVerdict::End {
        code,
        app_line: (!app_lines.is_empty()).then(|| app_lines.join("\n")),
    }
}

/// ASK-6…9: a question read as only asking leave to go on. It is sent back once per segment
/// and counts toward the budget, but a spent budget lets the question through to the user
/// rather than ending the work `needs_attention`. `None`: the question reaches the user.
pub fn on_asks_go_ahead(budget_used: u32, already_bounced: bool) -> Option<EndingVerdict> {
    if already_bounced || budget_used >= BOUNCE_BUDGET {
        return None;
    }
    Some(EndingVerdict::Bounce {
        kind: BounceKind::AsksGoAhead,
        text: "You are asking only for leave to go on, and the user has already said what they \
               want. Do not wait for an OK or for them to look first: carry on, since they \
               review what you hand over and can stop you at any time. Stop only for what the \
               user alone can give (an account, a permission, knowledge only they have) or for a \
               choice that is theirs to make, and say which it is."
            .into(),
        counts: true,
    })
}

/// DS-13: the text a desk ends with once its refusals are spent.
pub const NEEDS_JOB_TEXT: &str = "This line needs a job selected before work can proceed.";

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DeskRefusal {
    /// Refuse the call; the caller adds one to the shared budget.
    Refuse,
    /// End the desk `needs_attention` with [`NEEDS_JOB_TEXT`] and run no further effect of the
    /// hop.
    NeedsAttention,
}

/// DS-13/END-18: a desk's attribution refusal spends the same budget as bounces, by the same
/// rule as [`evaluate`]: `budget_used` counts what was already spent before this one.
pub fn desk_refusal(budget_used: u32) -> DeskRefusal {
    if budget_used >= BOUNCE_BUDGET {
        DeskRefusal::NeedsAttention
    } else {
        DeskRefusal::Refuse
    }
}

/// MSG-2: progress messages per segment that are not a reply to a line.
pub const PROGRESS_LIMIT: usize = 3;

/// MSG-2/3: whether one more `send_message` may go out. Only `parent_id` exempts a message;
/// nothing guesses whether it "really" answers someone.
pub fn progress_message(sent_without_parent: usize, has_parent: bool) -> Result<(), String> {
    if has_parent || sent_without_parent < PROGRESS_LIMIT {
        return Ok(());
    }
    Err(format!(
        "progress_limit: you have already sent {PROGRESS_LIMIT} progress messages in this turn. \
         Keep working and put the rest in your closing reply; only a reply to a line (with \
         `parent_id` set) is exempt."
    ))
}

fn short_id(id: &str) -> &str {
    let id = id.trim();
    id.strip_prefix('#').unwrap_or(id)
}

/// END-8/9: user mail this segment read and gave no disposition, in reading order. A
/// disposition for an id it did not read records nothing and bounces nothing.
pub fn unacknowledged(read_mail: &[String], given: &[InboxDisposition]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in read_mail {
        let id = short_id(id);
        let disposed = given.iter().any(|g| short_id(&g.id) == id);
        if !disposed && !out.iter().any(|o| o == id) {
            out.push(id.to_string());
        }
    }
    out
}

/// What an ending records of the person's lines the segment read (END-3, END-6, END-9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineDisposition {
    /// The line's id, from the short id the Bot was shown.
    pub line: i64,
    pub disposition: Disposition,
    pub why: Option<String>,
    /// Recorded as answered by a prose ending, not given by the Bot (END-6).
    pub by_prose: bool,
}

/// The dispositions an ending records: each given for a line this segment read (one given
/// for anything else records nothing, END-9); with a prose ending, every read line not given
/// one is answered by the prose (END-6). Each line once, in reading order.
pub fn line_dispositions(
    read_mail: &[String],
    given: &[InboxDisposition],
    prose: bool,
) -> Vec<LineDisposition> {
    let mut out: Vec<LineDisposition> = Vec::new();
    for id in read_mail {
        let short = short_id(id);
        let Ok(line) = short.parse::<i64>() else {
            continue;
        };
        if out.iter().any(|d| d.line == line) {
            continue;
        }
        match given.iter().find(|g| short_id(&g.id) == short) {
            Some(g) => out.push(LineDisposition {
                line,
                disposition: g.disposition,
                why: g.why.clone(),
                by_prose: false,
            }),
            None if prose => out.push(LineDisposition {
                line,
                disposition: Disposition::Answered,
                why: None,
                by_prose: true,
            }),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests;
