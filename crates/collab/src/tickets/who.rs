//! Who does what in a job (ADR 0086), read once for a job's ticket views: the turns each Bot
//! ran on each ticket, the job conversation's present Bots and their names. Only shown: no
//! line in a conversation, no card, and a suggested reviewer is never applied by itself.

use serde::Serialize;
use std::collections::HashMap;
use troupe_core::ticket::{
    BotShare, RanNote, TicketPeople, TicketStage, TurnCount, ran_by, ran_note, reviewer_suggestion,
    shares,
};
use troupe_core::{BotId, PlanId};
use troupe_store::{StoreError, TicketRecord, Tx};

/// How many turns one Bot ran on a ticket.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TurnsRun {
    pub bot_id: BotId,
    pub turns: u32,
}

/// One Bot's part in the job ("Who does what in this job").
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BotShareView {
    pub bot_id: BotId,
    pub name: String,
    /// Tickets it owns, dropped and set-aside ones left out.
    pub owns: u32,
    /// Tickets it reviews, the same left out.
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

/// What a job's views need to say who ran what.
pub(crate) struct JobPeople {
    counts: Vec<TurnCount>,
    /// The job conversation's present, unarchived Bots: the ones that could review.
    members: Vec<BotId>,
    /// The job conversation's present Bots, archived ones too, by id.
    conversation: Vec<BotId>,
    names: HashMap<BotId, String>,
}

/// A ticket's part of it.
pub(crate) struct TicketRan {
    pub ran_by: Vec<TurnsRun>,
    pub ran_line: Option<String>,
    pub reviewer_suggestion: Option<BotId>,
}

impl JobPeople {
    pub(crate) fn read(tx: &Tx<'_>, plan: PlanId) -> Result<Self, StoreError> {
        let counts = tx.job_turn_counts(plan)?;
        let mut members = Vec::new();
        let mut names = HashMap::new();
        let conversation = match tx.plan(plan)?.home_session_id {
            Some(home) => tx.session(home)?.bot_ids,
            None => Vec::new(),
        };
        for &bot in &conversation {
            let b = tx.bot(bot)?;
            if !b.archived {
                members.push(bot);
            }
            names.insert(bot, b.name);
        }
        Ok(JobPeople {
            counts,
            members,
            conversation,
            names,
        })
    }

    fn name(&mut self, tx: &Tx<'_>, bot: BotId) -> Result<String, StoreError> {
        if let Some(n) = self.names.get(&bot) {
            return Ok(n.clone());
        }
        let n = tx.bot(bot)?.name;
        self.names.insert(bot, n.clone());
        Ok(n)
    }

    pub(crate) fn ticket(
        &mut self,
        tx: &Tx<'_>,
        t: &TicketRecord,
    ) -> Result<TicketRan, StoreError> {
        let ran = ran_by(t.id, &self.counts);
        // A dropped or set-aside ticket shows nobody (T19), so nothing about who ran it either.
        let live = t.stage != TicketStage::Dropped;
        let note = if live {
            ran_note(t.owner_bot_id, t.reviewer_bot_id, &ran)
        } else {
            None
        };
        let ran_line = match note {
            None => None,
            Some(RanNote::Actually(bots)) => {
                Some(format!("Actually: {}", self.names_of(tx, &bots)?))
            }
            Some(RanNote::Also(bots)) => Some(format!("Also {}", self.names_of(tx, &bots)?)),
        };
        let members = &self.members;
        let reviewer_suggestion = live
            .then(|| {
                reviewer_suggestion(t.owner_bot_id, t.reviewer_bot_id, &ran, |b| {
                    members.contains(&b)
                })
            })
            .flatten();
        Ok(TicketRan {
            ran_by: ran
                .into_iter()
                .map(|(bot_id, turns)| TurnsRun { bot_id, turns })
                .collect(),
            ran_line,
            reviewer_suggestion,
        })
    }

    fn names_of(&mut self, tx: &Tx<'_>, bots: &[BotId]) -> Result<String, StoreError> {
        let mut out = Vec::with_capacity(bots.len());
        for b in bots {
            out.push(self.name(tx, *b)?);
        }
        Ok(out.join(", "))
    }

    /// Each Bot's share of the job, the conversation's Bots first.
    pub(crate) fn shares(
        &mut self,
        tx: &Tx<'_>,
        all: &[TicketRecord],
    ) -> Result<Vec<BotShareView>, StoreError> {
        let people: Vec<TicketPeople> = all
            .iter()
            .map(|t| TicketPeople {
                id: t.id,
                owner: t.owner_bot_id,
                reviewer: t.reviewer_bot_id,
                counted: t.stage != TicketStage::Dropped,
            })
            .collect();
        shares(&people, &self.counts, &self.conversation)
            .into_iter()
            .map(|s: BotShare| {
                Ok(BotShareView {
                    name: self.name(tx, s.bot)?,
                    bot_id: s.bot,
                    owns: s.owns,
                    reviews: s.reviews,
                    turns: s.turns,
                    on_others: s.on_others,
                    unticketed: s.unticketed,
                    ran_nothing: s.ran_nothing,
                })
            })
            .collect()
    }
}
