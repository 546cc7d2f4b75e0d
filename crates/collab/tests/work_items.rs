//! Work items, desks and work slots over a real engine and store, with scripted Bots: a desk's
//! first effect opens a job and hands the line to the Bot's work on it, `work_on` chooses or
//! opens a job, and a Bot's third job waits for a slot.

mod support;

use std::time::Duration;
use support::*;
use troupe_core::ThreadId;
use troupe_core::work_item::WorkMode;
use troupe_store::Event;

/// Wait (at most 20 s, then fail) until `n` runs of any thread have ended.
async fn any_runs_ended(events: &mut tokio::sync::broadcast::Receiver<Event>, n: usize) {
    let mut seen = 0;
    tokio::time::timeout(Duration::from_secs(20), async {
        while seen < n {
            if events.recv().await.unwrap().kind == "run_ended" {
                seen += 1;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{seen} of {n} runs ended in 20 s"));
}

/// Wait (at most 20 s) until `n` runs have started.
async fn runs_started(events: &mut tokio::sync::broadcast::Receiver<Event>, n: usize) {
    let mut seen = 0;
    tokio::time::timeout(Duration::from_secs(20), async {
        while seen < n {
            if events.recv().await.unwrap().kind == "run_started" {
                seen += 1;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{seen} of {n} runs started in 20 s"));
}

const WRITER: &str = r#"{"steps":[
    {"tool_calls":[{"name":"write_file","arguments":{"path":"report.md","content":"the report"}}]},
    {"text":"Written."}]}"#;

#[tokio::test]
async fn desk_first_effect_opens_a_job_and_the_job_does_the_work_in_its_folder() {
    let w = world();
    let alpha = bot(&w, "Alpha", WRITER);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(s, "@Alpha write the launch report".into(), None)
        .await
        .unwrap();
    // The desk's run ends when its first effect binds it; the job's run does the work.
    any_runs_ended(&mut events, 2).await;
    let desk = thread_of(&w, s, alpha);
    assert_eq!(last_end(&w, desk), "moved");
    let plans = w.collab.plans(s).unwrap();
    assert_eq!(plans.len(), 1, "one job opened for the line");
    assert_eq!(
        plans[0].name, "write the launch report",
        "Bot names left out (DS-7)"
    );
    let job = &jobs(&w, alpha)[0];
    assert_eq!(job.plan_id, Some(plans[0].id));
    assert_eq!(last_end(&w, job.thread_id), "completed");
    let folder = std::path::PathBuf::from(&plans[0].folder);
    assert_eq!(
        std::fs::read_to_string(folder.join("report.md")).unwrap(),
        "the report",
        "the work ran in the job's folder"
    );
    let conversation_dir = w
        .collab
        .store()
        .read(|tx| tx.thread(desk))
        .unwrap()
        .workspace;
    assert!(
        !std::path::Path::new(&conversation_dir)
            .join("report.md")
            .exists()
    );
    // The job's words are said in the group; the line is filed under the job.
    assert!(lines_said(&w, s).contains(&"Written.".to_string()));
    let filed = w.collab.plan_messages(plans[0].id, None, 10).unwrap();
    assert!(filed.iter().any(|l| l.id == line.id));
    // Settlement: the desk closed, the job's work idle (WI-12).
    let desk_item = items(&w, alpha)
        .into_iter()
        .find(|i| i.mode == WorkMode::Desk)
        .unwrap();
    assert_eq!(desk_item.state.as_str(), "closed");
    assert_eq!(jobs(&w, alpha)[0].state.as_str(), "idle");
}

const PROJECT_EDITOR: &str = r#"{"steps":[
    {"tool_calls":[{"name":"edit_file","arguments":{"path":"../../stats.py","old_text":"len(xs) / 2","new_text":"(len(xs) - 1) / 2"}}]},
    {"tool_calls":[{"name":"write_file","arguments":{"path":"report.md","content":"fixed"}}]},
    {"tool_calls":[{"name":"read_file","arguments":{"path":"../../../outside.txt"}}]},
    {"text":"Fixed."}]}"#;

/// T24: a job's turns start in the job's folder, and the conversation's folder (the person's
/// project) that holds it stays within their tools' reach; nothing above it does. (What the
/// job's segment is told of it: `a_desk_reads_its_candidates_and_a_job_reads_its_record`.)
#[tokio::test]
async fn work_on_a_job_starts_in_its_folder_and_reaches_the_conversations_folder() {
    let w = world();
    let alpha = bot(&w, "Alpha", PROJECT_EDITOR);
    let s = group(&w, &[alpha]);
    let desk = thread_of(&w, s, alpha);
    let project = std::path::PathBuf::from(
        w.collab
            .store()
            .read(|tx| tx.thread(desk))
            .unwrap()
            .workspace,
    );
    std::fs::write(project.join("stats.py"), "mid = len(xs) / 2\n").unwrap();
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha fix the median".into(), None)
        .await
        .unwrap();
    any_runs_ended(&mut events, 2).await;
    let job = &jobs(&w, alpha)[0];
    assert_eq!(last_end(&w, job.thread_id), "completed");
    assert_eq!(
        std::fs::read_to_string(project.join("stats.py")).unwrap(),
        "mid = (len(xs) - 1) / 2\n",
        "the job's work changed the project's file above its folder"
    );
    let plan = &w.collab.plans(s).unwrap()[0];
    let folder = std::path::PathBuf::from(&plan.folder);
    assert_eq!(folder.parent().unwrap().parent().unwrap(), project);
    assert_eq!(
        std::fs::read_to_string(folder.join("report.md")).unwrap(),
        "fixed",
        "a relative path starts in the job's folder"
    );
    let calls: Vec<_> = runs_of(&w, job.thread_id)
        .iter()
        .flat_map(|r| calls_of(&w, r.id))
        .collect();
    let outside = calls
        .iter()
        .find(|c| c.name == "read_file")
        .expect("the read above the conversation's folder was called");
    assert_eq!(outside.status, "error", "{outside:?}");
    assert!(
        outside.result.contains("outside the workspace"),
        "{outside:?}"
    );
}

/// A desk that chooses its job with `work_on`; the job's own turn first tries `work_on` again
/// (refused: it already has its job) and then hangs until stopped.
const CHOOSER: &str = r#"{"steps":[{"text":"unused"},{"text":"working","delay_ms":60000}],
    "rules":[
        {"when_user_contains":"job one","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"one"}}}]}},
        {"when_user_contains":"job two","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"two"}}}]}},
        {"when_user_contains":"job three","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"three"}}}]}}
    ]}"#;

#[tokio::test]
async fn third_plan_queued_at_position_1_and_starts_when_a_slot_frees() {
    let w = world();
    let alpha = bot(&w, "Alpha", CHOOSER);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    for (i, l) in ["@Alpha job one", "@Alpha job two"].iter().enumerate() {
        w.collab.post_line(s, (*l).into(), None).await.unwrap();
        // Its desk run, then its job's run, which stays live.
        runs_started(&mut events, 2).await;
        assert_eq!(jobs(&w, alpha).len(), i + 1);
    }
    w.collab
        .post_line(s, "@Alpha job three".into(), None)
        .await
        .unwrap();
    runs_started(&mut events, 1).await;
    let desk = thread_of(&w, s, alpha);
    tokio::time::timeout(Duration::from_secs(20), async {
        while last_end(&w, desk) != "queued" {
            events.recv().await.unwrap();
        }
    })
    .await
    .expect("the third desk ended queued");
    let third = jobs(&w, alpha).pop().unwrap();
    let view = w.collab.work_item(third.id).unwrap();
    assert_eq!(view.state, "queued");
    assert_eq!(view.queue_position, Some(1), "Queued, at position 1 (WI-5)");
    assert!(!w.collab.engine().is_running(third.thread_id));
    // One job's segment ends; the queued one takes the slot.
    let first = jobs(&w, alpha).remove(0);
    w.collab
        .engine()
        .stop(first.thread_id, troupe_engine::StopMode::Internal)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), async {
        while !w.collab.engine().is_running(third.thread_id) {
            events.recv().await.unwrap();
        }
    })
    .await
    .expect("the queued job started when a slot freed up");
    assert_eq!(w.collab.work_item(third.id).unwrap().state, "running");
    assert_eq!(
        w.collab.work_item(first.id).unwrap().state,
        "idle",
        "a stop leaves it idle"
    );
    for j in jobs(&w, alpha) {
        let _ = w
            .collab
            .engine()
            .stop(j.thread_id, troupe_engine::StopMode::Internal)
            .await;
    }
}

#[tokio::test]
async fn work_on_refuses_a_job_that_is_no_candidate_and_two_refusals_need_attention() {
    let w = world();
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[
            {"tool_calls":[{"name":"work_on","arguments":{"plan":"plan_999"}}]},
            {"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"x"},"quote_message_id":424242}}]},
            {"text":"never"}]}"#,
    );
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha do the thing".into(), None)
        .await
        .unwrap();
    let desk = thread_of(&w, s, alpha);
    runs_ended(&mut events, desk, 1).await;
    assert_eq!(last_end(&w, desk), "needs_attention");
    assert!(w.collab.plans(s).unwrap().is_empty(), "no job was opened");
    let desk_item = items(&w, alpha).remove(0);
    assert_eq!(desk_item.state.as_str(), "needs_attention");
}

fn segment_situation(w: &World, t: ThreadId) -> String {
    use troupe_engine::extension::{ContextContributor, ContextParts};
    let thread = w.collab.store().read(|tx| tx.thread(t)).unwrap();
    let mut parts = ContextParts::default();
    troupe_collab::SegmentSituation.contribute(&thread, w.collab.store(), &mut parts);
    parts.situation.join("\n")
}

/// The desk answers slowly (so it is live while the test looks); its job hangs the same way.
const SLOW: &str = r#"{"steps":[{"text":"thinking","delay_ms":60000}],"on_exhausted":"repeat_last",
    "rules":[{"when_user_contains":"job four","reply":{"tool_calls":[{"name":"work_on","arguments":{"new":{"title":"four"}}}]}}]}"#;

/// The desk's words say what its guard does: in a group an effect opens a job, in the
/// person's direct it runs in the conversation's folder with none chosen (and opens none), so
/// the Bot there is not sent to `work_on` first.
#[tokio::test]
async fn a_desk_says_an_effect_needs_a_job_only_where_it_does() {
    let w = world();
    let (alpha, beta, gamma) = (
        bot(&w, "Alpha", SLOW),
        bot(&w, "Beta", SLOW),
        bot(&w, "Gamma", WRITER),
    );
    let (team, with_beta, with_gamma) = (group(&w, &[alpha]), direct(&w, beta), direct(&w, gamma));
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(team, "@Alpha what do you think".into(), None)
        .await
        .unwrap();
    w.collab
        .post_line(with_beta, "what do you think".into(), None)
        .await
        .unwrap();
    w.collab
        .post_line(with_gamma, "write the launch report".into(), None)
        .await
        .unwrap();
    runs_started(&mut events, 3).await;
    let in_group = segment_situation(&w, thread_of(&w, team, alpha));
    // A person's line, no job here yet: the guard opens one at the first effect.
    assert!(
        in_group.contains("Your first action with an effect opens a job for this line"),
        "{in_group}"
    );
    let in_direct = segment_situation(&w, thread_of(&w, with_beta, beta));
    assert!(in_direct.starts_with("You are at your desk"), "{in_direct}");
    assert!(
        in_direct.contains("do the work right here")
            && !in_direct
                .to_lowercase()
                .contains("before anything with an effect"),
        "{in_direct}"
    );
    // What the direct's words promise: Gamma's write ran at its desk, no job opened.
    let desk = thread_of(&w, with_gamma, gamma);
    tokio::time::timeout(Duration::from_secs(20), async {
        while last_end(&w, desk).is_empty() {
            events.recv().await.unwrap();
        }
    })
    .await
    .expect("Gamma's turn ended");
    assert_eq!(last_end(&w, desk), "completed");
    let folder = w
        .collab
        .store()
        .read(|tx| tx.thread(desk))
        .unwrap()
        .workspace;
    assert_eq!(
        std::fs::read_to_string(std::path::Path::new(&folder).join("report.md")).unwrap(),
        "the report"
    );
    assert!(
        w.collab.plans(with_gamma).unwrap().is_empty(),
        "no job opened"
    );
}

/// A group line the reader filed as done in place runs at the desk with no job (DS-5a), so
/// the desk's words say to do it right here and offer no `work_on` for it.
#[tokio::test]
async fn a_desk_whose_line_was_read_done_in_place_is_told_to_do_it_right_here() {
    let w = world();
    let reader = script(
        &w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\",\"belongs\":\"done_in_place\"}"}],
            "on_exhausted":"repeat_last"}"#,
    );
    w.collab.set_role("reading", reader).unwrap();
    let alpha = bot(&w, "Alpha", SLOW);
    let team = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(team, "@Alpha jot this down".into(), None)
        .await
        .unwrap();
    runs_started(&mut events, 1).await;
    let words = segment_situation(&w, thread_of(&w, team, alpha));
    assert!(
        words.contains("do it right here") && words.contains("no job opens for it"),
        "{words}"
    );
    assert!(!words.contains("work_on"), "{words}");
}

