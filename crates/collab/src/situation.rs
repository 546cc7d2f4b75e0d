//! What a Bot is told about where it speaks, and who may run there. The situation names the
//! conversation, its members and lead, and how to reach them (mention rules); in a Bot↔Bot
//! direct, the other side and where it was opened from. The `membership` admission check keeps
//! a Bot that left a conversation, or was archived, from starting a turn there.

use crate::routing::labelled;
use troupe_core::conversation::SessionKind;
use troupe_core::thread::Thread;
use troupe_engine::extension::{
    Admission, AdmissionCheck, AdmissionContext, ContextContributor, ContextParts,
};
use troupe_store::{Store, StoreError};

pub struct ConversationSituation;

fn situation(thread: &Thread, store: &Store) -> Result<Option<String>, StoreError> {
    store.read(|tx| {
        let Some((session_id, me)) = tx.thread_session(thread.id)? else {
            return Ok(None);
        };
        let session = tx.session(session_id)?;
        let mut names = Vec::new();
        for b in &session.bot_ids {
            names.push((*b, tx.bot(*b)?.name));
        }
        let lead = tx.lead(session_id)?;
        let others: Vec<String> = names
            .iter()
            .filter(|(b, _)| *b != me)
            .map(|(b, n)| {
                if Some(*b) == lead {
                    format!("{n} (lead)")
                } else {
                    n.clone()
                }
            })
            .collect();
        let text = match session.kind {
            SessionKind::Direct => return Ok(None),
            SessionKind::Group => {
                let mut t = format!(
                    "You are in the group \"{}\" with the person and these Bots: {}.",
                    session.title,
                    if others.is_empty() { "nobody else".into() } else { others.join(", ") }
                );
                if lead == Some(me) {
                    t.push_str(" You lead it: lines nobody is named in come to you.");
                }
                t.push_str(
                    " Lines come to you labelled with who said them. A line reaches a Bot only when \
                     it names it: write @Name (or @everyone); a Bot on the roster but not here joins \
                     when named. Naming nobody wakes nobody. Do not answer a bare thanks or \
                     acknowledgement with another one.",
                );
                t
            }
            SessionKind::BotDirect => {
                let origin = match session.origin_session_id {
                    Some(o) => format!(" It was opened from \"{}\".", tx.session(o)?.title),
                    None => String::new(),
                };
                format!(
                    "This is your direct conversation with {}; the person can read it but not \
                     write here.{origin} Every line here reaches the other side.",
                    others.join(", ")
                )
            }
        };
        // The situation is labelled as the lines are, so the Bot reads one voice for the app.
        Ok(Some(labelled(&session, "Troupe", &text)))
    })
}

impl ContextContributor for ConversationSituation {
    fn name(&self) -> &str {
        "conversation"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match situation(thread, store) {
            Ok(Some(text)) => out.situation.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "the conversation's situation could not be read")
            }
        }
    }
}

pub struct Membership;

impl AdmissionCheck for Membership {
    fn name(&self) -> &str {
        "membership"
    }

    fn check(&self, ctx: &AdmissionContext<'_>) -> Admission {
        let found = ctx.store.read(|tx| {
            let Some((session, bot)) = tx.thread_session(ctx.thread.id)? else {
                return Ok(None);
            };
            let present = tx.session(session)?.bot_ids.contains(&bot);
            let archived = tx.bot(bot)?.archived;
            Ok(Some((session, bot, present, archived)))
        });
        match found {
            Ok(None) | Ok(Some((_, _, true, false))) => Admission::Admit,
            Ok(Some((session, bot, _, true))) => Admission::Refuse(format!(
                "bot {bot} is archived; it takes no turn in {session}"
            )),
            Ok(Some((session, bot, false, _))) => Admission::Refuse(format!(
                "bot {bot} has left conversation {session}; it takes no turn there"
            )),
            Err(e) => Admission::Refuse(format!("reading the thread's conversation failed: {e}")),
        }
    }
}
