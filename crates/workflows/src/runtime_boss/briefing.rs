//! The world-overview briefing (digest §8.2, RB-2): one steer per runtime boss session with
//! its identity and bounded lists of what exists — sessions, projects, agenda items, memory
//! rows, at most 50 of each. It is keyed `boss-identity:<session>`, so it reaches the session
//! once; a persona (or name) change is briefed once more under `boss-identity:<session>:v<N>`.
//! A steer does not start a turn: it joins the session's next one.

use super::ensure::boss_thread;
use super::identity;
use crate::{WorkflowError, Workflows};
use troupe_core::SessionId;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::runtime_boss::persona::{self, Identity};
use troupe_core::time::iso_utc;
use troupe_store::{AgendaStatus, StoreError, Tx};

/// At most this many of each kind of thing are listed.
pub const LIST_LIMIT: usize = 50;
/// The origin detail of a briefing steer.
pub const ORIGIN: &str = "boss_identity";

/// The key of a session's `n`-th briefing (1-based): the first is the stable key.
pub fn key(session: SessionId, n: i64) -> String {
    if n <= 1 {
        format!("boss-identity:{}", session.0)
    } else {
        format!("boss-identity:{}:v{n}", session.0)
    }
}

/// Brief `session` unless it was briefed with the identity it has now. Answers whether a
/// briefing was queued. The check, the steer and the record share one write.
pub fn brief(wf: &Workflows, session: SessionId) -> Result<bool, WorkflowError> {
    Ok(wf.store().write(|tx| {
        let Some(row) = tx.runtime_boss_row(session)? else {
            return Err(StoreError::not_found("runtime boss session", session));
        };
        let settings = tx.runtime_settings()?;
        let name = identity::boss_name(tx)?;
        let id = Identity {
            persona: settings.persona.as_ref(),
            identity_text: settings.identity_text.as_deref(),
            name: name.as_deref(),
        };
        let fingerprint = persona::fingerprint(&id);
        if row.briefed_identity.as_deref() == Some(fingerprint.as_str()) {
            return Ok(false);
        }
        let text = overview(tx, session, &id)?;
        let thread = boss_thread(tx, session)?;
        tx.deliver(
            thread,
            &Delivery {
                mode: InboxMode::Steer,
                priority: Priority::OWN_TIMER,
                origin: Origin::System(ORIGIN.into()),
                text,
                visible: true,
                delivery_key: Some(key(session, row.briefings + 1)),
                order_key: None,
                defers_calls: false,
            },
        )?;
        tx.record_runtime_boss_briefing(session, &fingerprint)?;
        Ok(true)
    })?)
}

/// The briefing's text: the identity, then the lists.
fn overview(tx: &Tx<'_>, me: SessionId, id: &Identity<'_>) -> Result<String, StoreError> {
    let mut out = String::from(
        "[Runtime Boss briefing] Who you are, and the world as it stands now. Lists show at \
most 50 of each; use session_list, scope_list, agenda_list and memory_search for the rest.\n\n",
    );
    out.push_str(&persona::render_persona(id));
    out.push('\n');
    out.push_str(&persona::render_report_style(id.persona));
    out.push_str("\n\n## Sessions\n");
    let sessions: Vec<_> = tx
        .sessions(LIST_LIMIT as u32 + 1)?
        .into_iter()
        .filter(|s| s.id != me)
        .take(LIST_LIMIT)
        .collect();
    if sessions.is_empty() {
        out.push_str("(none)\n");
    }
    for s in sessions {
        let bots: Vec<String> = s
            .bot_ids
            .iter()
            .filter_map(|b| tx.bot(*b).ok().map(|b| b.name))
            .collect();
        out.push_str(&format!(
            "- session {} \"{}\" ({}, with {})\n",
            s.id.0,
            one_line(&s.title),
            s.kind.as_str(),
            if bots.is_empty() {
                "no Bot".to_string()
            } else {
                bots.join(", ")
            }
        ));
    }
    out.push_str("\n## Projects\n");
    let projects = identity::projects(tx, LIST_LIMIT)?;
    if projects.is_empty() {
        out.push_str("(none)\n");
    }
    for p in projects {
        out.push_str(&format!("- {p}\n"));
    }
    out.push_str("\n## Agenda\n");
    let agenda = tx.agenda_items(None, Some(AgendaStatus::Active), LIST_LIMIT as u32)?;
    if agenda.is_empty() {
        out.push_str("(none)\n");
    }
    for a in agenda {
        let due = a
            .next_run_at
            .map(iso_utc)
            .unwrap_or_else(|| "not due".into());
        let title = if a.title.is_empty() {
            one_line(&a.payload)
        } else {
            one_line(&a.title)
        };
        out.push_str(&format!(
            "- agenda {} \"{title}\" ({}, next {due}, session {})\n",
            a.id,
            a.trigger_kind,
            a.session_id.map_or("none".to_string(), |s| s.0.to_string())
        ));
    }
    out.push_str("\n## Memory\n");
    let memory = identity::memory_rows(tx, LIST_LIMIT)?;
    if memory.is_empty() {
        out.push_str("(none)\n");
    }
    for m in memory {
        out.push_str(&format!("- {m}\n"));
    }
    Ok(out)
}

/// A title on one line, cut to 80 characters.
fn one_line(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.trim();
    if flat.chars().count() > 80 {
        format!("{}…", flat.chars().take(79).collect::<String>())
    } else {
        flat.to_string()
    }
}
