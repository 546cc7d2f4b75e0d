//! Dependencies between a job's tickets (T17) and the wait for a large job's sample (LJ5,
//! LJ6, ADR 0109). A ticket whose dependency is not yet through does not start: nobody is
//! woken for it, `work_on`, deliverable delegations, generating calls and hand-overs on it are
//! refused (`waits_for_dependency`).

use crate::ticket::TicketStage;
use crate::{PlanId, TicketId};
use std::collections::{BTreeMap, BTreeSet};

/// At most this many dependencies per ticket.
pub const MAX_DEPENDENCIES: usize = 39;

/// T17: "through" = handed over at least once — submitted, in review, approved, or back in
/// rework after a hand-over. A ticket the user moved back on the board (to do, in progress)
/// is not through, even if it was handed over before.
pub fn is_through(stage: TicketStage, handed_over_once: bool) -> bool {
    match stage {
        TicketStage::Submitted | TicketStage::InReview | TicketStage::Approved => true,
        TicketStage::Rework => handed_over_once,
        TicketStage::ToDo | TicketStage::InProgress | TicketStage::Dropped => false,
    }
}

/// Whether a ticket at this stage holds back the tickets waiting for it: not through and not
/// dropped or parked ("a dropped or parked ticket holds nobody").
pub fn holds_back(stage: TicketStage, handed_over_once: bool) -> bool {
    stage != TicketStage::Dropped && !is_through(stage, handed_over_once)
}

/// One ticket of the job, as the dependency rules see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicketNode {
    pub id: TicketId,
    pub plan_id: PlanId,
    /// The `#NN` shown in texts.
    pub number: u32,
    pub stage: TicketStage,
    pub handed_over_once: bool,
    pub depends_on: Vec<TicketId>,
}

impl TicketNode {
    pub fn is_through(&self) -> bool {
        is_through(self.stage, self.handed_over_once)
    }

    pub fn holds_back(&self) -> bool {
        holds_back(self.stage, self.handed_over_once)
    }
}

/// Why a ticket's proposed dependencies are refused (`PATCH /v1/tickets/:id {depends_on}`,
/// `plan_items`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DependencyError {
    #[error("a ticket cannot depend on itself")]
    DependsOnSelf,
    #[error("these dependencies make a loop: {}", loop_text(.cycle))]
    DependencyLoop { cycle: Vec<TicketId> },
    #[error("a ticket has at most {MAX_DEPENDENCIES} dependencies; {0} were given")]
    TooManyDependencies(usize),
    #[error("ticket {0} is on another job; dependencies stay within one job")]
    OtherPlan(TicketId),
    #[error("ticket {0} is dropped or parked; it holds nobody, so depending on it means nothing")]
    ParkedDependency(TicketId),
    #[error("ticket {0} does not exist")]
    UnknownTicket(TicketId),
}

fn loop_text(cycle: &[TicketId]) -> String {
    cycle
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(" → ")
}

impl DependencyError {
    pub fn code(&self) -> &'static str {
        match self {
            DependencyError::DependsOnSelf => "depends_on_self",
            DependencyError::DependencyLoop { .. } => "dependency_loop",
            DependencyError::TooManyDependencies(_) => "too_many_dependencies",
            DependencyError::OtherPlan(_) => "other_plan",
            DependencyError::ParkedDependency(_) => "parked_dependency",
            DependencyError::UnknownTicket(_) => "unknown_ticket",
        }
    }
}

