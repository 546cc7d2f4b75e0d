use super::*;

fn bot(id: i64, name: &str, item: Option<i64>) -> BotFacts {
    BotFacts {
        bot_id: BotId(id),
        name: name.into(),
        work_item_id: item.map(WorkItemId),
        can_take_work: true,
    }
}

fn gone(mut b: BotFacts) -> BotFacts {
    b.can_take_work = false;
    b
}

/// An open ticket owned by Ada (bot 1, work 11) in a job led by Lee (bot 3).
fn open() -> BallFacts {
    BallFacts {
        ticket_open: true,
        owner: Some(bot(1, "Ada", Some(11))),
        lead: Some(bot(3, "Lee", Some(33))),
        ..BallFacts::default()
    }
}

fn ball(f: &BallFacts) -> Ball {
    ball_holder(f).expect("an open ticket in an active plan has a ball")
}

fn request(to: BotFacts, deliverable_in_review: bool) -> RequestFacts {
    RequestFacts {
        recipient: to,
        deliverable_in_review,
    }
}

#[test]
fn parked_done_or_dormant_plans_and_closed_tickets_show_nothing() {
    let mut f = open();
    f.plan_quiet = true;
    assert_eq!(ball_holder(&f), None);
    let mut f = open();
    f.ticket_open = false;
    assert_eq!(ball_holder(&f), None);
}

#[test]
fn bh_rule_1_open_request_gives_the_recipient_the_ball() {
    let mut f = open();
    f.requests = vec![request(bot(2, "Bo", Some(22)), false)];
    let b = ball(&f);
    assert_eq!(
        (b.holder, b.bot_id, b.work_item_id, b.why),
        (
            Holder::Bot,
            Some(BotId(2)),
            Some(WorkItemId(22)),
            BallWhy::Request
        )
    );
    assert_eq!(b.text, "With Bo, on a delegated part");
    // A recipient that can no longer take work holds nothing: the owner has it.
    f.requests = vec![request(gone(bot(2, "Bo", Some(22))), false)];
    assert_eq!(ball(&f).why, BallWhy::Owner);
}

#[test]
fn s_bh_1_delegated_deliverable_in_review_is_the_users_not_the_recipients() {
    // A delegated deliverable whose hand-over waits on the user's 放行.
    let mut f = open();
    f.requests = vec![request(bot(2, "Bo", Some(22)), true)];
    f.hand_over = Some(HandOver::AwaitingWord);
    let b = ball(&f);
    assert_eq!(
        (b.holder, b.why, b.bot_id),
        (Holder::User, BallWhy::AwaitingWord, None)
    );
    assert_eq!(
        b.text,
        "Waiting on your word: say it is fine, or what to fix"
    );
    // In review with a reviewer: the reviewer, never the recipient.
    f.hand_over = Some(HandOver::InReview {
        reviewer: Some(bot(4, "Rita", Some(44))),
    });
    let b = ball(&f);
    assert_eq!((b.holder, b.bot_id), (Holder::Reviewer, Some(BotId(4))));
}

#[test]
fn bh_rule_2_a_question_awaiting_the_user() {
    let mut f = open();
    f.question = Some(bot(1, "Ada", Some(11)));
    f.blocked = Some(bot(1, "Ada", Some(11)));
    f.held = true;
    let b = ball(&f);
    assert_eq!((b.holder, b.why), (Holder::User, BallWhy::Question));
    assert_eq!(b.text, "Waiting on you: answer Ada's question");
    // A request whose recipient can take work still comes first.
    f.requests = vec![request(bot(2, "Bo", None), false)];
    assert_eq!(ball(&f).why, BallWhy::Request);
}

#[test]
fn capability_ceiling_is_the_users() {
    let mut f = open();
    f.at_ceiling = true;
    f.blocked = Some(bot(1, "Ada", Some(11)));
    let b = ball(&f);
    assert_eq!((b.holder, b.why), (Holder::User, BallWhy::Ceiling));
}

#[test]
fn bh_rule_3_blocked_work_is_the_users() {
    let mut f = open();
    f.blocked = Some(bot(1, "Ada", Some(11)));
    f.held = true;
    let b = ball(&f);
    assert_eq!((b.holder, b.why), (Holder::User, BallWhy::Blocked));
    assert_eq!(
        b.text,
        "Waiting on you: Ada is stuck and needs something from you"
    );
}

#[test]
fn bh_rule_4_a_hold_on_the_ticket_or_a_dependency_is_the_users() {
    let mut f = open();
    f.held = true;
    f.hand_over = Some(HandOver::Rework);
    assert_eq!(ball(&f).why, BallWhy::Held);
    f.held = false;
    f.held_dependency = Some(2);
    let b = ball(&f);
    assert_eq!((b.holder, b.why), (Holder::User, BallWhy::DependencyHeld));
    assert_eq!(
        b.text,
        "Waiting on you: #02, which it depends on, is stopped"
    );
}

