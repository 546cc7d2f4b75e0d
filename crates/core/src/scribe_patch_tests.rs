use super::*;
use crate::words_check::{Bound, Value};
use serde_json::json;

fn shown(id: i64, quote: &str, category: Option<&str>) -> Shown {
    Shown {
        id,
        quote: quote.into(),
        category: category.map(str::to_string),
        number: one_number(quote),
        scope: Scope::Job,
        ticket: None,
        state: State::InForce,
    }
}

fn cx<'a>(line: &'a str, shown: &'a [Shown]) -> Context<'a> {
    Context {
        line,
        shown,
        tickets: &[(41, 1), (42, 2)],
        filed_ticket: None,
        standing_on_earlier: &[],
    }
}

fn add(quote: &str) -> Json {
    json!({"op": "add", "quote": quote, "restatement": "r", "category": "picture"})
}

#[test]
fn the_answer_must_be_a_patch() {
    assert!(parse("I could not find anything").is_err());
    assert!(parse("{\"notes\": []}").is_err());
    assert!(parse("{\"items\": [").is_err());
    let items =
        parse("```json\n{\"items\": [{\"op\": \"raise\", \"id\": 1, \"quote\": \"x\"}]}\n```")
            .unwrap();
    assert_eq!(items.len(), 1);
}

#[test]
fn s_sc_2_an_item_whose_quote_is_not_in_the_line_is_dropped_alone() {
    let line = "Make the logo bigger, and keep the music soft please";
    let items = vec![
        add("logo bigger"),
        add("the colours warmer"),
        add("keep the music soft"),
    ];
    let out = check(&items, &cx(line, &[]));
    assert_eq!(out.landed.len(), 2);
    assert_eq!(out.dropped.len(), 1);
    assert_eq!(out.dropped[0].index, 1);
    assert!(out.dropped[0].reason.starts_with("quote_not_in_line"));
}

#[test]
fn s_sc_4_short_quotes_need_a_number_or_the_whole_line() {
    let line = "好的，那就这样吧，不过片尾字幕要再大一点，谢谢你们的辛苦";
    let out = check(&[add("好的")], &cx(line, &[]));
    assert!(out.landed.is_empty());
    assert!(out.dropped[0].reason.starts_with("quote too short"));
    let line = "剪成 90 秒发给我，片尾字幕要再大一点，谢谢你们的辛苦了哈";
    let out = check(&[add("90 秒")], &cx(line, &[]));
    assert_eq!(out.landed.len(), 1, "{:?}", out.dropped);
    // A line shorter than four characters may be quoted whole.
    let out = check(&[add("要4K")], &cx("要4K", &[]));
    assert_eq!(out.landed.len(), 1, "{:?}", out.dropped);
}

#[test]
fn the_quote_kept_is_the_users_own_substring() {
    let line = "请把「片头」的字体，换成 思源黑体！";
    assert_eq!(
        find_in_line(line, "片头的字体换成思源黑体").as_deref(),
        Some("片头」的字体，换成 思源黑体")
    );
    assert_eq!(
        find_in_line("The Hands look FAKE.", "hands look fake").as_deref(),
        Some("Hands look FAKE")
    );
    assert_eq!(
        find_in_line("ＡＢＣＤ efg", "abcdefg").as_deref(),
        Some("ＡＢＣＤ efg")
    );
    assert_eq!(find_in_line("abc", "abd"), None);
    assert_eq!(find_in_line("abc", "!!"), None);
}

