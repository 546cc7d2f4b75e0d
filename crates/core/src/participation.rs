//! Who receives a line (PAR-1…4, JUD-2, PULL-1…3, MEN-2, MEN-12). Receiving is not
//! redirecting: a recipient already working on the same plan hears the line in its segment.

use crate::ids::BotId;
use crate::mention::Mentions;
use serde::{Deserialize, Serialize};

/// Why a Bot receives a line; shown and logged.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    Mention,
    Everyone,
    Lead,
    JobLead,
    Judgement,
    AskAnswer,
    PairDirect,
    /// The group's one live Bot, with no lead: there is nobody else the line could be for.
    OnlyMember,
}

impl How {
    pub fn as_str(self) -> &'static str {
        match self {
            How::Mention => "mention",
            How::Everyone => "everyone",
            How::Lead => "lead",
            How::JobLead => "job_lead",
            How::Judgement => "judgement",
            How::AskAnswer => "ask_answer",
            How::PairDirect => "pair_direct",
            How::OnlyMember => "only_member",
        }
    }
}

/// A Bot in the conversation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub id: BotId,
    pub archived: bool,
    /// Confirmed by the user; never set by a Bot (GL-1).
    pub is_lead: bool,
    /// Its turn waits on its `ask_user`.
    pub waiting_ask: bool,
}

impl Member {
    fn live(&self) -> bool {
        !self.archived
    }
}

pub struct UserLineInput<'a> {
    pub members: &'a [Member],
    pub mentions: &'a Mentions,
    /// Roster Bots named but not present: they are added before delivery (PULL-1).
    pub pulled_in: &'a [BotId],
    /// The job's own lead; a seam, None for now.
    pub job_lead: Option<BotId>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserRoute {
    Deliver(Vec<(BotId, How)>),
    /// No lead: ask these present live members whether they join (PAR-2).
    Judge(Vec<BotId>),
    /// The confirmed lead is archived: nobody receives; the app leaves a system notice.
    ArchivedLead(BotId),
    Nobody,
}

/// Routes a user line in a group. Holds are the caller's: a held lead still gets the line
/// here, so no other Bot is silently picked (GL-2).
pub fn route_user_group_line(input: &UserLineInput) -> UserRoute {
    let members = input.members;
    let m = input.mentions;
    let member = |id: BotId| members.iter().find(|x| x.id == id);
    let waits = |id: BotId| member(id).is_some_and(|x| x.live() && x.waiting_ask);

    let plain = m.is_empty() && input.pulled_in.is_empty();
    if plain {
        // ASK-4: a plain line while a Bot waits on its ask is that ask's answer.
        let waiting: Vec<_> = members
            .iter()
            .filter(|x| x.live() && x.waiting_ask)
            .map(|x| (x.id, How::AskAnswer))
            .collect();
        if !waiting.is_empty() {
            return UserRoute::Deliver(waiting);
        }
    } else {
        let mut out: Vec<(BotId, How)> = Vec::new();
        let mut add = |id: BotId, how: How| {
            if !out.iter().any(|(x, _)| *x == id) {
                out.push((id, if waits(id) { How::AskAnswer } else { how }));
            }
        };
        for &id in m.named.iter().chain(input.pulled_in) {
            let present_live = member(id).is_some_and(Member::live);
            if present_live || input.pulled_in.contains(&id) {
                add(id, How::Mention);
            }
        }
        // MEN-2, PULL-3: everyone is who is already here.
        if m.everyone {
            for x in members.iter().filter(|x| x.live()) {
                add(x.id, How::Everyone);
            }
        }
        // Mentions decide; an unknown or archived name falls back to nobody, not the lead.
        return if out.is_empty() {
            UserRoute::Nobody
        } else {
            UserRoute::Deliver(out)
        };
    }

    if let Some(id) = input.job_lead
        && member(id).is_some_and(Member::live)
    {
        return UserRoute::Deliver(vec![(id, How::JobLead)]);
    }
    if let Some(lead) = members.iter().find(|x| x.is_lead) {
        return if lead.live() {
            UserRoute::Deliver(vec![(lead.id, How::Lead)])
        } else {
            UserRoute::ArchivedLead(lead.id)
        };
    }
    let live: Vec<BotId> = members.iter().filter(|x| x.live()).map(|x| x.id).collect();
    // Judgement picks among Bots (PAR-2); with one live Bot there is nothing to pick, and a
    // person's line in a group of one is said to it, as in a direct.
    match live.as_slice() {
        [] => UserRoute::Nobody,
        [only] => UserRoute::Deliver(vec![(*only, How::OnlyMember)]),
        _ => UserRoute::Judge(live),
    }
}

