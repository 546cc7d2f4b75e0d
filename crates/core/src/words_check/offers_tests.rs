//! `offers_*`: CW-7…CW-10, CW-16, CW-18, CW-20 on lines read by the real parser.

use super::*;
use crate::words_check::LinePlace;
use crate::words_check::numbers::read_numbers;

/// Line `quote`, said at `at`, read for the running time.
fn said(quote: u32, at: i64, line: &str) -> Said<u32> {
    let reading = read_numbers(line, LinePlace::Job)
        .into_iter()
        .find(|r| r.dimension == Dimension::RunningTime)
        .unwrap_or_else(|| panic!("{line:?} reads no running time"));
    Said {
        quote,
        said_at: at,
        reading,
    }
}

fn book() -> Book<u32> {
    Book::new(Dimension::RunningTime)
}

/// The offer as "<asked> xN" plus " (replacement)", or "none".
fn offer(b: &Book<u32>, words: &[Said<u32>]) -> String {
    match b.settle(words).offer {
        None => "none".into(),
        Some(o) => format!(
            "{} x{}{}",
            o.number.asked(),
            o.said_count,
            if o.replaces_in_force {
                " (replacement)"
            } else {
                ""
            }
        ),
    }
}

fn number(line: &str) -> Number {
    said(0, 0, line).reading.number
}

#[test]
fn offers_cw8_offer_follows_the_latest_target_else_the_latest_reading() {
    let b = book();
    let readings = vec![said(1, 10, "约 90 秒"), said(2, 20, "不要超过 2 分钟")];
    assert_eq!(offer(&b, &readings), "at most 120 s x1");
    let mut words = readings.clone();
    words.push(said(3, 30, "片长约 2 分钟"));
    words.push(said(4, 40, "约 3 分钟"));
    // the reading after the target does not move the offer
    assert_eq!(offer(&b, &words), "108–132 s x1");
    words.push(said(5, 50, "片长改成 3 分钟"));
    // the target's number, counted with the earlier reading of the same number (CW-9)
    assert_eq!(offer(&b, &words), "162–198 s x2");
}

#[test]
fn offers_cw8_one_offer_per_dimension() {
    let b = book();
    let mut words = vec![
        said(1, 10, "片长约 2 分钟"),
        said(2, 20, "剪成 90 秒发给我"),
    ];
    let other = read_numbers("1080p", LinePlace::Job).remove(0);
    words.push(Said {
        quote: 3,
        said_at: 30,
        reading: other,
    });
    let s = b.settle(&words);
    assert_eq!(s.offer.map(|o| o.number), Some(number("剪成 90 秒")));
    let mut res = Book::<u32>::new(Dimension::Resolution);
    assert_eq!(offer(&res, &words), "1080 x1");
    res.remove_offer(30);
    assert_eq!(offer(&res, &words), "none");
}

#[test]
fn offers_cw7_reading_with_target_makes_no_offer() {
    // S-CW-8: 「约 90 秒」 with an existing target 「片长 2 分钟」 → no new offer.
    let b = book();
    let words = vec![said(1, 10, "片长 2 分钟"), said(2, 20, "约 90 秒")];
    assert_eq!(offer(&b, &words), "108–132 s x1");
    // and without the target, the reading is the offer
    assert_eq!(offer(&b, &words[1..]), "81–99 s x1");
}

#[test]
fn offers_cw9_same_number_is_the_same_offer() {
    let b = book();
    let words = vec![
        said(1, 10, "about 2 minutes"),
        said(2, 20, "2 minutes or so"),
        said(3, 30, "片长 120 秒"),
    ];
    assert_eq!(offer(&b, &words), "108–132 s x3");
    // 115 is not 120
    let mut more = words.clone();
    more.push(said(4, 40, "片长 115 秒"));
    assert_eq!(offer(&b, &more), "103.5–126.5 s x1");
    // 「片长改成 130 秒」 differs too
    let mut more = words.clone();
    more.push(said(5, 50, "片长改成 130 秒"));
    assert_eq!(offer(&b, &more), "117–143 s x1");
    // at least 2 minutes is another bound, another number
    let mut more = words.clone();
    more.push(said(6, 60, "片长至少 2 分钟"));
    assert_eq!(offer(&b, &more), "at least 120 s x1");
}

#[test]
fn offers_cw9_a_line_counts_once_however_often_edited() {
    let b = book();
    let words = vec![
        said(1, 10, "片长约 2 分钟"),
        said(1, 15, "片长约两分钟"),
        said(2, 20, "约 2 分钟"),
    ];
    assert_eq!(offer(&b, &words), "108–132 s x2");
}

#[test]
fn offers_cw10_removed_number_stops_counting_and_nothing_older_takes_its_place() {
    let mut b = book();
    let mut words = vec![said(1, 10, "片长约 90 秒"), said(2, 20, "片长约 2 分钟")];
    assert_eq!(offer(&b, &words), "108–132 s x1");
    b.remove_offer(25);
    assert_eq!(offer(&b, &words), "none");
    // only later words count again, from one
    words.push(said(3, 30, "约 2 分钟"));
    assert_eq!(offer(&b, &words), "108–132 s x1");
}

