//! The requirements ledger (C §6) over a real store on a manual clock: the database's refusals
//! (a quote not in its line, an erased line, a delete outside a purge), the user's presses and
//! their refusals, the scribe's add / raise / change (a scripted `scribe` role), board lines,
//! fallback capture, and what a segment and a review read. S-RL-6 (numbers) is core's
//! `scribe_patch::tests::s_rl_6_numbers_read_by_the_shared_rules`.

mod support;

use support::check_rig::*;
use support::script;
use troupe_collab::CollabError;
use troupe_collab::ledger::capture::Noted;
use troupe_collab::ledger::{ActionRequest, RequirementView};
use troupe_core::PlanId;
use troupe_core::ids::RequirementId;
use troupe_core::plan::{RevisionCause, SpecPatch};
use troupe_core::requirement::{Action, Group, Polarity, Scope, SourceKind, State};
use troupe_store::{NewRequirement, RequirementRecord};

/// The scribe's role answers each line by the first rule whose words it contains.
fn scribe_says(r: &Rig, rules: &[(&str, &str)]) {
    let rules: Vec<serde_json::Value> = rules
        .iter()
        .map(|(when, answer)| serde_json::json!({"when_user_contains": when, "reply": {"text": answer}}))
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

fn entries(r: &Rig, plan: PlanId) -> Vec<RequirementRecord> {
    r.w.collab
        .store()
        .read(|tx| tx.requirements_of_plan(plan))
        .unwrap()
}

fn entry(r: &Rig, id: RequirementId) -> RequirementRecord {
    r.w.collab.store().read(|tx| tx.requirement(id)).unwrap()
}

/// A person's line filed under the job, then noted and read by the scribe.
async fn said(r: &Rig, words: &str) -> troupe_core::SessionMessageId {
    let line = r.user_says(words);
    r.w.collab.ledger_line_filed(r.plan, line).unwrap();
    r.w.collab.drain_scribe().await.unwrap();
    line
}

fn press(
    r: &Rig,
    id: RequirementId,
    action: Action,
    version: i64,
) -> Result<RequirementView, CollabError> {
    r.w.collab.requirement_action(
        id,
        &ActionRequest {
            action,
            version,
            task_id: None,
        },
    )
}

fn new_entry(plan: PlanId, line: troupe_core::SessionMessageId, quote: &str) -> NewRequirement {
    NewRequirement {
        plan_id: plan,
        ticket_id: None,
        session_id: None,
        scope: Scope::Job,
        quote: quote.into(),
        source_kind: SourceKind::YouSaid,
        source_message_id: Some(line),
        source_quote_id: None,
        restatement: String::new(),
        category: None,
        nature: None,
        polarity: Polarity::Must,
        number: None,
        state: State::InForce,
        replaces_id: None,
        said_at: 1,
    }
}

#[tokio::test]
async fn quote_not_in_line_is_refused_by_the_database() {
    let r = rig("剪一个产品短片");
    let line = r.user_says("The hands look  FAKE in shot 2");
    let store = r.w.collab.store();
    let err = store
        .write(|tx| tx.add_requirement(&new_entry(r.plan, line, "the feet look fake")))
        .unwrap_err();
    assert!(err.to_string().contains("quote_not_in_line"), "{err}");
    assert!(entries(&r, r.plan).is_empty(), "a refusal writes nothing");
    // Folded: case, width and runs of spaces do not matter.
    let ok = store
        .write(|tx| tx.add_requirement(&new_entry(r.plan, line, "hands look fake")))
        .unwrap();
    assert_eq!(ok.quote, "hands look fake");
}

#[tokio::test]
async fn erased_line_is_refused_by_the_database() {
    let r = rig("剪一个产品短片");
    let line = r.user_says("keep the music soft");
    let store = r.w.collab.store();
    store.write(|tx| tx.blank_session_lines(r.session)).unwrap();
    let err = store
        .write(|tx| tx.add_requirement(&new_entry(r.plan, line, "keep the music soft")))
        .unwrap_err();
    assert!(err.to_string().contains("erased_line"), "{err}");
    assert!(entries(&r, r.plan).is_empty());
}

#[tokio::test]
async fn delete_outside_purge_is_refused_by_the_database() {
    let r = rig("剪一个产品短片");
    let line = r.user_says("keep the music soft");
    let store = r.w.collab.store();
    let e = store
        .write(|tx| tx.add_requirement(&new_entry(r.plan, line, "keep the music soft")))
        .unwrap();
    let err = store
        .write(|tx| tx.raw_execute(&format!("DELETE FROM requirements WHERE id = {}", e.id.0)))
        .unwrap_err();
    assert!(err.to_string().contains("delete_outside_purge"), "{err}");
    let err = store
        .write(|tx| {
            tx.raw_execute(&format!(
                "UPDATE requirements SET quote = 'something else' WHERE id = {}",
                e.id.0
            ))
        })
        .unwrap_err();
    assert!(err.to_string().contains("requirement_fixed"), "{err}");
    assert_eq!(entries(&r, r.plan).len(), 1);
    // The user's purge is the one delete.
    assert_eq!(store.write(|tx| tx.purge_requirements(r.plan)).unwrap(), 1);
    assert!(entries(&r, r.plan).is_empty());
}

#[tokio::test]
async fn s_rl_1_a_new_value_is_a_replacement_the_old_holds_until_confirmed() {
    let r = rig("剪一个产品短片");
    video(&r);
    scribe_says(
        &r,
        &[(
            "片长约 2 分钟",
            r#"{"items":[{"op":"add","quote":"约 2 分钟","restatement":"about two minutes","category":"length"}]}"#,
        )],
    );
    said(&r, "片长约 2 分钟").await;
    let r1 = entries(&r, r.plan).remove(0);
    assert_eq!((r1.state, r1.scope), (State::InForce, Scope::Job));
    assert!(r1.number.is_some());
    // The change names R-1 by its id as shown to the scribe.
    scribe_says(
        &r,
        &[(
            "改成 3 分钟",
            &format!(
                r#"{{"items":[{{"op":"change","id":"R-{}","quote":"改成 3 分钟","category":"length"}}]}}"#,
                r1.id.0
            ),
        )],
    );
    said(&r, "改成 3 分钟").await;
    let all = entries(&r, r.plan);
    assert_eq!(all.len(), 2);
    let r2 = all[1].clone();
    assert_eq!(r2.state, State::ToConfirm);
    assert_eq!(r2.replaces_id, Some(r1.id));
    assert_eq!(
        entry(&r, r1.id).state,
        State::InForce,
        "the old holds meanwhile"
    );
    // The board shows R-2 waiting with Confirm and Not a requirement.
    let board = r.w.collab.plan_requirements(r.plan).unwrap();
    let waiting = board
        .groups
        .iter()
        .find(|g| g.group == Group::Waiting)
        .unwrap();
    assert_eq!(
        waiting.entries[0].actions,
        vec![Action::Confirm, Action::NotARequirement]
    );
    assert_eq!(board.needs_a_look, 1);
    let confirmed = press(&r, r2.id, Action::Confirm, r2.version).unwrap();
    assert_eq!(confirmed.state, State::InForce);
    assert_eq!(entry(&r, r1.id).state, State::Replaced);
    let steps =
        r.w.collab
            .store()
            .read(|tx| tx.requirement_steps(r1.id))
            .unwrap();
    assert_eq!(steps.last().unwrap().0, "replaced");
}

#[tokio::test]
async fn s_rl_2_the_same_number_again_is_said_again() {
    let r = rig("剪一个产品短片");
    video(&r);
    scribe_says(
        &r,
        &[(
            "片长约 2 分钟",
            r#"{"items":[{"op":"add","quote":"片长约 2 分钟","category":"length"}]}"#,
        )],
    );
    said(&r, "片长约 2 分钟").await;
    let r1 = entries(&r, r.plan).remove(0);
    scribe_says(
        &r,
        &[(
            "after all",
            &format!(
                r#"{{"items":[{{"op":"change","id":"R-{}","quote":"about 2 minutes","category":"length"}}]}}"#,
                r1.id.0
            ),
        )],
    );
    said(&r, "about 2 minutes after all").await;
    let all = entries(&r, r.plan);
    assert_eq!(all.len(), 1, "no replacement");
    assert_eq!(all[0].said_count, 2);
    assert_eq!(all[0].state, State::InForce);
}

#[tokio::test]
async fn s_rl_3_a_job_wish_stays_with_its_job() {
    let r = rig("IG MV video");
    video(&r);
    scribe_says(
        &r,
        &[(
            "real match shots",
            r#"{"items":[{"op":"add","quote":"restore the real match shots","category":"footage","nature":"craft"}]}"#,
        )],
    );
    said(&r, "please restore the real match shots").await;
    let e = entries(&r, r.plan).remove(0);
    assert_eq!(e.scope, Scope::Job);
    let other = support::open_job(&r.w, r.session, "Connect to ACE Studio");
    assert!(
        entries(&r, other.id).is_empty(),
        "the other job inherits nothing"
    );
}

fn board(r: &Rig, plan: PlanId, rules: &str) {
    let store = r.w.collab.store();
    let version = store
        .write(|tx| {
            let p = tx.plan(plan)?;
            let patch = SpecPatch {
                rules: Some(rules.into()),
                ..SpecPatch::default()
            };
            Ok(tx
                .patch_plan(plan, p.version, &patch, RevisionCause::User)?
                .version)
        })
        .unwrap();
    r.w.collab.ledger_board_edited(plan, version).unwrap();
}

#[tokio::test]
async fn s_rl_4_a_shared_entry_leaves_a_job_while_another_holds_it() {
    let r = rig("Episode A");
    let a = r.plan;
    board(&r, a, "- No text on screen");
    let e = entries(&r, a).remove(0);
    assert_eq!(
        (e.source_kind, e.state),
        (SourceKind::Board, State::InForce)
    );
    // A board line offers no "No longer holds": removing the line is how.
    let view = r.w.collab.plan_requirements(a).unwrap();
    assert_eq!(
        view.groups[0].entries[0].actions,
        vec![Action::WholeConversation]
    );
    press(&r, e.id, Action::WholeConversation, e.version).unwrap();
    let b = support::open_job(&r.w, r.session, "Episode B").id;
    let inherited = r.w.collab.plan_requirements(b).unwrap();
    assert_eq!(inherited.groups[0].group, Group::Inherited);
    assert_eq!(inherited.groups[0].from_job, Some(a));
    board(&r, b, "- No text on screen");
    assert_eq!(
        entry(&r, e.id).said_count,
        2,
        "written on B's board: said again"
    );
    board(&r, b, "");
    assert_eq!(entry(&r, e.id).state, State::InForce);
    let excluded =
        r.w.collab
            .store()
            .read(|tx| tx.requirements_excluded_in(b))
            .unwrap();
    assert_eq!(excluded, vec![e.id], "not for this job in B only");
    assert!(
        r.w.collab
            .store()
            .read(|tx| tx.requirements_excluded_in(a))
            .unwrap()
            .is_empty()
    );
    board(&r, a, "");
    assert_eq!(entry(&r, e.id).state, State::NoLongerApplies);
    let c = support::open_job(&r.w, r.session, "Episode C").id;
    assert!(r.w.collab.plan_requirements(c).unwrap().groups.is_empty());
}

#[tokio::test]
async fn s_rl_5_a_complaint_after_a_delivery_is_kept_whole_to_confirm() {
    let r = rig("剪一个产品短片");
    r.bot_delivers("deliverables/EP01_MASTER.mp4");
    let line = r.user_says("the hands look fake");
    let noted = r.w.collab.ledger_line_filed(r.plan, line).unwrap();
    let Noted::Captured(Some(e)) = noted else {
        panic!("{noted:?}")
    };
    assert_eq!(e.state, State::ToConfirm);
    assert_eq!(e.source_kind, SourceKind::ComplaintWhole);
    assert_eq!(e.quote, "the hands look fake");
    assert_eq!(e.scope, Scope::Job);
    // Never a gate: no check comes of it, and a review does not count it until confirmed.
    let checks =
        r.w.collab
            .store()
            .read(|tx| tx.checks_of_plan(r.plan, true))
            .unwrap();
    assert!(checks.is_empty());
    // Noted once: the same line refiled keeps one entry.
    r.w.collab.ledger_line_filed(r.plan, line).unwrap();
    assert_eq!(entries(&r, r.plan).len(), 1);
}

#[tokio::test]
async fn a_complaint_before_any_delivery_or_without_fault_words_is_not_kept() {
    let r = rig("剪一个产品短片");
    let early = r.user_says("the hands look fake");
    assert_eq!(
        r.w.collab.ledger_line_filed(r.plan, early).unwrap(),
        Noted::Captured(None)
    );
    r.bot_delivers("deliverables/EP01_MASTER.mp4");
    let fine = r.user_says("lovely, thanks");
    assert_eq!(
        r.w.collab.ledger_line_filed(r.plan, fine).unwrap(),
        Noted::Captured(None)
    );
    assert!(entries(&r, r.plan).is_empty());
}

#[tokio::test]
async fn a_stale_press_is_requirement_changed_and_an_unoffered_one_action_not_offered() {
    let r = rig("剪一个产品短片");
    video(&r);
    scribe_says(
        &r,
        &[(
            "music",
            r#"{"items":[{"op":"add","quote":"keep the music soft","category":"music"}]}"#,
        )],
    );
    said(&r, "keep the music soft").await;
    let e = entries(&r, r.plan).remove(0);
    let err = press(&r, e.id, Action::Confirm, e.version).unwrap_err();
    assert!(
        matches!(&err, CollabError::Invalid(m) if m.starts_with("action_not_offered")),
        "{err}"
    );
    let err = press(&r, e.id, Action::NoLongerHolds, e.version + 1).unwrap_err();
    assert!(matches!(
        err,
        CollabError::Conflict {
            code: "requirement_changed",
            ..
        }
    ));
    assert_eq!(entry(&r, e.id).version, e.version, "refusals write nothing");
    let done = press(&r, e.id, Action::NoLongerHolds, e.version).unwrap();
    assert_eq!(done.state, State::NoLongerApplies);
    let err = press(&r, e.id, Action::NoLongerHolds, e.version).unwrap_err();
    assert!(matches!(
        err,
        CollabError::Conflict {
            code: "requirement_changed",
            ..
        }
    ));
    let events = r.events("requirement_changed");
    let last = events.last().unwrap();
    assert_eq!(last["step"], "no_longer_applies");
    assert!(last["plan_version"].as_i64().unwrap() >= 1);
}

#[tokio::test]
async fn segments_read_requirements_and_reviews_require_them() {
    let r = rig("剪一个产品短片");
    video(&r);
    scribe_says(
        &r,
        &[(
            "music",
            r#"{"items":[{"op":"add","quote":"keep the music soft","category":"music"}]}"#,
        )],
    );
    said(&r, "keep the music soft").await;
    said(&r, "again: keep the music soft").await;
    let text =
        r.w.collab
            .store()
            .read(|tx| troupe_collab::ledger::situation::requirements_block(tx, r.plan, None, None))
            .unwrap()
            .unwrap();
    assert!(text.starts_with("User requirements:"), "{text}");
    assert!(
        text.contains("\"keep the music soft\" | the user said it 2 times"),
        "{text}"
    );
    // Under a hold made before they were written: as the ledger stood then (UQ-6).
    let held = r
        .w
        .collab
        .store()
        .read(|tx| troupe_collab::ledger::situation::requirements_block(tx, r.plan, None, Some(T0)))
        .unwrap();
    assert_eq!(held, None);
    let ticket = r.ticket();
    let sub = r.submit(&ticket, "deliverables/a.mp4");
    let items =
        r.w.collab
            .store()
            .read(|tx| {
                use troupe_collab::submissions::RequiredItems;
                let s = tx.submission(sub)?;
                troupe_collab::ledger::LedgerItems.requirements(tx, &s)
            })
            .unwrap();
    assert_eq!(items.len(), 1);
    assert!(items[0].is_required(), "said twice");
    assert!(!items[0].user_backed);
}

#[tokio::test]
async fn rl_15_old_rules_are_imported_once_by_where_their_words_come_from() {
    let r = rig("剪一个产品短片");
    let line = r.user_says("记得片长约 2 分钟");
    let store = r.w.collab.store();
    let patch = |rules: &str, done_when: &str, cause: RevisionCause| {
        store
            .write(|tx| {
                let p = tx.plan(r.plan)?;
                let patch = SpecPatch {
                    rules: Some(rules.into()),
                    done_when: Some(done_when.into()),
                    ..SpecPatch::default()
                };
                tx.patch_plan(r.plan, p.version, &patch, cause)
            })
            .unwrap();
    };
    patch("- No text on screen", "", RevisionCause::User);
    patch(
        "- No text on screen\n- Use a cold grade",
        "- 片长约 2 分钟",
        RevisionCause::Message(line),
    );
    assert_eq!(r.w.collab.import_old_rules().unwrap(), 3);
    let all = entries(&r, r.plan);
    let by = |q: &str| all.iter().find(|e| e.quote == q).unwrap().clone();
    let typed = by("No text on screen");
    assert_eq!(
        (typed.source_kind, typed.state),
        (SourceKind::Board, State::InForce)
    );
    let said = by("片长约 2 分钟");
    assert_eq!(
        (said.source_kind, said.state),
        (SourceKind::YouSaid, State::InForce)
    );
    assert_eq!(said.source_message_id, Some(line));
    let old = by("Use a cold grade");
    assert_eq!(
        (old.source_kind, old.state),
        (SourceKind::OldRule, State::OldRuleUnverified)
    );
    let view = r.w.collab.plan_requirements(r.plan).unwrap();
    let old_rules = view
        .groups
        .iter()
        .find(|g| g.group == Group::OldRules)
        .unwrap();
    assert_eq!(
        old_rules.entries[0].actions,
        vec![Action::Confirm, Action::NotARequirement]
    );
    // Once: nothing is imported afterwards.
    assert_eq!(r.w.collab.import_old_rules().unwrap(), 0);
    assert_eq!(entries(&r, r.plan).len(), 3);
}

#[tokio::test]
async fn rl_20_a_clear_keeps_the_ledger_and_erasing_the_words_ends_their_entries() {
    let r = rig("剪一个产品短片");
    let store = r.w.collab.store();
    let line = r.user_says("keep the music soft");
    let e = store
        .write(|tx| tx.add_requirement(&new_entry(r.plan, line, "keep the music soft")))
        .unwrap();
    r.w.collab.clear_session(r.session, false).await.unwrap();
    let kept = entry(&r, e.id);
    assert_eq!(
        (kept.quote.as_str(), kept.state),
        ("keep the music soft", State::InForce)
    );
    // The transcript is gone: nothing to jump to, the words stay.
    let view = r.w.collab.plan_requirements(r.plan).unwrap();
    assert_eq!(view.groups[0].entries[0].source_line_id, None);
    r.w.collab.clear_session(r.session, true).await.unwrap();
    let erased = entry(&r, e.id);
    assert_eq!(
        (erased.quote.as_str(), erased.state),
        ("", State::NoLongerApplies)
    );
    let steps = store.read(|tx| tx.requirement_steps(e.id)).unwrap();
    assert_eq!(steps.last().unwrap().0, "words_erased");
}

#[tokio::test]
async fn a_ledger_on_cleared_and_edited_words_copies_to_another_database() {
    let r = rig("剪一个产品短片");
    let store = r.w.collab.store();
    let kept = r.user_says("keep the music soft");
    let edited = r.user_says("end on black");
    store
        .write(|tx| {
            tx.add_requirement(&new_entry(r.plan, kept, "keep the music soft"))?;
            tx.add_requirement(&new_entry(r.plan, edited, "end on black"))
        })
        .unwrap();
    board(&r, r.plan, "- No text on screen");
    r.clock.advance(1_000);
    store
        .write(|tx| tx.edit_line_body(edited, "end on white"))
        .unwrap();
    board(&r, r.plan, "");
    r.clock.advance(1_000);
    r.w.collab.clear_session(r.session, false).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let to = troupe_store::Store::open(
        dir.path().join("copy.db"),
        std::sync::Arc::new(r.clock.clone()),
    )
    .unwrap();
    let copied = store.copy_into(&to).unwrap();
    assert_eq!(copied["requirements"].rows, 3);
    assert_eq!(copied, store.table_summaries().unwrap());
}

#[tokio::test]
async fn uq_12_words_taken_out_by_an_edit_stay_in_force_until_the_user_presses() {
    let r = rig("剪一个产品短片");
    video(&r);
    scribe_says(
        &r,
        &[(
            "end on black",
            r#"{"items":[{"op":"add","quote":"keep the music soft"},{"op":"add","quote":"end on black"}]}"#,
        )],
    );
    let line = said(&r, "keep the music soft and end on black").await;
    assert_eq!(entries(&r, r.plan).len(), 2);
    r.w.collab
        .store()
        .write(|tx| tx.edit_line_body(line, "keep the music soft"))
        .unwrap();
    assert_eq!(r.w.collab.ledger_line_edited(line).unwrap(), 1);
    let board = r.w.collab.plan_requirements(r.plan).unwrap();
    assert_eq!(board.groups[0].group, Group::TakenOut);
    let out = &board.groups[0].entries[0];
    assert_eq!(out.quote, "end on black");
    assert_eq!(out.state, State::InForce, "in force until the user presses");
    assert_eq!(out.actions, vec![Action::NoLongerHolds, Action::KeepIt]);
    // The new words go to the scribe again, as the line's next revision.
    let queue =
        r.w.collab
            .store()
            .read(|tx| tx.scribe_items_of_plan(r.plan))
            .unwrap();
    assert_eq!((queue[1].kind.as_str(), queue[1].revision), ("edit", 1));
    let kept = press(&r, out.id, Action::KeepIt, out.version).unwrap();
    assert_eq!(kept.state, State::InForce);
    assert!(kept.actions.contains(&Action::NoLongerHolds));
    let board = r.w.collab.plan_requirements(r.plan).unwrap();
    assert!(board.groups.iter().all(|g| g.group != Group::TakenOut));
}

/// UQ-12, the scribe's half: an edit that keeps an entry's words but takes back what they ask
/// for is re-read by the scribe, which names the entry; it is shown under "Words you took out",
/// in force until the user presses. An entry the edit did not stand on cannot be named.
#[tokio::test]
async fn uq_12_the_scribe_names_an_entry_an_edit_took_back() {
    let r = rig("剪一个产品短片");
    video(&r);
    scribe_says(
        &r,
        &[(
            "The user's line: keep the music soft",
            r#"{"items":[{"op":"add","quote":"keep the music soft"}]}"#,
        )],
    );
    let line = said(&r, "keep the music soft").await;
    let other = said(&r, "and the logo bigger").await;
    let soft = entries(&r, r.plan)[0].id;
    assert_eq!(entries(&r, r.plan).len(), 1);
    let logo =
        r.w.collab
            .store()
            .write(|tx| {
                tx.add_requirement(&NewRequirement {
                    plan_id: r.plan,
                    ticket_id: None,
                    session_id: Some(r.session),
                    scope: Scope::Job,
                    quote: "the logo bigger".into(),
                    source_kind: SourceKind::YouSaid,
                    source_message_id: Some(other),
                    source_quote_id: None,
                    restatement: String::new(),
                    category: None,
                    nature: None,
                    polarity: Polarity::Must,
                    number: None,
                    state: State::InForce,
                    replaces_id: None,
                    said_at: 0,
                })
            })
            .unwrap()
            .id;
    // The scribe names both; only the entry standing on the edited line alone may be named.
    let answer = format!(
        r#"{{"items":[{{"op":"take_back","id":"R-{}"}},{{"op":"take_back","id":"R-{}"}}]}}"#,
        soft.0, logo.0
    );
    scribe_says(&r, &[("It now reads", &answer)]);
    r.w.collab
        .store()
        .write(|tx| tx.edit_line_body(line, "keep the music soft? no, no music at all"))
        .unwrap();
    assert_eq!(
        r.w.collab.ledger_line_edited(line).unwrap(),
        0,
        "its words are still in the line"
    );
    let outcomes = r.w.collab.drain_scribe().await.unwrap();
    let dropped = &outcomes.last().unwrap().checked.dropped;
    assert_eq!(dropped.len(), 1, "{outcomes:?}");
    assert!(dropped[0].reason.contains("does not stand"), "{dropped:?}");
    let board = r.w.collab.plan_requirements(r.plan).unwrap();
    assert_eq!(board.groups[0].group, Group::TakenOut);
    let out: Vec<_> = board.groups[0].entries.iter().map(|e| e.id).collect();
    assert_eq!(out, vec![soft]);
    assert_eq!(
        entry(&r, soft).state,
        State::InForce,
        "in force until the user presses"
    );
    assert_eq!(entry(&r, logo).taken_out_at, None);
}

#[tokio::test]
async fn the_databases_fold_is_cores_on_both_backends() {
    let r = rig("剪一个产品短片");
    for text in [
        "  Ｈｅｌｌｏ\u{3000}\t World  ",
        "约 2  分钟\n\nÉ",
        "ＡＢＣ！ａｂｃ？",
        "no\u{00A0}break\r\nspaces\u{0B}\u{0C}here",
        "「片头」的字体，换成 思源黑体！",
        "",
    ] {
        let db =
            r.w.collab
                .store()
                .read(|tx| tx.database_fold(text))
                .unwrap();
        assert_eq!(db, troupe_core::requirement::db_fold(text), "{text:?}");
    }
}

/// RL-7/RL-8 for a ticket's own Done when: each line the user adds is an entry of that ticket
/// alone, in force on the board's words; the same line again is said again; a removed line no
/// longer applies; the job's entries are untouched.
#[tokio::test]
async fn rl_7_a_ticket_s_done_when_lines_are_entries_of_that_ticket() {
    use troupe_collab::tickets::{NewTicketRequest, TicketPatchRequest};
    let r = rig("剪一个产品短片");
    let cut =
        r.w.collab
            .add_ticket(
                r.plan,
                NewTicketRequest {
                    title: "Cut".into(),
                    description: None,
                    done_when: None,
                    owner_bot_id: None,
                    reviewer_bot_id: None,
                },
            )
            .unwrap()
            .id;
    let done_when = |text: &str| {
        r.w.collab
            .patch_ticket(
                cut,
                TicketPatchRequest {
                    done_when: Some(text.into()),
                    ..TicketPatchRequest::default()
                },
            )
            .unwrap();
    };
    let of_ticket = || -> Vec<RequirementRecord> {
        entries(&r, r.plan)
            .into_iter()
            .filter(|e| e.ticket_id == Some(cut))
            .collect()
    };

    done_when("- Under 60 seconds\n- Subtitles burned in");
    let two = of_ticket();
    assert_eq!(two.len(), 2, "{two:?}");
    for e in &two {
        assert_eq!(e.scope, Scope::Ticket);
        assert_eq!(e.state, State::InForce);
        assert_eq!(e.source_kind, SourceKind::Board);
    }
    let under = two
        .iter()
        .find(|e| e.quote.contains("Under 60 seconds"))
        .expect("the first line is an entry");
    let version = under.version;

    // Removed, then written again: no longer applies, then said again as its own entry.
    done_when("- Subtitles burned in");
    assert_eq!(entry(&r, under.id).state, State::NoLongerApplies);
    done_when("- Subtitles burned in\n- Under 60 seconds");
    let now = of_ticket();
    let in_force: Vec<_> = now.iter().filter(|e| e.state == State::InForce).collect();
    assert_eq!(in_force.len(), 2, "{now:?}");
    assert!(entry(&r, under.id).version >= version);
    // Nothing of the job's own came from the ticket's lines.
    assert!(
        entries(&r, r.plan)
            .iter()
            .filter(|e| e.source_kind == SourceKind::Board)
            .all(|e| e.ticket_id == Some(cut))
    );
}
