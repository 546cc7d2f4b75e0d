//! Who does what (ADR 0086): the Bots who actually ran a ticket's turns, read against the owner
//! the layout gave it; the reviewer a ticket without one could be given; each Bot's share of a
//! job. Owners are filled in from the plan when tickets open, not from who works them, so the
//! two can differ, and the job's view says so.

use crate::{BotId, TicketId};

/// A Bot that is neither a ticket's owner nor its reviewer and ran at least this many of its
/// turns is offered as its reviewer.
pub const SUGGEST_REVIEWER_AT: u32 = 5;

/// How many turns one Bot ran on one ticket of a job (`ticket` none: under no ticket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnCount {
    pub ticket: Option<TicketId>,
    pub bot: BotId,
    pub turns: u32,
}

/// A ticket's people: `counted` is false for a dropped or set-aside ticket, which nobody owns
/// or reviews any more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TicketPeople {
    pub id: TicketId,
    pub owner: Option<BotId>,
    pub reviewer: Option<BotId>,
    pub counted: bool,
}

/// What a ticket's row says when the Bots who ran it and its owner differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RanNote {
    /// "Actually: X": the owner ran none of it; these did (most turns first).
    Actually(Vec<BotId>),
    /// "Also X": the owner ran it, and so did these; it has no reviewer.
    Also(Vec<BotId>),
}

/// The Bots who ran a ticket's turns, most turns first (equal counts by id).
pub fn ran_by(ticket: TicketId, counts: &[TurnCount]) -> Vec<(BotId, u32)> {
    let mut out: Vec<(BotId, u32)> = Vec::new();
    for c in counts
        .iter()
        .filter(|c| c.ticket == Some(ticket) && c.turns > 0)
    {
        match out.iter_mut().find(|(b, _)| *b == c.bot) {
            Some((_, n)) => *n += c.turns,
            None => out.push((c.bot, c.turns)),
        }
    }
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// The row's note. The reviewer's own turns (its reviews) are not running the ticket, so they
/// never make an "Actually" or an "Also"; with a reviewer, another Bot's turns are its business.
pub fn ran_note(
    owner: Option<BotId>,
    reviewer: Option<BotId>,
    ran: &[(BotId, u32)],
) -> Option<RanNote> {
    let owner = owner?;
    let others: Vec<BotId> = ran
        .iter()
        .filter(|(b, n)| *n > 0 && *b != owner && Some(*b) != reviewer)
        .map(|(b, _)| *b)
        .collect();
    if others.is_empty() {
        return None;
    }
    let owner_ran = ran.iter().any(|(b, n)| *b == owner && *n > 0);
    if !owner_ran {
        Some(RanNote::Actually(others))
    } else if reviewer.is_none() {
        Some(RanNote::Also(others))
    } else {
        None
    }
}

/// "Make X the reviewer": on a ticket with no reviewer, the Bot that ran the most of its turns
/// (at least `SUGGEST_REVIEWER_AT`) among those that are not its owner and could review it
/// (`eligible`: a present Bot of the job's conversation). Never applied by itself.
pub fn reviewer_suggestion(
    owner: Option<BotId>,
    reviewer: Option<BotId>,
    ran: &[(BotId, u32)],
    eligible: impl Fn(BotId) -> bool,
) -> Option<BotId> {
    if reviewer.is_some() {
        return None;
    }
    ran.iter()
        .filter(|(b, n)| *n >= SUGGEST_REVIEWER_AT && Some(*b) != owner && eligible(*b))
        .map(|(b, _)| *b)
        .next()
}

/// One Bot's part in a job: what it owns and reviews, and the turns it ran there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotShare {
    pub bot: BotId,
    /// Tickets it owns (dropped and set-aside ones left out).
    pub owns: u32,
    /// Tickets it reviews (the same left out).
    pub reviews: u32,
    /// Turns it ran in the job.
    pub turns: u32,
    /// Of those, on a ticket another Bot owns.
    pub on_others: u32,
    /// Of those, under no ticket.
    pub unticketed: u32,
    /// It owns tickets and ran nothing in the job.
    pub ran_nothing: bool,
}

