//! Tickets on both backends (see `troupe_store::testing`): the database's stage rules attacked
//! by raw SQL (a user's status edit moves the stage, a stage write names its source, every move
//! is logged, (stage, status) is a mapping row, the reviewer is not the owner, one sample per
//! job), and the store's ticket API.
//!
//! On PostgreSQL a refused statement ends its transaction, so each refusal has a write of its
//! own.

mod deliverable_world;

use deliverable_world::*;

/// `tickets` rows of `id` meeting `cond`.
fn ticket_is(s: &Store, id: i64, cond: &str) -> bool {
    count(s, "tickets", "updated_at", &format!("id = {id} AND {cond}")) == 1
}

/// The logged stage moves of ticket `id` meeting `cond`.
fn logged(s: &Store, id: i64, cond: &str) -> usize {
    count(
        s,
        "ticket_stage_changes",
        "at",
        &format!("ticket_id = {id} AND {cond}"),
    )
}

#[test]
fn stage_follows_status_trigger() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    let b = raw_ticket(&s, w.launch, 2);
    // The app starts the work: a stage write with its source, status alongside.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET stage = 'in_progress', status = 'in_progress',
                 stage_source = 'app_started', updated_at = 5 WHERE id = {a}"
        ),
    )
    .unwrap();
    assert_eq!(
        logged(
            &s,
            a,
            "from_stage = 'to_do' AND to_stage = 'in_progress' AND source = 'app_started' AND at = 5 AND part_id IS NULL"
        ),
        1
    );

    // The user drags it to Done (and retitles it in the same edit): the stage follows, the
    // source is the user's, and the move is logged.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET status = 'done', title = 'renamed', updated_at = 7 WHERE id = {a}"
        ),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        a,
        "stage = 'approved' AND status = 'done' AND stage_source = 'user' AND title = 'renamed' AND updated_at = 7"
    ));
    assert_eq!(
        logged(
            &s,
            a,
            "from_stage = 'in_progress' AND to_stage = 'approved' AND source = 'user' AND at = 7"
        ),
        1
    );

    // Each status maps to its stage; a set-aside (parked) keeps no reason.
    for (status, stage) in [
        ("parked", "dropped"),
        ("in_review", "in_review"),
        ("in_progress", "in_progress"),
        ("to_do", "to_do"),
        ("done", "approved"),
    ] {
        raw(
            &s,
            &format!("UPDATE tickets SET status = '{status}' WHERE id = {a}"),
        )
        .unwrap();
        assert!(
            ticket_is(
                &s,
                a,
                &format!("stage = '{stage}' AND stage_source = 'user' AND drop_reason IS NULL")
            ),
            "status {status} → stage {stage}"
        );
    }
    assert_eq!(logged(&s, a, "source = 'user'"), 6);

    // A lead drop has a reason; the user's restore from the board clears it.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET stage = 'dropped', status = 'parked', stage_source = 'lead_drop',
                 drop_reason = 'merged into #01' WHERE id = {b}"
        ),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        b,
        "stage = 'dropped' AND drop_reason = 'merged into #01' AND stage_source = 'lead_drop'"
    ));
    raw(
        &s,
        &format!("UPDATE tickets SET status = 'to_do' WHERE id = {b}"),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        b,
        "stage = 'to_do' AND drop_reason IS NULL AND stage_source = 'user'"
    ));

    // One edit of many rows moves each.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET status = 'in_review' WHERE plan_id = {}",
            w.launch.0
        ),
    )
    .unwrap();
    assert_eq!(
        count(
            &s,
            "tickets",
            "updated_at",
            "stage = 'in_review' AND status = 'in_review' AND stage_source = 'user'"
        ),
        2
    );

    // A status nobody knows moves nothing.
    assert_refused(
        raw(
            &s,
            &format!("UPDATE tickets SET status = 'finished' WHERE id = {a}"),
        ),
        &["NOT NULL", "not-null", "CHECK", "check constraint"],
        "an unknown status",
    );
    assert!(ticket_is(&s, a, "status = 'in_review'"));
}