#[test]
fn offers_cw10_everything_said_before_a_confirmed_number_stops_counting() {
    let mut b = book();
    let mut words = vec![
        said(1, 10, "约 90 秒"),
        said(2, 20, "片长约 2 分钟"),
        said(3, 30, "片长约 2 分钟!"),
    ];
    b.confirm(&number("片长约 2 分钟"), &words, 35).unwrap();
    let check = b.in_force.clone().unwrap();
    assert_eq!((check.quote, check.said_count), (Some(2), 2));
    let s = b.settle(&words);
    assert_eq!((s.offer, s.in_force_said_count), (None, Some(2)));
    // the same number again raises the check; an old non-target number makes nothing
    words.push(said(4, 40, "约 2 分钟"));
    words.push(said(5, 50, "约 90 秒"));
    let s = b.settle(&words);
    assert_eq!((s.offer, s.in_force_said_count), (None, Some(3)));
}

#[test]
fn offers_cw18_a_different_later_target_is_a_replacement_not_a_change() {
    // S-CW-2: confirmed about 2 min; 「片长改成 3 分钟」 → replacement; old check still stands.
    let mut b = book();
    let mut words = vec![said(1, 10, "片长约 2 分钟")];
    b.confirm(&number("片长约 2 分钟"), &words, 15).unwrap();
    words.push(said(2, 20, "片长改成 3 分钟"));
    assert_eq!(offer(&b, &words), "162–198 s x1 (replacement)");
    assert_eq!(b.in_force.as_ref().unwrap().number, number("片长约 2 分钟"));
    // said again: the card is reposted with 「你已经说了 2 次」
    words.push(said(3, 30, "片长改成三分钟"));
    assert_eq!(offer(&b, &words), "162–198 s x2 (replacement)");
    // a reading that is no target makes no replacement
    let mut b2 = b.clone();
    b2.counts_after = Some(35);
    let quiet = vec![said(4, 40, "约 3 分钟")];
    assert_eq!(offer(&b2, &quiet), "none");
}

#[test]
fn offers_cw18_saying_the_old_number_again_withdraws_the_replacement() {
    let mut b = book();
    let mut words = vec![said(1, 10, "片长约 2 分钟")];
    b.confirm(&number("片长约 2 分钟"), &words, 15).unwrap();
    words.push(said(2, 20, "片长改成 3 分钟"));
    words.push(said(3, 30, "about 2 minutes after all"));
    assert_eq!(offer(&b, &words), "none");
    assert_eq!(b.settle(&words).in_force_said_count, Some(2));
    // confirming the withdrawn replacement is refused
    assert_eq!(
        b.confirm(&number("片长改成 3 分钟"), &words, 35),
        Err(ConfirmError::Withdrawn)
    );
}

#[test]
fn offers_cw18_use_new_and_keep_old() {
    let mut words = vec![said(1, 10, "片长约 2 分钟")];
    let mut b = book();
    b.confirm(&number("片长约 2 分钟"), &words, 15).unwrap();
    words.push(said(2, 20, "片长改成 3 分钟"));
    // Use the new one: the old check is removed, the new one in force
    let mut use_new = b.clone();
    use_new
        .confirm(&number("片长改成 3 分钟"), &words, 25)
        .unwrap();
    assert_eq!(
        use_new.in_force.as_ref().unwrap().number,
        number("片长 3 分钟")
    );
    assert_eq!(offer(&use_new, &words), "none");
    // Keep the old one: the offer is removed, the old check stays
    let mut keep = b.clone();
    keep.remove_offer(25);
    assert_eq!(
        keep.in_force.as_ref().unwrap().number,
        number("片长约 2 分钟")
    );
    assert_eq!(offer(&keep, &words), "none");
}

#[test]
fn offers_cw16_confirm_refused_once_a_later_number_withdrew_the_offer() {
    let mut b = book();
    let mut words = vec![said(1, 10, "片长约 2 分钟")];
    let shown = b.settle(&words).offer.unwrap().number;
    words.push(said(2, 20, "片长 3 分钟"));
    assert_eq!(b.confirm(&shown, &words, 25), Err(ConfirmError::Withdrawn));
    assert_eq!(b.in_force, None);
    b.confirm(&number("片长 3 分钟"), &words, 25).unwrap();
    assert!(b.in_force.is_some());
}

#[test]
fn offers_cw20_erasing_the_confirmed_words_reverts_to_an_offer() {
    let mut b = book();
    let mut words = vec![said(1, 10, "片长约 2 分钟")];
    b.confirm(&number("片长约 2 分钟"), &words, 15).unwrap();
    words.push(said(2, 20, "约 2 分钟"));
    // erasing a later line with the same number does not touch the check
    b.erase(&2);
    words.retain(|s| s.quote != 2);
    assert!(b.in_force.is_some());
    // erasing the words it stands on: back to an offer, never gone
    b.erase(&1);
    words.retain(|s| s.quote != 1);
    assert_eq!(b.in_force, None);
    assert_eq!(offer(&b, &words), "108–132 s x1");
    // the user can confirm it again
    b.confirm(&number("约 2 分钟"), &words, 30).unwrap();
    assert_eq!(b.in_force.as_ref().unwrap().quote, None);
}
