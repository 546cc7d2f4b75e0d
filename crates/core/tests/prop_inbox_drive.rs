//! Property tests for the inbox take and the drive's arbitration
//! (docs/CONTEXT.md: inbox, root, steer, context; core/src/drive.rs, inbox.rs),
//! driven by random sequences of deliveries, loop steps, replies, crashes and
//! aborts.

use proptest::prelude::*;
use troupe_core::drive::{
    DriveRefusal, DriveSnapshot, DriveStep, RootState, arbitrate, plan_inbox_take,
};
use troupe_core::ids::{InboxItemId, MessageId, ThreadId};
use troupe_core::inbox::{InboxItem, InboxMode, Priority, dropped_on_abort, has_runnable};
use troupe_core::message::Origin;

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

#[derive(Clone, Debug)]
enum Event {
    Deliver {
        mode: InboxMode,
        priority: u8,
        order: i64,
        person: bool,
        parked: bool,
    },
    Step,
    Reply,
    Crash,
    Abort,
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => (
            prop::sample::select(vec![InboxMode::Task, InboxMode::Steer, InboxMode::Context]),
            1u8..=4,
            0i64..6,
            any::<bool>(),
            prop::bool::weighted(0.15),
        )
            .prop_map(|(mode, priority, order, person, parked)| Event::Deliver {
                mode, priority, order, person, parked
            }),
        3 => Just(Event::Step),
        2 => Just(Event::Reply),
        1 => Just(Event::Crash),
        1 => Just(Event::Abort),
    ]
}

fn sort_key(i: &InboxItem) -> (u8, i64, i64) {
    (i.priority.get(), i.order_key, i.id.0)
}

proptest! {
    #![proptest_config(cases())]

    /// Invariants of the inbox take under any sequence of events:
    /// - one task at a time: a task becomes a root only when no root is open,
    ///   and it is the queued task with the lowest (priority, order key, id);
    /// - parked (failed) items are never taken; context rides only on a call
    ///   that happens anyway; steers and contexts are taken in order;
    /// - work is taken iff it is runnable (a steer needs a root to join);
    /// - nothing is lost: every delivered item is still queued, was taken
    ///   exactly once, or was a steer/context an abort dropped — tasks survive aborts.
    #[test]
    fn inbox_take_keeps_its_rules(events in prop::collection::vec(event(), 1..60)) {
        let mut items: Vec<InboxItem> = Vec::new();
        let mut root = RootState::None;
        let (mut next_id, mut next_msg) = (1i64, 1i64);
        let (mut delivered, mut taken, mut dropped) = (0usize, Vec::<i64>::new(), 0usize);
        for ev in events {
            match ev {
                Event::Deliver { mode, priority, order, person, parked } => {
                    items.push(InboxItem {
                        id: InboxItemId(next_id),
                        thread_id: ThreadId(1),
                        mode,
                        priority: Priority::new(priority).unwrap(),
                        order_key: order,
                        delivery_key: None,
                        origin: if person { Origin::User } else { Origin::System("t".into()) },
                        text: "x".into(),
                        visible: true,
                        failed: parked.then(|| "bad".to_string()),
                        created_at: next_id,
                    });
                    next_id += 1;
                    delivered += 1;
                }
                Event::Step => {
                    let take = plan_inbox_take(root, &items);
                    let open = matches!(root, RootState::Open(_));
                    let runnable = has_runnable(&items, root.root().is_some());
                    // Taken iff runnable (an open root always calls the model).
                    prop_assert_eq!(take.call_model, open || matches!(root, RootState::Breakpoint(_)) || runnable);
                    if open {
                        prop_assert!(take.task.is_none(), "a task taken while a root is open");
                    }
                    if let Some(t) = take.task {
                        let best = items.iter()
                            .filter(|i| i.failed.is_none() && i.mode == InboxMode::Task)
                            .min_by_key(|i| sort_key(i)).unwrap();
                        prop_assert_eq!(t, best.id);
                    }
                    if !take.call_model {
                        prop_assert!(take.contexts.is_empty() && take.steers.is_empty() && take.task.is_none());
                    }
                    let all: Vec<InboxItemId> = take.task.iter().chain(&take.steers).chain(&take.contexts).copied().collect();
                    for id in &all {
                        let it = items.iter().find(|i| i.id == *id).expect("taken item is queued");
                        prop_assert!(it.failed.is_none(), "parked item taken");
                    }
                    for group in [&take.steers, &take.contexts] {
                        let keys: Vec<_> = group.iter()
                            .map(|id| sort_key(items.iter().find(|i| i.id == *id).unwrap()))
                            .collect();
                        prop_assert!(keys.windows(2).all(|w| w[0] <= w[1]), "taken out of order");
                    }
                    items.retain(|i| !all.contains(&i.id));
                    taken.extend(all.iter().map(|i| i.0));
                    if take.task.is_some() || (take.call_model && !open) {
                        root = RootState::Open(MessageId(next_msg));
                        next_msg += 1;
                    }
                }
                Event::Reply => {
                    if let RootState::Open(r) | RootState::Breakpoint(r) = root {
                        root = RootState::Done(r);
                    }
                }
                Event::Crash => root = root.at_run_start(),
                Event::Abort => {
                    let gone = dropped_on_abort(&items);
                    prop_assert!(gone.iter().all(|id| items.iter().any(|i| i.id == *id && i.mode != InboxMode::Task)));
                    dropped += gone.len();
                    items.retain(|i| !gone.contains(&i.id));
                }
            }
            let mut seen = taken.clone();
            seen.sort_unstable();
            seen.dedup();
            prop_assert_eq!(seen.len(), taken.len(), "an item taken twice");
            prop_assert_eq!(items.len() + taken.len() + dropped, delivered, "an item was lost");
        }
    }

    /// Invariants of the drive's arbitration for any snapshot and force flag:
    /// a running thread is never driven (not even forced), nor an archived or
    /// paused one; an unknown last effect never lets the thread resume by
    /// itself unless a person's line is waiting or the person forces it; an
    /// unforced wake needs runnable inbox work; policies are asked only when
    /// the inbox has none.
    #[test]
    fn drive_arbitration_invariants(
        archived: bool, running: bool, blocks_drive: bool, has_runnable_inbox: bool,
        has_person_line: bool, unknown_effect: bool, force: bool,
    ) {
        let s = DriveSnapshot { archived, running, blocks_drive, has_runnable_inbox, has_person_line, unknown_effect };
        let step = arbitrate(&s, force);
        if running {
            prop_assert_eq!(step, DriveStep::NotHandled(DriveRefusal::Running));
        }
        if archived || blocks_drive {
            prop_assert!(matches!(step, DriveStep::NotHandled(_)));
        }
        if unknown_effect && !has_person_line && !force {
            prop_assert!(matches!(step, DriveStep::NotHandled(_)), "{step:?} after an unknown effect");
        }
        if step == DriveStep::Wake && !force {
            prop_assert!(has_runnable_inbox);
        }
        if step == DriveStep::AskPolicies {
            prop_assert!(!has_runnable_inbox && !force);
        }
        if !running && !archived && !blocks_drive && force {
            prop_assert_eq!(step, DriveStep::Wake);
        }
    }
}