/// Checks `proposed` as the whole new dependency list of `ticket`, against the other
/// tickets' current dependencies in `graph` (which may hold tickets of other jobs; ids it
/// does not hold are unknown).
pub fn check_dependencies(
    ticket: &TicketNode,
    proposed: &[TicketId],
    graph: &[TicketNode],
) -> Result<(), DependencyError> {
    let distinct: BTreeSet<TicketId> = proposed.iter().copied().collect();
    if distinct.contains(&ticket.id) {
        return Err(DependencyError::DependsOnSelf);
    }
    if distinct.len() > MAX_DEPENDENCIES {
        return Err(DependencyError::TooManyDependencies(distinct.len()));
    }
    for id in proposed {
        let dep = graph
            .iter()
            .find(|t| t.id == *id)
            .ok_or(DependencyError::UnknownTicket(*id))?;
        if dep.plan_id != ticket.plan_id {
            return Err(DependencyError::OtherPlan(*id));
        }
        if dep.stage == TicketStage::Dropped {
            return Err(DependencyError::ParkedDependency(*id));
        }
    }
    let mut edges: BTreeMap<TicketId, Vec<TicketId>> = graph
        .iter()
        .filter(|t| t.plan_id == ticket.plan_id)
        .map(|t| (t.id, t.depends_on.clone()))
        .collect();
    edges.insert(ticket.id, distinct.into_iter().collect());
    match find_loop(&edges) {
        Some(cycle) => Err(DependencyError::DependencyLoop { cycle }),
        None => Ok(()),
    }
}

/// A dependency loop among these edges (ticket → what it depends on), as the path that
/// closes it (first id repeated at the end), or `None`. Used for a whole layout at once.
pub fn find_loop(edges: &BTreeMap<TicketId, Vec<TicketId>>) -> Option<Vec<TicketId>> {
    #[derive(Copy, Clone, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    let mut marks: BTreeMap<TicketId, Mark> = BTreeMap::new();
    for &start in edges.keys() {
        if marks.contains_key(&start) {
            continue;
        }
        // Iterative depth-first search; `path` is the current chain from `start`.
        let mut path: Vec<(TicketId, usize)> = vec![(start, 0)];
        marks.insert(start, Mark::Open);
        while let Some((node, next)) = path.last().copied() {
            let deps = edges.get(&node).map(Vec::as_slice).unwrap_or(&[]);
            if next == deps.len() {
                marks.insert(node, Mark::Done);
                path.pop();
                continue;
            }
            path.last_mut().expect("path is not empty").1 += 1;
            let dep = deps[next];
            match marks.get(&dep) {
                Some(Mark::Open) => {
                    let from = path.iter().position(|(t, _)| *t == dep).unwrap_or(0);
                    let mut cycle: Vec<TicketId> = path[from..].iter().map(|(t, _)| *t).collect();
                    cycle.push(dep);
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    marks.insert(dep, Mark::Open);
                    path.push((dep, 0));
                }
            }
        }
    }
    None
}

/// T17: the dependencies a ticket waits for — those not through and not dropped — in the
/// order given.
pub fn blocking(deps: &[TicketNode]) -> Vec<TicketId> {
    deps.iter()
        .filter(|d| d.holds_back())
        .map(|d| d.id)
        .collect()
}

/// The tickets the sample depends on, directly or through others: they are made before it
/// and never wait for it (LJ5).
pub fn sample_dependencies(graph: &[TicketNode], sample: TicketId) -> BTreeSet<TicketId> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![sample];
    while let Some(id) = todo.pop() {
        if let Some(node) = graph.iter().find(|t| t.id == id) {
            for dep in &node.depends_on {
                if seen.insert(*dep) {
                    todo.push(*dep);
                }
            }
        }
    }
    seen.remove(&sample);
    seen
}

/// LJ5: the tickets held to the sample — every ticket of the graph that is not through and
/// not dropped, except the sample and its transitive dependencies, including tickets laid out
/// later. Whether they wait right now depends on the sample being through (see
/// [`waits_for_sample`]); a layout stands only if this is not empty.
pub fn held_to_sample(graph: &[TicketNode], sample: TicketId) -> Vec<TicketId> {
    let before = sample_dependencies(graph, sample);
    graph
        .iter()
        .filter(|t| t.id != sample && !before.contains(&t.id) && t.holds_back())
        .map(|t| t.id)
        .collect()
}