#[test]
fn stage_write_needs_source() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    for sql in [
        format!("UPDATE tickets SET stage = 'in_progress', status = 'in_progress' WHERE id = {a}"),
        format!(
            "UPDATE tickets SET stage = 'in_progress', status = 'in_progress', stage_source = NULL
             WHERE id = {a}"
        ),
    ] {
        assert_refused(raw(&s, &sql), &["stage_needs_source"], &sql);
    }
    assert!(ticket_is(&s, a, "stage = 'to_do' AND stage_source IS NULL"));
    assert_eq!(logged(&s, a, "1 = 1"), 0);
    // A source nobody knows is no source.
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET stage = 'in_progress', status = 'in_progress',
                     stage_source = 'organizer' WHERE id = {a}"
            ),
        ),
        &["CHECK", "check constraint"],
        "the organizer as a source",
    );
    // Named, it moves and is logged.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET stage = 'submitted', status = 'in_review', stage_source = 'check'
             WHERE id = {a}"
        ),
    )
    .unwrap();
    assert_eq!(
        logged(
            &s,
            a,
            "from_stage = 'to_do' AND to_stage = 'submitted' AND source = 'check'"
        ),
        1
    );
    // submitted → in_review keeps the status: a stage write, not the user's edit.
    raw(
        &s,
        &format!("UPDATE tickets SET stage = 'in_review', stage_source = 'review' WHERE id = {a}"),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        a,
        "stage = 'in_review' AND status = 'in_review' AND stage_source = 'review'"
    ));
    // A write that leaves the stage alone logs nothing.
    raw(
        &s,
        &format!("UPDATE tickets SET title = 'other' WHERE id = {a}"),
    )
    .unwrap();
    assert_eq!(logged(&s, a, "1 = 1"), 2);
}

#[test]
fn stage_status_pair_checked() {
    let (s, _) = store();
    let w = world(&s);
    // Every row of the mapping stands.
    for (n, (stage, status)) in [
        ("to_do", "to_do"),
        ("in_progress", "in_progress"),
        ("submitted", "in_review"),
        ("in_review", "in_review"),
        ("rework", "in_progress"),
        ("approved", "done"),
        ("dropped", "parked"),
    ]
    .into_iter()
    .enumerate()
    {
        raw(&s, &ticket_sql(w.launch, n as i64 + 1, stage, status)).unwrap();
    }
    // Any other pair is refused, made so or written so.
    for (stage, status) in [
        ("approved", "in_review"),
        ("to_do", "done"),
        ("rework", "in_review"),
        ("dropped", "to_do"),
        ("submitted", "in_progress"),
    ] {
        assert_refused(
            raw(&s, &ticket_sql(w.ad, 1, stage, status)),
            &["ticket_stage_status"],
            &format!("a new ticket at {stage}/{status}"),
        );
    }
    let a = raw_id(w.launch, 4);
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET stage = 'approved', stage_source = 'review' WHERE id = {a}"
            ),
        ),
        &["ticket_stage_status"],
        "approved with status In review",
    );
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET stage = 'rework', status = 'done', stage_source = 'review'
                 WHERE id = {a}"
            ),
        ),
        &["ticket_stage_status"],
        "rework with status Done",
    );
    assert!(ticket_is(&s, a, "stage = 'in_review'"));
    // A reason only on a dropped ticket.
    assert_refused(
        raw(
            &s,
            &format!("UPDATE tickets SET drop_reason = 'why' WHERE id = {a}"),
        ),
        &["drop_reason_only_dropped"],
        "a drop reason on a live ticket",
    );
}

