//! What every runtime boss turn is told about itself (digest §8.4, RB-8): `<boss-persona>` and
//! `<boss-report-style>` rendered from the settings and the name as they are now, and the
//! discipline block, whatever the persona. Channel routing adds `<boss-reply-target>`
//! (`reply_target`); this contributor adds nothing to a session that is not a runtime boss.

use super::identity;
use crate::slot::WorkflowSlot;
use troupe_core::boss::BossRole;
use troupe_core::runtime_boss::persona::{self, DISCIPLINE, Identity};
use troupe_core::thread::Thread;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{Store, StoreError, Tx};

pub const NAME: &str = "runtime_boss_persona";

pub struct RuntimeBossPersona;

/// The three blocks for `thread`, if it is a runtime boss session's boss-role thread.
pub fn blocks(tx: &Tx<'_>, thread: &Thread) -> Result<Option<String>, StoreError> {
    let current = tx.thread(thread.id)?.workflow;
    let boss_role = matches!(
        WorkflowSlot::of(current.as_ref()),
        Some(WorkflowSlot::Boss(b)) if b.role == BossRole::Boss
    );
    if !boss_role {
        return Ok(None);
    }
    let Some((session, _)) = tx.thread_session(thread.id)? else {
        return Ok(None);
    };
    if !tx.is_runtime_boss_session(session)? {
        return Ok(None);
    }
    let settings = tx.runtime_settings()?;
    let name = identity::boss_name(tx)?;
    let id = Identity {
        persona: settings.persona.as_ref(),
        identity_text: settings.identity_text.as_deref(),
        name: name.as_deref(),
    };
    Ok(Some(format!(
        "{}\n{}\n{DISCIPLINE}",
        persona::render_persona(&id),
        persona::render_report_style(id.persona)
    )))
}

impl ContextContributor for RuntimeBossPersona {
    fn name(&self) -> &str {
        NAME
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match store.read(|tx| blocks(tx, thread)) {
            Ok(Some(text)) => out.system.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "runtime boss persona not read");
                // Without the store there is no persona to give, but a boss-role turn keeps
                // its discipline (RB-8).
                if matches!(
                    WorkflowSlot::of(thread.workflow.as_ref()),
                    Some(WorkflowSlot::Boss(b)) if b.role == BossRole::Boss
                ) {
                    out.system.push(DISCIPLINE.to_string());
                }
            }
        }
    }
}
