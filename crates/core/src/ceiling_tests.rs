use super::*;

fn failed(kind: FailureKind, reqs: &[&str]) -> Outcome {
    Outcome::Failed {
        kind,
        requirements: reqs.iter().map(|r| r.to_string()).collect(),
    }
}

fn user() -> Outcome {
    failed(FailureKind::User, &[])
}

#[test]
fn s_cc1_three_user_send_backs_in_a_row_are_case_b() {
    assert_eq!(stuck(&[user(), user()]), None);
    assert_eq!(stuck(&[user(), user(), user()]), Some(Case::SentBackInARow));
}

#[test]
fn a_pass_or_another_failure_breaks_the_row() {
    assert_eq!(stuck(&[user(), Outcome::Passed, user(), user()]), None);
    assert_eq!(
        stuck(&[user(), failed(FailureKind::Review, &[]), user(), user()]),
        None
    );
}

#[test]
fn superseded_and_undecided_hand_overs_neither_count_nor_break() {
    let h = [
        user(),
        Outcome::NotCounted,
        user(),
        Outcome::NotCounted,
        user(),
    ];
    assert_eq!(stuck(&h), Some(Case::SentBackInARow));
    assert_eq!(stuck(&vec![Outcome::NotCounted; 9]), None);
}

#[test]
fn the_same_requirement_on_three_hand_overs_is_case_a() {
    let h = [
        failed(FailureKind::Checks, &["ck_1", "R-2"]),
        failed(FailureKind::Review, &["R-2"]),
        failed(FailureKind::Checks, &["R-2", "ck_7"]),
    ];
    assert_eq!(stuck(&h), Some(Case::SameRequirement("R-2".into())));
}

#[test]
fn different_requirements_each_time_are_not_case_a() {
    let h = [
        failed(FailureKind::Checks, &["ck_1"]),
        failed(FailureKind::Review, &["R-2"]),
        failed(FailureKind::Checks, &["ck_1"]),
    ];
    assert_eq!(stuck(&h), None);
}

#[test]
fn case_a_is_read_before_case_b() {
    let h = [
        failed(FailureKind::User, &["R-4"]),
        failed(FailureKind::User, &["R-4"]),
        failed(FailureKind::User, &["R-4"]),
    ];
    assert_eq!(stuck(&h), Some(Case::SameRequirement("R-4".into())));
}

#[test]
fn more_than_six_failures_is_case_c_even_with_passes_between() {
    let mut h = Vec::new();
    for i in 0..6 {
        h.push(failed(FailureKind::Checks, &[["ck_1", "ck_2"][i % 2]]));
        h.push(Outcome::Passed);
    }
    assert_eq!(stuck(&h), None, "six failures are not yet past the ceiling");
    h.push(failed(FailureKind::Review, &[]));
    assert_eq!(stuck(&h), Some(Case::TooManyFailures));
}

#[test]
fn relax_is_offered_only_when_stuck_on_one_requirement() {
    let a = Case::SameRequirement("R-1".into());
    assert_eq!(offer(&a), CardOption::ALL.to_vec());
    for c in [Case::SentBackInARow, Case::TooManyFailures] {
        assert!(!offered(&c, CardOption::Relax), "{c:?}");
        assert_eq!(offer(&c).len(), 4);
    }
}

#[test]
fn every_answer_but_take_as_is_goes_back_to_rework() {
    assert_eq!(CardOption::TakeAsIs.effect(), Effect::Approve);
    assert_eq!(
        CardOption::CarryOn.effect(),
        Effect::Rework {
            direction: None,
            relax: false
        }
    );
    assert!(matches!(
        CardOption::Relax.effect(),
        Effect::Rework { relax: true, .. }
    ));
    for o in [CardOption::AnotherWay, CardOption::ChangePlan] {
        assert!(matches!(
            o.effect(),
            Effect::Rework {
                direction: Some(_),
                relax: false
            }
        ));
    }
}

#[test]
fn the_case_b_card_says_sent_back_three_times() {
    let t = card_text(&Case::SentBackInARow, "#09 MV");
    assert!(t.contains("you sent it back 3 times in a row"), "{t}");
    let a = card_text(&Case::SameRequirement("R-3".into()), "#09 MV");
    assert!(a.contains("R-3"), "{a}");
}

#[test]
fn names_round_trip() {
    for o in CardOption::ALL {
        assert_eq!(CardOption::parse(o.as_str()), Ok(o));
    }
    assert!(CardOption::parse("stop").is_err());
    for k in FailureKind::ALL {
        assert_eq!(FailureKind::parse(k.as_str()), Ok(k));
    }
    for c in [
        Case::SameRequirement("R-1".into()),
        Case::SentBackInARow,
        Case::TooManyFailures,
    ] {
        assert_eq!(Case::parse(c.as_str(), c.requirement()), Ok(c.clone()));
    }
    assert!(Case::parse("same_requirement", None).is_err());
}
