//! A person's line and the holds (§15, HOLD-L*): a line read as nothing but a stop is carried
//! out at once — the holds its words and place name, no filing, no turn, no line of the
//! app's — ahead of lines still waiting; any other line, in the write that files and routes
//! it, lifts the holds it is the person's word on, before anyone wakes.

use super::facts::thread_facts;
use super::lift::{AfterLift, lift_in};
use super::make::HoldSpec;
use crate::reader::UserLineReading;
use crate::{Collab, CollabError};
use troupe_core::conversation::{Author, Session, SessionKind, SessionMessage};
use troupe_core::hold::control::{ControlHandling, control_handling};
use troupe_core::hold::lift::{LineFacts, lift_by_line};
use troupe_core::hold::reopen::LiftTrigger;
use troupe_core::hold::scope_words::{Place, scope_from_words};
use troupe_core::hold::{HoldScope, HoldSource, LiftedBy, TurnFacts};
use troupe_core::mention::parse_mentions;
use troupe_core::reading::user::{Control, UserReading};
use troupe_core::{BotId, HoldId, PlanId, ThreadId};
use troupe_store::{StoreError, Tx};

/// How long a Bot's words to the person count as "the one you are talking to" (CL-S3).
const ANSWERED_WINDOW_MS: i64 = 10 * 60 * 1000;

/// The stored reading's handling, and whether the word lists (not a model) read a stop in it
/// — such a line is delivered as said, but it is no word of the person's to go on (S-LR-3).
pub(crate) fn handling_of(
    tx: &Tx<'_>,
    line: &SessionMessage,
) -> Result<(ControlHandling, bool), StoreError> {
    let Some(r) = tx
        .line_readings(line.id)?
        .into_iter()
        .find(|r| r.kind == "user")
    else {
        return Ok((ControlHandling::Ordinary, false));
    };
    let Ok(reading) = serde_json::from_value::<UserReading>(r.reading) else {
        return Ok((ControlHandling::Ordinary, false));
    };
    let by_model = r.failure.is_none();
    let listed_stop = !by_model && matches!(reading.control, Control::Stop | Control::Both);
    Ok((control_handling(&reading, by_model), listed_stop))
}

/// Where the line was said, for reading a stop's scope from its words.
fn place_scopes(
    tx: &Tx<'_>,
    session: &Session,
    line: &SessionMessage,
) -> Result<Vec<HoldScope>, StoreError> {
    let roster = crate::routing::roster(tx, session)?;
    let members: Vec<(BotId, String)> = roster
        .iter()
        .filter(|b| b.present)
        .map(|b| (b.id, b.name.clone()))
        .collect();
    let member_refs: Vec<(BotId, &str)> = members.iter().map(|(b, n)| (*b, n.as_str())).collect();
    let mentions = parse_mentions(&line.body, &roster);
    let direct_bot = match session.kind {
        SessionKind::Direct => session.bot_ids.first().copied(),
        _ => None,
    };
    let mut answered = match line.parent_id {
        Some(p) => tx.line(p)?.bot_id,
        None => None,
    };
    if answered.is_none() {
        let since = line.created_at - ANSWERED_WINDOW_MS;
        let mut spoke: Vec<BotId> = tx
            .lines_before(session.id, line.id, 50)?
            .into_iter()
            .filter(|l| l.author == Author::Bot && l.created_at >= since)
            .filter_map(|l| l.bot_id)
            .collect();
        spoke.sort();
        spoke.dedup();
        if spoke.len() == 1 {
            answered = spoke.first().copied();
        }
    }
    Ok(scope_from_words(
        &line.body,
        &Place {
            session_id: session.id,
            direct_bot,
            members: &member_refs,
            mentioned: &mentions.named,
            answered,
        },
    ))
}

