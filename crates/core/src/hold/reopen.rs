//! After holds lift, what becomes of the turns they ended (HOLD-L4/L6/L12, N1/N4, M3/M4,
//! STOP-6). A reopened turn runs again on an app note only that Bot's turn sees; a turn the
//! lifting line reaches needs none, since the Bot continues from the line itself.

use super::cover::covers;
use super::lift::LineFacts;
use super::scope::{Hold, StoppedTurn, TurnFacts};
use crate::{HoldId, ThreadId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reopen {
    /// Reopens in its conversation on a note of what happened.
    Note {
        turn: StoppedTurn,
        /// The lifting line goes along as an inbox item to answer for (HOLD-M4).
        with_line: bool,
    },
    /// Another hold still covers it: handed to that one, reopened when it lifts (HOLD-N4).
    HeldOver { turn: StoppedTurn, to: HoldId },
    /// Stays ended: the line reaches the Bot, the Bot was not spoken to, or a Stop's.
    Leave { turn: StoppedTurn },
}

impl Reopen {
    pub fn turn(&self) -> &StoppedTurn {
        match self {
            Reopen::Note { turn, .. } | Reopen::HeldOver { turn, .. } | Reopen::Leave { turn } => {
                turn
            }
        }
    }
}

/// What lifted the holds.
#[derive(Copy, Clone, Debug)]
pub enum LiftTrigger<'a> {
    /// Lift, the spec route, a control button: going on (HOLD-L6).
    Button,
    Line {
        line: &'a LineFacts,
        /// Threads the line itself wakes or is delivered to.
        reaches: &'a [ThreadId],
        /// A group line that names nobody is said to the whole group (HOLD-M4).
        names_nobody_in_group: bool,
        /// Said in the person's direct with a Bot: the Bot continues there (HOLD-L12).
        in_user_direct: bool,
    },
}

/// One entry per stopped turn (by run) the lifted holds list, stopped or held over, in the
/// order first listed. `still_in_force` may include the lifted holds; they are skipped.
pub fn reopen_after_lift(
    lifted: &[Hold],
    still_in_force: &[Hold],
    by: LiftTrigger<'_>,
    facts: &dyn Fn(&StoppedTurn) -> TurnFacts,
) -> Vec<Reopen> {
    // (turn, ended by a Stop's hold)
    let mut turns: Vec<(&StoppedTurn, bool)> = Vec::new();
    for h in lifted {
        for t in &h.effect.stopped_turns {
            add(&mut turns, t, h.composer_stop);
        }
        // Handed to this hold by another: the Stop's "not this" was not said of them.
        for ho in &h.effect.held_over {
            add(&mut turns, &ho.turn, false);
        }
    }
    let others: Vec<&Hold> = still_in_force
        .iter()
        .filter(|h| h.in_force() && !lifted.iter().any(|l| l.id == h.id))
        .collect();

    turns
        .into_iter()
        .map(|(t, by_stop)| {
            let turn = t.clone();
            // STOP-6: "Stop" meant "not this": nothing it ended reopens.
            if by_stop {
                return Reopen::Leave { turn };
            }
            let outcome = match by {
                LiftTrigger::Button => Outcome::Note { with_line: false },
                LiftTrigger::Line {
                    line,
                    reaches,
                    names_nobody_in_group,
                    in_user_direct,
                } => after_line(t, line, reaches, names_nobody_in_group, in_user_direct),
            };
            let goes_on = match outcome {
                Outcome::Note { .. } | Outcome::Continues => true,
                Outcome::Stays => false,
            };
            let handed = if goes_on {
                hand_to(&others, &facts(t))
            } else {
                None
            };
            if let Some(to) = handed {
                return Reopen::HeldOver { turn, to };
            }
            match outcome {
                Outcome::Note { with_line } => Reopen::Note { turn, with_line },
                Outcome::Continues | Outcome::Stays => Reopen::Leave { turn },
            }
        })
        .collect()
}

/// Lists a turn once by run; ended by a Stop's hold sticks if any listing says so.
fn add<'a>(turns: &mut Vec<(&'a StoppedTurn, bool)>, t: &'a StoppedTurn, by_stop: bool) {
    if let Some(seen) = turns.iter_mut().find(|(s, _)| s.run_id == t.run_id) {
        seen.1 |= by_stop;
    } else {
        turns.push((t, by_stop));
    }
}

enum Outcome {
    Note {
        with_line: bool,
    },
    /// The line wakes or reaches it: the Bot goes on from the line, no note.
    Continues,
    /// Not to go on now: left to its own triggers, or taken up elsewhere.
    Stays,
}