#[tokio::test]
async fn a_desk_reads_its_candidates_and_a_job_reads_its_record() {
    let w = world();
    let alpha = bot(&w, "Alpha", SLOW);
    let s = group(&w, &[alpha]);
    let opening = w
        .collab
        .store()
        .write(|tx| {
            tx.insert_line(&troupe_store::NewLine::plain(
                s,
                troupe_core::conversation::Author::User,
                "the launch plan".into(),
            ))
        })
        .unwrap();
    let plan = w
        .collab
        .open_plan(troupe_collab::OpenPlan {
            home_session_id: s,
            opening_line_id: Some(opening.id),
            title: Some("a launch plan".into()),
            cause: troupe_core::plan::RevisionCause::User,
        })
        .unwrap();
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha what do you think".into(), None)
        .await
        .unwrap();
    runs_started(&mut events, 1).await;
    let desk = thread_of(&w, s, alpha);
    let text = segment_situation(&w, desk);
    assert!(
        text.contains(&format!(
            "work_on({{\"plan\":\"{}\"}}): \"the launch plan\"",
            plan.id
        )),
        "{text}"
    );
    assert!(
        text.contains("goal: a launch plan") && text.contains("default"),
        "{text}"
    );
    w.collab
        .engine()
        .stop(desk, troupe_engine::StopMode::Internal)
        .await
        .unwrap();
    // A new job (another Bot's): its work reads the job's record and its folder.
    let beta = bot(&w, "Beta", SLOW);
    w.collab.add_member(s, beta).unwrap();
    w.collab
        .post_line(s, "@Beta job four".into(), None)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), async {
        while !jobs(&w, beta)
            .iter()
            .any(|j| w.collab.engine().is_running(j.thread_id))
        {
            events.recv().await.unwrap();
        }
    })
    .await
    .expect("Beta's work on job four started");
    let four = jobs(&w, beta)
        .into_iter()
        .find(|j| j.plan_id != Some(plan.id))
        .unwrap();
    let text = segment_situation(&w, four.thread_id);
    let record = w.collab.plan(four.plan_id.unwrap()).unwrap();
    assert!(text.contains(&format!("Job \"{}\"", record.name)), "{text}");
    assert!(
        text.contains("Goal: four") && text.contains(&record.folder),
        "{text}"
    );
    let conversation_folder = troupe_collab::checks::plan_workspace(&record.folder);
    assert!(
        text.contains(&format!(
            "The conversation's folder {} holds it, and your tools reach it too",
            conversation_folder.display()
        )),
        "{text}"
    );
    for t in [four.thread_id, desk] {
        let _ = w
            .collab
            .engine()
            .stop(t, troupe_engine::StopMode::Internal)
            .await;
    }
}

