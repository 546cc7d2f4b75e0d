//! The digests' scenarios for desks, attribution, the ending contract and jobs (C §2, §3,
//! A §4, §17) over a real engine and store, with scripted Bots: a desk's refusals and its
//! choice of a job, a third job at full capacity, a direct that sees no group job, refused
//! `work_on` in working segments, a renamed job. Scripts answer by rule when the newest
//! message is a line containing the rule's words, else by step: the step's index is the
//! number of replies the thread already holds.

mod support;

use support::*;
use troupe_core::PlanId;
use troupe_core::ending::NEEDS_JOB_TEXT;
use troupe_core::run::EndReason;
use troupe_core::work_item::WorkMode;

/// Three jobs in the group, none of them the one the line asks about.
fn three_jobs(w: &World, s: troupe_core::SessionId) -> Vec<PlanId> {
    [
        "the invoice template",
        "the pricing page",
        "the refund policy",
    ]
    .iter()
    .map(|words| open_job(w, s, words).id)
    .collect()
}

/// A look-up with an effect (the scenario's `curl`; a local command here).
const LOOKUP: &str = r#"{"name":"shell","arguments":{"command":"echo 'Payoneer to Stripe: supported' > lookup.txt"}}"#;

// S-DS-1 (work_on without a quote)
#[tokio::test]
async fn a_refused_lookup_lists_the_choices_and_work_on_new_quotes_the_trigger_line() {
    let w = world();
    // The desk's look-up is refused, it opens a job; the job runs the look-up (and tries
    // work_on again, refused: it has its job) and answers.
    let alpha = bot(
        &w,
        "Alpha",
        &format!(
            r#"{{"steps":[{{"tool_calls":[{LOOKUP}]}},
                {{"tool_calls":[{{"name":"work_on","arguments":{{"new":{{"title":"check that Payoneer pays out to Stripe"}}}}}}]}},
                {{"text":"They connect."}}]}}"#
        ),
    );
    let s = group(&w, &[alpha]);
    let candidates = three_jobs(&w, s);
    let desk = thread_of(&w, s, alpha);
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(s, "@Alpha Payoneer + Stripe 能通吗".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job answered", || {
        said(&w, s, "They connect.")
    })
    .await;
    let desk_run = runs_of(&w, desk).remove(0);
    assert_eq!(
        w.collab
            .store()
            .read(|tx| tx.segment_verdict(desk_run.id))
            .unwrap()
            .as_deref(),
        Some("unread"),
        "reading is down"
    );
    let calls = calls_of(&w, desk_run.id);
    assert_eq!(calls[0].name, "shell");
    assert_eq!(calls[0].status, "refused");
    for p in &candidates {
        assert!(
            calls[0]
                .result
                .contains(&format!("work_on({{\"plan\":\"{p}\"}})")),
            "{}",
            calls[0].result
        );
    }
    assert!(
        calls[0].result.contains("{\"new\":{\"title\":") && calls[0].result.contains("1 of 2"),
        "{}",
        calls[0].result
    );
    assert_eq!(ends(&w, desk), vec!["moved"]);
    assert!(
        !std::path::Path::new(
            &w.collab
                .store()
                .read(|tx| tx.thread(desk))
                .unwrap()
                .workspace
        )
        .join("lookup.txt")
        .exists(),
        "nothing ran at the desk"
    );
    // The new job quotes the line that woke the desk: named from it, its request verbatim.
    let plans = w.collab.plans(s).unwrap();
    assert_eq!(plans.len(), 4);
    let new = plans.iter().find(|p| !candidates.contains(&p.id)).unwrap();
    assert_eq!(new.opening_line_id, Some(line.id));
    assert_eq!(new.original_request, line.body);
    assert_eq!(new.name, "Payoneer + Stripe 能通吗");
    assert_eq!(new.spec.goal, "check that Payoneer pays out to Stripe");
    let filed = w
        .collab
        .store()
        .read(|tx| tx.filings_of_line(line.id))
        .unwrap();
    assert_eq!(filed[0].plan_id, new.id);
    // The call proceeds in the job's work, in its folder.
    let x = job(&w, alpha).unwrap();
    assert_eq!(x.plan_id, Some(new.id));
    assert_eq!(
        std::fs::read_to_string(std::path::Path::new(&new.folder).join("lookup.txt")).unwrap(),
        "Payoneer to Stripe: supported\n"
    );
    assert_eq!(segment_of(&w, desk_run.id).bounces, 1);
}