/// Routes a Bot's line. In a pair direct (`create_direct`) every line wakes the other side
/// (MEN-12); in a group only named live members other than the author, never the lead by
/// default.
pub fn route_bot_line(
    author: BotId,
    members: &[Member],
    mentions: &Mentions,
    pair_direct_other: Option<BotId>,
) -> Vec<(BotId, How)> {
    let live_other = |id: BotId| id != author && members.iter().any(|x| x.id == id && x.live());
    if let Some(other) = pair_direct_other {
        let archived = members.iter().any(|x| x.id == other && x.archived);
        return if other != author && !archived {
            vec![(other, How::PairDirect)]
        } else {
            Vec::new()
        };
    }
    let mut out: Vec<(BotId, How)> = Vec::new();
    for &id in &mentions.named {
        if live_other(id) && !out.iter().any(|(x, _)| *x == id) {
            out.push((id, How::Mention));
        }
    }
    if mentions.everyone {
        for x in members {
            if live_other(x.id) && !out.iter().any(|(y, _)| *y == x.id) {
                out.push((x.id, How::Everyone));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: i64) -> Member {
        Member {
            id: BotId(id),
            archived: false,
            is_lead: false,
            waiting_ask: false,
        }
    }

    fn lead(id: i64) -> Member {
        Member {
            is_lead: true,
            ..member(id)
        }
    }

    fn names(ids: &[i64]) -> Mentions {
        Mentions {
            named: ids.iter().map(|&i| BotId(i)).collect(),
            ..Mentions::default()
        }
    }

    fn route(members: &[Member], mentions: &Mentions, pulled_in: &[BotId]) -> UserRoute {
        route_user_group_line(&UserLineInput {
            members,
            mentions,
            pulled_in,
            job_lead: None,
        })
    }

    #[test]
    fn routing_lead_alone_gets_an_unaddressed_line() {
        let members = [member(1), lead(2), member(3)];
        assert_eq!(
            route(&members, &Mentions::default(), &[]),
            UserRoute::Deliver(vec![(BotId(2), How::Lead)])
        );
        // The job's own lead, when present, comes first.
        let with_job_lead = route_user_group_line(&UserLineInput {
            members: &members,
            mentions: &Mentions::default(),
            pulled_in: &[],
            job_lead: Some(BotId(3)),
        });
        assert_eq!(
            with_job_lead,
            UserRoute::Deliver(vec![(BotId(3), How::JobLead)])
        );
        let absent_job_lead = route_user_group_line(&UserLineInput {
            members: &members,
            mentions: &Mentions::default(),
            pulled_in: &[],
            job_lead: Some(BotId(9)),
        });
        assert_eq!(
            absent_job_lead,
            UserRoute::Deliver(vec![(BotId(2), How::Lead)])
        );
    }

    #[test]
    fn routing_mentioned_bot_skips_judgement() {
        let members = [member(1), member(2)];
        assert_eq!(
            route(&members, &names(&[2]), &[]),
            UserRoute::Deliver(vec![(BotId(2), How::Mention)])
        );
    }

    #[test]
    fn routing_without_lead_asks_judgement() {
        let archived = Member {
            archived: true,
            ..member(3)
        };
        let members = [member(1), member(2), archived];
        assert_eq!(
            route(&members, &Mentions::default(), &[]),
            UserRoute::Judge(vec![BotId(1), BotId(2)])
        );
        assert_eq!(
            route(&[archived], &Mentions::default(), &[]),
            UserRoute::Nobody
        );
    }

    #[test]
    fn routing_only_live_member_hears_an_unaddressed_line_without_judgement() {
        let archived = Member {
            archived: true,
            ..member(2)
        };
        assert_eq!(
            route(&[member(1), archived], &Mentions::default(), &[]),
            UserRoute::Deliver(vec![(BotId(1), How::OnlyMember)])
        );
    }

    #[test]
    fn routing_pull_in_delivers_to_the_pulled_bot() {
        let members = [lead(1)];
        assert_eq!(
            route(&members, &names(&[7]), &[BotId(7)]),
            UserRoute::Deliver(vec![(BotId(7), How::Mention)])
        );
        // Named neither here nor pulled in: nobody.
        assert_eq!(route(&members, &names(&[8]), &[]), UserRoute::Nobody);
    }

    #[test]
    fn routing_everyone_pulls_in_nobody() {
        let members = [member(1), lead(2)];
        let everyone = Mentions {
            everyone: true,
            ..Mentions::default()
        };
        assert_eq!(
            route(&members, &everyone, &[]),
            UserRoute::Deliver(vec![(BotId(1), How::Everyone), (BotId(2), How::Everyone)])
        );
        // A named member keeps its mention; everyone adds the rest.
        let both = Mentions {
            everyone: true,
            ..names(&[2])
        };
        assert_eq!(
            route(&members, &both, &[]),
            UserRoute::Deliver(vec![(BotId(2), How::Mention), (BotId(1), How::Everyone)])
        );
    }

    #[test]
    fn routing_unknown_name_wakes_nobody_not_even_the_lead() {
        let members = [lead(1), member(2)];
        let unknown = Mentions {
            unknown: vec!["Zed".into()],
            ..Mentions::default()
        };
        assert_eq!(route(&members, &unknown, &[]), UserRoute::Nobody);
        let mixed = Mentions {
            unknown: vec!["Zed".into()],
            ..names(&[2])
        };
        assert_eq!(
            route(&members, &mixed, &[]),
            UserRoute::Deliver(vec![(BotId(2), How::Mention)])
        );
    }

    #[test]
    fn routing_archived_lead_is_replaced_by_nobody() {
        let archived_lead = Member {
            archived: true,
            ..lead(1)
        };
        let members = [archived_lead, member(2)];
        assert_eq!(
            route(&members, &Mentions::default(), &[]),
            UserRoute::ArchivedLead(BotId(1))
        );
        // Naming the archived lead reaches nobody either.
        assert_eq!(route(&members, &names(&[1]), &[]), UserRoute::Nobody);
    }

    #[test]
    fn routing_waiting_ask_takes_the_plain_line() {
        let waiting = Member {
            waiting_ask: true,
            ..member(2)
        };
        let members = [lead(1), waiting, member(3)];
        assert_eq!(
            route(&members, &Mentions::default(), &[]),
            UserRoute::Deliver(vec![(BotId(2), How::AskAnswer)])
        );
        assert_eq!(
            route(&members, &names(&[3, 2]), &[]),
            UserRoute::Deliver(vec![(BotId(3), How::Mention), (BotId(2), How::AskAnswer)])
        );
        // A line naming someone else is not the waiting Bot's answer.
        assert_eq!(
            route(&members, &names(&[3]), &[]),
            UserRoute::Deliver(vec![(BotId(3), How::Mention)])
        );
    }

    #[test]
    fn routing_bot_line_wakes_only_named() {
        let archived = Member {
            archived: true,
            ..member(4)
        };
        let members = [lead(1), member(2), member(3), archived];
        assert!(route_bot_line(BotId(2), &members, &Mentions::default(), None).is_empty());
        assert_eq!(
            route_bot_line(BotId(2), &members, &names(&[3, 2, 4]), None),
            vec![(BotId(3), How::Mention)]
        );
        let everyone = Mentions {
            everyone: true,
            ..Mentions::default()
        };
        assert_eq!(
            route_bot_line(BotId(2), &members, &everyone, None),
            vec![(BotId(1), How::Everyone), (BotId(3), How::Everyone)]
        );
    }

    #[test]
    fn routing_pair_direct_wakes_the_other_side() {
        let members = [member(1), member(2)];
        assert_eq!(
            route_bot_line(BotId(1), &members, &Mentions::default(), Some(BotId(2))),
            vec![(BotId(2), How::PairDirect)]
        );
        assert_eq!(How::PairDirect.as_str(), "pair_direct");
        assert_eq!(
            serde_json::to_string(&How::AskAnswer).unwrap(),
            "\"ask_answer\""
        );
    }
}
