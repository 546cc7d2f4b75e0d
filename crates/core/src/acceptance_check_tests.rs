use super::*;

fn command(cmd: &str) -> Draft<'_> {
    Draft {
        command: Some(cmd),
        ..Draft::default()
    }
}

fn file(path: &str) -> Draft<'_> {
    Draft {
        path: Some(path),
        ..Draft::default()
    }
}

fn refused(kind: Kind, d: &Draft<'_>) -> Invalid {
    validate(kind, d).expect_err("should be refused")
}

#[test]
fn ac_1_timeout_defaults_to_120_and_600_is_the_most() {
    assert_eq!(validate(Kind::Command, &command("true")), Ok(120));
    let d = Draft {
        timeout_secs: Some(600),
        ..command("true")
    };
    assert_eq!(validate(Kind::Command, &d), Ok(600));
    for t in [601, 0, -5] {
        let d = Draft {
            timeout_secs: Some(t),
            ..command("true")
        };
        let e = refused(Kind::Command, &d);
        assert_eq!(e.field, "timeout_secs");
        assert!(!e.outside);
    }
}

#[test]
fn ac_1_home_and_absolute_paths_cannot_be_saved() {
    for p in [
        "~/.ssh/id_rsa",
        "$HOME/x",
        "${HOME}/x",
        "/etc/passwd",
        "../x",
        "a/../../x",
    ] {
        let e = refused(Kind::FileExists, &file(p));
        assert_eq!(e.field, "path", "{p}");
        assert!(e.outside, "{p}");
        assert_eq!(e.code(), "outside_workspace");
    }
    assert_eq!(
        validate(Kind::FileExists, &file("jobs/1-x/out.md")),
        Ok(120)
    );
    assert_eq!(validate(Kind::FileExists, &file("a/../b.md")), Ok(120));
}

#[test]
fn ac_1_command_arguments_stay_in_the_workspace_but_the_program_may_be_absolute() {
    for c in [
        "cat ~/.ssh/id_rsa",
        "cat $HOME/.netrc",
        "ls /etc",
        "cat ../secret",
        "echo hi > /tmp/x",
        "echo hi >>~/x",
        "cd .. && ls",
        "grep -r --file=/etc/passwd .",
        "true; cat '/etc/shadow'",
        "echo $(cat ~/.aws/credentials)",
        "FOO=/etc/x make",
    ] {
        let e = refused(Kind::Command, &command(c));
        assert!(e.outside, "{c}: {e}");
        assert_eq!(e.field, "command");
    }
    for c in [
        "/usr/bin/test -f out.md",
        "exit 3",
        "sleep 700",
        "ls dist | wc -l",
        "npm test 2>&1",
        "make check > /dev/null",
        "cd sub && ../run.sh",
        "/bin/sh -c 'echo ok'",
        "python3 -c 'print(1)'",
    ] {
        assert_eq!(validate(Kind::Command, &command(c)), Ok(120), "{c}");
    }
}

#[test]
fn ac_1_a_command_may_climb_back_as_far_as_its_cwd_went_down() {
    let d = Draft {
        cwd: Some("jobs/1-x"),
        ..command("cat ../../README.md")
    };
    assert_eq!(validate(Kind::Command, &d), Ok(120));
    let d = Draft {
        cwd: Some("jobs/1-x"),
        ..command("cat ../../../README.md")
    };
    assert!(refused(Kind::Command, &d).outside);
    let d = Draft {
        cwd: Some("/tmp"),
        ..command("ls")
    };
    let e = refused(Kind::Command, &d);
    assert!(e.outside);
    assert_eq!(e.field, "cwd");
}

