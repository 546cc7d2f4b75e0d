//! The crash soak's CI configuration: 30 SIGKILL-and-restart cycles of a real `troupe serve`
//! under the scripted workload, checked after every restart and at the end (see
//! src/bin/troupe-soak). A fixed seed, so a failure replays with the same command.

use std::process::Command;

#[test]
fn crash_soak_loses_and_repeats_nothing_over_30_kills() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_troupe-soak"))
        .args(["--cycles", "30", "--seed", "20"])
        .arg("--dir")
        .arg(dir.path())
        .env("TROUPE_BIN", env!("CARGO_BIN_EXE_troupe"))
        .output()
        .expect("run troupe-soak");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the soak failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("cycles="))
        .unwrap_or_else(|| panic!("no summary line in {stdout}"));
    assert!(
        summary.starts_with("cycles=30 ") && summary.contains(" lost=0 repeated=0"),
        "{summary}"
    );
}