// S-DS-1 (a guessed quote)
#[tokio::test]
async fn a_guessed_quote_is_refused_and_the_second_refusal_needs_attention() {
    let w = world();
    let alpha = bot(&w, "Alpha", r#"{"steps":[{"text":"placeholder"}]}"#);
    let s = group(&w, &[alpha]);
    let candidates = three_jobs(&w, s);
    // A person's line that exists, but in another conversation.
    let beta = bot(&w, "Beta", r#"{"steps":[{"text":"ok"}]}"#);
    let elsewhere = person_line(&w, direct(&w, beta), "Payoneer + Stripe 能通吗");
    rescript(
        &w,
        alpha,
        &format!(
            r#"{{"steps":[{{"tool_calls":[{LOOKUP}]}},
                {{"tool_calls":[{{"name":"work_on","arguments":{{"new":{{"title":"Payoneer to Stripe"}},"quote_message_id":{}}}}}]}},
                {{"text":"never"}}]}}"#,
            elsewhere.id.0
        ),
    );
    let desk = thread_of(&w, s, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha Payoneer + Stripe 能通吗".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, desk, 1).await;
    let run = runs_of(&w, desk).remove(0);
    let calls = calls_of(&w, run.id);
    assert_eq!(calls.len(), 2);
    assert!(calls[0].result.contains("1 of 2"), "{}", calls[0].result);
    assert_eq!(calls[1].name, "work_on");
    // The second refusal says what was wrong with the call, then DS-13's words.
    assert!(
        calls[1].result.ends_with(NEEDS_JOB_TEXT)
            && calls[1].result.contains("quote_message_id")
            && calls[1].result.contains("last refusal (2 of 2)"),
        "the second refusal: {}",
        calls[1].result
    );
    match run.end_reason {
        Some(EndReason::Consumer { code, detail }) => {
            assert_eq!(code, "needs_attention");
            assert_eq!(detail.as_deref(), Some(NEEDS_JOB_TEXT));
        }
        other => panic!("expected needs_attention, got {other:?}"),
    }
    assert_eq!(segment_of(&w, run.id).bounces, 2);
    let desk_item = items(&w, alpha).remove(0);
    assert_eq!(desk_item.mode, WorkMode::Desk);
    assert_eq!(desk_item.state.as_str(), "needs_attention");
    assert_eq!(
        w.collab.plans(s).unwrap().len(),
        candidates.len(),
        "no job opened"
    );
    assert!(job(&w, alpha).is_none());
    assert!(
        w.collab
            .store()
            .read(|tx| tx.effects_for_thread(desk))
            .unwrap()
            .is_empty(),
        "the look-up never ran"
    );
}

