//! `troupe db`: status, migrate and copy, through the real binary.

mod common;

use common::{Scratch, stderr, stdout};
use std::process::Command;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_store::NewThread;

fn troupe(s: &Scratch, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_troupe"))
        .env("HOME", &s.home)
        .env("XDG_CONFIG_HOME", s.home.join(".config"))
        .env("XDG_DATA_HOME", s.home.join(".local/share"))
        .env_remove("TROUPE_DATABASE_URL")
        .env_remove("TROUPE_LOG")
        .args(args)
        .output()
        .expect("troupe runs")
}

#[test]
fn db_migrate_creates_the_schema_and_status_reports_it_up_to_date() {
    let s = Scratch::new();
    let data = s.data.display().to_string();
    let missing = troupe(&s, &["db", "status", "--data-dir", &data]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("no database can be read there"),
        "{}",
        stderr(&missing)
    );

    let made = troupe(&s, &["db", "migrate", "--data-dir", &data]);
    assert!(made.status.success(), "{}", stderr(&made));
    let known = troupe_store::KNOWN_VERSION;
    assert!(
        stdout(&made).contains(&format!("schema version {known}")),
        "{}",
        stdout(&made)
    );

    let status = troupe(&s, &["db", "status", "--data-dir", &data]);
    assert!(status.status.success(), "{}", stderr(&status));
    assert_eq!(
        stdout(&status),
        format!("schema version {known} (this troupe knows {known})\nup to date\n")
    );
    let again = troupe(&s, &["db", "migrate", "--data-dir", &data]);
    assert_eq!(
        stdout(&again),
        format!("already at schema version {known}\n")
    );
}

#[test]
fn db_copy_moves_every_row_and_checks_each_table() {
    let s = Scratch::new();
    s.store()
        .write(|tx| {
            for i in 0..3 {
                tx.create_thread(&NewThread {
                    workspace_root: None,
                    parent_id: None,
                    title: format!("t{i}"),
                    agent: AgentBinding::new("a", "p"),
                    workspace: "/tmp".into(),
                    interaction: Interaction::Interactive,
                })?;
            }
            Ok(())
        })
        .unwrap();
    let to = s.root.path().join("copy.db").display().to_string();
    let from = s.db().display().to_string();
    let out = troupe(&s, &["db", "copy", "--from", &from, "--to", &to]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.contains("ok") && l.contains("threads") && l.contains(" 3 rows")),
        "{text}"
    );
    assert!(!text.contains("DIFFERS"), "{text}");
    assert!(text.contains("copied "), "{text}");

    // Into a database that now holds data: refused, in one line.
    let twice = troupe(&s, &["db", "copy", "--from", &from, "--to", &to]);
    assert!(!twice.status.success());
    assert!(
        stderr(&twice).contains("already holds data"),
        "{}",
        stderr(&twice)
    );
}

#[test]
fn a_bad_database_url_is_one_clear_line() {
    let s = Scratch::new();
    let cases = [
        ("mysql://h/db", "unknown database kind \"mysql\""),
        (
            "postgres://troupe@127.0.0.1:1/nothing",
            "cannot open database",
        ),
        (
            "postgres://troupe@127.0.0.1:notaport/x",
            "not a PostgreSQL URL",
        ),
    ];
    for (url, says) in cases {
        let out = troupe(&s, &["db", "status", "--database", url]);
        assert!(!out.status.success(), "{url}");
        let err = stderr(&out);
        assert!(err.contains(says), "{url}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{url}: one line: {err}");
        assert!(!err.contains("panicked"), "{url}: {err}");
    }
}
