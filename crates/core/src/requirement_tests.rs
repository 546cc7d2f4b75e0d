use super::situation::{self, Line};
use super::*;

const HERE: PlanId = PlanId(1);
const OTHER: PlanId = PlanId(2);

fn facts(state: State, scope: Scope, plan: PlanId) -> Facts {
    Facts {
        state,
        scope,
        plan,
        source: SourceKind::YouSaid,
        excluded_here: false,
        taken_out: false,
    }
}

#[test]
fn pending_entries_offer_confirm_and_not_a_requirement() {
    for state in [State::ToConfirm, State::OldRuleUnverified] {
        let f = facts(state, Scope::Job, HERE);
        assert_eq!(
            offered(&f, HERE),
            vec![Action::Confirm, Action::NotARequirement]
        );
        assert_eq!(
            apply(&f, Action::Confirm, HERE).unwrap().state,
            State::InForce
        );
        assert_eq!(
            apply(&f, Action::NotARequirement, HERE).unwrap().state,
            State::NotARequirement
        );
    }
}

#[test]
fn own_entries_end_or_widen_but_board_lines_are_removed_on_the_board() {
    let own = facts(State::InForce, Scope::Job, HERE);
    assert_eq!(
        offered(&own, HERE),
        vec![Action::NoLongerHolds, Action::WholeConversation]
    );
    let widened = apply(&own, Action::WholeConversation, HERE).unwrap();
    assert_eq!(widened.scope, Scope::Session);
    assert_eq!(widened.state, State::InForce);
    assert_eq!(
        apply(&own, Action::NoLongerHolds, HERE).unwrap().state,
        State::NoLongerApplies
    );
    let board = Facts {
        source: SourceKind::Board,
        ..own.clone()
    };
    assert_eq!(offered(&board, HERE), vec![Action::WholeConversation]);
    let err = apply(&board, Action::NoLongerHolds, HERE).unwrap_err();
    assert!(err.to_string().starts_with("action_not_offered"));
    // A session entry of this job's own is not widened again.
    let session = facts(State::InForce, Scope::Session, HERE);
    assert_eq!(offered(&session, HERE), vec![Action::NoLongerHolds]);
}

#[test]
fn inherited_entries_are_set_aside_per_job_and_restored() {
    let inherited = facts(State::InForce, Scope::Session, OTHER);
    assert!(inherited.inherited(HERE));
    assert_eq!(group(&inherited, HERE), Some(Group::Inherited));
    assert_eq!(offered(&inherited, HERE), vec![Action::NotForThisJob]);
    let out = apply(&inherited, Action::NotForThisJob, HERE).unwrap();
    assert_eq!(out.excluded_here, Some(true));
    assert_eq!(out.state, State::InForce, "it still holds for other jobs");
    let set_aside = Facts {
        excluded_here: true,
        ..inherited
    };
    assert_eq!(group(&set_aside, HERE), Some(Group::SetAside));
    assert_eq!(offered(&set_aside, HERE), vec![Action::Restore]);
    assert_eq!(
        apply(&set_aside, Action::Restore, HERE)
            .unwrap()
            .excluded_here,
        Some(false)
    );
    // The job that recorded it sees it as its own.
    assert_eq!(
        group(&facts(State::InForce, Scope::Session, OTHER), OTHER),
        Some(Group::Own)
    );
}

#[test]
fn words_taken_out_are_shown_first_until_pressed() {
    let f = Facts {
        taken_out: true,
        ..facts(State::InForce, Scope::Job, HERE)
    };
    assert_eq!(group(&f, HERE), Some(Group::TakenOut));
    assert_eq!(
        offered(&f, HERE),
        vec![Action::NoLongerHolds, Action::KeepIt]
    );
    let kept = apply(&f, Action::KeepIt, HERE).unwrap();
    assert_eq!(kept.state, State::InForce);
    assert!(kept.clears_taken_out);
    let pending = Facts {
        taken_out: true,
        ..facts(State::ToConfirm, Scope::Job, HERE)
    };
    assert_eq!(
        offered(&pending, HERE),
        vec![Action::NotARequirement, Action::KeepIt]
    );
}

#[test]
fn ended_entries_offer_nothing() {
    for state in [
        State::Replaced,
        State::NoLongerApplies,
        State::NotARequirement,
    ] {
        let f = facts(state, Scope::Job, HERE);
        assert_eq!(group(&f, HERE), None);
        assert!(offered(&f, HERE).is_empty());
        assert!(apply(&f, Action::Confirm, HERE).is_err());
    }
}

