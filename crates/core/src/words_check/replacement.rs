//! The replacement card (CW-18): a check in force never changes by itself. A different later
//! target puts a card in front of the user with the number in force and the new one; saying
//! the new one again reposts it (「你已经说了 N 次」); saying the old one again, or the new
//! one going away, withdraws it. The old check stays in force until the card is answered.

use super::{Dimension, Number};

/// The card's buttons, in the order shown.
pub const ANSWERS: [&str; 3] = ["use_new", "change", "keep_old"];

/// What the card on one job's dimension should do now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CardMove {
    /// Nothing changed.
    Stay,
    /// No card yet: post one.
    Post,
    /// The same new number was said again: close the card and post it again, counting.
    Repost,
    /// Another different number replaced the one on the card: close it, post one for the new.
    Replace,
    /// No replacement stands any more: close the card, buttons gone.
    Withdraw,
}

/// A card's or a replacement's offer: which offer row and how often its number was said.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    pub offer: i64,
    pub said_count: u32,
}

/// `open` is the card up now, `replacement` the replacement standing now (an offer while a
/// check is in force).
pub fn card_move(open: Option<Shown>, replacement: Option<Shown>) -> CardMove {
    match (open, replacement) {
        (None, None) => CardMove::Stay,
        (None, Some(_)) => CardMove::Post,
        (Some(_), None) => CardMove::Withdraw,
        (Some(o), Some(r)) if o.offer != r.offer => CardMove::Replace,
        (Some(o), Some(r)) if r.said_count > o.said_count => CardMove::Repost,
        (Some(_), Some(_)) => CardMove::Stay,
    }
}

fn label(d: Dimension) -> &'static str {
    match d {
        Dimension::RunningTime => "片长",
        Dimension::Resolution => "分辨率",
        Dimension::Aspect => "画幅",
        Dimension::FrameRate => "帧率",
    }
}

/// The card's words: the number in force against the new one, led by how often it was said
/// when more than once.
pub fn card_text(dimension: Dimension, in_force: &Number, new: &Number, said_count: u32) -> String {
    let mut out = String::new();
    if said_count >= 2 {
        out.push_str(&format!("你已经说了 {said_count} 次。"));
    }
    out.push_str(&format!(
        "{}：生效中的检查是 {}，你后来说的是 {}。用哪个？旧的检查在你回答之前仍然有效。",
        label(dimension),
        in_force.asked(),
        new.asked()
    ));
    out
}

/// What "Change" puts in the composer.
pub fn change_prefill(dimension: Dimension) -> String {
    format!("{}改成 ", label(dimension))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words_check::{Bound, Value};

    fn shown(offer: i64, said_count: u32) -> Option<Shown> {
        Some(Shown { offer, said_count })
    }

    #[test]
    fn replacement_card_moves() {
        assert_eq!(card_move(None, None), CardMove::Stay);
        assert_eq!(card_move(None, shown(7, 1)), CardMove::Post);
        assert_eq!(card_move(shown(7, 1), shown(7, 1)), CardMove::Stay);
        assert_eq!(card_move(shown(7, 1), shown(7, 2)), CardMove::Repost);
        assert_eq!(card_move(shown(7, 2), shown(8, 1)), CardMove::Replace);
        assert_eq!(card_move(shown(7, 1), None), CardMove::Withdraw);
    }

    #[test]
    fn replacement_card_text_counts_repeats_and_prefills_change() {
        let two = Number::new(Value::Seconds { seconds: 120.0 }, Bound::About);
        let three = Number::new(Value::Seconds { seconds: 180.0 }, Bound::About);
        let first = card_text(Dimension::RunningTime, &two, &three, 1);
        assert!(
            first.starts_with("片长：生效中的检查是 108–132 s"),
            "{first}"
        );
        assert!(first.contains("162–198 s"), "{first}");
        let again = card_text(Dimension::RunningTime, &two, &three, 3);
        assert!(again.starts_with("你已经说了 3 次。"), "{again}");
        assert_eq!(change_prefill(Dimension::RunningTime), "片长改成 ");
    }
}
