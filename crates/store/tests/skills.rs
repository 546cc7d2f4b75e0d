//! A Bot's skills and project skills, on both backends (see `troupe_store::testing`): one
//! skill per name, at most 30 a Bot; a shared copy is a snapshot that the owner's edit does
//! not change until the person updates it, at most 20 on (the database refuses past the store
//! too), and it outlives its owner's skill; a retrospective's change to a skill is undone only
//! while it stands as written.

use serde_json::json;
use std::sync::Arc;
use troupe_core::{BotId, ManualClock, PlanId};
use troupe_store::{
    CallRecord, NewBot, NewRetrospective, SkillText, SkillWriter, Store, StoreError,
};

fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

fn bot(s: &Store, name: &str) -> BotId {
    s.write(|tx| {
        tx.create_bot(&NewBot {
            name: name.into(),
            persona: String::new(),
            endpoint: None,
            scripted: false,
        })
    })
    .unwrap()
    .id
}

fn text<'a>(name: &'a str, description: Option<&'a str>, body: &'a str) -> SkillText<'a> {
    SkillText {
        name,
        description,
        body,
    }
}

fn write(s: &Store, bot: BotId, t: SkillText<'_>) -> Result<i64, StoreError> {
    s.write(|tx| tx.write_bot_skill(bot, &t, SkillWriter::Bot))
        .map(|(sk, _)| sk.id)
}

#[test]
fn one_skill_per_name_a_new_one_needs_its_catalog_line_and_at_most_thirty() {
    let s = store();
    let a = bot(&s, "Alpha");
    let no_line = write(&s, a, text("Renders", None, "Render twice."));
    assert!(
        matches!(&no_line, Err(StoreError::Invalid(m)) if m.contains("needs a description")),
        "{no_line:?}"
    );
    let id = write(
        &s,
        a,
        text("Renders", Some("How I render"), "Render twice."),
    )
    .unwrap();
    let (again, before) = s
        .write(|tx| {
            tx.write_bot_skill(
                a,
                &text(" renders ", None, "Render once."),
                SkillWriter::Bot,
            )
        })
        .unwrap();
    assert_eq!((again.id, again.name.as_str()), (id, "Renders"));
    assert_eq!(
        again.description, "How I render",
        "a rewrite keeps the catalog line"
    );
    assert_eq!(before.as_deref(), Some("Render twice."));
    // Compared without case beyond ASCII, on both backends alike.
    let emile = write(&s, a, text("Émile", Some("d"), "b")).unwrap();
    let folded = write(&s, a, text("émile", Some("d"), "b2")).unwrap();
    assert_eq!(folded, emile, "the same skill, rewritten");
    assert_eq!(
        s.read(|tx| tx.bot_skill_by_name(a, "ÉMILE"))
            .unwrap()
            .map(|k| k.id),
        Some(emile)
    );
    for i in 2..30 {
        write(&s, a, text(&format!("S{i}"), Some("d"), "b")).unwrap();
    }
    let full = write(&s, a, text("One more", Some("d"), "b"));
    assert!(
        matches!(&full, Err(StoreError::Invalid(m)) if m.contains("30 skills")),
        "{full:?}"
    );
    let raw = s.write(|tx| {
        tx.raw_execute(&format!(
            "INSERT INTO bot_skills (bot_id, name, description, body, created_at, updated_at)
             VALUES ({}, 'Raw', 'd', 'b', 0, 0)",
            a.0
        ))
    });
    assert!(format!("{raw:?}").contains("skills_full"), "{raw:?}");
    let taken = s.write(|tx| {
        let other = tx.bot_skill_by_name(a, "S2")?.unwrap();
        tx.edit_bot_skill(other.id, Some("RENDERS"), None, None)
    });
    assert!(matches!(taken, Err(StoreError::Conflict(_))), "{taken:?}");
}

