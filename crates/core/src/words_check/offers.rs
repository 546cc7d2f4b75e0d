//! One dimension's offer and check in force, from everything the user said (CW-7…CW-10,
//! CW-16, CW-18, CW-20). Nothing is stored here but what only the user decides — the confirmed
//! number, and from when words count again — so the offer is always worked out afresh from the
//! words: erasing a line or refiling it elsewhere is just leaving it out of `said`.

use super::{Dimension, Number, Reading};

/// One reading of the user's words: the quote it stands on (a line, an answer, a changed board
/// clause) and when it was said, in one order across the job (milliseconds or a sequence).
#[derive(Clone, Debug, PartialEq)]
pub struct Said<Q> {
    pub quote: Q,
    pub said_at: i64,
    pub reading: Reading,
}

/// A number the user made count: the check in force, or one reverted to an offer.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing<Q> {
    pub number: Number,
    /// The words it stands on; `None` once they were erased (CW-20).
    pub quote: Option<Q>,
    pub said_count: u32,
}

/// What the user has decided about one dimension of one job.
#[derive(Clone, Debug, PartialEq)]
pub struct Book<Q> {
    pub dimension: Dimension,
    /// The confirmed check, a gate (CW-16); at most one per dimension (CW-8).
    pub in_force: Option<Standing<Q>>,
    /// Words said at or before this no longer count (CW-10): set when the user confirms,
    /// removes, or keeps the old number over a replacement.
    pub counts_after: Option<i64>,
    /// A confirmed check whose words were erased: an offer again, never silently gone (CW-20).
    pub reverted: Option<Standing<Q>>,
}

/// The dimension's one offer (CW-8).
#[derive(Clone, Debug, PartialEq)]
pub struct Offer<Q> {
    pub number: Number,
    /// The earliest counting words with this number; `None` for a reverted check's.
    pub quote: Option<Q>,
    /// Lines that gave this number (a line counts once, however often edited: CW-9).
    pub said_count: u32,
    /// A different later target while a check is in force: the replacement decision of CW-18
    /// ("Use the new one" / "Change" / "Keep the old one"), not a change to the check.
    pub replaces_in_force: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Settled<Q> {
    pub offer: Option<Offer<Q>>,
    /// The check in force's count, words said since it was confirmed included.
    pub in_force_said_count: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfirmError {
    /// The offer shown is no longer the offer: later words changed or withdrew it (409
    /// `withdrawn`).
    Withdrawn,
}

impl std::fmt::Display for ConfirmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfirmError::Withdrawn => {
                write!(
                    f,
                    "withdrawn: a later number replaced or withdrew this offer"
                )
            }
        }
    }
}

impl std::error::Error for ConfirmError {}

impl<Q: Clone + PartialEq> Book<Q> {
    pub fn new(dimension: Dimension) -> Book<Q> {
        Book {
            dimension,
            in_force: None,
            counts_after: None,
            reverted: None,
        }
    }

    /// The words that still count for this dimension, one per quote (its latest reading), in
    /// the order said.
    fn counting<'a>(&self, said: &'a [Said<Q>]) -> Vec<&'a Said<Q>> {
        let mut out: Vec<&Said<Q>> = Vec::new();
        for s in said.iter().filter(|s| {
            s.reading.dimension == self.dimension
                && self.counts_after.is_none_or(|cut| s.said_at > cut)
        }) {
            match out.iter_mut().find(|o| o.quote == s.quote) {
                Some(o) if o.said_at <= s.said_at => *o = s,
                Some(_) => {}
                None => out.push(s),
            }
        }
        out.sort_by_key(|s| s.said_at);
        out
    }

    /// The offer and the check's count, as the words stand now.
    pub fn settle(&self, said: &[Said<Q>]) -> Settled<Q> {
        let counting = self.counting(said);
        let like = |n: &Number| -> Vec<&&Said<Q>> {
            counting
                .iter()
                .filter(|s| s.reading.number.same_as(n))
                .collect()
        };
        let latest_target = counting.iter().rev().find(|s| s.reading.target);
        if let Some(check) = &self.in_force {
            let again = like(&check.number);
            let old_last = again.iter().map(|s| s.said_at).max();
            // CW-18: only a different target makes a replacement, and saying the old number
            // after it withdraws it. Readings that are no target make nothing.
            let offer = latest_target
                .filter(|t| !t.reading.number.same_as(&check.number))
                .filter(|t| old_last.is_none_or(|o| o < t.said_at))
                .map(|t| {
                    let same = like(&t.reading.number);
                    Offer {
                        number: t.reading.number,
                        quote: same.first().map(|s| s.quote.clone()),
                        said_count: same.len() as u32,
                        replaces_in_force: true,
                    }
                });
            return Settled {
                offer,
                in_force_said_count: Some(check.said_count + again.len() as u32),
            };
        }
        // CW-7, CW-8: the latest target; a reverted check next; else the latest reading,
        // which counts only while the dimension has no target at all.
        let chosen = latest_target
            .map(|t| t.reading.number)
            .or_else(|| self.reverted.as_ref().map(|r| r.number))
            .or_else(|| counting.last().map(|s| s.reading.number));
        let offer = chosen.map(|number| {
            let same = like(&number);
            let reverted = self.reverted.as_ref().filter(|r| r.number.same_as(&number));
            Offer {
                number,
                quote: match reverted {
                    Some(r) => r.quote.clone(),
                    None => same.first().map(|s| s.quote.clone()),
                },
                said_count: same.len() as u32 + reverted.map_or(0, |r| r.said_count),
                replaces_in_force: false,
            }
        });
        Settled {
            offer,
            in_force_said_count: None,
        }
    }

    /// CW-16: the user confirms the offer they were shown (on the board, or "Use the new one"
    /// on a replacement card, which removes the old check). Everything said up to `at` stops
    /// counting (CW-10); later words of the same number raise the check's count.
    pub fn confirm(
        &mut self,
        shown: &Number,
        said: &[Said<Q>],
        at: i64,
    ) -> Result<(), ConfirmError> {
        let offer = self
            .settle(said)
            .offer
            .filter(|o| o.number.same_as(shown))
            .ok_or(ConfirmError::Withdrawn)?;
        self.in_force = Some(Standing {
            number: offer.number,
            quote: offer.quote,
            said_count: offer.said_count,
        });
        self.reverted = None;
        self.counts_after = Some(at);
        Ok(())
    }

    /// The user removes the offer on the board, or presses "Keep the old one" on a replacement
    /// card: the words said so far no longer count, and no older number takes its place.
    pub fn remove_offer(&mut self, at: i64) {
        self.reverted = None;
        self.counts_after = Some(at);
    }

    /// The user removes the check in force: it and everything said so far stop counting.
    pub fn remove_in_force(&mut self, at: i64) {
        self.in_force = None;
        self.reverted = None;
        self.counts_after = Some(at);
    }

    /// CW-20: the words a confirmed check stands on are erased: it goes back to being an offer.
    /// Erasing any other words touches nothing here (the caller leaves them out of `said`).
    pub fn erase(&mut self, quote: &Q) {
        if let Some(check) = self.in_force.take_if(|c| c.quote.as_ref() == Some(quote)) {
            self.reverted = Some(Standing {
                quote: None,
                ..check
            });
        }
        if let Some(r) = self
            .reverted
            .as_mut()
            .filter(|r| r.quote.as_ref() == Some(quote))
        {
            r.quote = None;
        }
    }
}

#[cfg(test)]
#[path = "offers_tests.rs"]
mod tests;
