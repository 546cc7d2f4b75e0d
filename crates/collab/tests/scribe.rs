//! The scribe (C §7) over a real store on a manual clock, with a scripted `scribe` role: a
//! patch checked item by item (S-SC-1, S-SC-2, S-SC-4), off in the general engine (S-SC-3),
//! each line once and in order, every raw answer in the work log, fallback capture when
//! nothing lands, and unread lines dropped at start.

mod support;

use support::check_rig::*;
use support::script;
use troupe_collab::ledger::capture::Noted;
use troupe_core::requirement::{Scope, SourceKind, State};
use troupe_store::{NewRequirement, RequirementRecord};

fn scribe_says(r: &Rig, rules: &[(&str, &str)]) {
    let rules: Vec<serde_json::Value> = rules
        .iter()
        .map(|(when, answer)| {
            serde_json::json!({"when_user_contains": when, "reply": {"text": answer}})
        })
        .collect();
    let json = serde_json::json!({"steps": [{"text": "{\"items\": []}"}], "rules": rules});
    // A new file each time: a role keeps the script it loaded.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let spec = script(&r.w, &format!("scribe{n}"), &json.to_string());
    r.w.collab.set_role("scribe", spec).unwrap();
}

fn video(r: &Rig) {
    r.w.collab
        .store()
        .write(|tx| tx.set_session_engine(r.session, Some("video")))
        .unwrap();
}

fn entries(r: &Rig) -> Vec<RequirementRecord> {
    r.w.collab
        .store()
        .read(|tx| tx.requirements_of_plan(r.plan))
        .unwrap()
}

fn queued(r: &Rig, words: &str) -> troupe_core::SessionMessageId {
    let line = r.user_says(words);
    assert_eq!(
        r.w.collab.ledger_line_filed(r.plan, line).unwrap(),
        Noted::Queued(true)
    );
    line
}

fn work_log(r: &Rig) -> Vec<serde_json::Value> {
    r.events("scribe_answer")
}

#[tokio::test]
async fn s_sc_1_a_change_of_another_category_is_kept_to_confirm() {
    let r = rig("IG MV");
    video(&r);
    let old = r.user_says("use original stylised characters");
    let a =
        r.w.collab
            .store()
            .write(|tx| {
                tx.add_requirement(&NewRequirement {
                    plan_id: r.plan,
                    ticket_id: None,
                    session_id: Some(r.session),
                    scope: Scope::Job,
                    quote: "original stylised characters".into(),
                    source_kind: SourceKind::YouSaid,
                    source_message_id: Some(old),
                    source_quote_id: None,
                    restatement: String::new(),
                    category: Some("characters".into()),
                    nature: None,
                    polarity: troupe_core::requirement::Polarity::Must,
                    number: None,
                    state: State::InForce,
                    replaces_id: None,
                    said_at: 1,
                })
            })
            .unwrap();
    scribe_says(
        &r,
        &[(
            "League map",
            &format!(
                r#"{{"items":[{{"op":"change","id":"R-{}","quote":"League map, champion models and real player models","category":"assets"}}]}}"#,
                a.id.0
            ),
        )],
    );
    queued(
        &r,
        "rebuild it with the League map, champion models and real player models",
    );
    let out = r.w.collab.drain_scribe().await.unwrap();
    assert_eq!(out.len(), 1);
    let all = entries(&r);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].state, State::InForce, "the old stays in force");
    assert_eq!(all[1].state, State::ToConfirm);
    assert_eq!(all[1].replaces_id, Some(a.id));
    assert_eq!(all[1].category.as_deref(), Some("assets"));
}

#[tokio::test]
async fn s_sc_2_two_items_land_and_one_is_logged_as_dropped() {
    let r = rig("剪一个产品短片");
    video(&r);
    scribe_says(
        &r,
        &[(
            "logo bigger",
            r#"{"items":[
                {"op":"add","quote":"logo bigger","category":"titles"},
                {"op":"add","quote":"the colours warmer","category":"colour"},
                {"op":"add","quote":"keep the music soft","category":"music"}]}"#,
        )],
    );
    queued(&r, "Make the logo bigger, and keep the music soft please");
    r.w.collab.drain_scribe().await.unwrap();
    let quotes: Vec<String> = entries(&r).into_iter().map(|e| e.quote).collect();
    assert_eq!(quotes, vec!["logo bigger", "keep the music soft"]);
    let log = work_log(&r);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["landed"].as_array().unwrap().len(), 2);
    let dropped = log[0]["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0]["index"], 1);
    assert!(
        log[0]["raw"]
            .as_str()
            .unwrap()
            .contains("the colours warmer")
    );
    assert_eq!(log[0]["task_id"], r.plan.0);
}

#[tokio::test]
async fn s_sc_3_with_the_scribe_off_a_plain_line_notes_nothing() {
    let r = rig("剪一个产品短片");
    scribe_says(
        &r,
        &[(
            "music",
            r#"{"items":[{"op":"add","quote":"keep the music soft"}]}"#,
        )],
    );
    r.bot_delivers("deliverables/EP01_MASTER.mp4");
    let line = r.user_says("keep the music soft");
    assert_eq!(
        r.w.collab.ledger_line_filed(r.plan, line).unwrap(),
        Noted::Captured(None),
        "the general engine has no scribe: fallback capture only"
    );
    assert!(r.w.collab.drain_scribe().await.unwrap().is_empty());
    assert!(entries(&r).is_empty());
    let queue =
        r.w.collab
            .store()
            .read(|tx| tx.scribe_items_of_plan(r.plan))
            .unwrap();
    assert!(queue.is_empty());
}