#[tokio::test]
async fn a_fourth_progress_message_without_parent_is_refused_progress_limit() {
    let w = world();
    let send =
        |n: u32| format!(r#"{{"name":"send_message","arguments":{{"text":"progress {n}"}}}}"#);
    let script = format!(
        r#"{{"steps":[{{"tool_calls":[{},{},{},{}]}},{{"text":"done"}}]}}"#,
        send(1),
        send(2),
        send(3),
        send(4)
    );
    let alpha = bot(&w, "Alpha", &script);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha keep me posted".into(), None)
        .await
        .unwrap();
    let desk = thread_of(&w, s, alpha);
    runs_ended(&mut events, desk, 1).await;
    let run = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(desk, 1))
        .unwrap()
        .remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    assert_eq!(calls.len(), 4);
    assert!(calls[..3].iter().all(|c| c.status == "ok"));
    assert!(
        calls[3].result.contains("progress_limit"),
        "{}",
        calls[3].result
    );
    let said = lines_said(&w, s);
    assert!(said.contains(&"progress 3".to_string()) && !said.contains(&"progress 4".to_string()));
}

/// A looping model sent the same words a dozen times, each a "reply" to its own last line (so
/// no progress limit held it): what the turn already said there is not posted again.
#[tokio::test]
async fn the_same_words_twice_from_one_turn_are_posted_once() {
    let w = world();
    let send = |parent: &str| {
        format!(
            r#"{{"tool_calls":[{{"name":"send_message","arguments":{{"text":"Which framework?"{parent}}}}}]}}"#
        )
    };
    let script = format!(
        r#"{{"steps":[{},{},{{"tool_calls":[{{"name":"send_message","arguments":{{"text":"Something new."}}}}]}},{{"text":"done"}}]}}"#,
        send(""),
        send(r#","parent_id":2"#)
    );
    let alpha = bot(&w, "Alpha", &script);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha ask around".into(), None)
        .await
        .unwrap();
    let desk = thread_of(&w, s, alpha);
    runs_ended(&mut events, desk, 1).await;
    let run = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(desk, 1))
        .unwrap()
        .remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].status, "ok");
    assert!(
        calls[1].result.contains("repeated_message") && calls[1].result.contains("line 2"),
        "{}",
        calls[1].result
    );
    assert_eq!(calls[2].status, "ok", "new words post");
    let said = lines_said(&w, s);
    assert_eq!(
        said.iter().filter(|b| *b == "Which framework?").count(),
        1,
        "{said:?}"
    );
    assert!(said.contains(&"Something new.".to_string()));
}