#[test]
fn s_sc_1_a_change_to_another_category_is_a_replacement_to_confirm() {
    let old = [shown(7, "original stylised characters", Some("style"))];
    let line = "rebuild it with the League map, champion models and real player models";
    let item = json!({"op": "change", "id": "R-7",
        "quote": "League map, champion models and real player models",
        "restatement": "use the game's own assets", "category": "assets"});
    let out = check(&[item], &cx(line, &old));
    assert!(out.dropped.is_empty(), "{:?}", out.dropped);
    match &out.landed[0] {
        Landed::Replace { replaces, entry } => {
            assert_eq!(*replaces, 7);
            assert_eq!(entry.category.as_deref(), Some("assets"));
            assert_eq!(entry.scope, Scope::Job);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_cross_category_change_after_the_same_words_went_home_is_dropped() {
    let old = [
        shown(1, "soft piano music", Some("music")),
        shown(2, "warm colours", Some("picture")),
    ];
    let line = "use a louder drum track instead";
    let items = vec![
        json!({"op": "change", "id": 1, "quote": "louder drum track", "category": "music"}),
        json!({"op": "change", "id": 2, "quote": "louder drum track", "category": "music"}),
    ];
    let out = check(&items, &cx(line, &old));
    assert_eq!(out.landed.len(), 1);
    assert_eq!(out.dropped[0].index, 1);
}

#[test]
fn the_old_number_again_is_said_again_and_a_new_one_is_a_replacement() {
    let old = [shown(3, "约 2 分钟", None)];
    let again = json!({"op": "change", "id": 3, "quote": "片长约 2 分钟"});
    let out = check(&[again], &cx("还是片长约 2 分钟吧", &old));
    assert!(
        matches!(out.landed[0], Landed::Raise { id: 3, .. }),
        "{out:?}"
    );
    let new = json!({"op": "change", "id": 3, "quote": "改成 3 分钟"});
    let out = check(&[new], &cx("改成 3 分钟", &old));
    match &out.landed[0] {
        Landed::Replace { replaces: 3, entry } => {
            let n = entry.number.unwrap();
            assert_eq!(n.value, Value::Seconds { seconds: 180.0 });
        }
        other => panic!("{other:?}"),
    }
}

/// RL-4, UQ-21: a new running time said as an `add` beside one in force is a
/// replacement to confirm; the same time again is said again; another dimension is an add.
#[test]
fn rl_4_a_new_number_added_for_a_dimension_in_force_is_a_replacement_to_confirm() {
    let old = [shown(3, "约 2 分钟", None)];
    let out = check(&[add("改成 3 分钟")], &cx("改成 3 分钟", &old));
    match &out.landed[0] {
        Landed::Replace { replaces: 3, entry } => {
            let n = entry.number.unwrap();
            assert_eq!(n.value, Value::Seconds { seconds: 180.0 });
        }
        other => panic!("{other:?}"),
    }
    let out = check(&[add("片长约 2 分钟")], &cx("片长约 2 分钟就好", &old));
    assert!(
        matches!(out.landed[0], Landed::Raise { id: 3, .. }),
        "the same time in other words is said again: {out:?}"
    );
    let out = check(&[add("1080p")], &cx("要 1080p", &old));
    assert!(matches!(out.landed[0], Landed::Add(_)), "{out:?}");
}

#[test]
fn raise_and_change_only_name_entries_shown_in_force() {
    let mut gone = shown(5, "no text on screen", Some("text"));
    gone.state = State::ToConfirm;
    let shown_list = [gone];
    let line = "again: no text on screen";
    for item in [
        json!({"op": "raise", "id": 5, "quote": "no text on screen"}),
        json!({"op": "raise", "id": 99, "quote": "no text on screen"}),
        json!({"op": "change", "id": 5, "quote": "no text on screen"}),
        json!({"op": "raise", "quote": "no text on screen"}),
    ] {
        let out = check(&[item], &cx(line, &shown_list));
        assert!(out.landed.is_empty());
        assert_eq!(out.dropped.len(), 1);
    }
}

#[test]
fn the_same_words_as_a_wider_entry_in_force_are_a_raise() {
    let mut session = shown(9, "no text on screen", None);
    session.scope = Scope::Session;
    let list = [session];
    let out = check(
        &[add("No text on screen")],
        &cx("No text on screen!", &list),
    );
    assert!(matches!(out.landed[0], Landed::Raise { id: 9, .. }));
    // A ticket entry counts only for a new entry of the same ticket.
    let mut ticket = shown(10, "no text on screen", None);
    ticket.scope = Scope::Ticket;
    ticket.ticket = Some(41);
    let list = [ticket];
    let out = check(
        &[add("No text on screen")],
        &cx("No text on screen!", &list),
    );
    assert!(matches!(out.landed[0], Landed::Add(_)));
}

#[test]
fn scope_follows_the_named_ticket_every_job_or_the_filing() {
    let line = "shot two needs rain, and from now on every film ends on black";
    let named = json!({"op": "add", "quote": "shot two needs rain", "tickets": [2]});
    let every = json!({"op": "add", "quote": "every film ends on black", "every_job": true});
    let unknown = json!({"op": "add", "quote": "shot two needs rain", "tickets": [7]});
    let out = check(&[named, every, unknown], &cx(line, &[]));
    let scopes: Vec<(Scope, Option<i64>)> = out
        .landed
        .iter()
        .map(|l| match l {
            Landed::Add(e) => (e.scope, e.ticket),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        scopes,
        vec![(Scope::Ticket, Some(42)), (Scope::Session, None)]
    );
    assert_eq!(out.dropped.len(), 1);
    let filed = Context {
        filed_ticket: Some(41),
        ..cx(line, &[])
    };
    let out = check(&[add("needs rain")], &filed);
    assert!(
        matches!(&out.landed[0], Landed::Add(e) if e.scope == Scope::Ticket && e.ticket == Some(41))
    );
}

#[test]
fn at_most_eight_adds_and_every_other_refusal() {
    let words: Vec<String> = (0..10).map(|i| format!("wish number {i:02}")).collect();
    let line = words.join(", ");
    let items: Vec<Json> = words.iter().map(|w| add(w)).collect();
    let out = check(&items, &cx(&line, &[]));
    assert_eq!(out.landed.len(), MAX_ADDS);
    assert_eq!(out.dropped.len(), 2);
    for bad in [
        json!({"op": "delete", "id": 1, "quote": "wish number 01"}),
        json!({"op": "add"}),
        json!({"op": "add", "quote": "wish number 01", "nature": "vibe"}),
        json!({"op": "add", "quote": "wish number 01", "polarity": "maybe"}),
        json!({"op": "add", "quote": "wish number 01", "colour": "red"}),
        json!("add"),
    ] {
        let out = check(std::slice::from_ref(&bad), &cx(&line, &[]));
        assert!(out.landed.is_empty(), "{bad}");
        assert_eq!(out.dropped.len(), 1, "{bad}");
    }
}

#[test]
fn s_rl_6_numbers_read_by_the_shared_rules() {
    assert_eq!(one_number("比分 2:1"), None);
    assert_eq!(
        one_number("剪成 90 秒发给我").map(|n| n.value),
        Some(Value::Seconds { seconds: 90.0 })
    );
    assert_eq!(one_number("淡出 24 帧"), None);
    assert_eq!(one_number("90s 港风"), None);
    let at_most = one_number("don't go over 3 minutes").unwrap();
    assert_eq!(at_most.bound, Bound::AtMost);
    assert_eq!(at_most.max, Some(180.0));
    assert_eq!(one_number("横幅"), None);
    assert_eq!(
        one_number("竖屏").map(|n| n.value),
        Some(Value::Orientation {
            orientation: crate::words_check::Orientation::Portrait
        })
    );
}

/// UQ-12: on an edited line's re-read the scribe may name an entry standing on the line's
/// earlier words as taken back — that one alone, and never on a line nobody edited.
#[test]
fn uq_12_an_edit_may_name_only_entries_on_its_earlier_words_as_taken_back() {
    let line = "No music after all, the voice is enough";
    let shown = [
        shown(3, "keep the music soft", Some("music")),
        shown(4, "logo bigger", None),
    ];
    let edited = Context {
        standing_on_earlier: &[3],
        ..cx(line, &shown)
    };
    let items = vec![
        json!({"op": "take_back", "id": "R-3"}),
        json!({"op": "take_back", "id": 4}),
        json!({"op": "take_back"}),
    ];
    let out = check(&items, &edited);
    assert_eq!(out.landed, vec![Landed::TakeBack { id: 3 }]);
    let reasons: Vec<(usize, &str)> = out
        .dropped
        .iter()
        .map(|d| (d.index, d.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        vec![
            (1, "R-4 does not stand on this line's earlier words"),
            (2, "no entry id"),
        ]
    );
    // The same item on a line nobody edited is dropped.
    let out = check(&items[..1], &cx(line, &shown));
    assert!(out.landed.is_empty());
    assert_eq!(
        out.dropped[0].reason,
        "take_back is only for a line the user edited"
    );
}