/// LJ5–LJ6: whether `ticket` waits for the sample now. The wait ends when the sample is
/// through — handed over once, not approved (ADR 0109) — and a dropped sample holds nobody.
pub fn waits_for_sample(graph: &[TicketNode], sample: Option<TicketId>, ticket: TicketId) -> bool {
    let Some(sample) = sample else {
        return false;
    };
    let Some(node) = graph.iter().find(|t| t.id == sample) else {
        return false;
    };
    node.holds_back() && held_to_sample(graph, sample).contains(&ticket)
}

/// What a ticket waits for, as the board says it (T19: "Waits for #01 to be handed over",
/// "Waits for sample #02 to be handed over").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wait {
    Dependency { id: TicketId, number: u32 },
    Sample { id: TicketId, number: u32 },
}

impl Wait {
    pub fn text(&self) -> String {
        match self {
            Wait::Dependency { number, .. } => format!("Waits for #{number:02} to be handed over"),
            Wait::Sample { number, .. } => {
                format!("Waits for sample #{number:02} to be handed over")
            }
        }
    }
}

/// Everything `ticket` waits for now: its own dependencies not yet through, then the sample.
/// An approved ticket waits for nothing (T19: it never shows "waits for #NN").
pub fn waits_for(graph: &[TicketNode], sample: Option<TicketId>, ticket: TicketId) -> Vec<Wait> {
    let Some(node) = graph.iter().find(|t| t.id == ticket) else {
        return Vec::new();
    };
    if node.stage == TicketStage::Approved {
        return Vec::new();
    }
    let number_of = |id: TicketId| graph.iter().find(|t| t.id == id).map(|t| t.number);
    let deps: Vec<TicketNode> = node
        .depends_on
        .iter()
        .filter_map(|id| graph.iter().find(|t| t.id == *id).cloned())
        .collect();
    let mut waits: Vec<Wait> = blocking(&deps)
        .into_iter()
        .map(|id| Wait::Dependency {
            id,
            number: number_of(id).unwrap_or(0),
        })
        .collect();
    if let Some(sample_id) = sample
        && waits_for_sample(graph, sample, ticket)
        && !node.depends_on.contains(&sample_id)
    {
        waits.push(Wait::Sample {
            id: sample_id,
            number: number_of(sample_id).unwrap_or(0),
        });
    }
    waits
}

/// T18: a ticket nobody has started that had something to wait for — a dependency, or the
/// sample it is held to — and waits for nothing now: its owner is called at the next tick.
pub fn released(graph: &[TicketNode], sample: Option<TicketId>, ticket: TicketId) -> bool {
    let Some(node) = graph.iter().find(|t| t.id == ticket) else {
        return false;
    };
    if node.stage != TicketStage::ToDo || !waits_for(graph, sample, ticket).is_empty() {
        return false;
    }
    !node.depends_on.is_empty()
        || sample.is_some_and(|s| held_to_sample(graph, s).contains(&ticket))
}

#[cfg(test)]
mod tests {
    use super::*;
    use TicketStage::*;

    #[test]
    fn t18_a_ticket_is_released_once_what_it_waited_for_is_through() {
        let mut graph = vec![
            node(1, InProgress, &[]),
            node(2, ToDo, &[1]),
            node(3, ToDo, &[]),
        ];
        assert!(!released(&graph, None, TicketId(2)), "#01 is not through");
        assert!(!released(&graph, None, TicketId(3)), "#03 never waited");
        graph[0].stage = Submitted;
        graph[0].handed_over_once = true;
        assert!(released(&graph, None, TicketId(2)));
        // Held to the sample: released once the sample is handed over.
        let mut graph = vec![node(1, InProgress, &[]), node(2, ToDo, &[])];
        assert!(!released(&graph, Some(TicketId(1)), TicketId(2)));
        graph[0].stage = Submitted;
        graph[0].handed_over_once = true;
        assert!(released(&graph, Some(TicketId(1)), TicketId(2)));
        assert!(
            !released(&graph, Some(TicketId(1)), TicketId(1)),
            "the sample itself"
        );
        // Started already: not called as released.
        graph[1].stage = InProgress;
        assert!(!released(&graph, Some(TicketId(1)), TicketId(2)));
    }

