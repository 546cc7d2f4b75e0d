//! Which holds a person's line lifts (§14.6, issue 14 point 7): a stop is "stop for now", and
//! the person's next words about what it covers lift it whole (HOLD-L3). Judged in the write
//! that files and routes the line, before anyone wakes.

use super::scope::{Hold, HoldScope};
use crate::{BotId, HoldId, PlanId, SessionId, TicketId};

/// A person's line, once filed and routed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineFacts {
    /// When the line was created (ms): a hold made at or after this is not lifted by it.
    pub at: i64,
    pub session_id: SessionId,
    /// The Bots it is said to: the direct's Bot; in a group those it names, or every member
    /// when it names everyone or nobody.
    pub said_to: Vec<BotId>,
    /// Jobs it is filed under.
    pub filed: Vec<PlanId>,
    pub tickets: Vec<TicketId>,
    pub status_question: bool,
    /// Read as possibly control: it carries Stop/Continue buttons, and only those act (STOP-8).
    pub has_control_buttons: bool,
    /// Its words name everything ("all Bots", 「全都」).
    pub names_everything: bool,
    /// Read as a go-on by the model.
    pub go_on: bool,
}

impl LineFacts {
    fn to_bot(&self, bot: BotId) -> bool {
        self.said_to.contains(&bot)
    }

    fn on_plan(&self, plan: PlanId) -> bool {
        self.filed.contains(&plan)
    }
}

/// The holds this line lifts, in the given order.
pub fn lift_by_line(holds: &[Hold], line: &LineFacts) -> Vec<HoldId> {
    // HOLD-L5 / SQ-3: asking how things stand lifts nothing; a line with buttons acts only
    // through them.
    if line.status_question || line.has_control_buttons {
        return Vec::new();
    }
    let whole = line.go_on && line.names_everything;
    holds
        .iter()
        .filter(|h| h.in_force() && !h.is_app_hold())
        // A line that arrived before the stop (still being filed) never lifts it (S-STOP-3).
        .filter(|h| h.created_at < line.at)
        .filter(|h| whole || lifted_by(&h.scope, line))
        .map(|h| h.id)
        .collect()
}

