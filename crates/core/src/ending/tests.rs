use super::*;

/// An ending attempt by "Director" with `reason`, adjusted by `edit`.
fn attempt(reason: EndKind, edit: impl FnOnce(&mut EndingFacts)) -> EndingFacts {
    let mut f = EndingFacts {
        reason,
        bot_name: "Director".into(),
        ..EndingFacts::default()
    };
    edit(&mut f);
    f
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn bounced(v: &EndingVerdict) -> (BounceKind, &str, bool) {
    match v {
        EndingVerdict::Bounce { kind, text, counts } => (*kind, text.as_str(), *counts),
        other => panic!("expected a bounce, got {other:?}"),
    }
}

fn ended(code: &str, app_line: Option<&str>) -> EndingVerdict {
    EndingVerdict::End {
        code: code.into(),
        app_line: app_line.map(str::to_string),
    }
}

#[test]
fn kinds_round_trip_and_codes_are_snake_case() {
    use EndKind::*;
    for k in [Done, Answered, NothingNew, Blocked, GaveUp] {
        assert_eq!(EndKind::parse(k.as_str()), Ok(k));
    }
    use Disposition as D;
    for d in [D::Adopted, D::Answered, D::Declined, D::Deferred] {
        assert_eq!(Disposition::parse(d.as_str()), Ok(d));
    }
    let json = serde_json::to_string(&BounceKind::UnacknowledgedInbox).unwrap();
    assert_eq!(json, "\"unacknowledged_inbox\"");
    assert_eq!(BounceKind::AsksGoAhead.code(), "asks_go_ahead");
}

#[test]
fn end_turn_args_parse_with_inbox() {
    let a = parse_end_turn_args(
        r#"{"reason":"answered","answer":"Yes.","inbox":[{"id":"a1","disposition":"adopted"},
            {"id":7,"disposition":"declined","why":"out of scope"}]}"#,
    )
    .unwrap();
    assert_eq!(
        (a.reason, a.answer.as_deref()),
        (EndKind::Answered, Some("Yes."))
    );
    assert_eq!(a.inbox.len(), 2);
    assert_eq!(a.inbox[1].id, "7");
    assert_eq!(a.inbox[1].why.as_deref(), Some("out of scope"));
}