    const JOB: PlanId = PlanId(1);

    fn node(id: i64, stage: TicketStage, deps: &[i64]) -> TicketNode {
        TicketNode {
            id: TicketId(id),
            plan_id: JOB,
            number: id as u32,
            stage,
            handed_over_once: matches!(stage, Submitted | InReview | Approved | Rework),
            depends_on: deps.iter().map(|d| TicketId(*d)).collect(),
        }
    }

    fn ids(v: &[i64]) -> Vec<TicketId> {
        v.iter().map(|i| TicketId(*i)).collect()
    }

    #[test]
    fn t17_through() {
        assert!(is_through(Submitted, true));
        assert!(is_through(InReview, true));
        assert!(is_through(Approved, true));
        assert!(is_through(Rework, true));
        assert!(!is_through(Rework, false));
        assert!(!is_through(ToDo, false));
        assert!(!is_through(InProgress, true));
        assert!(!is_through(Dropped, true));
        // A dropped or parked dependency blocks nobody.
        assert!(!holds_back(Dropped, false));
        assert!(holds_back(InProgress, false));
        assert!(!holds_back(Rework, true));
    }

    #[test]
    fn t17_blocking() {
        let deps = [
            node(1, ToDo, &[]),
            node(2, Submitted, &[]),
            node(3, Dropped, &[]),
            node(4, InProgress, &[]),
            node(5, Rework, &[]),
        ];
        assert_eq!(blocking(&deps), ids(&[1, 4]));
    }

    #[test]
    fn check_dependencies_refusals() {
        let graph = vec![
            node(1, ToDo, &[]),
            node(2, ToDo, &[1]),
            node(3, ToDo, &[2]),
            node(4, Dropped, &[]),
            TicketNode {
                plan_id: PlanId(9),
                ..node(5, ToDo, &[])
            },
        ];
        let t1 = graph[0].clone();
        assert_eq!(check_dependencies(&graph[2], &ids(&[1]), &graph), Ok(()));
        assert_eq!(
            check_dependencies(&t1, &ids(&[1]), &graph)
                .unwrap_err()
                .code(),
            "depends_on_self"
        );
        let err = check_dependencies(&t1, &ids(&[3]), &graph).unwrap_err();
        assert_eq!(
            err,
            DependencyError::DependencyLoop {
                cycle: ids(&[1, 3, 2, 1])
            }
        );
        assert!(err.to_string().contains("tk_1 → tk_3 → tk_2 → tk_1"));
        assert_eq!(
            check_dependencies(&t1, &ids(&[5]), &graph),
            Err(DependencyError::OtherPlan(TicketId(5)))
        );
        assert_eq!(
            check_dependencies(&t1, &ids(&[4]), &graph)
                .unwrap_err()
                .code(),
            "parked_dependency"
        );
        assert_eq!(
            check_dependencies(&t1, &ids(&[77]), &graph)
                .unwrap_err()
                .code(),
            "unknown_ticket"
        );
        // The ticket's own old edges are replaced, so re-pointing does not loop on itself.
        assert_eq!(check_dependencies(&graph[1], &[], &graph), Ok(()));
    }

    #[test]
    fn too_many_dependencies() {
        let mut graph: Vec<TicketNode> = (1..=41).map(|i| node(i, ToDo, &[])).collect();
        graph.push(node(100, ToDo, &[]));
        let me = graph.last().unwrap().clone();
        let thirty_nine: Vec<TicketId> = (1..=39).map(TicketId).collect();
        assert_eq!(check_dependencies(&me, &thirty_nine, &graph), Ok(()));
        let forty: Vec<TicketId> = (1..=40).map(TicketId).collect();
        assert_eq!(
            check_dependencies(&me, &forty, &graph),
            Err(DependencyError::TooManyDependencies(40))
        );
        // Repeats count once.
        let mut repeated = thirty_nine.clone();
        repeated.push(TicketId(1));
        assert_eq!(check_dependencies(&me, &repeated, &graph), Ok(()));
    }

