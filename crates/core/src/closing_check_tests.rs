use super::*;

fn facts(text: &str) -> Facts {
    Facts {
        text: text.into(),
        via: Via::Reply,
        cited_files: Vec::new(),
        user_in_conversation: true,
        in_job: true,
        sent_back_before: false,
        failing_checks: Vec::new(),
        check_back_booked: false,
        delegated: false,
        other_bots: vec!["Editor".into(), "剪辑师".into()],
        commands_run: 0,
    }
}

fn citing(text: &str, file: &str) -> Facts {
    Facts {
        cited_files: vec![file.into()],
        ..facts(text)
    }
}

fn failing(label: &str) -> FailingCheck {
    FailingCheck {
        label: label.into(),
        detail: "out/report.md does not: contains \"Summary\"".into(),
    }
}

fn rules(f: &Facts) -> Vec<Rule> {
    decide(f).map(|n| n.rules).unwrap_or_default()
}

// ---- the trigger ----

#[test]
fn trigger_a_message_citing_a_file_is_checked() {
    let f = Facts {
        failing_checks: vec![failing("file out/report.md contains \"Summary\"")],
        ..citing("The report is in out/report.md.", "out/report.md")
    };
    assert!(applies(&f));
    assert_eq!(rules(&f), vec![Rule::FailingChecks]);
}

#[test]
fn trigger_still_going_in_english_and_chinese_is_checked() {
    for text in [
        "I'll put the storyboard together and post it.",
        "I'm now drafting the outline",
        "正在编写分镜脚本。",
        "我将按照你的要求重写第二段。",
        "方向定了。结论随后给你",
    ] {
        assert!(applies(&facts(text)), "{text}");
        assert_eq!(rules(&facts(text)), vec![Rule::RestLater], "{text}");
    }
}

#[test]
fn trigger_narrative_ongoing_is_not_a_promise() {
    for text in [
        "埼玉正在超市买菜。",
        "In the story, Saitama is now buying groceries.",
        "If you want, I'll add colours.",
        "Shall I continue with the second act?",
        "Here is the answer: 42.",
    ] {
        assert!(!applies(&facts(text)), "{text}");
        assert_eq!(decide(&facts(text)), None, "{text}");
    }
}

#[test]
fn trigger_needs_the_user_in_the_conversation() {
    let f = Facts {
        user_in_conversation: false,
        ..facts("I'm now drafting the outline")
    };
    assert_eq!(decide(&f), None);
}

#[test]
fn trigger_needs_a_job() {
    let f = Facts {
        in_job: false,
        failing_checks: vec![failing("file out/report.md exists")],
        ..citing("See out/report.md", "out/report.md")
    };
    assert_eq!(decide(&f), None);
}

#[test]
fn trigger_a_claim_alone_without_files_or_promise_is_not_checked() {
    // CC-6: no files and no "still working": no check, whatever it claims.
    assert_eq!(decide(&facts("All tests pass.")), None);
}

#[test]
fn cc_4_a_segment_sent_back_once_is_not_checked_again() {
    let f = Facts {
        sent_back_before: true,
        ..facts("Results to follow.")
    };
    assert_eq!(decide(&f), None);
}

// ---- CC-1 ----

#[test]
fn cc_1_lists_at_most_three_failing_checks() {
    let f = Facts {
        failing_checks: (1..=5).map(|i| failing(&format!("check {i}"))).collect(),
        ..citing("Done: out/report.md", "out/report.md")
    };
    let note = decide(&f).unwrap();
    assert_eq!(note.rules, vec![Rule::FailingChecks]);
    assert!(note.text.contains("check 1") && note.text.contains("check 3"));
    assert!(!note.text.contains("check 4"), "{}", note.text);
    assert!(note.text.contains("and 2 more"), "{}", note.text);
    assert!(note.text.contains("Fix the deliverable, not the check"));
}

#[test]
fn cc_1_passing_checks_give_no_note() {
    assert_eq!(
        decide(&citing("Done: out/report.md", "out/report.md")),
        None
    );
}