// S-DS-11
#[tokio::test]
async fn a_desk_choosing_a_third_job_at_full_capacity_queues_it_and_runs_nothing() {
    let w = world();
    // Every line is read as new work: a desk's first effect opens a job for it. Each job
    // writes its file and then works on (a long model call).
    reader_says(&w, r#"{"control":"neither","belongs":"new"}"#);
    let write = |n: &str| {
        format!(
            r#"{{"when_user_contains":"job {n}","reply":{{"tool_calls":[{{"name":"write_file","arguments":{{"path":"{n}.md","content":"{n}"}}}}]}}}}"#
        )
    };
    let alpha = bot(
        &w,
        "Alpha",
        &format!(
            r#"{{"steps":[{{"text":"unused"}},{{"text":"working","delay_ms":60000}}],"rules":[{},{},{}]}}"#,
            write("one"),
            write("two"),
            write("three")
        ),
    );
    let s = group(&w, &[alpha]);
    let desk = thread_of(&w, s, alpha);
    let mut events = w.collab.store().subscribe();
    for (i, n) in ["one", "two"].iter().enumerate() {
        w.collab
            .post_line(s, format!("@Alpha job {n}"), None)
            .await
            .unwrap();
        until(&mut events, "the job wrote its file and works on", || {
            jobs(&w, alpha).get(i).is_some_and(|j| {
                w.collab.engine().is_running(j.thread_id)
                    && std::path::Path::new(&w.collab.plan(j.plan_id.unwrap()).unwrap().folder)
                        .join(format!("{n}.md"))
                        .exists()
            })
        })
        .await;
    }
    let live = || {
        w.collab
            .store()
            .read(|tx| tx.live_work_segments(alpha))
            .unwrap()
    };
    assert_eq!(live(), 2, "capacity 2/2");
    w.collab
        .post_line(s, "@Alpha job three".into(), None)
        .await
        .unwrap();
    until(&mut events, "the third desk ended", || {
        ends(&w, desk).len() == 3
    })
    .await;
    assert_eq!(ends(&w, desk), vec!["moved", "moved", "queued"]);
    let third = jobs(&w, alpha).pop().unwrap();
    let view = w.collab.work_item(third.id).unwrap();
    assert_eq!(view.state, "queued");
    assert_eq!(view.queue_position, Some(1));
    assert!(!w.collab.engine().is_running(third.thread_id));
    assert_eq!(live(), 2, "the desk's choice made no extra work segment");
    // The write that chose the job did not run, at the desk or anywhere.
    let run = runs_of(&w, desk).pop().unwrap();
    let calls = calls_of(&w, run.id);
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (calls[0].name.as_str(), calls[0].status.as_str()),
        ("write_file", "refused")
    );
    assert!(
        calls[0].result.contains("Nothing was run"),
        "{}",
        calls[0].result
    );
    let folder = std::path::PathBuf::from(w.collab.plan(third.plan_id.unwrap()).unwrap().folder);
    let desk_dir = std::path::PathBuf::from(
        w.collab
            .store()
            .read(|tx| tx.thread(desk))
            .unwrap()
            .workspace,
    );
    assert!(!folder.join("three.md").exists() && !desk_dir.join("three.md").exists());
    // The queued work is durable: when a slot frees up it starts and does what was asked.
    let first = jobs(&w, alpha).remove(0);
    w.collab
        .engine()
        .stop(first.thread_id, troupe_engine::StopMode::Internal)
        .await
        .unwrap();
    until(&mut events, "the third job wrote its file", || {
        folder.join("three.md").exists()
    })
    .await;
    for j in jobs(&w, alpha) {
        let _ = w
            .collab
            .engine()
            .stop(j.thread_id, troupe_engine::StopMode::Internal)
            .await;
    }
}