fn after_line(
    t: &StoppedTurn,
    line: &LineFacts,
    reaches: &[ThreadId],
    names_nobody_in_group: bool,
    in_user_direct: bool,
) -> Outcome {
    if reaches.contains(&t.thread_id) {
        return Outcome::Continues;
    }
    // M4 (S-HOLD-3): work the group's line does not reach answers for it, whoever's it is.
    if names_nobody_in_group {
        return Outcome::Note { with_line: true };
    }
    // L4 / M3: only the Bots the person speaks to go on.
    if !line.said_to.contains(&t.bot_id) {
        return Outcome::Stays;
    }
    // L12: in its direct the Bot takes that job up there; the job's stopped turn elsewhere is
    // not opened beside it.
    let same_job = t.plan_id.is_some_and(|p| line.filed.contains(&p));
    if in_user_direct && same_job {
        return Outcome::Stays;
    }
    Outcome::Note { with_line: false }
}

/// The hold to hand a still-covered turn to: one that is not a Stop's if any (its lift
/// reopens nothing), else the first.
fn hand_to(others: &[&Hold], t: &TurnFacts) -> Option<HoldId> {
    let covering: Vec<&Hold> = others.iter().copied().filter(|h| covers(h, t)).collect();
    covering
        .iter()
        .find(|h| !h.composer_stop)
        .or(covering.first())
        .map(|h| h.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hold::scope::{HeldOver, HoldScope};
    use crate::hold::test_support::{facts_of, hold, stopped};
    use crate::{BotId, PlanId, SessionId};

    const GROUP: i64 = 10;
    const DIRECT: i64 = 20;
    const PAIR: i64 = 30;
    const MV: i64 = 5;
    const PUNCH: i64 = 6;

    fn line(session: i64, said_to: &[i64], filed: &[i64]) -> LineFacts {
        LineFacts {
            at: 1000,
            session_id: SessionId(session),
            said_to: said_to.iter().copied().map(BotId).collect(),
            filed: filed.iter().copied().map(PlanId).collect(),
            tickets: vec![],
            status_question: false,
            has_control_buttons: false,
            names_everything: false,
            go_on: true,
        }
    }

    fn group_hold(turns: Vec<StoppedTurn>) -> Hold {
        let mut h = hold(
            1,
            0,
            HoldScope::Session {
                session_id: SessionId(GROUP),
            },
        );
        h.effect.stopped_turns = turns;
        h
    }

    fn kinds(out: &[Reopen]) -> Vec<(i64, &'static str)> {
        out.iter()
            .map(|r| {
                let kind = match r {
                    Reopen::Note {
                        with_line: false, ..
                    } => "note",
                    Reopen::Note {
                        with_line: true, ..
                    } => "note+line",
                    Reopen::HeldOver { .. } => "held_over",
                    Reopen::Leave { .. } => "leave",
                };
                (r.turn().thread_id.0, kind)
            })
            .collect()
    }

    #[test]
    fn reopen_after_lift_m3_only_the_named_bot_goes_on() {
        // The group's stop ended X in the group (100) and in its direct with Z (101), and Y.
        let g = group_hold(vec![
            stopped(1, GROUP, 100, Some(MV)),
            stopped(1, PAIR, 101, Some(MV)),
            stopped(2, GROUP, 200, Some(MV)),
        ]);
        let l = line(GROUP, &[1], &[MV]);
        let by = LiftTrigger::Line {
            line: &l,
            reaches: &[ThreadId(100)],
            names_nobody_in_group: false,
            in_user_direct: false,
        };
        let out = reopen_after_lift(&[g], &[], by, &facts_of);
        assert_eq!(
            kinds(&out),
            vec![(100, "leave"), (101, "note"), (200, "leave")]
        );
    }

    #[test]
    fn reopen_after_lift_s_hold_3_a_group_line_naming_nobody() {
        // The lead (1) stopped in the group; 文案 (2) stopped in its direct with 设计师 (3).
        let g = group_hold(vec![
            stopped(1, GROUP, 100, Some(MV)),
            stopped(2, PAIR, 300, Some(MV)),
        ]);
        let l = line(GROUP, &[1, 2], &[MV]);
        let by = LiftTrigger::Line {
            line: &l,
            reaches: &[ThreadId(100)],
            names_nobody_in_group: true,
            in_user_direct: false,
        };
        let out = reopen_after_lift(&[g], &[], by, &facts_of);
        assert_eq!(kinds(&out), vec![(100, "leave"), (300, "note+line")]);
    }

    #[test]
    fn reopen_after_lift_l12_the_direct_takes_the_job_up() {
        let mut x = hold(1, 0, HoldScope::Bot { bot_id: BotId(1) });
        x.effect.stopped_turns = vec![
            stopped(1, DIRECT, 150, None),
            stopped(1, PAIR, 101, Some(MV)),
            stopped(1, GROUP, 102, Some(PUNCH)),
        ];
        let l = line(DIRECT, &[1], &[MV]);
        let by = LiftTrigger::Line {
            line: &l,
            reaches: &[ThreadId(150)],
            names_nobody_in_group: false,
            in_user_direct: true,
        };
        let out = reopen_after_lift(&[x], &[], by, &facts_of);
        // The MV work in the pair direct is not opened beside the direct; the other job is.
        assert_eq!(
            kinds(&out),
            vec![(150, "leave"), (101, "leave"), (102, "note")]
        );
    }

    #[test]
    fn reopen_after_lift_held_over_and_buttons() {
        let t1 = stopped(1, GROUP, 100, Some(MV));
        let t2 = stopped(2, GROUP, 200, None);
        let mut a = group_hold(vec![t1.clone()]);
        // Handed to `a` when an earlier hold lifted; listed twice, reported once.
        a.effect.held_over = vec![
            HeldOver {
                turn: t2.clone(),
                from: HoldId(7),
            },
            HeldOver {
                turn: t1.clone(),
                from: HoldId(7),
            },
        ];
        // Both still cover t1; the Stop's is passed over, its lift would reopen nothing.
        let mut stop = hold(
            2,
            0,
            HoldScope::BotPlan {
                bot_id: BotId(1),
                plan_id: PlanId(MV),
            },
        );
        stop.composer_stop = true;
        let plan = hold(
            3,
            0,
            HoldScope::Plan {
                plan_id: PlanId(MV),
            },
        );
        let still = [a.clone(), stop.clone(), plan];
        let out = reopen_after_lift(&[a.clone()], &still, LiftTrigger::Button, &facts_of);
        assert_eq!(kinds(&out), vec![(100, "held_over"), (200, "note")]);
        assert!(matches!(out[0], Reopen::HeldOver { to: HoldId(3), .. }));

        // Only the Stop's left: it takes the turn.
        let out = reopen_after_lift(
            &[a.clone()],
            &[stop.clone()],
            LiftTrigger::Button,
            &facts_of,
        );
        assert!(matches!(out[0], Reopen::HeldOver { to: HoldId(2), .. }));

        // STOP-6: a Stop's lift reopens what it ended on no note, but what it was handed does.
        let mut own = stop.clone();
        own.effect.stopped_turns = vec![t1.clone()];
        own.effect.held_over = vec![HeldOver {
            turn: t2.clone(),
            from: HoldId(1),
        }];
        let out = reopen_after_lift(&[own.clone()], &[], LiftTrigger::Button, &facts_of);
        assert_eq!(kinds(&out), vec![(100, "leave"), (200, "note")]);
        // Lifted by a line to it that does not reach the thread: still no note.
        let l = line(DIRECT, &[1], &[MV]);
        let by = LiftTrigger::Line {
            line: &l,
            reaches: &[],
            names_nobody_in_group: false,
            in_user_direct: false,
        };
        assert_eq!(
            kinds(&reopen_after_lift(&[own], &[], by, &facts_of))[0].1,
            "leave"
        );
    }

    #[test]
    fn reopen_after_lift_a_line_it_reaches_but_another_hold_covers_is_held_over() {
        let g = group_hold(vec![stopped(1, GROUP, 100, Some(MV))]);
        let other = hold(4, 0, HoldScope::Bot { bot_id: BotId(1) });
        let l = line(GROUP, &[1], &[MV]);
        let by = LiftTrigger::Line {
            line: &l,
            reaches: &[ThreadId(100)],
            names_nobody_in_group: false,
            in_user_direct: false,
        };
        let out = reopen_after_lift(&[g], &[other], by, &facts_of);
        assert!(matches!(out[0], Reopen::HeldOver { to: HoldId(4), .. }));
        // Y, not spoken to, is not handed anywhere: it waits for its own triggers.
        let g = group_hold(vec![stopped(2, GROUP, 200, None)]);
        let other = hold(4, 0, HoldScope::Bot { bot_id: BotId(2) });
        let out = reopen_after_lift(&[g], &[other], by, &facts_of);
        assert_eq!(kinds(&out), vec![(200, "leave")]);
    }
}
