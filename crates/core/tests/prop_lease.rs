//! Property test for the thread's single-loop lease (core/src/thread.rs, docs/CONTEXT.md
//! "lease"): generation-tagged, so a stale owner never clears a newer one.

use proptest::prelude::*;
use troupe_core::ids::RunId;
use troupe_core::thread::{Lease, LeaseError};

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

#[derive(Clone, Debug)]
enum Op {
    /// A run tries to take the lease.
    Acquire(i64),
    /// The owner of the n-th successful acquire (modulo how many there were) releases with
    /// the generation it was given — current or stale.
    Release(usize),
    /// A release presenting a generation nobody was given.
    Forged(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (1i64..6).prop_map(Op::Acquire),
        2 => any::<usize>().prop_map(Op::Release),
        1 => (-3i64..50).prop_map(Op::Forged),
    ]
}

proptest! {
    #![proptest_config(cases())]

    /// Invariants under any sequence of acquires and releases:
    /// - at most one run holds the lease, and an acquire while held fails naming the holder;
    /// - every successful acquire gets a generation greater than any given before;
    ///   the generation never goes down;
    /// - only the current holder's generation releases it: a stale owner (an earlier
    ///   generation) or a forged one changes nothing and is told it is stale.
    #[test]
    fn stale_owner_never_clears_a_newer_one(ops in prop::collection::vec(op(), 1..60)) {
        let mut lease = Lease::default();
        let mut given: Vec<(i64, RunId)> = Vec::new();
        for op in ops {
            let before = lease;
            match op {
                Op::Acquire(run) => match lease.acquire(RunId(run)) {
                    Ok(next) => {
                        prop_assert!(before.holder.is_none());
                        prop_assert!(given.iter().all(|(g, _)| *g < next.generation));
                        prop_assert_eq!(next.holder, Some(RunId(run)));
                        given.push((next.generation, RunId(run)));
                        lease = next;
                    }
                    Err(e) => {
                        prop_assert_eq!(e, LeaseError::Busy(before.holder.expect("busy only when held")));
                    }
                },
                Op::Release(n) if !given.is_empty() => {
                    let (generation, _) = given[n % given.len()];
                    let current = before.holder.is_some() && generation == before.generation;
                    match lease.release(generation) {
                        Ok(next) => {
                            prop_assert!(current, "generation {generation} released {before:?}");
                            prop_assert_eq!(next, Lease { generation: before.generation, holder: None });
                            lease = next;
                        }
                        Err(e) => {
                            prop_assert!(!current);
                            prop_assert_eq!(e, LeaseError::Stale { presented: generation, current: before.generation });
                        }
                    }
                }
                Op::Release(_) => {}
                Op::Forged(generation) => {
                    if let Ok(next) = lease.release(generation) {
                        prop_assert!(before.is_held_by(generation));
                        lease = next;
                    } else {
                        prop_assert_eq!(lease, before);
                    }
                }
            }
            prop_assert!(lease.generation >= before.generation);
        }
    }
}
