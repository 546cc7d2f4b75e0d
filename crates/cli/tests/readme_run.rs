//! The README's first command, `cargo run --release -p troupe-cli -- serve`, must pick the
//! `troupe` binary: the crate has a second one (`troupe-soak`), and without `default-run`
//! cargo refuses to choose. Run here in the test profile with `--help` instead of `serve`.

use std::path::Path;
use std::process::Command;

#[test]
fn the_readmes_cargo_run_command_runs_troupe() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["run", "--quiet", "-p", "troupe-cli", "--", "--help"])
        .current_dir(&root)
        .output()
        .expect("run cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo run failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("serve"),
        "not the troupe binary's help: {stdout}"
    );
}