    #[test]
    fn find_loop_over_a_layout() {
        let mut edges = BTreeMap::new();
        edges.insert(TicketId(1), ids(&[2]));
        edges.insert(TicketId(2), ids(&[3]));
        edges.insert(TicketId(3), vec![]);
        assert_eq!(find_loop(&edges), None);
        edges.insert(TicketId(3), ids(&[1]));
        assert_eq!(find_loop(&edges), Some(ids(&[1, 2, 3, 1])));
        // A diamond is not a loop.
        let mut diamond = BTreeMap::new();
        diamond.insert(TicketId(1), ids(&[2, 3]));
        diamond.insert(TicketId(2), ids(&[4]));
        diamond.insert(TicketId(3), ids(&[4]));
        assert_eq!(find_loop(&diamond), None);
    }

    #[test]
    fn lj5_lj6_sample_wait() {
        // #2 is the sample and depends on #1; #3 and #4 wait for it; #5 is dropped; #6 is
        // already through.
        let mut graph = vec![
            node(1, InProgress, &[]),
            node(2, InProgress, &[1]),
            node(3, ToDo, &[]),
            node(4, ToDo, &[3]),
            node(5, Dropped, &[]),
            node(6, Submitted, &[]),
        ];
        let sample = Some(TicketId(2));
        assert_eq!(held_to_sample(&graph, TicketId(2)), ids(&[3, 4]));
        assert!(waits_for_sample(&graph, sample, TicketId(3)));
        assert!(!waits_for_sample(&graph, sample, TicketId(1)));
        assert!(!waits_for_sample(&graph, sample, TicketId(2)));
        assert!(!waits_for_sample(&graph, None, TicketId(3)));
        // A ticket laid out later waits too.
        graph.push(node(7, ToDo, &[]));
        assert!(waits_for_sample(&graph, sample, TicketId(7)));
        assert_eq!(
            waits_for(&graph, sample, TicketId(4)),
            [
                Wait::Dependency {
                    id: TicketId(3),
                    number: 3
                },
                Wait::Sample {
                    id: TicketId(2),
                    number: 2
                },
            ]
        );
        assert_eq!(
            waits_for(&graph, sample, TicketId(4))[1].text(),
            "Waits for sample #02 to be handed over"
        );
        // LJ6 / S-SA1: handed over once, not approved, releases the wait.
        graph[1].stage = Submitted;
        graph[1].handed_over_once = true;
        assert!(!waits_for_sample(&graph, sample, TicketId(3)));
        assert_eq!(
            waits_for(&graph, sample, TicketId(4)),
            [Wait::Dependency {
                id: TicketId(3),
                number: 3
            }]
        );
        // Back in rework after that hand-over, it is still through.
        graph[1].stage = Rework;
        assert!(!waits_for_sample(&graph, sample, TicketId(3)));
        // A dropped sample holds nobody.
        graph[1].stage = Dropped;
        assert!(!waits_for_sample(&graph, sample, TicketId(3)));
    }

    #[test]
    fn t19_approved_waits_for_nothing() {
        let graph = vec![node(1, ToDo, &[]), node(2, Approved, &[1])];
        assert!(waits_for(&graph, None, TicketId(2)).is_empty());
        assert_eq!(waits_for(&graph, Some(TicketId(1)), TicketId(2)), []);
        let graph = vec![node(1, ToDo, &[]), node(2, ToDo, &[1])];
        assert_eq!(
            waits_for(&graph, None, TicketId(2))[0].text(),
            "Waits for #01 to be handed over"
        );
    }
}
