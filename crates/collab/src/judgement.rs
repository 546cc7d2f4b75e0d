//! Judgements (JUD-1…3): in a group with no lead, a person's unaddressed line asks every
//! present Bot, at once, whether it joins. One tool-free call each, on the `judgement` role
//! when one is set, else on the Bot's own endpoint. Sitting out, junk, a failure or 20 s
//! without an answer all mean the Bot stays out; every raw answer is kept.

use crate::oneshot::call_text;
use crate::routing::deliver_judged;
use crate::{Collab, CollabError};
use std::time::Duration;
use troupe_core::reading::judgement::{JUDGEMENT_LINES, judgement_prompt, parse_judgement};
use troupe_core::thread::AgentBinding;
use troupe_core::{BotId, SessionMessageId, ThreadId};

pub const JUDGEMENT_TIMEOUT: Duration = Duration::from_secs(20);

impl Collab {
    /// Ask `bots` whether they join the line, store each answer, deliver it to those that do.
    pub(crate) async fn judge_line(
        &self,
        line: SessionMessageId,
        bots: Vec<BotId>,
    ) -> Result<Vec<ThreadId>, CollabError> {
        let (l, before) = self.store().read(|tx| {
            let l = tx.line(line)?;
            let before = tx.lines_before(l.session_id, line, JUDGEMENT_LINES as u32)?;
            Ok((l, before))
        })?;
        let mut context = Vec::new();
        for b in &before {
            context.push((self.speaker_name(b)?, b.body.clone()));
        }
        let stored = self.store().read(|tx| tx.judgements(line))?;
        let calls = bots.iter().map(|b| {
            let b = *b;
            let context = context.clone();
            let body = l.body.clone();
            let known = stored.iter().find(|(x, _)| *x == b).map(|(_, j)| *j);
            async move {
                // A judgement made before a restart is not asked again.
                if let Some(j) = known {
                    return Ok::<_, CollabError>((b, j.unwrap_or(false)));
                }
                let bot = self.bot(b)?;
                let agent = match self.roles().get("judgement") {
                    Some(_) => AgentBinding {
                        name: format!("judgement for {}", bot.name),
                        system_prompt: String::new(),
                        role: "judgement".into(),
                        endpoint: None,
                    },
                    None => crate::bots::binding_for(&bot),
                };
                let prompt = judgement_prompt(&bot.name, &bot.persona, &context, &body);
                let answer = call_text(self.roles(), &agent, prompt, JUDGEMENT_TIMEOUT).await;
                let (joined, failure, raw) = match answer {
                    Ok((text, _model)) => match parse_judgement(&text) {
                        Ok(j) => (Some(j), None, Some(text)),
                        Err(e) => (None, Some(e), Some(text)),
                    },
                    Err(e) => (None, Some(e), None),
                };
                self.store().write(|tx| {
                    tx.save_judgement(line, b, joined, failure.as_deref(), raw.as_deref())
                })?;
                Ok((b, joined.unwrap_or(false)))
            }
        });
        let answers = futures::future::join_all(calls).await;
        let mut joined = Vec::new();
        let mut sat_out = Vec::new();
        for a in answers {
            let (b, j) = a?;
            if j { joined.push(b) } else { sat_out.push(b) }
        }
        let dir = self.workspace_of_line(&l)?;
        let woke = self.store().write(|tx| {
            let woke = deliver_judged(tx, &dir, &l, &joined, &sat_out)?;
            tx.set_line_routing(line, "routed")?;
            Ok(woke)
        })?;
        Ok(woke)
    }
}
