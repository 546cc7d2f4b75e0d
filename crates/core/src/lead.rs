//! Group lead suggestion (GL-4, GL-5). Handoffs can only suggest a lead; only the user's
//! confirmation appoints one (GL-1), so nothing here writes or replaces a lead.

use crate::ids::BotId;
use crate::mention::Mentions;
use serde::{Deserialize, Serialize};

/// Handoffs are counted over the last seven days.
pub const SUGGESTION_WINDOW_MS: i64 = 7 * 24 * 3600 * 1000;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandoffCount {
    pub bot_id: BotId,
    pub count: u32,
}

/// The eligible (present, live) Bot with the most handoffs, as a hint for the member list.
/// No evidence, a tie at the top, or a top that already is the lead → no suggestion.
pub fn suggest_lead(
    counts: &[HandoffCount],
    eligible: &[BotId],
    current_lead: Option<BotId>,
) -> Option<HandoffCount> {
    // Rows for the same Bot add up, so callers may count per conversation or per day.
    let mut totals: Vec<HandoffCount> = Vec::new();
    for c in counts.iter().filter(|c| eligible.contains(&c.bot_id)) {
        match totals.iter_mut().find(|t| t.bot_id == c.bot_id) {
            Some(t) => t.count = t.count.saturating_add(c.count),
            None => totals.push(*c),
        }
    }
    let best = totals.iter().map(|t| t.count).max().filter(|&n| n > 0)?;
    let mut top = totals.iter().filter(|t| t.count == best);
    let first = *top.next()?;
    if top.next().is_some() || current_lead == Some(first.bot_id) {
        return None;
    }
    Some(first)
}

/// GL-4: a Bot's turn-sent group line naming another member or @everyone is a handoff. The
/// first real line of a Bot↔Bot direct opened from the group counts too; the caller knows
/// that case.
pub fn is_handoff(
    author_is_bot: bool,
    sent_in_turn: bool,
    mentions: &Mentions,
    author: BotId,
) -> bool {
    author_is_bot
        && sent_in_turn
        && (mentions.everyone || mentions.named.iter().any(|&id| id != author))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: i64, count: u32) -> HandoffCount {
        HandoffCount {
            bot_id: BotId(id),
            count,
        }
    }

    const ALL: [BotId; 3] = [BotId(1), BotId(2), BotId(3)];

    #[test]
    fn lead_suggestion_tie_gives_none() {
        // S-GL-2: X and Y both made 5 handoffs.
        assert_eq!(suggest_lead(&[c(1, 5), c(2, 5), c(3, 1)], &ALL, None), None);
        assert_eq!(
            suggest_lead(&[c(1, 5), c(2, 5), c(1, 1)], &ALL, None),
            Some(c(1, 6))
        );
    }

    #[test]
    fn lead_suggestion_never_replaces_the_confirmed_lead() {
        // S-GL-3: lead L = 1; Y = 2 has more handoffs → only a hint for Y.
        assert_eq!(
            suggest_lead(&[c(1, 2), c(2, 4)], &ALL, Some(BotId(1))),
            Some(c(2, 4))
        );
        // The lead itself on top: nothing to suggest.
        assert_eq!(
            suggest_lead(&[c(1, 7), c(2, 4)], &ALL, Some(BotId(1))),
            None
        );
    }

    #[test]
    fn lead_suggestion_skips_absent_and_archived() {
        // Bot 9 left (or is archived): it is not eligible even with the most handoffs.
        assert_eq!(
            suggest_lead(&[c(9, 10), c(2, 3)], &ALL, None),
            Some(c(2, 3))
        );
        assert_eq!(suggest_lead(&[c(9, 10)], &ALL, None), None);
    }

    #[test]
    fn lead_suggestion_needs_evidence() {
        assert_eq!(suggest_lead(&[], &ALL, None), None);
        assert_eq!(suggest_lead(&[c(1, 0), c(2, 0)], &ALL, None), None);
        let named_other = Mentions {
            named: vec![BotId(2)],
            ..Mentions::default()
        };
        let named_self = Mentions {
            named: vec![BotId(1)],
            ..Mentions::default()
        };
        let everyone = Mentions {
            everyone: true,
            ..Mentions::default()
        };
        assert!(is_handoff(true, true, &named_other, BotId(1)));
        assert!(is_handoff(true, true, &everyone, BotId(1)));
        assert!(!is_handoff(true, true, &named_self, BotId(1)));
        assert!(!is_handoff(true, true, &Mentions::default(), BotId(1)));
        // User mentions and lines sent outside a turn are not handoffs.
        assert!(!is_handoff(false, true, &named_other, BotId(1)));
        assert!(!is_handoff(true, false, &named_other, BotId(1)));
    }
}