// S-AT-3
#[tokio::test]
async fn a_direct_line_is_not_filed_under_a_group_job_the_bot_never_touched() {
    let w = world();
    // A reader that would file any line under plan_1, were it shown.
    reader_says(
        &w,
        r#"{"control":"neither","belongs":"jobs","jobs":["plan_1"]}"#,
    );
    let alpha = bot(&w, "Alpha", r#"{"steps":[{"text":"It is on track."}]}"#);
    let g = group(&w, &[alpha]);
    let p = open_job(&w, g, "the launch report");
    assert_eq!(p.id, PlanId(1));
    let activity = p.last_user_activity_at;
    let d = direct(&w, alpha);
    let t = w.collab.direct_thread(d).unwrap();
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(d, "how is the launch report going".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    assert!(said(&w, d, "It is on track."));
    let run = runs_of(&w, t).remove(0);
    assert!(
        segment_of(&w, run.id).candidates.is_empty(),
        "the group's job is no candidate in the direct"
    );
    let reading = w
        .collab
        .store()
        .read(|tx| tx.filing_reading(line.id))
        .unwrap();
    assert!(
        reading.is_none_or(|r| !r.candidates.contains(&p.id)),
        "the reader was not shown it"
    );
    assert!(
        w.collab
            .store()
            .read(|tx| tx.filings_of_line(line.id))
            .unwrap()
            .is_empty()
    );
    assert!(job(&w, alpha).is_none(), "no work on the group's job");
    assert_eq!(
        w.collab.plan(p.id).unwrap().last_user_activity_at,
        activity,
        "nor counted as the person's activity there"
    );
}

// S-END-5
#[tokio::test]
async fn refused_work_on_in_a_working_segment_spends_no_budget_and_does_not_cut_it_off() {
    let w = world();
    // The desk opens the job; the job's turn calls work_on four times (new, an unknown job,
    // malformed arguments, new again: more than a desk's budget), then works and finishes.
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[
            {"text":"unused"},
            {"tool_calls":[{"name":"work_on","arguments":{"plan":"plan_77"}}]},
            {"tool_calls":[{"name":"work_on","arguments":"{\"new\": 5}"}]},
            {"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"another"}}}]},
            {"tool_calls":[{"name":"write_file","arguments":{"path":"notes.md","content":"tidy"}}]},
            {"text":"Notes tidied."}],
          "rules":[{"when_user_contains":"tidy the notes","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"tidy notes"}}}]}}]}"#,
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha tidy the notes".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job finished", || {
        said(&w, s, "Notes tidied.")
    })
    .await;
    let x = job(&w, alpha).unwrap();
    until(&mut events, "the job's turn ended", || {
        !ends(&w, x.thread_id).is_empty()
    })
    .await;
    assert_eq!(ends(&w, thread_of(&w, s, alpha)), vec!["moved"]);
    let run = runs_of(&w, x.thread_id).remove(0);
    let calls = calls_of(&w, run.id);
    let refused: Vec<_> = calls.iter().filter(|c| c.name == "work_on").collect();
    assert_eq!(refused.len(), 4);
    for c in &refused {
        assert_eq!(c.status, "error", "{c:?}");
        assert!(!c.result.contains(NEEDS_JOB_TEXT), "{}", c.result);
    }
    assert_eq!(segment_of(&w, run.id).bounces, 0, "no bounce counted");
    assert_eq!(ends(&w, x.thread_id), vec!["completed"], "not cut off");
    assert_eq!(job(&w, alpha).unwrap().state.as_str(), "idle");
    let folder = w.collab.plan(x.plan_id.unwrap()).unwrap().folder;
    assert!(std::path::Path::new(&folder).join("notes.md").exists());
    assert!(
        !lines_said(&w, s).iter().any(|l| l.contains(NEEDS_JOB_TEXT)),
        "{:?}",
        lines_said(&w, s)
    );
}

// S-PLAN-1
#[tokio::test]
async fn a_renamed_jobs_situation_says_the_persons_words_win_over_its_goal() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[{"text":"unused"},{"text":"working","delay_ms":60000}],
          "rules":[{"when_user_contains":"让审片员","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"制作一部未来世界题材、时长超过2分钟的短片"}}}]}}]}"#,
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha 让审片员回复视频导演".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job's work runs", || {
        job(&w, alpha).is_some_and(|j| w.collab.engine().is_running(j.thread_id))
    })
    .await;
    let x = job(&w, alpha).unwrap();
    let plan = w.collab.plan(x.plan_id.unwrap()).unwrap();
    assert_eq!(plan.name, "让审片员回复视频导演");
    let note = "the user renamed this job after its goal was written";
    let before = segment_situation(&w, x.thread_id);
    assert!(
        before.contains("Job \"让审片员回复视频导演\"")
            && before.contains("Goal: 制作一部未来世界题材"),
        "{before}"
    );
    assert!(!before.contains(note), "{before}");
    // The person renames the job; its goal still says what the Bot wrote.
    let renamed = w
        .collab
        .patch_plan_spec(
            plan.id,
            troupe_collab::PlanPatchRequest {
                version: plan.version,
                name: Some("做《一拳超人》动画".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        renamed.folder, plan.folder,
        "the folder keeps its first name"
    );
    let after = segment_situation(&w, x.thread_id);
    assert!(
        after.contains("Job \"做《一拳超人》动画\"")
            && after.contains("Goal: 制作一部未来世界题材"),
        "{after}"
    );
    assert!(
        after.contains(note) && after.contains("their words win"),
        "{after}"
    );
    // Once the person writes the goal, the note goes.
    w.collab
        .patch_plan_spec(
            plan.id,
            troupe_collab::PlanPatchRequest {
                version: renamed.version,
                goal: Some("做《一拳超人》动画短片".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let written = segment_situation(&w, x.thread_id);
    assert!(
        !written.contains(note) && written.contains("Goal: 做《一拳超人》动画短片"),
        "{written}"
    );
    w.collab
        .engine()
        .stop(x.thread_id, troupe_engine::StopMode::Internal)
        .await
        .unwrap();
}

// END-18: malformed end_turn arguments at a desk spend its budget; the last refusal says what
// was wrong with the call, not that a job must be chosen.
#[tokio::test]
async fn a_desk_ending_refused_twice_for_its_arguments_says_why_it_ends() {
    let w = world();
    let bad = r##"{"name":"end_turn","arguments":{"reason":"answered","inbox":[{"id":"#1","disposition":"delegate"}]}}"##;
    let alpha = bot(
        &w,
        "Alpha",
        &format!(
            r#"{{"steps":[{{"tool_calls":[{bad}]}},{{"tool_calls":[{bad}]}},{{"text":"never"}}]}}"#
        ),
    );
    let s = group(&w, &[alpha]);
    let desk = thread_of(&w, s, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha how are you".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, desk, 1).await;
    let run = runs_of(&w, desk).remove(0);
    let calls = calls_of(&w, run.id);
    assert_eq!(calls.len(), 2, "{calls:?}");
    for c in &calls {
        assert!(
            c.result.contains("disposition \"delegate\""),
            "{}",
            c.result
        );
    }
    assert!(
        !calls[0].result.contains("last refusal"),
        "{}",
        calls[0].result
    );
    assert!(
        calls[1].result.contains("last refusal"),
        "{}",
        calls[1].result
    );
    assert!(
        !calls[1].result.contains(NEEDS_JOB_TEXT),
        "{}",
        calls[1].result
    );
    match run.end_reason {
        Some(EndReason::Consumer { code, detail }) => {
            assert_eq!(code, "needs_attention");
            // What the supervisor's lines say of how this attempt ended.
            let detail = detail.unwrap_or_default();
            assert!(
                detail.starts_with("its end_turn arguments were refused twice, last: ")
                    && detail.contains("disposition \"delegate\""),
                "{detail}"
            );
        }
        other => panic!("expected needs_attention, got {other:?}"),
    }
}

/// SV-7: the pick-up of a desk that spent its refusals on `end_turn`'s arguments tells the Bot
/// what its last call was answered, not only what it sent: told only the call, a Bot sends the
/// same refused call again.
#[tokio::test]
async fn a_pickup_after_a_refused_call_says_what_that_call_was_answered() {
    let w = world();
    let bad = r##"{"name":"end_turn","arguments":{"reason":"maybe"}}"##;
    let alpha = bot(
        &w,
        "Alpha",
        &format!(
            r#"{{"steps":[{{"tool_calls":[{bad}]}},{{"tool_calls":[{bad}]}},{{"text":"I am well."}}],"on_exhausted":"repeat_last"}}"#
        ),
    );
    let s = group(&w, &[alpha]);
    let desk = thread_of(&w, s, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha how are you".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, desk, 1).await;
    w.collab.supervise().unwrap();
    runs_ended(&mut events, desk, 1).await;
    let pickup = w
        .collab
        .store()
        .read(|tx| tx.messages(desk, None, u32::MAX))
        .unwrap()
        .into_iter()
        .map(|m| m.text())
        .find(|t| t.starts_with("This work needed attention."))
        .expect("the pick-up line");
    assert!(
        pickup.contains(r#"Its last step: end_turn {"reason":"maybe"} (its answer: "end_turn: "#),
        "{pickup}"
    );
}

/// A hand-over asked for at a desk is refused by the desk's own rule: in a group, choose the
/// job first; in a person's direct, where no job is needed, do the work right here (a Bot sent
/// to `work_on` there spends its refusals on it instead of doing the work).
#[tokio::test]
async fn a_hand_over_at_a_desk_is_refused_by_the_desks_own_rule() {
    let w = world();
    let submit = r#"{"steps":[{"tool_calls":[{"name":"submit","arguments":{"artifacts":["fix.py"],"claims":["fixed"]}}]},{"text":"Noted."}]}"#;
    let (alpha, beta) = (bot(&w, "Alpha", submit), bot(&w, "Beta", submit));
    let (team, with_beta) = (group(&w, &[alpha]), direct(&w, beta));
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(team, "@Alpha fix the bug".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, team, alpha), 1).await;
    w.collab
        .post_line(with_beta, "fix the bug".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, with_beta, beta), 1).await;
    let refusal = |s, b| {
        let run = runs_of(&w, thread_of(&w, s, b)).remove(0);
        calls_of(&w, run.id).remove(0).result
    };
    let in_group = refusal(team, alpha);
    assert!(
        in_group.contains("not_bound: choose the job first with work_on"),
        "{in_group}"
    );
    let in_direct = refusal(with_beta, beta);
    assert!(
        in_direct.contains("In this direct, do the work right here")
            && !in_direct.contains("work_on"),
        "{in_direct}"
    );
}

/// `review` at a desk where no hand-over waits for the Bot's verdict says there is nothing to
/// review and to check things itself, not to choose a job with `work_on` (the local Qwen, asked
/// to fix a broken link in a direct, "rejected" a hand-over that did not exist and went to
/// `work_on` from there).
#[tokio::test]
async fn a_review_at_a_desk_with_nothing_waiting_says_so_and_sends_nowhere() {
    let w = world();
    let review = r#"{"steps":[{"tool_calls":[{"name":"review","arguments":{"submission_id":"1","outcome":"reject","verdicts":[]}}]},{"text":"Noted."}]}"#;
    let (alpha, beta) = (bot(&w, "Alpha", review), bot(&w, "Beta", review));
    let (team, with_beta) = (group(&w, &[alpha]), direct(&w, beta));
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(team, "@Alpha check the links".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, team, alpha), 1).await;
    w.collab
        .post_line(with_beta, "check the links".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, with_beta, beta), 1).await;
    for (s, b) in [(team, alpha), (with_beta, beta)] {
        let run = runs_of(&w, thread_of(&w, s, b)).remove(0);
        let refusal = calls_of(&w, run.id).remove(0).result;
        assert!(
            refusal.contains("not_reviewable: nothing here waits for your review")
                && refusal.contains("run the checks right here")
                && !refusal.contains("work_on"),
            "{refusal}"
        );
    }
}

/// In a person's direct the desk needs no job first: a refused `work_on` is an ordinary failed
/// call there, spending no budget, so a Bot that fumbles it three times still does the work
/// and answers (where a group's desk would have ended saying the line needs a job).
#[tokio::test]
async fn a_refused_work_on_in_a_persons_direct_spends_no_budget() {
    let w = world();
    let both = r#"{"name":"work_on","arguments":{"plan":"plan_3","new":{"title":"fix it"}}}"#;
    let beta = bot(
        &w,
        "Beta",
        &format!(
            r#"{{"steps":[{{"tool_calls":[{both}]}},{{"tool_calls":[{both}]}},{{"tool_calls":[{both}]}},{{"text":"Fixed it here."}}]}}"#
        ),
    );
    let s = direct(&w, beta);
    let desk = thread_of(&w, s, beta);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "fix the bug".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, desk, 1).await;
    let run = runs_of(&w, desk).remove(0);
    let calls = calls_of(&w, run.id);
    assert_eq!(calls.len(), 3, "{calls:?}");
    for c in &calls {
        assert!(
            c.result.starts_with("work_on: give exactly one of")
                && !c.result.contains("refusal")
                && !c.result.contains(NEEDS_JOB_TEXT),
            "{}",
            c.result
        );
    }
    assert_eq!(last_end(&w, desk), "completed");
    assert!(said(&w, s, "Fixed it here."));
}

// S-LR-2, SQ-2, LR-6
#[tokio::test]
async fn a_status_question_is_done_in_place_and_opens_no_job() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        &format!(
            r#"{{"steps":[{{"tool_calls":[{LOOKUP}]}},{{"text":"Nothing open; all quiet."}}]}}"#
        ),
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha how is it going?".into(), None)
        .await
        .unwrap();
    until(&mut events, "Alpha answered", || {
        said(&w, s, "Nothing open; all quiet.")
    })
    .await;
    let desk = thread_of(&w, s, alpha);
    let calls = calls_of(&w, runs_of(&w, desk).remove(0).id);
    assert_eq!(
        calls[0].status, "ok",
        "the look-up ran in place: {}",
        calls[0].result
    );
    let jobs = w
        .collab
        .store()
        .read(|tx| tx.plans_of_session(s, true))
        .unwrap();
    assert!(jobs.is_empty(), "no job named after the question: {jobs:?}");
}