#[test]
fn cc_1_is_only_for_messages_citing_files() {
    let f = Facts {
        failing_checks: vec![failing("file out/report.md exists")],
        check_back_booked: true,
        ..facts("I'm now drafting the report.")
    };
    assert_eq!(decide(&f), None);
}

// ---- CC-2 ----

#[test]
fn cc_2_rest_later_is_backed_by_a_check_back_a_delegation_or_a_named_hand_off() {
    let text = "Results to follow.";
    assert_eq!(rules(&facts(text)), vec![Rule::RestLater]);
    let booked = Facts {
        check_back_booked: true,
        ..facts(text)
    };
    assert_eq!(decide(&booked), None);
    let delegated = Facts {
        delegated: true,
        ..facts(text)
    };
    assert_eq!(decide(&delegated), None);
    assert_eq!(
        decide(&facts("@Editor will finish the cut; more later.")),
        None
    );
    assert_eq!(decide(&facts("剪辑师 会接着做，稍后给你。")), None);
    // A name inside another word names nobody.
    assert_eq!(
        rules(&facts("The SubEditors will see it; more later.")),
        vec![Rule::RestLater]
    );
}

#[test]
fn cc_2_quotes_the_sentence_it_read() {
    let note = decide(&facts("Cut one is done. I'll post the second cut tonight.")).unwrap();
    assert!(
        note.text.contains("\"I'll post the second cut tonight.\""),
        "{}",
        note.text
    );
}

// ---- CC-3 ----

#[test]
fn cc_3_a_run_claim_needs_a_command_this_segment() {
    let f = citing("Fixed src/lib.rs; tests pass.", "src/lib.rs");
    assert_eq!(rules(&f), vec![Rule::ClaimedRun]);
    let ran = Facts {
        commands_run: 1,
        ..citing("Fixed src/lib.rs; tests pass.", "src/lib.rs")
    };
    assert_eq!(decide(&ran), None);
}

#[test]
fn cc_3_saying_it_was_not_verified_is_exempt() {
    for text in [
        "Fixed src/lib.rs; tests pass, not verified.",
        "Fixed src/lib.rs; I haven't run the tests.",
        "已修复 src/lib.rs，测试通过（未验证）。",
    ] {
        assert_eq!(decide(&citing(text, "src/lib.rs")), None, "{text}");
    }
    assert_eq!(
        rules(&citing("已修复 src/lib.rs，测试通过。", "src/lib.rs")),
        vec![Rule::ClaimedRun]
    );
}

// ---- the note ----

#[test]
fn several_rules_make_one_note_and_its_head_says_how_it_went_out() {
    let f = Facts {
        failing_checks: vec![failing("file out/report.md contains \"Summary\"")],
        ..citing(
            "Wrote out/report.md, tests pass. The appendix will follow.",
            "out/report.md",
        )
    };
    let note = decide(&f).unwrap();
    assert_eq!(
        note.rules,
        vec![Rule::FailingChecks, Rule::RestLater, Rule::ClaimedRun]
    );
    assert!(
        note.text.contains("has gone out as written"),
        "{}",
        note.text
    );
    let held = decide(&Facts {
        via: Via::SendMessage,
        ..f
    })
    .unwrap();
    assert!(held.text.contains("was not sent"), "{}", held.text);
}

// ---- reading and paths ----

#[test]
fn reading_finds_claims_and_exemptions() {
    let r = read("Tests pass and the build succeeded.");
    assert!(r.claims_run && !r.says_unverified && r.still_going.is_none());
    let r = read("Tests pass, but this is not verified.");
    assert!(r.claims_run && r.says_unverified);
    assert!(!read("The bypasses are drawn.").claims_run);
}

#[test]
fn path_candidates_are_words_that_look_like_paths() {
    let c = path_candidates(
        "See `out/report.md`, (draft.txt) and 已写入docs/plan.md。Also v1.2, https://x.io/a, \
         @Editor and 报告.md.",
    );
    assert_eq!(
        c,
        vec![
            "out/report.md",
            "draft.txt",
            "已写入docs/plan.md",
            "docs/plan.md",
            "报告.md"
        ]
    );
    assert!(path_candidates("Nothing here. Version 2.0 only.").is_empty());
}