#[test]
fn reviewer_is_not_owner() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    raw(
        &s,
        &format!(
            "UPDATE tickets SET owner_bot_id = {}, reviewer_bot_id = {} WHERE id = {a}",
            w.ada.0, w.bo.0
        ),
    )
    .unwrap();
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET reviewer_bot_id = {} WHERE id = {a}",
                w.ada.0
            ),
        ),
        &["reviewer_is_owner"],
        "the owner made reviewer",
    );
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE tickets SET owner_bot_id = {} WHERE id = {a}",
                w.bo.0
            ),
        ),
        &["reviewer_is_owner"],
        "the reviewer made owner",
    );
    assert_refused(
        raw(
            &s,
            &format!(
                "INSERT INTO tickets (plan_id, number, title, owner_bot_id, reviewer_bot_id,
                     folder, created_at, updated_at)
                 VALUES ({}, 2, 'x', {}, {}, '/tmp/x', 1, 1)",
                w.launch.0, w.cy.0, w.cy.0
            ),
        ),
        &["reviewer_is_owner"],
        "a new ticket its owner reviews",
    );
    // Either alone is fine.
    raw(
        &s,
        &format!(
            "UPDATE tickets SET owner_bot_id = NULL, reviewer_bot_id = {} WHERE id = {a}",
            w.ada.0
        ),
    )
    .unwrap();
    assert!(ticket_is(
        &s,
        a,
        &format!("owner_bot_id IS NULL AND reviewer_bot_id = {}", w.ada.0)
    ));
}

#[test]
fn one_sample_per_plan() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    let b = raw_ticket(&s, w.launch, 2);
    let other = raw_ticket(&s, w.ad, 1);
    for id in [a, other] {
        raw(
            &s,
            &format!("UPDATE tickets SET is_sample = 1 WHERE id = {id}"),
        )
        .unwrap();
    }
    assert_refused(
        raw(
            &s,
            &format!("UPDATE tickets SET is_sample = 1 WHERE id = {b}"),
        ),
        &["tickets_one_sample", "tickets.plan_id"],
        "a second sample in the job",
    );
    // Moving the sample: the old one gives it up first.
    raw(
        &s,
        &format!("UPDATE tickets SET is_sample = 0 WHERE id = {a}"),
    )
    .unwrap();
    raw(
        &s,
        &format!("UPDATE tickets SET is_sample = 1 WHERE id = {b}"),
    )
    .unwrap();
    assert_eq!(count(&s, "tickets", "updated_at", "is_sample = 1"), 2);
}

#[test]
fn ticket_rows_keep_their_shape() {
    let (s, _) = store();
    let w = world(&s);
    let a = raw_ticket(&s, w.launch, 1);
    let b = raw_ticket(&s, w.launch, 2);
    assert_refused(
        raw(
            &s,
            &ticket_sql(w.launch, 1, "to_do", "to_do").replace(&a.to_string(), "77"),
        ),
        &["UNIQUE", "duplicate key"],
        "a second #01 in the job",
    );
    for (sql, rule) in [
        (
            format!("UPDATE tickets SET folder = '/elsewhere' WHERE id = {a}"),
            "ticket_fixed",
        ),
        (
            format!("UPDATE tickets SET number = 9 WHERE id = {a}"),
            "ticket_fixed",
        ),
        (
            format!("UPDATE tickets SET plan_id = {} WHERE id = {a}", w.ad.0),
            "ticket_fixed",
        ),
        (
            format!("INSERT INTO ticket_dependencies (ticket_id, depends_on_id) VALUES ({a}, {a})"),
            "depends_on_self",
        ),
        (
            format!("UPDATE tickets SET title = '  ' WHERE id = {a}"),
            "CHECK",
        ),
    ] {
        let rules = [rule, "check constraint"];
        let rules: &[&str] = if rule == "CHECK" { &rules } else { &rules[..1] };
        assert_refused(raw(&s, &sql), rules, &sql);
    }
    raw(
        &s,
        &format!("INSERT INTO ticket_dependencies (ticket_id, depends_on_id) VALUES ({b}, {a})"),
    )
    .unwrap();
    // Two layout keys alike in one job are refused; in two jobs they are fine.
    raw(
        &s,
        &format!("UPDATE tickets SET key = 'intro' WHERE id = {a}"),
    )
    .unwrap();
    assert_refused(
        raw(
            &s,
            &format!("UPDATE tickets SET key = 'intro' WHERE id = {b}"),
        ),
        &["UNIQUE", "duplicate key"],
        "a layout key twice in one job",
    );
    let other = raw_ticket(&s, w.ad, 1);
    raw(
        &s,
        &format!("UPDATE tickets SET key = 'intro' WHERE id = {other}"),
    )
    .unwrap();
}