/// Each Bot's share: the conversation's Bots first (in `members` order), then any other Bot
/// that owns, reviews or ran something, by id.
pub fn shares(tickets: &[TicketPeople], counts: &[TurnCount], members: &[BotId]) -> Vec<BotShare> {
    let mut bots: Vec<BotId> = members.to_vec();
    let mut extra: Vec<BotId> = tickets
        .iter()
        .filter(|t| t.counted)
        .flat_map(|t| [t.owner, t.reviewer])
        .flatten()
        .chain(counts.iter().filter(|c| c.turns > 0).map(|c| c.bot))
        .filter(|b| !members.contains(b))
        .collect();
    extra.sort();
    extra.dedup();
    bots.extend(extra);
    bots.dedup();
    let owner_of = |t: TicketId| tickets.iter().find(|p| p.id == t).and_then(|p| p.owner);
    bots.into_iter()
        .map(|bot| {
            let counted = tickets.iter().filter(|t| t.counted);
            let owns = counted.clone().filter(|t| t.owner == Some(bot)).count() as u32;
            let reviews = counted.filter(|t| t.reviewer == Some(bot)).count() as u32;
            let mine = counts.iter().filter(|c| c.bot == bot);
            let turns = mine.clone().map(|c| c.turns).sum();
            let unticketed = mine
                .clone()
                .filter(|c| c.ticket.is_none())
                .map(|c| c.turns)
                .sum();
            let on_others = mine
                .filter(|c| {
                    c.ticket
                        .and_then(owner_of)
                        .is_some_and(|owner| owner != bot)
                })
                .map(|c| c.turns)
                .sum();
            BotShare {
                bot,
                owns,
                reviews,
                turns,
                on_others,
                unticketed,
                ran_nothing: owns > 0 && turns == 0,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWNER: BotId = BotId(1);
    const OTHER: BotId = BotId(2);
    const REVIEWER: BotId = BotId(3);
    const T1: TicketId = TicketId(10);
    const T2: TicketId = TicketId(11);

    fn count(ticket: Option<TicketId>, bot: BotId, turns: u32) -> TurnCount {
        TurnCount { ticket, bot, turns }
    }

    #[test]
    fn ran_by_puts_most_turns_first_and_leaves_other_tickets_out() {
        let counts = [
            count(Some(T1), OWNER, 2),
            count(Some(T1), OTHER, 4),
            count(Some(T2), REVIEWER, 9),
            count(None, OWNER, 3),
        ];
        assert_eq!(ran_by(T1, &counts), vec![(OTHER, 4), (OWNER, 2)]);
    }

    #[test]
    fn an_owner_who_ran_none_of_it_reads_actually_the_bots_who_did() {
        let ran = [(OTHER, 3)];
        assert_eq!(
            ran_note(Some(OWNER), None, &ran),
            Some(RanNote::Actually(vec![OTHER]))
        );
    }

    #[test]
    fn another_bot_beside_the_owner_reads_also_only_without_a_reviewer() {
        let ran = [(OWNER, 3), (OTHER, 1)];
        assert_eq!(
            ran_note(Some(OWNER), None, &ran),
            Some(RanNote::Also(vec![OTHER]))
        );
        assert_eq!(ran_note(Some(OWNER), Some(REVIEWER), &ran), None);
    }

    #[test]
    fn the_reviewers_turns_are_not_running_the_ticket() {
        assert_eq!(
            ran_note(Some(OWNER), Some(REVIEWER), &[(REVIEWER, 4)]),
            None
        );
        assert_eq!(
            ran_note(Some(OWNER), Some(REVIEWER), &[(OWNER, 2), (REVIEWER, 4)]),
            None
        );
    }

    #[test]
    fn no_owner_or_only_the_owner_says_nothing() {
        assert_eq!(ran_note(None, None, &[(OTHER, 3)]), None);
        assert_eq!(ran_note(Some(OWNER), None, &[(OWNER, 3)]), None);
        assert_eq!(ran_note(Some(OWNER), None, &[]), None);
    }

    #[test]
    fn a_bot_with_five_turns_on_a_ticket_without_reviewer_is_suggested() {
        let yes = |_| true;
        assert_eq!(
            reviewer_suggestion(Some(OWNER), None, &[(OTHER, 5)], yes),
            Some(OTHER)
        );
        assert_eq!(
            reviewer_suggestion(Some(OWNER), None, &[(OTHER, 4)], yes),
            None
        );
        assert_eq!(
            reviewer_suggestion(Some(OWNER), Some(REVIEWER), &[(OTHER, 9)], yes),
            None
        );
        // The owner itself never, however many turns it ran.
        assert_eq!(
            reviewer_suggestion(Some(OWNER), None, &[(OWNER, 9)], yes),
            None
        );
    }

    #[test]
    fn a_suggestion_names_only_a_bot_that_could_review() {
        let ran = [(OTHER, 8), (REVIEWER, 6)];
        assert_eq!(
            reviewer_suggestion(Some(OWNER), None, &ran, |b| b != OTHER),
            Some(REVIEWER)
        );
        assert_eq!(
            reviewer_suggestion(Some(OWNER), None, &ran, |_| false),
            None
        );
    }

    #[test]
    fn shares_count_owned_reviewed_and_where_the_turns_went() {
        let tickets = [
            TicketPeople {
                id: T1,
                owner: Some(OWNER),
                reviewer: Some(REVIEWER),
                counted: true,
            },
            TicketPeople {
                id: T2,
                owner: Some(OTHER),
                reviewer: None,
                counted: true,
            },
            TicketPeople {
                id: TicketId(12),
                owner: Some(OWNER),
                reviewer: None,
                counted: false,
            },
        ];
        let counts = [
            count(Some(T1), OTHER, 2),
            count(Some(T2), OTHER, 1),
            count(Some(T1), REVIEWER, 1),
            count(None, OTHER, 3),
        ];
        let got = shares(&tickets, &counts, &[OWNER, OTHER]);
        let ids: Vec<BotId> = got.iter().map(|s| s.bot).collect();
        assert_eq!(ids, vec![OWNER, OTHER, REVIEWER]);
        assert_eq!(
            got[0],
            BotShare {
                bot: OWNER,
                owns: 1,
                reviews: 0,
                turns: 0,
                on_others: 0,
                unticketed: 0,
                ran_nothing: true
            }
        );
        assert_eq!(
            got[1],
            BotShare {
                bot: OTHER,
                owns: 1,
                reviews: 0,
                turns: 6,
                on_others: 2,
                unticketed: 3,
                ran_nothing: false
            }
        );
        assert_eq!(
            got[2],
            BotShare {
                bot: REVIEWER,
                owns: 0,
                reviews: 1,
                turns: 1,
                on_others: 1,
                unticketed: 0,
                ran_nothing: false
            }
        );
    }
}