#[test]
fn bh_rule_5_awaiting_review_reads_the_hand_over() {
    let mut f = open();
    f.hand_over = Some(HandOver::AwaitingWord);
    assert_eq!(ball(&f).holder, Holder::User);
    // A bound check failed on its last run: back to the owner.
    f.bound_check_failed = true;
    let b = ball(&f);
    assert_eq!(
        (b.holder, b.bot_id, b.why),
        (Holder::Bot, Some(BotId(1)), BallWhy::FailedCheck)
    );
    assert_eq!(b.text, "With Ada: a check failed on its last run");
    f.bound_check_failed = false;

    f.hand_over = Some(HandOver::InReview {
        reviewer: Some(bot(4, "Rita", None)),
    });
    let b = ball(&f);
    assert_eq!((b.holder, b.why), (Holder::Reviewer, BallWhy::InReview));
    assert_eq!(b.text, "Waiting on Rita's review");
    // No reviewer, or one that cannot take work: the app approves at the next tick.
    for reviewer in [None, Some(gone(bot(4, "Rita", None)))] {
        f.hand_over = Some(HandOver::InReview { reviewer });
        let b = ball(&f);
        assert_eq!((b.holder, b.why), (Holder::App, BallWhy::NoReviewer));
        assert_eq!(b.text, "Approved by the app at the next tick");
    }
    f.hand_over = Some(HandOver::Checking);
    assert_eq!(ball(&f).holder, Holder::App);
    f.hand_over = Some(HandOver::Rework);
    let b = ball(&f);
    assert_eq!(
        (b.holder, b.bot_id, b.why),
        (Holder::Bot, Some(BotId(1)), BallWhy::Rework)
    );
    f.hand_over = Some(HandOver::FailedChecks);
    assert_eq!(ball(&f).why, BallWhy::FailedCheck);
    // Moved to review on the board with no hand-over: the user's word.
    f.hand_over = None;
    f.in_review_without_hand_over = true;
    let b = ball(&f);
    assert_eq!(
        (b.holder, b.why),
        (Holder::User, BallWhy::InReviewUnsubmitted)
    );
}

#[test]
fn bh_rule_6_owner_then_lead_then_nobody() {
    let mut f = open();
    let b = ball(&f);
    assert_eq!(
        (b.holder, b.bot_id, b.work_item_id, b.why),
        (
            Holder::Bot,
            Some(BotId(1)),
            Some(WorkItemId(11)),
            BallWhy::Owner
        )
    );
    assert_eq!(b.text, "With Ada");
    f.owner = f.owner.map(gone);
    let b = ball(&f);
    assert_eq!((b.bot_id, b.why), (Some(BotId(3)), BallWhy::Lead));
    assert_eq!(b.text, "Waiting on Lee to hand it out");
    f.lead = None;
    let b = ball(&f);
    assert_eq!((b.holder, b.why), (Holder::Nobody, BallWhy::Unclaimed));
    assert_eq!(b.text, "Waiting on you: nobody is on it");
    // Rework whose owner is gone goes to the lead to hand out again.
    let mut f = open();
    f.owner = f.owner.map(gone);
    f.hand_over = Some(HandOver::Rework);
    assert_eq!(ball(&f).why, BallWhy::Lead);
}

#[test]
fn ej7_a_running_external_job_is_the_pollers() {
    let mut f = open();
    f.external_job_running = true;
    f.requests = vec![request(bot(2, "Bo", Some(22)), false)];
    let b = ball(&f);
    assert_eq!(
        (b.holder, b.why, b.bot_id),
        (Holder::Poller, BallWhy::ExternalJob, None)
    );
    assert_eq!(b.text, "Waiting on a render");
}

#[test]
fn plan_lead_is_the_first_candidate_that_can_take_work() {
    let lead = first_able([
        gone(bot(1, "Ada", None)),
        bot(2, "Bo", None),
        bot(3, "Lee", None),
    ]);
    assert_eq!(lead.map(|b| b.bot_id), Some(BotId(2)));
    assert_eq!(first_able([gone(bot(1, "Ada", None))]), None);
}

#[test]
fn ball_serializes_as_the_api_shows_it() {
    let mut f = open();
    let v = serde_json::to_value(ball(&f)).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"holder": "bot", "bot_id": 1, "work_item_id": 11, "why": "owner",
                           "text": "With Ada"})
    );
    f.held = true;
    let v = serde_json::to_value(ball(&f)).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"holder": "user", "why": "held",
                           "text": "Waiting on you: stopped; lift the stop to go on"})
    );
}
