//! `troupe bench groups`: every line posted is routed and timed, and the figures are printed
//! as a `result` line a script can read; a bad size is refused with a clear error.

use std::process::Command;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_troupe"))
        .args(["bench", "groups"])
        .args(args)
        .output()
        .expect("run troupe bench groups")
}

/// The value of `key=` in a `result` line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {line}"))
}

#[test]
fn bench_groups_routes_and_times_every_line() {
    let out = bench(&["--lines", "30", "--bots", "4"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("result bench=groups"))
        .unwrap_or_else(|| panic!("no result line in {stdout}"));
    assert_eq!(field(line, "bots"), "4");
    assert_eq!(field(line, "lines"), "30");
    assert_eq!(
        field(line, "durability"),
        "full",
        "the goal's setting by default"
    );
    assert_eq!(
        field(line, "routed"),
        "30",
        "every line is routed and timed"
    );
    let p50: f64 = field(line, "p50_ms").parse().unwrap();
    let p99: f64 = field(line, "p99_ms").parse().unwrap();
    let max: f64 = field(line, "max_ms").parse().unwrap();
    assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{line}");
}

#[test]
fn bench_groups_refuses_an_empty_group() {
    let out = bench(&["--bots", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--bots"), "{stderr}");
}

#[test]
fn bench_groups_takes_normal_durability_and_refuses_an_unknown_one() {
    let out = bench(&["--lines", "5", "--bots", "2", "--durability", "normal"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("result bench=groups"))
        .unwrap_or_else(|| panic!("no result line in {stdout}"));
    assert_eq!(field(line, "durability"), "normal");
    let out = bench(&["--durability", "off"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("off") && stderr.contains("full"),
        "{stderr}"
    );
}
