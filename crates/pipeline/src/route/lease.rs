//! Leases: what an agent may write while it runs. Every agent holds its own response folder;
//! a source-writing operator also holds each of its write roots in the session checkout, and
//! a publishing operator holds the whole checkout. Two holds on overlapping roots conflict.

use crate::defs::{Operator, roots_overlap};

/// The holds of an agent running `op` as `agent` (a branch key, or branch key and exchange).
pub fn lease_holds(op: &Operator, agent: &str) -> Vec<String> {
    let mut holds = vec![format!("response:{agent}")];
    if op.def.writes_source {
        holds.extend(
            op.def
                .write_roots
                .iter()
                .map(|r| format!("source:{}", r.trim_matches('/'))),
        );
    }
    if op.def.publishes {
        holds.push("source:.".to_string());
    }
    holds
}

/// Whether two sets of holds conflict: the same response folder, or overlapping source roots.
pub fn holds_conflict(a: &[String], b: &[String]) -> bool {
    a.iter().any(|x| {
        b.iter().any(
            |y| match (x.strip_prefix("source:"), y.strip_prefix("source:")) {
                (Some(rx), Some(ry)) => roots_overlap(rx, ry),
                (None, None) => x == y,
                _ => false,
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_roots_conflict_and_disjoint_ones_do_not() {
        let a = vec![
            "response:step-1/parallel-1".to_string(),
            "source:src".to_string(),
        ];
        let b = vec![
            "response:step-1/parallel-2".to_string(),
            "source:src/x".to_string(),
        ];
        let c = vec![
            "response:step-1/parallel-3".to_string(),
            "source:docs".to_string(),
        ];
        let d = vec![
            "response:step-1/parallel-4".to_string(),
            "source:.".to_string(),
        ];
        assert!(holds_conflict(&a, &b));
        assert!(!holds_conflict(&a, &c));
        assert!(holds_conflict(&c, &d));
    }
}
