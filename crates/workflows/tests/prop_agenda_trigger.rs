//! Property tests for Agenda triggers (workflows/src/agenda/trigger.rs): over any run of ticks
//! with any gaps (the daemon down for a while included), an item fires at most once per tick,
//! never before its deadline, never replays missed periods, and its next deadline lies strictly
//! after the tick that fired it.

use proptest::prelude::*;
use serde_json::json;
use troupe_workflows::agenda::trigger::{MAX_SECONDS, Trigger, fire, is_due};

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

fn trigger() -> impl Strategy<Value = Trigger> {
    prop_oneof![
        (0i64..2_000_000).prop_map(|at| Trigger::At { at }),
        (1u64..600).prop_map(|seconds| Trigger::Delay { seconds }),
        (1u64..600, prop::option::of(0i64..2_000_000))
            .prop_map(|(seconds, start_at)| Trigger::Every { seconds, start_at }),
        prop::sample::select(vec![
            ("*/5 * * * *", "UTC"),
            ("0 9 * * MON-FRI", "Europe/Paris"),
            ("30 2 * * *", "America/New_York"),
        ])
        .prop_map(|(e, tz)| Trigger::Cron {
            expr: e.into(),
            tz: tz.into()
        }),
    ]
}

proptest! {
    #![proptest_config(cases())]

    /// Invariants over ticks at increasing times with random gaps (seconds to days):
    /// - an item fires only at a tick at or after its deadline, at most once per tick;
    /// - a one-time trigger (or a one-shot watch) fires exactly once and is then done;
    /// - a recurring trigger's next deadline is strictly after the firing tick, and for
    ///   `every` it stays on the period grid (deadline + k·period) and is the first boundary
    ///   past the tick: missed periods are skipped, never replayed;
    /// - the trigger round-trips through its JSON form unchanged.
    #[test]
    fn agenda_trigger_invariants(
        t in trigger(),
        auto_done: bool,
        set_at in 0i64..1_000_000,
        gaps in prop::collection::vec(prop_oneof![1i64..5_000, 5_000i64..700_000, 700_000i64..300_000_000], 1..40),
    ) {
        prop_assert_eq!(Trigger::parse(&t.to_value()).unwrap(), t.clone());
        let mut next = t.first_due(set_at);
        let mut now = set_at;
        let mut fires = 0u32;
        let recurring = matches!(t, Trigger::Every { .. } | Trigger::Cron { .. });
        for gap in gaps {
            now += gap;
            if !is_due(next, now) {
                continue;
            }
            let due = next.unwrap();
            prop_assert!(due <= now);
            let f = fire(Some(&t), auto_done, due, now);
            fires += 1;
            prop_assert_eq!(f.done, f.next.is_none());
            if !recurring || auto_done {
                prop_assert!(f.done, "a one-time trigger fired and was not done");
            } else {
                let n = f.next.expect("recurring goes on");
                prop_assert!(n > now, "next deadline {n} not after the tick {now}");
                if let Trigger::Every { seconds, .. } = t {
                    let p = seconds as i64 * 1000;
                    prop_assert_eq!((n - due) % p, 0, "off the period grid");
                    prop_assert!(n - p <= now, "a missed period would replay: {} <= {now}", n - p);
                }
            }
            // One delivery per tick: the new deadline is not due at the same tick.
            prop_assert!(!is_due(f.next, now));
            next = f.next;
        }
        if !recurring || auto_done {
            prop_assert!(fires <= 1, "a one-time trigger fired {fires} times");
        }
    }

    /// Property: a trigger given as JSON either parses or the error names the trigger field.
    #[test]
    fn trigger_json_parses_or_names_the_field(
        kind in prop::sample::select(vec!["at", "delay", "every", "cron", "weekly"]),
        seconds in prop_oneof![Just(json!(0)), Just(json!(MAX_SECONDS + 1)), Just(json!(60)), Just(json!("60")), Just(json!(-5))],
        extra in prop::option::of("[a-z]{1,6}"),
    ) {
        let mut v = json!({"kind": kind, "at": 1000, "seconds": seconds, "expr": "0 9 * * *", "tz": "UTC"});
        let obj = v.as_object_mut().unwrap();
        match kind {
            "at" => { obj.remove("seconds"); obj.remove("expr"); obj.remove("tz"); }
            "delay" | "every" => { obj.remove("at"); obj.remove("expr"); obj.remove("tz"); }
            "cron" => { obj.remove("at"); obj.remove("seconds"); }
            _ => {}
        }
        if let Some(k) = &extra {
            obj.insert(k.clone(), json!(1));
        }
        if let Err(msg) = Trigger::parse(&v) {
            prop_assert!(msg.contains("trigger") || msg.contains("kind") || extra.as_ref().is_some_and(|k| msg.contains(k.as_str())),
                "{v}: {msg}");
        }
    }
}
