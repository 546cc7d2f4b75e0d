//! Who the runtime boss is, beyond the settings: its name, kept as the shared-memory row
//! `self`/`boss_name` (`PUT /v1/boss/name`), and what of the memory and the projects the
//! briefing lists.

use crate::{WorkflowError, Workflows};
use troupe_core::runtime_boss::{NAME_CATEGORY, NAME_TITLE, validate_name};
use troupe_store::{StoreError, Tx};

/// The boss's name, if one is kept.
pub fn boss_name(tx: &Tx<'_>) -> Result<Option<String>, StoreError> {
    Ok(tx
        .memory_by_title(NAME_CATEGORY, NAME_TITLE)?
        .map(|m| m.body.trim().to_string())
        .filter(|n| !n.is_empty()))
}

/// Up to `limit` memory rows, one line each (`[category] title: body`, the body cut short).
pub fn memory_rows(tx: &Tx<'_>, limit: usize) -> Result<Vec<String>, StoreError> {
    Ok(tx
        .memory_list(limit as u32)?
        .into_iter()
        .map(|m| format!("[{}] {}: {}", m.category, m.title, short(&m.body, 120)))
        .collect())
}

/// Up to `limit` registered projects, one line each.
pub fn projects(tx: &Tx<'_>, limit: usize) -> Result<Vec<String>, StoreError> {
    Ok(tx
        .projects(limit as u32)?
        .into_iter()
        .map(|p| {
            let boss = p
                .session_id
                .map_or(String::new(), |s| format!(", project boss session {}", s.0));
            format!("{} \"{}\"{boss}", p.directory, short(&p.title, 80))
        })
        .collect())
}

fn short(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.trim();
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max - 1).collect::<String>())
    } else {
        flat.to_string()
    }
}

impl Workflows {
    /// Keep the boss's name (1..=64 characters, one line): the `self`/`boss_name` memory row.
    pub fn set_boss_name(&self, name: &str) -> Result<String, WorkflowError> {
        let name = validate_name(name).map_err(|e| WorkflowError::invalid(e.to_string()))?;
        self.store().write(|tx| {
            tx.memory_upsert(NAME_CATEGORY, NAME_TITLE, &name)
                .map(|_| ())
        })?;
        Ok(name)
    }

    /// The boss's name, if one is kept.
    pub fn boss_name(&self) -> Result<Option<String>, WorkflowError> {
        Ok(self.store().read(|tx| boss_name(tx))?)
    }
}