#[tokio::test]
async fn s_sc_4_a_two_character_quote_is_refused_a_number_is_not() {
    let r = rig("剪一个产品短片");
    video(&r);
    scribe_says(
        &r,
        &[
            ("好的", r#"{"items":[{"op":"add","quote":"好的"}]}"#),
            (
                "剪成",
                r#"{"items":[{"op":"add","quote":"90 秒","category":"length"}]}"#,
            ),
        ],
    );
    queued(
        &r,
        "好的，那就这样吧，不过片尾字幕要再大一点，谢谢你们的辛苦",
    );
    queued(
        &r,
        "剪成 90 秒发给我，片尾字幕要再大一点，谢谢你们的辛苦了哈",
    );
    let out = r.w.collab.drain_scribe().await.unwrap();
    assert_eq!(out.len(), 2, "one at a time, in order");
    assert!(out[0].checked.landed.is_empty());
    assert!(
        out[0].checked.dropped[0]
            .reason
            .starts_with("quote too short")
    );
    let all = entries(&r);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].quote, "90 秒");
    assert!(all[0].number.is_some(), "a running time");
}

#[tokio::test]
async fn each_line_is_read_once_and_a_failed_call_falls_back_to_capture() {
    let r = rig("剪一个产品短片");
    video(&r);
    // No scribe role and no default: the call fails.
    r.bot_delivers("deliverables/EP01_MASTER.mp4");
    let line = queued(&r, "the hands look fake");
    // Filed again (a refile): not queued again.
    assert_eq!(
        r.w.collab.ledger_line_filed(r.plan, line).unwrap(),
        Noted::Queued(false)
    );
    let out = r.w.collab.drain_scribe().await.unwrap();
    assert_eq!(out.len(), 1);
    assert!(out[0].failure.is_some());
    assert!(out[0].captured);
    let all = entries(&r);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].source_kind, SourceKind::ComplaintWhole);
    assert_eq!(all[0].state, State::ToConfirm);
    assert!(r.w.collab.drain_scribe().await.unwrap().is_empty());
    let log = work_log(&r);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["fallback_captured"], true);
}

#[tokio::test]
async fn lines_left_unread_at_a_stop_are_dropped_at_start() {
    let r = rig("剪一个产品短片");
    video(&r);
    queued(&r, "keep the music soft");
    assert_eq!(r.w.collab.drop_unread_scribe_lines().unwrap(), 1);
    assert!(r.w.collab.drain_scribe().await.unwrap().is_empty());
    let queue =
        r.w.collab
            .store()
            .read(|tx| tx.scribe_items_of_plan(r.plan))
            .unwrap();
    assert_eq!(queue[0].state, "dropped");
}

#[tokio::test]
async fn rl_13_saying_a_set_aside_entry_again_in_a_job_applies_it_again() {
    use troupe_collab::ledger::ActionRequest;
    use troupe_core::conversation::Author;
    use troupe_core::requirement::Action;
    use troupe_store::NewLine;
    let r = rig("Episode A");
    video(&r);
    scribe_says(
        &r,
        &[(
            "end on black",
            r#"{"items":[{"op":"add","quote":"end on black","every_job":true}]}"#,
        )],
    );
    queued(&r, "from now on every film should end on black");
    r.w.collab.drain_scribe().await.unwrap();
    let e = entries(&r).remove(0);
    assert_eq!(e.scope, Scope::Session);
    let b = support::open_job(&r.w, r.session, "Episode B").id;
    let store = r.w.collab.store();
    let inherited = store.read(|tx| tx.requirements_of_plan(b)).unwrap();
    assert_eq!(inherited.len(), 1, "inherited from its first segment");
    r.w.collab
        .requirement_action(
            e.id,
            &ActionRequest {
                action: Action::NotForThisJob,
                version: e.version,
                task_id: Some(b),
            },
        )
        .unwrap();
    assert_eq!(
        store.read(|tx| tx.requirements_excluded_in(b)).unwrap(),
        vec![e.id]
    );
    // The same words said again in B: said again there, and it applies again.
    r.clock.advance(1_000);
    let line = store
        .write(|tx| {
            let l = tx.insert_line(&NewLine::plain(
                r.session,
                Author::User,
                "end on black, like I said".into(),
            ))?;
            tx.file_line(&filing(l.id, b))?;
            Ok(l.id)
        })
        .unwrap();
    assert_eq!(
        r.w.collab.ledger_line_filed(b, line).unwrap(),
        Noted::Queued(true)
    );
    r.w.collab.drain_scribe().await.unwrap();
    assert!(
        store
            .read(|tx| tx.requirements_excluded_in(b))
            .unwrap()
            .is_empty()
    );
    let now = store.read(|tx| tx.requirement(e.id)).unwrap();
    assert_eq!((now.said_count, now.job_count), (2, 2));
    assert_eq!(
        store.read(|tx| tx.requirements_of_plan(b)).unwrap().len(),
        1,
        "no duplicate"
    );
}