#[test]
fn qe7_a_shared_copy_is_a_snapshot_updated_only_by_the_persons_confirmation() {
    let s = store();
    let (a, b) = (bot(&s, "Alpha"), bot(&s, "Beta"));
    let id = write(
        &s,
        a,
        text("Renders", Some("How I render"), "Render twice."),
    )
    .unwrap();
    let ps = s.write(|tx| tx.share_bot_skill(id)).unwrap();
    assert_eq!(
        (ps.body.as_str(), ps.owner_changed),
        ("Render twice.", false)
    );
    let twice = s.write(|tx| tx.share_bot_skill(id));
    assert!(matches!(twice, Err(StoreError::Conflict(_))), "{twice:?}");

    // Beta's same-named skill cannot be shared beside it.
    let b_id = write(&s, b, text("renders", Some("Mine"), "Mine.")).unwrap();
    let clash = s.write(|tx| tx.share_bot_skill(b_id));
    assert!(matches!(clash, Err(StoreError::Conflict(m)) if m.contains("exists already")));

    let edited = s
        .write(|tx| tx.edit_bot_skill(id, None, None, Some("Render three times.")))
        .unwrap();
    let ps = s.read(|tx| tx.project_skill(ps.id)).unwrap();
    assert_eq!(
        ps.body, "Render twice.",
        "the owner's edit leaves the copy as it was"
    );
    assert!(ps.owner_changed);
    let stale = s.write(|tx| tx.update_project_skill(ps.id, edited.updated_at - 1));
    assert!(matches!(stale, Err(StoreError::Conflict(m)) if m.contains("changed again")));
    let ps = s
        .write(|tx| tx.update_project_skill(ps.id, edited.updated_at))
        .unwrap();
    assert_eq!(
        (ps.body.as_str(), ps.owner_changed),
        ("Render three times.", false)
    );

    // The owner's skill deleted and the owner archived: the copy stays, marked.
    s.write(|tx| tx.delete_bot_skill(id)).unwrap();
    s.write(|tx| tx.archive_bot(a)).unwrap();
    let ps = s.read(|tx| tx.project_skill(ps.id)).unwrap();
    assert_eq!(ps.source_skill_id, None);
    assert!(ps.owner_archived);
    assert_eq!(ps.body, "Render three times.");
    let gone = s.write(|tx| tx.update_project_skill(ps.id, 0));
    assert!(matches!(gone, Err(StoreError::Conflict(m)) if m.contains("deleted")));
}

#[test]
fn qe7_at_most_twenty_project_skills_are_on() {
    let s = store();
    let a = bot(&s, "Alpha");
    let mut shared = Vec::new();
    for i in 0..21 {
        let id = write(&s, a, text(&format!("S{i}"), Some("d"), "b")).unwrap();
        shared.push(s.write(|tx| tx.share_bot_skill(id)));
    }
    assert!(
        matches!(&shared[20], Err(StoreError::Invalid(m)) if m.contains("20 project skills")),
        "{:?}",
        shared[20]
    );
    let first = shared[0].as_ref().unwrap().id;
    s.write(|tx| tx.set_project_skill_enabled(first, false))
        .unwrap();
    let last = s
        .read(|tx| tx.bot_skill_by_name(a, "S20"))
        .unwrap()
        .unwrap();
    let ps = s.write(|tx| tx.share_bot_skill(last.id)).unwrap();
    let back_on = s.write(|tx| tx.set_project_skill_enabled(first, true));
    assert!(
        matches!(back_on, Err(StoreError::Invalid(_))),
        "{back_on:?}"
    );
    let raw = s.write(|tx| {
        tx.raw_execute(&format!(
            "UPDATE project_skills SET enabled = 1 WHERE id = {first}"
        ))
    });
    assert!(
        format!("{raw:?}").contains("project_skills_full"),
        "{raw:?}"
    );
    s.write(|tx| tx.unshare_project_skill(ps.id)).unwrap();
    s.write(|tx| tx.set_project_skill_enabled(first, true))
        .unwrap();
    assert!(
        s.read(|tx| tx.bot_skill_by_name(a, "S20"))
            .unwrap()
            .unwrap()
            .shared_as
            .is_none()
    );
}

