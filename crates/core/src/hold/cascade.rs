//! What a new stop also covers beyond its scope, snapshotted once when it is made (HOLD-6,
//! DEL-29..32): work handed on by a covered turn's lines, and helpers' work along open
//! delegations. Nothing upstream is stopped, and nothing found later widens the hold.

use super::scope::HoldTarget;
use crate::{BotId, PlanId, ThreadId};

/// How far handed-on work is followed from a covered turn (HOLD-6).
pub const MAX_HANDOFFS: usize = 3;

/// A turn opened by a line of the turn on `from_thread`, still running or with a check-back to
/// come (the caller lists only those).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handoff {
    pub from_thread: ThreadId,
    /// A `Turn` target; a `Direct` holding the handed-on work may ride along, not followed.
    pub to: HoldTarget,
}

/// The targets handed on from the covered threads, nearest first, each once, at most
/// `MAX_HANDOFFS` handoffs down. A handoff back into covered or reached work is not followed,
/// so cycles end.
pub fn handed_on(covered_threads: &[ThreadId], handoffs: &[Handoff]) -> Vec<HoldTarget> {
    let mut seen: Vec<ThreadId> = covered_threads.to_vec();
    let mut frontier: Vec<ThreadId> = covered_threads.to_vec();
    let mut out: Vec<HoldTarget> = Vec::new();
    for _ in 0..MAX_HANDOFFS {
        let mut next = Vec::new();
        for h in handoffs
            .iter()
            .filter(|h| frontier.contains(&h.from_thread))
        {
            match &h.to {
                HoldTarget::Turn { thread_id, .. } => {
                    if !seen.contains(thread_id) {
                        seen.push(*thread_id);
                        next.push(*thread_id);
                        out.push(h.to.clone());
                    }
                }
                other => {
                    if !out.contains(other) {
                        out.push(other.clone());
                    }
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    out
}

/// An open delegation: the sender's work on a job asked the recipient's work on a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelegationEdge {
    pub sender: (BotId, PlanId),
    pub recipient: (BotId, PlanId),
}

/// Bot × plan targets reached along open delegations from the covered work, transitively,
/// each once and none already covered. Edges are followed sender → recipient only, from any
/// of a recipient's senders (DEL-30), and only the helper's work on that job is taken: its
/// other jobs go on (DEL-31).
pub fn delegation_targets(covered: &[(BotId, PlanId)], open: &[DelegationEdge]) -> Vec<HoldTarget> {
    let mut reached: Vec<(BotId, PlanId)> = covered.to_vec();
    let mut out = Vec::new();
    let mut i = 0;
    // A worklist over `reached`: each newly reached pair is scanned once.
    while i < reached.len() {
        let from = reached[i];
        for e in open.iter().filter(|e| e.sender == from) {
            if !reached.contains(&e.recipient) {
                reached.push(e.recipient);
                out.push(HoldTarget::BotPlan {
                    bot_id: e.recipient.0,
                    plan_id: e.recipient.1,
                });
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RunId, SessionId};

    fn turn(th: i64) -> HoldTarget {
        HoldTarget::Turn {
            run_id: RunId(th),
            thread_id: ThreadId(th),
            bot_id: BotId(th),
        }
    }

    fn hop(from: i64, to: i64) -> Handoff {
        Handoff {
            from_thread: ThreadId(from),
            to: turn(to),
        }
    }

    fn threads(out: &[HoldTarget]) -> Vec<i64> {
        out.iter()
            .filter_map(|t| match t {
                HoldTarget::Turn { thread_id, .. } => Some(thread_id.0),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn handed_on_stops_three_handoffs_down() {
        let chain = [hop(1, 2), hop(2, 3), hop(3, 4), hop(4, 5)];
        assert_eq!(threads(&handed_on(&[ThreadId(1)], &chain)), vec![2, 3, 4]);
        // Depth counts from each covered thread: 3 is covered, so 4 and 5 are one and two down.
        assert_eq!(
            threads(&handed_on(&[ThreadId(1), ThreadId(3)], &chain)),
            vec![2, 4, 5]
        );
    }

    #[test]
    fn handed_on_cycles_end_and_nothing_upstream() {
        // 1 → 2 → 3 → 1 and 2 → 1: the covered turn is not its own target.
        let cycle = [hop(1, 2), hop(2, 3), hop(3, 1), hop(2, 1), hop(3, 2)];
        assert_eq!(threads(&handed_on(&[ThreadId(1)], &cycle)), vec![2, 3]);
        // 9 handed work to 1: 9 is upstream and stays running.
        let upstream = [hop(9, 1), hop(1, 2)];
        assert_eq!(threads(&handed_on(&[ThreadId(1)], &upstream)), vec![2]);
        // Two covered turns handing to the same one: once.
        let fan = [hop(1, 3), hop(2, 3)];
        assert_eq!(
            threads(&handed_on(&[ThreadId(1), ThreadId(2)], &fan)),
            vec![3]
        );
        // A direct holding the handed-on work rides along once and is not followed.
        let direct = HoldTarget::Direct {
            session_id: SessionId(30),
        };
        let with_direct = [
            hop(1, 2),
            Handoff {
                from_thread: ThreadId(1),
                to: direct.clone(),
            },
            Handoff {
                from_thread: ThreadId(2),
                to: direct.clone(),
            },
        ];
        assert_eq!(
            handed_on(&[ThreadId(1)], &with_direct),
            vec![turn(2), direct]
        );
        assert!(handed_on(&[], &with_direct).is_empty());
    }

    fn edge(s: (i64, i64), r: (i64, i64)) -> DelegationEdge {
        DelegationEdge {
            sender: (BotId(s.0), PlanId(s.1)),
            recipient: (BotId(r.0), PlanId(r.1)),
        }
    }

    fn pairs(out: &[HoldTarget]) -> Vec<(i64, i64)> {
        out.iter()
            .filter_map(|t| match t {
                HoldTarget::BotPlan { bot_id, plan_id } => Some((bot_id.0, plan_id.0)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn delegation_targets_transitive_once_and_only_that_job() {
        let owner = (BotId(1), PlanId(5));
        let open = [
            // Owner asks helper 2 on job 5; helper 2 asks 3; 3 asks back to 2 (a cycle).
            edge((1, 5), (2, 5)),
            edge((2, 5), (3, 5)),
            edge((3, 5), (2, 5)),
            edge((3, 5), (1, 5)),
            // DEL-31: helper 2's own job 6, and what it asked there, go on.
            edge((2, 6), (4, 6)),
            // Upstream of the owner: not stopped.
            edge((9, 5), (1, 5)),
        ];
        assert_eq!(
            pairs(&delegation_targets(&[owner], &open)),
            vec![(2, 5), (3, 5)]
        );
        // DEL-30: a recipient with several senders is reached from the covered one.
        let open = [edge((7, 5), (3, 5)), edge((2, 5), (3, 5))];
        assert_eq!(
            pairs(&delegation_targets(&[(BotId(2), PlanId(5))], &open)),
            vec![(3, 5)]
        );
        // Work already covered is not a target again.
        let both = [owner, (BotId(2), PlanId(5))];
        assert!(delegation_targets(&both, &[edge((1, 5), (2, 5))]).is_empty());
    }
}