#[test]
fn regex_must_compile_and_fields_must_fit_the_kind() {
    let d = Draft {
        pattern: Some("a(b"),
        ..file("out.md")
    };
    let e = refused(Kind::FileMatchesRegex, &d);
    assert_eq!(e.field, "pattern");
    assert!(e.message.starts_with("not a regular expression"));
    let d = Draft {
        pattern: Some(r"^# \w+"),
        negate: true,
        ..file("out.md")
    };
    assert_eq!(validate(Kind::FileMatchesRegex, &d), Ok(120));
    assert_eq!(
        refused(Kind::FileContains, &file("out.md")).field,
        "pattern"
    );
    assert_eq!(refused(Kind::FileExists, &Draft::default()).field, "path");
    assert_eq!(refused(Kind::Command, &Draft::default()).field, "command");
    assert_eq!(refused(Kind::Command, &command("   ")).field, "command");
    let d = Draft {
        expected_exit: 256,
        ..command("true")
    };
    assert_eq!(refused(Kind::Command, &d).field, "expected_exit");
    let d = Draft {
        negate: true,
        ..file("x")
    };
    assert_eq!(refused(Kind::FileExists, &d).field, "negate");
    assert_eq!(refused(Kind::Words, &Draft::default()).field, "kind");
    assert_eq!(Kind::parse("sames").unwrap_err().field, "kind");
}

#[test]
fn ac_13_a_seams_check_takes_its_parts_from_a_path_or_a_command() {
    assert_eq!(validate(Kind::Seams, &file("shots/C*.mp4")), Ok(120));
    assert_eq!(validate(Kind::Seams, &file("report.md")), Ok(120));
    let listed = Draft {
        cwd: Some("shots"),
        ..command("ls C*.mp4")
    };
    assert_eq!(validate(Kind::Seams, &listed), Ok(120));
    let both = Draft {
        command: Some("ls"),
        ..file("a/*.md")
    };
    assert_eq!(refused(Kind::Seams, &both).field, "path");
    assert!(
        refused(Kind::Seams, &Draft::default())
            .message
            .contains("missing")
    );
    let e = refused(Kind::Seams, &file("../x/*.md"));
    assert!(e.outside, "{e}");
    let pattern = Draft {
        pattern: Some("x"),
        ..file("a/*.md")
    };
    assert_eq!(refused(Kind::Seams, &pattern).field, "pattern");
    let cwd_with_path = Draft {
        cwd: Some("a"),
        ..file("a/*.md")
    };
    assert_eq!(refused(Kind::Seams, &cwd_with_path).field, "cwd");
}

#[test]
fn ac_17_a_seams_check_is_not_for_code() {
    let e = refused(Kind::Seams, &file("src/*.rs"));
    assert!(e.message.contains("not for code"), "{e}");
}

#[test]
fn ac_3_output_compared_ignoring_trailing_blanks_and_empty_lines() {
    assert!(output_matches("ok\n2 files", "ok  \n2 files\t\n\n\n"));
    assert!(output_matches("ok\n", "ok\r\n"));
    assert!(output_matches("", "\n\n"));
    assert!(!output_matches("ok\n2 files", "ok\n3 files"));
    // Leading blanks and empty lines in between still count.
    assert!(!output_matches("ok", "  ok"));
    assert!(!output_matches("a\nb", "a\n\nb"));
}

#[test]
fn ac_8_check_follows_reworded_line() {
    let old = "- the poster is A4\n- the slogan is under 10 words\n- a PDF is delivered";
    let new = "- the poster is A3\n- the slogan is under 10 words\n- a PDF is delivered";
    assert_eq!(
        follow_line("the poster is A4", old, new).as_deref(),
        Some("the poster is A3")
    );
    assert_eq!(
        follow_line("- the slogan is under 10 words", old, new).as_deref(),
        Some("the slogan is under 10 words")
    );
    // Removed: nothing takes its place.
    let removed = "- the slogan is under 10 words\n- a PDF is delivered";
    assert_eq!(follow_line("the poster is A4", old, removed), None);
    // A stretch of unequal size: the most alike line, if alike enough.
    let two = "- the poster is A3 portrait\n- with a QR code\n- the slogan is under 10 words\n- a PDF is delivered";
    assert_eq!(
        follow_line("the poster is A4", old, two).as_deref(),
        Some("the poster is A3 portrait")
    );
    let unlike = "- zzz\n- qqq\n- the slogan is under 10 words\n- a PDF is delivered";
    assert_eq!(follow_line("the poster is A4", old, unlike), None);
    // Not a line of the old text at all: nothing to follow.
    assert_eq!(follow_line("something else", old, new), None);
}

#[test]
fn done_when_lines_drop_markers_and_blank_lines() {
    assert_eq!(
        done_when_lines("- a\n\n* b\n1. c\n2) d\n- [ ] e\n  plain  "),
        vec!["a", "b", "c", "d", "e", "plain"]
    );
}
