//! Tickets on both backends (see `troupe_store::testing`): the store's ticket API — laying out a
//! job's tickets and reading them back, stage moves logged and told as events, and the board's
//! patch. The database's own ticket rules are in `tickets.rs`.

mod deliverable_world;

use deliverable_world::*;

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