#[tokio::test]
async fn stop_in_a_group_ends_the_work_on_jobs_speaking_there() {
    let w = world();
    let alpha = bot(&w, "Alpha", CHOOSER);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Alpha job one".into(), None)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), async {
        while !jobs(&w, alpha)
            .iter()
            .any(|j| w.collab.engine().is_running(j.thread_id))
        {
            events.recv().await.unwrap();
        }
    })
    .await
    .expect("the job's work started");
    let job = jobs(&w, alpha).remove(0);
    // Its member chip shows the work on the job, which speaks here.
    let members = w.collab.members(s).unwrap();
    assert_eq!(members[0].state, "running");
    assert!(members[0].turn_id.is_some());
    let stopped = w.collab.stop_turns(s, None).await.unwrap();
    assert_eq!(stopped.len(), 1);
    assert_eq!(stopped[0].thread_id, job.thread_id);
    assert_eq!(last_end(&w, job.thread_id), "stopped");
    assert_eq!(w.collab.work_item(job.id).unwrap().state, "idle");
    // The turn shows among the group's turns, speaking there.
    let turns = w.collab.turns(s, 10).unwrap();
    assert!(turns.iter().any(|t| t.id == stopped[0].id));
}

#[tokio::test]
async fn continue_on_a_cut_off_job_runs_it_again_and_409_while_it_works() {
    let w = world();
    let alpha = bot(&w, "Alpha", CHOOSER);
    let s = group(&w, &[alpha]);
    let mut events = w.collab.store().subscribe();
    let running = |w: &World| {
        jobs(w, alpha)
            .into_iter()
            .find(|j| w.collab.engine().is_running(j.thread_id))
    };
    w.collab
        .post_line(s, "@Alpha job one".into(), None)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), async {
        while running(&w).is_none() {
            events.recv().await.unwrap();
        }
    })
    .await
    .expect("the job's work started");
    let job = running(&w).unwrap();
    let live = w
        .collab
        .store()
        .read(|tx| tx.live_segment_of(job.id))
        .unwrap()
        .unwrap();
    match w.collab.continue_turn(live).await {
        Err(troupe_collab::CollabError::Conflict { code, .. }) => {
            assert_eq!(code, "already_working")
        }
        other => panic!("expected already_working, got {other:?}"),
    }
    w.collab.stop_turns(s, None).await.unwrap();
    let again = w.collab.continue_turn(live).await.unwrap();
    assert!(!again.queued && again.position.is_none());
    assert_eq!(again.work_item_id, job.id);
    tokio::time::timeout(Duration::from_secs(20), async {
        while running(&w).is_none() {
            events.recv().await.unwrap();
        }
    })
    .await
    .expect("the job's work runs again");
    assert_eq!(w.collab.work_item(job.id).unwrap().state, "running");
    w.collab.stop_turns(s, None).await.unwrap();
}