/// Whether the line is about what this scope covers. Only the scope counts: targets are what
/// else the stop reached, not what it was about.
fn lifted_by(scope: &HoldScope, line: &LineFacts) -> bool {
    match scope {
        // ADR 0081: any line to any Bot.
        HoldScope::Everything => !line.said_to.is_empty(),
        HoldScope::Session { session_id } => line.session_id == *session_id,
        HoldScope::Bot { bot_id } => line.to_bot(*bot_id),
        HoldScope::Plan { plan_id } => line.on_plan(*plan_id),
        HoldScope::Ticket { ticket_id } => line.tickets.contains(ticket_id),
        // STOP-6: a line only to another Bot about the same job does not count.
        HoldScope::BotPlan { bot_id, plan_id } => line.to_bot(*bot_id) && line.on_plan(*plan_id),
        HoldScope::Turn {
            bot_id,
            session_id,
            plan_id,
            ..
        } => {
            line.to_bot(*bot_id)
                && match plan_id {
                    Some(p) => line.on_plan(*p),
                    // A jobless turn: a line to the Bot where it spoke.
                    None => line.session_id == *session_id,
                }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hold::scope::{HoldSource, HoldStatus};
    use crate::hold::test_support::hold;
    use crate::{RunId, ThreadId};

    const GROUP: SessionId = SessionId(10);
    const DIRECT: SessionId = SessionId(20);
    const X: BotId = BotId(1);
    const Y: BotId = BotId(2);
    const MV: PlanId = PlanId(5);
    const PUNCH: PlanId = PlanId(6);

    fn line(at: i64, session: SessionId, said_to: &[BotId], filed: &[PlanId]) -> LineFacts {
        LineFacts {
            at,
            session_id: session,
            said_to: said_to.to_vec(),
            filed: filed.to_vec(),
            tickets: vec![],
            status_question: false,
            has_control_buttons: false,
            names_everything: false,
            go_on: false,
        }
    }

    fn ids(v: &[i64]) -> Vec<HoldId> {
        v.iter().copied().map(HoldId).collect()
    }

    fn bot_plan(b: BotId, p: PlanId) -> HoldScope {
        HoldScope::BotPlan {
            bot_id: b,
            plan_id: p,
        }
    }

    fn turn(b: BotId, s: SessionId, p: Option<PlanId>) -> HoldScope {
        HoldScope::Turn {
            run_id: RunId(1),
            thread_id: ThreadId(1),
            bot_id: b,
            session_id: s,
            plan_id: p,
        }
    }

    #[test]
    fn lift_by_line() {
        // S-STOP-2: X stopped in the group at t0; "@Y use blue" keeps it; "continue" naming
        // nobody (said to every member) lifts it.
        let x_stop = [hold(1, 1000, HoldScope::Bot { bot_id: X })];
        assert!(super::lift_by_line(&x_stop, &line(1001, GROUP, &[Y], &[])).is_empty());
        let mut go = line(1002, GROUP, &[X, Y], &[]);
        go.go_on = true;
        assert_eq!(super::lift_by_line(&x_stop, &go), ids(&[1]));

        // S-STOP-3: a line created 0.2 s before the stop, still being filed, lifts nothing;
        // nor does one stamped in the same millisecond.
        let held = [hold(1, 1000, HoldScope::Everything)];
        assert!(super::lift_by_line(&held, &line(800, DIRECT, &[X], &[])).is_empty());
        assert!(super::lift_by_line(&held, &line(1000, DIRECT, &[X], &[])).is_empty());

        // S-HOLD-4: an old stop on X's 《一拳超人》 work; 「继续」 in X's direct is filed under the
        // MV and lifts only what keeps X from the MV.
        let holds = [
            hold(1, 100, bot_plan(X, PUNCH)),
            hold(2, 100, bot_plan(X, MV)),
            hold(3, 100, turn(X, GROUP, Some(MV))),
        ];
        let mut cont = line(200, DIRECT, &[X], &[MV]);
        cont.go_on = true;
        assert_eq!(super::lift_by_line(&holds, &cont), ids(&[2, 3]));
    }

    #[test]
    fn lift_by_line_each_scope_on_its_own_words() {
        let case = |scope: HoldScope, l: &LineFacts| -> bool {
            !super::lift_by_line(&[hold(1, 0, scope)], l).is_empty()
        };
        let to_x = line(5, DIRECT, &[X], &[]);
        let to_y_mv = line(5, GROUP, &[Y], &[MV]);
        let to_x_mv = line(5, GROUP, &[X], &[MV]);
        let to_nobody = line(5, GROUP, &[], &[]);

        // Everything: any line to any Bot (ADR 0081), but a line to nobody is not one.
        assert!(case(HoldScope::Everything, &to_x));
        assert!(case(HoldScope::Everything, &to_y_mv));
        assert!(!case(HoldScope::Everything, &to_nobody));
        // Session: any later line in it, whoever it names.
        let group = HoldScope::Session { session_id: GROUP };
        assert!(case(group.clone(), &to_y_mv));
        assert!(!case(group, &to_x));
        // Bot: a line said to it anywhere.
        assert!(case(HoldScope::Bot { bot_id: X }, &to_x));
        assert!(case(HoldScope::Bot { bot_id: X }, &to_x_mv));
        assert!(!case(HoldScope::Bot { bot_id: X }, &to_y_mv));
        // Plan and ticket: a line filed under it, to whoever.
        assert!(case(HoldScope::Plan { plan_id: MV }, &to_y_mv));
        assert!(!case(HoldScope::Plan { plan_id: MV }, &to_x));
        let mut on_ticket = to_y_mv.clone();
        on_ticket.tickets.push(TicketId(7));
        let ticket = HoldScope::Ticket {
            ticket_id: TicketId(7),
        };
        assert!(case(ticket.clone(), &on_ticket));
        assert!(!case(ticket, &to_y_mv));
        // Bot × plan: to that Bot and filed under that job (STOP-6: not a line only to Y).
        assert!(case(bot_plan(X, MV), &to_x_mv));
        assert!(!case(bot_plan(X, MV), &to_y_mv));
        assert!(!case(bot_plan(X, MV), &to_x));
        // Turn with a job: as Bot × plan, wherever the line is (STOP-7: its User direct).
        let direct_mv = line(5, DIRECT, &[X], &[MV]);
        assert!(case(turn(X, GROUP, Some(MV)), &direct_mv));
        assert!(!case(turn(X, GROUP, Some(MV)), &to_x));
        // A jobless turn: a line to the Bot in that turn's conversation.
        assert!(case(turn(X, DIRECT, None), &to_x));
        assert!(!case(turn(X, GROUP, None), &to_x));
        assert!(!case(turn(X, DIRECT, None), &line(5, DIRECT, &[Y], &[])));
    }

    #[test]
    fn lift_by_line_go_on_naming_everything_lifts_every_earlier_stop() {
        let holds = [
            hold(1, 0, bot_plan(X, PUNCH)),
            hold(2, 0, HoldScope::Plan { plan_id: PUNCH }),
            hold(3, 0, HoldScope::Session { session_id: GROUP }),
            hold(4, 50, HoldScope::Bot { bot_id: Y }),
        ];
        let mut all = line(10, DIRECT, &[X], &[MV]);
        all.names_everything = true;
        // Naming everything without going on is just a line to X.
        assert!(super::lift_by_line(&holds, &all).is_empty());
        all.go_on = true;
        // The stop made after the line stays.
        assert_eq!(super::lift_by_line(&holds, &all), ids(&[1, 2, 3]));
    }

    #[test]
    fn lift_by_line_never_status_questions_buttons_or_app_holds() {
        let holds = [hold(1, 0, HoldScope::Bot { bot_id: X })];
        let mut l = line(5, DIRECT, &[X], &[]);
        l.go_on = true;
        l.names_everything = true;
        assert_eq!(super::lift_by_line(&holds, &l), ids(&[1]));

        // HOLD-L5: "still at it?" lifts nothing.
        let mut asks = l.clone();
        asks.status_question = true;
        assert!(super::lift_by_line(&holds, &asks).is_empty());
        // STOP-8: a line that reads like control acts only through its buttons.
        let mut buttons = l.clone();
        buttons.has_control_buttons = true;
        assert!(super::lift_by_line(&holds, &buttons).is_empty());

        // HOLD-L7: the app's own holds need an explicit Lift.
        let mut migrated = hold(1, 0, HoldScope::Bot { bot_id: X });
        migrated.source = HoldSource::Migration;
        let mut dropped = hold(2, 0, HoldScope::Bot { bot_id: X });
        dropped.cancel = true;
        assert!(super::lift_by_line(&[migrated, dropped], &l).is_empty());

        // A lifted hold is not lifted again.
        let mut gone = hold(1, 0, HoldScope::Bot { bot_id: X });
        gone.status = HoldStatus::Lifted;
        assert!(super::lift_by_line(&[gone], &l).is_empty());
    }
}