fn job(s: &Store, bot: BotId) -> PlanId {
    use troupe_core::conversation::{Author, SessionKind};
    use troupe_core::plan::{PlanSpec, RevisionCause};
    use troupe_store::{NewLine, NewPlan};
    s.write(|tx| {
        let session = tx.create_session(SessionKind::Direct, "t", &[bot])?;
        let line = tx.insert_line(&NewLine::plain(session.id, Author::User, "a film".into()))?;
        tx.create_plan(
            &NewPlan {
                name: "Film".into(),
                original_request: "a film".into(),
                home_session_id: session.id,
                opening_line_id: Some(line.id),
                spec: PlanSpec::default(),
                cause: RevisionCause::Message(line.id),
            },
            |id| format!("/work/jobs/{}", id.0),
        )
        .map(|p| p.id)
    })
    .unwrap()
}

/// A done retrospective of `bot` on `plan`, its id.
fn looked_back(s: &Store, plan: PlanId, bot: BotId) -> i64 {
    s.write(|tx| {
        tx.record_retrospective(&NewRetrospective {
            plan_id: plan,
            bot_id: bot,
            delivered_at: 1_000,
            since_at: None,
            state: "done",
            went_wrong: vec![],
            summary: Some("s".into()),
            lists: json!({}),
            call: CallRecord {
                model: Some("m".into()),
                ..CallRecord::default()
            },
            error: None,
        })
    })
    .unwrap()
    .unwrap()
}

#[test]
fn a_retrospectives_skill_change_is_undone_only_while_it_stands() {
    let s = store();
    let a = bot(&s, "Alpha");
    let plan = job(&s, a);
    write(
        &s,
        a,
        text("Renders", Some("How I render"), "Render twice."),
    )
    .unwrap();
    let retro = looked_back(&s, plan, a);
    let (changed, created, refused) = s
        .write(|tx| {
            let c = tx.apply_retrospective_skill_change(
                retro,
                a,
                &text("Renders", None, "Render twice. Count frames after."),
                None,
            )?;
            let n = tx.apply_retrospective_skill_change(
                retro,
                a,
                &text("Captions", Some("Captions I add"), "Burn captions in."),
                None,
            )?;
            let r = tx.apply_retrospective_skill_change(
                retro,
                a,
                &text("Renders", None, "Whatever."),
                Some("a passage rewritten whole is not written"),
            )?;
            Ok((c, n, r))
        })
        .unwrap();
    assert_eq!((changed.target.as_str(), changed.undoable), ("skill", true));
    assert_eq!(changed.before.as_deref(), Some("Render twice."));
    assert!(created.undoable && created.before.is_none());
    assert!(!refused.undoable && refused.refused.is_some());
    let skill = s
        .read(|tx| tx.bot_skill_by_name(a, "Renders"))
        .unwrap()
        .unwrap();
    assert_eq!(skill.body, "Render twice. Count frames after.");
    assert_eq!(skill.retrospective_of.as_deref(), Some("Film"));

    // The created one undone: gone. The person's edit makes the other a new change.
    s.write(|tx| tx.undo_retrospective_change(created.id))
        .unwrap();
    assert!(
        s.read(|tx| tx.bot_skill_by_name(a, "Captions"))
            .unwrap()
            .is_none()
    );
    s.write(|tx| tx.edit_bot_skill(skill.id, None, Some("Rendering, my way"), None))
        .unwrap();
    let late = s.write(|tx| tx.undo_retrospective_change(changed.id));
    assert!(matches!(late, Err(StoreError::Conflict(m)) if m.contains("skill changed")));
}

#[test]
fn undo_puts_a_skills_text_back() {
    let s = store();
    let a = bot(&s, "Alpha");
    let plan = job(&s, a);
    write(
        &s,
        a,
        text("Renders", Some("How I render"), "Render twice."),
    )
    .unwrap();
    let retro = looked_back(&s, plan, a);
    let c = s
        .write(|tx| {
            tx.apply_retrospective_skill_change(
                retro,
                a,
                &text("Renders", None, "Render twice.\n\nCount frames."),
                None,
            )
        })
        .unwrap();
    let undone = s.write(|tx| tx.undo_retrospective_change(c.id)).unwrap();
    assert!(undone.undone_at.is_some());
    let skill = s
        .read(|tx| tx.bot_skill_by_name(a, "Renders"))
        .unwrap()
        .unwrap();
    assert_eq!(
        (skill.body.as_str(), skill.retrospective_id),
        ("Render twice.", None)
    );
}