#[test]
fn blocked_needs_from_user_and_gave_up_needs_a_note() {
    let b = parse_end_turn_args(r#"{"reason":"blocked","needs_from_user":" "}"#).unwrap_err();
    assert!(
        b.contains("`needs_from_user`") && b.contains("nothing_new"),
        "{b}"
    );
    let g = parse_end_turn_args(r#"{"reason":"gave_up"}"#).unwrap_err();
    assert!(g.contains("`note`"), "{g}");
    assert!(parse_end_turn_args(r#"{"reason":"gave_up","note":"no access"}"#).is_ok());
}

#[test]
fn end_turn_errors_name_the_field() {
    let err = |json: &str| parse_end_turn_args(json).unwrap_err();
    let d = err(r#"{"reason":"done","inbox":[{"id":"a1","disposition":"declined"}]}"#);
    assert!(d.contains("`why`") && d.contains("a1"), "{d}");
    let r = err(r#"{"reason":"finished"}"#);
    assert!(r.contains("`reason`") && r.contains("nothing_new"), "{r}");
    let u = err(r#"{"reason":"done","summary":"x"}"#);
    assert!(u.contains("`summary`"), "{u}");
    let i = err(r#"{"reason":"done","inbox":[{"id":"a1","disposition":"ok"}]}"#);
    assert!(i.contains("disposition") && i.contains("deferred"), "{i}");
}

#[test]
fn prose_reason_is_answered_at_a_desk_and_done_in_work() {
    assert_eq!(prose_reason(true), EndKind::Answered);
    assert_eq!(prose_reason(false), EndKind::Done);
}

#[test]
fn unacknowledged_mail_bounces_listing_ids_but_prose_is_exempt() {
    let f = attempt(EndKind::Done, |f| f.unacknowledged = strings(&["a1", "b2"]));
    let v = evaluate(&f);
    let (kind, text, counts) = bounced(&v);
    assert_eq!(kind, BounceKind::UnacknowledgedInbox);
    assert!(
        counts && text.contains("a1, b2") && text.contains("deferred"),
        "{text}"
    );
    // The call it shows is one the bounce would let through.
    let example = r#"{"reason":"done","inbox":[{"id":"a1","disposition":"adopted"},{"id":"b2","disposition":"adopted"}]}"#;
    assert!(text.ends_with(&format!("end_turn({example})")), "{text}");
    let given = parse_end_turn_args(example).unwrap().inbox;
    assert!(unacknowledged(&f.unacknowledged, &given).is_empty());
    let prose = EndingFacts { prose: true, ..f };
    assert_eq!(evaluate(&prose), ended("done", None));
}

#[test]
fn disposition_for_unread_id_bounces_nothing() {
    // S-END-4: the woken line named in `inbox` was never mail this segment read.
    let given = |id: &str| InboxDisposition {
        id: id.into(),
        disposition: Disposition::Answered,
        why: None,
    };
    assert!(unacknowledged(&[], &[given("w9")]).is_empty());
    let read = strings(&["a1", "#b2"]);
    assert_eq!(unacknowledged(&read, &[given("b2")]), strings(&["a1"]));
}

#[test]
fn answered_without_answer_bounces_unanswered_request() {
    // S-DEL-4: the verdict went out by send_message.
    let f = attempt(EndKind::Answered, |f| {
        f.unanswered_requests = strings(&["del_3 from Lead: review the storyboard"])
    });
    let v = evaluate(&f);
    let (kind, text, counts) = bounced(&v);
    assert_eq!(kind, BounceKind::UnansweredRequest);
    assert!(counts && text.contains("del_3 from Lead") && text.contains("`answer`"));
    let given = EndingFacts {
        answer_given: true,
        ..f
    };
    assert_eq!(evaluate(&given), ended("answered", None));
}

#[test]
fn done_with_obligations_bounces_once_then_ends_nothing_new() {
    let owes = |f: &mut EndingFacts| f.obligations = strings(&["ticket 02 is In progress"]);
    let v = evaluate(&attempt(EndKind::Done, owes));
    let (kind, text, _) = bounced(&v);
    assert_eq!(kind, BounceKind::UnfinishedObligations);
    // END-4 and DEL-23: waiting on a Bot is delegate or nothing_new; answers go in `answer`.
    assert!(
        text.contains("ticket 02") && text.contains("delegate"),
        "{text}"
    );
    assert!(
        text.contains("\"blocked\" is only") && text.contains("`answer`"),
        "{text}"
    );
    let again = attempt(EndKind::Done, |f| {
        owes(f);
        f.bounced_once = vec![BounceKind::UnfinishedObligations];
        f.budget_used = 1;
    });
    assert_eq!(evaluate(&again), ended("nothing_new", None));
    // A valid wait, or an ending other than done, is not held to what it owes.
    let waiting = attempt(EndKind::Done, |f| {
        owes(f);
        f.has_valid_wait = true;
    });
    assert_eq!(evaluate(&waiting), ended("done", None));
    let answered = attempt(EndKind::Answered, owes);
    assert_eq!(evaluate(&answered), ended("answered", None));
}

#[test]
fn counting_bounce_with_budget_spent_needs_attention() {
    let f = attempt(EndKind::Done, |f| {
        f.unacknowledged = strings(&["a1"]);
        f.budget_used = BOUNCE_BUDGET;
    });
    match evaluate(&f) {
        EndingVerdict::NeedsAttention { text } => assert!(text.contains("Director"), "{text}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn promised_later_bounces_once_outside_the_budget_then_posts_a_line() {
    // S-END-1.
    let promised = |f: &mut EndingFacts| {
        f.promised_later = Some("I'm now drafting the storyboard".into());
        f.budget_used = BOUNCE_BUDGET;
    };
    let v = evaluate(&attempt(EndKind::Done, promised));
    let (kind, text, counts) = bounced(&v);
    assert_eq!(kind, BounceKind::PromisedLater);
    assert!(
        !counts && text.contains("check_back") && text.contains("drafting"),
        "{text}"
    );
    let again = attempt(EndKind::Done, |f| {
        promised(f);
        f.bounced_once = vec![BounceKind::PromisedLater];
    });
    let EndingVerdict::End { code, app_line } = evaluate(&again) else {
        panic!("expected the ending to go through");
    };
    assert_eq!(code, "done");
    let line = app_line.unwrap();
    assert!(line.contains("nobody is carrying it on") && line.contains("@Director"));
}

#[test]
fn said_nothing_bounces_once_then_posts_that_it_ended_without_replying() {
    // S-END-2.
    let silent = |f: &mut EndingFacts| {
        f.said_nothing = true;
        f.in_user_direct = true;
    };
    let v = evaluate(&attempt(EndKind::Answered, silent));
    let (kind, text, counts) = bounced(&v);
    assert_eq!(kind, BounceKind::SaidNothing);
    assert!(!counts && text.contains("never reach the user"), "{text}");
    let again = attempt(EndKind::Answered, |f| {
        silent(f);
        f.bounced_once = vec![BounceKind::SaidNothing];
    });
    let line = "Director ended its turn without replying. Say it again to get an answer.";
    assert_eq!(evaluate(&again), ended("answered", Some(line)));
}

#[test]
fn blocked_ending_skips_promised_later_and_said_nothing() {
    let f = attempt(EndKind::Blocked, |f| {
        f.promised_later = Some("results soon".into());
        f.said_nothing = true;
        f.obligations = strings(&["ticket 01"]);
    });
    assert_eq!(evaluate(&f), ended("blocked", None));
}

#[test]
fn bounce_after_the_reply_went_out_says_not_to_repeat_it() {
    // S-END-3.
    let f = attempt(EndKind::Answered, |f| {
        f.obligations = strings(&["hand over ticket 03"]);
        f.reply_already_out = true;
        f.prose = true;
    });
    let v = evaluate(&f);
    let (kind, text, _) = bounced(&v);
    assert_eq!(kind, BounceKind::UnfinishedObligations);
    assert!(text.starts_with("Your reply has gone out as written; do not say it again."));
}

#[test]
fn asks_go_ahead_never_needs_attention() {
    let v = on_asks_go_ahead(0, false).expect("the first go-ahead question bounces");
    let (kind, text, counts) = bounced(&v);
    assert_eq!(kind, BounceKind::AsksGoAhead);
    assert!(counts && text.contains("carry on"), "{text}");
    // Once a segment, and a spent budget lets the question through instead.
    assert_eq!(on_asks_go_ahead(0, true), None);
    assert_eq!(on_asks_go_ahead(BOUNCE_BUDGET, false), None);
}

#[test]
fn budget_spent_needs_attention() {
    assert_eq!(desk_refusal(0), DeskRefusal::Refuse);
    assert_eq!(desk_refusal(1), DeskRefusal::Refuse);
    assert_eq!(desk_refusal(BOUNCE_BUDGET), DeskRefusal::NeedsAttention);
    assert!(NEEDS_JOB_TEXT.starts_with("This line needs a job selected"));
}

#[test]
fn fourth_progress_message_without_parent_is_refused() {
    assert!(progress_message(2, false).is_ok());
    let e = progress_message(3, false).unwrap_err();
    assert!(
        e.starts_with("progress_limit") && e.contains("`parent_id`"),
        "{e}"
    );
    assert!(progress_message(10, true).is_ok());
}

#[test]
fn end3_end6_end9_dispositions_recorded_for_read_lines_only() {
    let read = strings(&["#12", "#14", "#12"]);
    let given = vec![
        InboxDisposition {
            id: "12".into(),
            disposition: Disposition::Declined,
            why: Some("out of scope".into()),
        },
        InboxDisposition {
            id: "#99".into(),
            disposition: Disposition::Adopted,
            why: None,
        },
    ];
    // A tool ending: what it gave, for lines it read; #99 it never read records nothing.
    let tool = line_dispositions(&read, &given, false);
    assert_eq!(
        tool,
        vec![LineDisposition {
            line: 12,
            disposition: Disposition::Declined,
            why: Some("out of scope".into()),
            by_prose: false,
        }]
    );
    // A prose ending answers the rest it read.
    let prose = line_dispositions(&read, &given, true);
    assert_eq!(prose.len(), 2);
    assert_eq!(prose[1].line, 14);
    assert_eq!(prose[1].disposition, Disposition::Answered);
    assert!(prose[1].by_prose);
}