#[test]
fn a_replacement_needs_later_words() {
    assert!(may_replace(10, 11));
    assert!(!may_replace(10, 10));
    assert!(!may_replace(11, 10));
}

#[test]
fn names_round_trip() {
    for a in Action::ALL {
        assert_eq!(Action::parse(a.as_str()), Ok(*a));
    }
    for s in State::ALL {
        assert_eq!(State::parse(s.as_str()), Ok(*s));
    }
    assert!(Action::parse("delete").is_err());
}

#[test]
fn db_fold_widens_lowercases_and_collapses_spaces() {
    assert_eq!(db_fold("  Ｈｅｌｌｏ\u{3000}\t World  "), "hello world");
    assert_eq!(db_fold("约 2  分钟"), "约 2 分钟");
    assert!(quote_in_line("The hands  look FAKE.", "hands look fake"));
    assert!(quote_in_line("片长约２分钟", "约2分钟"));
    assert!(!quote_in_line("the hands look fake", "the feet"));
    assert!(!quote_in_line("anything", "   "));
}

#[test]
fn fault_words_and_the_cut() {
    assert!(has_fault_word("the hands look FAKE"));
    assert!(has_fault_word("颜色不对"));
    assert!(!has_fault_word("looks great, thanks"));
    let long = "x".repeat(400);
    assert_eq!(cut_quote(&long).chars().count(), QUOTE_LIMIT);
}

fn sline(id: i64, state: State, scope: Scope, said: u32, at: i64) -> Line {
    Line {
        id,
        quote: format!("quote {id}"),
        restatement: String::new(),
        state,
        scope,
        ticket: None,
        this_ticket: false,
        inherited_from: None,
        said_count: said,
        job_count: 1,
        check: None,
        said_at: at,
    }
}

#[test]
fn situation_orders_by_scope_then_count_then_recency() {
    let mut mine = sline(5, State::InForce, Scope::Ticket, 1, 1);
    mine.this_ticket = true;
    mine.ticket = Some("ticket 01 Shot 01–03".into());
    let lines = vec![
        sline(1, State::InForce, Scope::Session, 1, 9),
        sline(2, State::InForce, Scope::Job, 1, 5),
        sline(3, State::InForce, Scope::Job, 3, 1),
        mine,
        sline(6, State::ToConfirm, Scope::Job, 1, 1),
        sline(7, State::OldRuleUnverified, Scope::Job, 1, 1),
    ];
    let text = situation::render(&lines);
    let order: Vec<usize> = ["R-5 ", "R-3 ", "R-2 ", "R-1 "]
        .iter()
        .map(|k| text.find(k).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text.contains("R-3 | \"quote 3\" | the user said it 3 times | holds for: this job"));
    assert!(text.contains("holds for: ticket 01 Shot 01–03"));
    let waiting = text.find(situation::WAITING_TITLE).unwrap();
    assert!(text.find("R-6 ").unwrap() > waiting);
    let old = text.find(situation::OLD_RULES_TITLE).unwrap();
    assert!(text.find("R-7 ").unwrap() > old);
    assert!(text.find("R-1 ").unwrap() < waiting);
}

#[test]
fn situation_lists_every_repeated_entry_and_cuts_the_rest() {
    let mut lines: Vec<Line> = (1..=30)
        .map(|i| sline(i, State::InForce, Scope::Job, 1, i))
        .collect();
    lines.push(sline(100, State::InForce, Scope::Job, 2, 0));
    let text = situation::render(&lines);
    assert!(text.contains("R-100 "));
    assert!(text.contains("and 10 more"), "{text}");
    let mut inherited = sline(200, State::InForce, Scope::Session, 7, 0);
    inherited.job_count = 3;
    inherited.inherited_from = Some("IG MV".into());
    inherited.check = Some("Running time 108–132 s (waiting for the user to confirm)".into());
    assert_eq!(
        situation::line(&inherited),
        "R-200 | \"quote 200\" | the user said it 7 times (across 3 plans) | holds for: every job \
         in this conversation (inherited from IG MV) | check: Running time 108–132 s (waiting \
         for the user to confirm)"
    );
    assert_eq!(situation::render(&[]), "");
}

#[test]
fn board_edits_gain_and_lose_lines() {
    let (added, removed) = board_lines_changed(
        "- No text on screen\n- Cold grade",
        "- no text on screen\n\n* End on black\n",
    );
    assert_eq!(added, vec!["End on black".to_string()]);
    assert_eq!(removed, vec!["Cold grade".to_string()]);
    assert_eq!(board_lines_changed("a", "a"), (vec![], vec![]));
}