#[test]
fn layout_round_trip() {
    let (s, _) = store();
    let w = world(&s);
    let got = lay_out(
        &s,
        w.launch,
        vec![
            LayoutItem {
                key: Some("intro".into()),
                sample: true,
                reviewer_bot_id: Some(w.bo),
                parts: vec!["C01".into(), "C02".into()],
                ..item("Intro", w.ada)
            },
            LayoutItem {
                depends_on: vec![TicketRef::Item(0)],
                done_when: "a 2-minute cut".into(),
                ..item("Main cut", w.cy)
            },
        ],
    );
    assert_eq!(got.len(), 2);
    let (intro, main) = (&got[0], &got[1]);
    assert_eq!((intro.number, main.number), (1, 2));
    assert_eq!(intro.folder, format!("/tmp/jobs/{}/01-Intro", w.launch.0));
    assert_eq!(intro.key.as_deref(), Some("intro"));
    assert!(intro.is_sample && !main.is_sample);
    assert_eq!(intro.reviewer_bot_id, Some(w.bo));
    assert_eq!(
        (intro.stage, intro.status, intro.stage_source),
        (TicketStage::ToDo, TicketStatus::ToDo, None)
    );
    assert_eq!(main.depends_on, vec![intro.id]);
    assert_eq!(main.done_when, "a 2-minute cut");
    let d = s.read(|tx| tx.plan_deliverables(w.launch)).unwrap();
    assert!(d.laid_out);
    assert_eq!(d.sample_ticket_id, Some(intro.id));
    let parts = s.read(|tx| tx.parts_of_ticket(intro.id)).unwrap();
    assert_eq!(
        parts
            .iter()
            .map(|p| (p.number, p.label.as_str(), p.stage))
            .collect::<Vec<_>>(),
        vec![
            (1, "C01", PartStage::InProgress),
            (2, "C02", PartStage::InProgress)
        ]
    );

    // A later layout numbers on, moves the sample, rewrites an item, adds a part once, and
    // drops with a reason.
    let out = s
        .write(|tx| {
            tx.lay_out(
                w.launch,
                &Layout {
                    items: vec![
                        LayoutItem {
                            ticket: Some(intro.id),
                            parts: vec!["C02".into(), "C03".into()],
                            ..item("Intro, longer", w.ada)
                        },
                        LayoutItem {
                            sample: true,
                            depends_on: vec![TicketRef::Existing(intro.id)],
                            ..item("Outro", w.bo)
                        },
                    ],
                    drops: vec![(main.id, "merged into #01".into())],
                },
                folder(w.launch),
            )
        })
        .unwrap();
    let (intro2, outro) = (&out.tickets[0], &out.tickets[1]);
    assert_eq!(intro2.title, "Intro, longer");
    assert_eq!(
        intro2.folder, intro.folder,
        "the folder is fixed at creation"
    );
    assert!(!intro2.is_sample && outro.is_sample);
    assert_eq!(outro.number, 3);
    assert_eq!(outro.depends_on, vec![intro.id]);
    assert_eq!(s.read(|tx| tx.parts_of_plan(w.launch)).unwrap().len(), 3);
    assert_eq!(out.dropped.len(), 1);
    let dropped = s.read(|tx| tx.ticket(main.id)).unwrap();
    assert_eq!(
        (dropped.stage, dropped.status, dropped.stage_source),
        (
            TicketStage::Dropped,
            TicketStatus::Parked,
            Some(StageSource::LeadDrop)
        )
    );
    assert_eq!(dropped.drop_reason.as_deref(), Some("merged into #01"));
    assert_eq!(s.read(|tx| tx.next_ticket_number(w.launch)).unwrap(), 4);
    assert_eq!(
        s.read(|tx| tx.plan_deliverables(w.launch))
            .unwrap()
            .sample_ticket_id,
        Some(outro.id)
    );
    let listed = s.read(|tx| tx.tickets_of_plan(w.launch)).unwrap();
    assert_eq!(
        listed.iter().map(|t| t.number).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert_eq!(listed[2].depends_on, vec![intro.id]);

    // Refused whole: a reviewer who owns it, a ticket of another job, a drop with no reason.
    for (layout, what) in [
        (
            Layout {
                items: vec![LayoutItem {
                    reviewer_bot_id: Some(w.ada),
                    ..item("Mine", w.ada)
                }],
                drops: vec![],
            },
            "reviewer_is_owner",
        ),
        (
            Layout {
                items: vec![LayoutItem {
                    depends_on: vec![TicketRef::Existing(intro.id)],
                    ..item("Elsewhere", w.ada)
                }],
                drops: vec![],
            },
            "other_plan",
        ),
        (
            Layout {
                items: vec![item("Fine", w.ada)],
                drops: vec![(intro.id, " ".into())],
            },
            "says why",
        ),
    ] {
        let plan = if what == "other_plan" { w.ad } else { w.launch };
        match s.write(|tx| tx.lay_out(plan, &layout, folder(plan))) {
            Err(StoreError::Sql(e)) => assert!(e.message.contains(what), "{what}: {e:?}"),
            Err(StoreError::Invalid(m)) => assert!(m.contains(what), "{what}: {m}"),
            other => panic!("{what}: expected a refusal, got {other:?}"),
        }
    }
    assert_eq!(s.read(|tx| tx.next_ticket_number(w.launch)).unwrap(), 4);
    assert_eq!(s.read(|tx| tx.next_ticket_number(w.ad)).unwrap(), 1);
}

#[test]
fn stage_moves_are_logged_and_told() {
    let (s, _) = store();
    let w = world(&s);
    let t = lay_out(
        &s,
        w.launch,
        vec![LayoutItem {
            parts: vec!["C01".into()],
            ..item("Intro", w.ada)
        }],
    )
    .remove(0);
    let moved = s
        .write(|tx| tx.set_ticket_stage(t.id, TicketStage::InProgress, StageSource::AppStarted))
        .unwrap()
        .unwrap();
    assert_eq!(
        (moved.from, moved.to, moved.source),
        (
            TicketStage::ToDo,
            TicketStage::InProgress,
            StageSource::AppStarted
        )
    );
    // At that stage already: nothing written, nothing told.
    assert_eq!(
        s.write(|tx| tx.set_ticket_stage(t.id, TicketStage::InProgress, StageSource::Check))
            .unwrap(),
        None
    );
    s.write(|tx| tx.set_ticket_stage(t.id, TicketStage::Submitted, StageSource::Check))
        .unwrap();
    let after = s.read(|tx| tx.ticket(t.id)).unwrap();
    assert_eq!(after.status, TicketStatus::InReview);
    assert!(
        after.handed_over_once,
        "a passed hand-over makes it through"
    );

    // A part moves with its source, logged with the part.
    let part = s.read(|tx| tx.parts_of_ticket(t.id)).unwrap().remove(0);
    let p = s
        .write(|tx| tx.count_part_attempt(part.id, Some("shots/C01.mp4")))
        .unwrap();
    assert_eq!(
        (p.attempts, p.current_file.as_deref()),
        (1, Some("shots/C01.mp4"))
    );
    s.write(|tx| tx.set_part_stage(part.id, PartStage::Submitted, StageSource::Check))
        .unwrap();

    // The user drags it to Done on the board.
    let edit = s
        .write(|tx| {
            tx.board_patch(
                t.id,
                &BoardPatch {
                    status: Some(TicketStatus::Done),
                    ..BoardPatch::default()
                },
            )
        })
        .unwrap();
    assert_eq!(edit.ticket.stage, TicketStage::Approved);
    assert_eq!(edit.moved.unwrap().source, StageSource::User);

    let log = s.read(|tx| tx.ticket_stage_changes(t.id)).unwrap();
    assert_eq!(
        log.iter()
            .map(|c| (
                c.part_id.is_some(),
                c.from.as_str(),
                c.to.as_str(),
                c.source.as_str()
            ))
            .collect::<Vec<_>>(),
        vec![
            (false, "to_do", "in_progress", "app_started"),
            (false, "in_progress", "submitted", "check"),
            (true, "in_progress", "submitted", "check"),
            (false, "submitted", "approved", "user"),
        ]
    );
    let told = events(&s, w.group, "ticket_stage_changed");
    assert_eq!(told.len(), 4);
    assert_eq!(told[0]["task_id"], serde_json::json!(w.launch.0));
    assert_eq!(told[0]["ticket_id"], serde_json::json!(t.id.0));
    assert_eq!(told[2]["part_id"], serde_json::json!(part.id.0));
    assert_eq!(told[3]["from"], "submitted");
    assert_eq!(told[3]["to"], "approved");
    assert_eq!(told[3]["source"], "user");
}

#[test]
fn board_patch_round_trip() {
    let (s, _) = store();
    let w = world(&s);
    let ts = lay_out(
        &s,
        w.launch,
        vec![item("One", w.ada), item("Two", w.bo), item("Three", w.cy)],
    );
    let other = lay_out(&s, w.ad, vec![item("Elsewhere", w.ada)]).remove(0);
    let edit = s
        .write(|tx| {
            tx.board_patch(
                ts[0].id,
                &BoardPatch {
                    reviewer_bot_id: Some(Some(w.cy)),
                    depends_on: Some(vec![ts[1].id, ts[2].id]),
                    sample: Some(true),
                    title: Some("  One, again ".into()),
                    description: Some("what".into()),
                    done_when: Some("a file".into()),
                    ..BoardPatch::default()
                },
            )
        })
        .unwrap();
    let t = edit.ticket;
    assert_eq!(
        (
            t.title.as_str(),
            t.description.as_str(),
            t.done_when.as_str()
        ),
        ("One, again", "what", "a file")
    );
    assert_eq!(t.reviewer_bot_id, Some(w.cy));
    assert_eq!(t.depends_on, vec![ts[1].id, ts[2].id]);
    assert!(t.is_sample && edit.moved.is_none() && edit.superseded.is_empty());
    // The sample moves on the board too; clearing the reviewer is a field of its own.
    s.write(|tx| {
        tx.board_patch(
            ts[1].id,
            &BoardPatch {
                sample: Some(true),
                ..BoardPatch::default()
            },
        )
    })
    .unwrap();
    let one = s
        .write(|tx| {
            tx.board_patch(
                ts[0].id,
                &BoardPatch {
                    reviewer_bot_id: Some(None),
                    depends_on: Some(vec![]),
                    ..BoardPatch::default()
                },
            )
        })
        .unwrap()
        .ticket;
    assert!(!one.is_sample && one.reviewer_bot_id.is_none() && one.depends_on.is_empty());
    // Refused: the owner as reviewer, itself or another job's ticket as a dependency.
    let refused = [
        BoardPatch {
            reviewer_bot_id: Some(Some(w.ada)),
            ..BoardPatch::default()
        },
        BoardPatch {
            depends_on: Some(vec![ts[0].id]),
            ..BoardPatch::default()
        },
        BoardPatch {
            depends_on: Some(vec![other.id]),
            ..BoardPatch::default()
        },
        BoardPatch {
            title: Some(" ".into()),
            ..BoardPatch::default()
        },
    ];
    for (p, code) in refused.iter().zip([
        "reviewer_is_owner",
        "depends_on_self",
        "other_plan",
        "title",
    ]) {
        match s.write(|tx| tx.board_patch(ts[0].id, p)) {
            Err(StoreError::Sql(e)) => assert!(e.message.contains(code), "{code}: {e:?}"),
            Err(StoreError::Invalid(m)) => assert!(m.contains(code), "{code}: {m}"),
            other => panic!("{code}: expected a refusal, got {other:?}"),
        }
    }
    // Set aside on the board: dropped with no reason, told as the user's.
    let parked = s
        .write(|tx| {
            tx.board_patch(
                ts[2].id,
                &BoardPatch {
                    status: Some(TicketStatus::Parked),
                    ..BoardPatch::default()
                },
            )
        })
        .unwrap();
    assert_eq!(parked.ticket.stage, TicketStage::Dropped);
    assert_eq!(parked.ticket.drop_reason, None);
    assert_eq!(parked.ticket.stage_source, Some(StageSource::User));
}