/// The jobs a person's direct line is about: the work the Bot does there (lines in a direct
/// are not filed; they are about what the Bot does there) — the job its thread there is on,
/// and each job whose work speaks there (a desk that bound the line to a job handed the work
/// to the job's own thread).
fn direct_plans(tx: &Tx<'_>, session: &Session) -> Result<Vec<PlanId>, StoreError> {
    let mut threads = tx.session_threads(session.id)?;
    for b in &session.bot_ids {
        for item in tx.work_items_of_bot(*b)? {
            if item.mode == troupe_core::work_item::WorkMode::Work {
                threads.push(item.thread_id);
            }
        }
    }
    let mut out = Vec::new();
    for t in threads {
        if let Some(f) = thread_facts(tx, t)?
            && f.session_id == session.id
            && let Some(p) = f.plan_id
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    Ok(out)
}

/// In the write that routes `line`: lift what it is the person's word on (item 7).
pub(crate) fn lift_by_person_line(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
    said_to: &[BotId],
    filed: &[PlanId],
    reaches: &[ThreadId],
) -> Result<AfterLift, StoreError> {
    let (handling, listed_stop) = handling_of(tx, line)?;
    if let ControlHandling::PossibleControl { offer } = &handling {
        let scopes = place_scopes(tx, &tx.session(line.session_id)?, line)?;
        tx.set_line_control(
            line.id,
            &serde_json::json!({"kind": "possible_control", "offer": offer, "scopes": scopes}),
        )?;
    }
    if listed_stop {
        tracing::info!(line = %line.id, "the word lists read a stop: delivered as said, nothing lifted or held");
        return Ok(AfterLift::default());
    }
    let holds = tx.holds_in_force()?;
    if holds.is_empty() {
        return Ok(AfterLift::default());
    }
    let session = tx.session(line.session_id)?;
    let mut filed = filed.to_vec();
    if session.kind == SessionKind::Direct && filed.is_empty() {
        // Lines in a direct are about the work the Bot does there. Unfiled, with one job
        // there, that is the job; with several, the line is not carried out for any of them
        // until the Bot's desk files it under one (CL-4: `lift_by_filing`).
        let plans = direct_plans(tx, &session)?;
        if plans.len() == 1 {
            filed.extend(plans);
        }
    }
    let names_everything =
        handling.go_on() && place_scopes(tx, &session, line)? == vec![HoldScope::Everything];
    let facts = LineFacts {
        at: line.created_at,
        session_id: session.id,
        said_to: said_to.to_vec(),
        filed,
        tickets: Vec::new(),
        status_question: handling.status_question(),
        has_control_buttons: handling.has_buttons(),
        names_everything,
        go_on: handling.go_on(),
    };
    let ids = lift_by_line(&holds, &facts);
    let after = if ids.is_empty() {
        AfterLift::default()
    } else {
        let named_nobody = session.kind == SessionKind::Group
            && parse_mentions(&line.body, &crate::routing::roster(tx, &session)?).is_empty();
        lift_in(
            tx,
            &ids,
            LiftedBy::UserText,
            Some(line.id),
            LiftTrigger::Line {
                line: &facts,
                reaches,
                names_nobody_in_group: named_nobody,
                in_user_direct: session.kind == SessionKind::Direct,
            },
        )?
    };
    // Work the line reaches that a stop still holds: a status question (or any line under
    // an app hold) gets a read-only answer; anything else waits for the lift.
    for t in reaches {
        super::readonly::open_for(tx, line, *t, handling.status_question())?;
    }
    Ok(after)
}

/// CL-4: a person's line in a direct, filed by the Bot's desk under `plan` (and `ticket`),
/// lifts what it is the person's word on there: the stops keeping this Bot from that job,
/// never another job's. In the write that files it; the work it frees is woken after commit.
pub(crate) fn lift_by_filing(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
    bot: BotId,
    plan: PlanId,
    ticket: Option<troupe_core::TicketId>,
) -> Result<(), StoreError> {
    if line.author != Author::User || tx.session(line.session_id)?.kind != SessionKind::Direct {
        return Ok(());
    }
    let (handling, listed_stop) = handling_of(tx, line)?;
    if listed_stop {
        return Ok(());
    }
    let holds = tx.holds_in_force()?;
    if holds.is_empty() {
        return Ok(());
    }
    let facts = LineFacts {
        at: line.created_at,
        session_id: line.session_id,
        said_to: vec![bot],
        filed: vec![plan],
        tickets: ticket.into_iter().collect(),
        status_question: handling.status_question(),
        has_control_buttons: handling.has_buttons(),
        names_everything: false,
        go_on: handling.go_on(),
    };
    let ids = lift_by_line(&holds, &facts);
    if ids.is_empty() {
        return Ok(());
    }
    let after = lift_in(
        tx,
        &ids,
        LiftedBy::UserText,
        Some(line.id),
        LiftTrigger::Line {
            line: &facts,
            reaches: &[],
            names_nobody_in_group: false,
            in_user_direct: true,
        },
    )?;
    for t in after.drive.iter().chain(&after.reopened) {
        tx.wake_after_commit(*t);
    }
    Ok(())
}

impl Collab {
    /// A pure stop, carried out as soon as it is read (CL-2): the holds it names, made from
    /// the person's words; the line is routed to nobody. Returns the holds, or `None` when
    /// the reading is not a pure stop (the line then goes its usual way).
    pub(crate) async fn execute_stop(
        &self,
        line: &SessionMessage,
        reading: &UserLineReading,
    ) -> Result<Option<Vec<HoldId>>, CollabError> {
        if control_handling(&reading.reading, reading.by_model) != ControlHandling::ExecuteStop {
            return Ok(None);
        }
        let scopes = self.store().read(|tx| {
            let session = tx.session(line.session_id)?;
            place_scopes(tx, &session, line)
        })?;
        let mut made = Vec::new();
        for scope in scopes {
            let m = self
                .make_hold(HoldSpec {
                    scope,
                    source: HoldSource::UserText,
                    source_message_id: Some(line.id),
                    session_id: Some(line.session_id),
                    lift_on_next_user_message: true,
                    cancel: false,
                    composer_stop: false,
                })
                .await?;
            made.push(m.hold.id);
        }
        self.store().write(|tx| {
            tx.session_event(
                "line_routed",
                line.session_id,
                None,
                serde_json::json!({"message_id": line.id, "recipients": [], "control": "stop", "hold_ids": made}),
            )?;
            tx.set_line_routing(line.id, "routed")
        })?;
        Ok(Some(made))
    }
}

/// A person's act on one Bot's work other than a line — Continue, answering its question
/// (HOLD-L2) — counts as a line to that Bot about that work: it lifts what such a line would.
/// Returns the lift and the holds still covering the work (then it stays held: `409 held`).
pub(crate) fn lift_by_person_act(
    tx: &mut Tx<'_>,
    thread: ThreadId,
) -> Result<(AfterLift, Vec<HoldId>), StoreError> {
    let Some(f) = thread_facts(tx, thread)? else {
        return Ok((AfterLift::default(), Vec::new()));
    };
    let holds = tx.holds_in_force()?;
    if holds.is_empty() {
        return Ok((AfterLift::default(), Vec::new()));
    }
    let facts = act_facts(&f, tx.now());
    let ids = lift_by_line(&holds, &facts);
    let after = if ids.is_empty() {
        AfterLift::default()
    } else {
        lift_in(
            tx,
            &ids,
            LiftedBy::UserButton,
            None,
            LiftTrigger::Line {
                line: &facts,
                reaches: &[thread],
                names_nobody_in_group: false,
                in_user_direct: false,
            },
        )?
    };
    let still = tx.covering_holds(&f)?;
    Ok((after, still))
}

/// A person's act on one Bot's work, as the line it counts as.
fn act_facts(f: &TurnFacts, at: i64) -> LineFacts {
    LineFacts {
        at,
        session_id: f.session_id,
        said_to: vec![f.bot_id],
        filed: f.plan_id.into_iter().collect(),
        tickets: f.ticket_id.into_iter().collect(),
        status_question: false,
        has_control_buttons: false,
        names_everything: false,
        go_on: true,
    }
}

/// Whether a person's act on `thread`'s work would free it: `None` when no hold covers it,
/// `Some(true)` when every covering hold is one the act lifts (the person's own Stop there),
/// `Some(false)` when a lasting stop (Stop all Bots, the board, a tools menu) would still hold it.
pub(crate) fn act_would_free(tx: &Tx<'_>, thread: ThreadId) -> Result<Option<bool>, StoreError> {
    let Some(f) = thread_facts(tx, thread)? else {
        return Ok(None);
    };
    let covering = tx.covering_holds(&f)?;
    if covering.is_empty() {
        return Ok(None);
    }
    let lifted = lift_by_line(&tx.holds_in_force()?, &act_facts(&f, tx.now()));
    Ok(Some(covering.iter().all(|h| lifted.contains(h))))
}

/// `409 held`, naming the holds (`hold_N`, as the API reads them back).
pub(crate) fn held(what: &str, holds: &[HoldId]) -> CollabError {
    CollabError::conflict(
        "held",
        format!(
            "held: {what} is stopped by {}; lift the stop first",
            super::log::ids(holds)
        ),
    )
}
