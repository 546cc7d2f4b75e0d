//! A ticket's folder (T24): `NN-<title cut>/` under the job's folder, made when the ticket
//! opens, with `ticket.md` — the ticket's description and Done when, the job's Done when and
//! the job's rules (B §1.1) — written once then and never rewritten (the folder and its
//! description are fixed at creation).

use std::io::Write;
use std::path::{Path, PathBuf};
use troupe_core::ticket::ticket_folder_name;
use troupe_store::{PlanRecord, StoreError, TicketRecord};

/// The absolute folder ticket `number` titled `title` gets under the job's folder.
pub fn folder_for(plan_folder: &str, number: i64, title: &str) -> String {
    let n = u32::try_from(number).unwrap_or(u32::MAX);
    Path::new(plan_folder)
        .join(ticket_folder_name(n, title))
        .display()
        .to_string()
}

/// A ticket's folder on disk: stored absolute, or (older rows) a name under the job's folder.
pub fn ticket_dir(plan_folder: &str, t: &TicketRecord) -> PathBuf {
    let f = Path::new(&t.folder);
    if f.is_absolute() {
        f.to_path_buf()
    } else {
        Path::new(plan_folder).join(f)
    }
}

/// The folder's name (`01-Poster`), as the Bots and the guard name it.
pub fn folder_name(t: &TicketRecord) -> String {
    Path::new(&t.folder)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| t.folder.clone())
}

/// What `ticket.md` says.
pub fn ticket_md(t: &TicketRecord, plan: &PlanRecord) -> String {
    let mut out = format!("# #{:02} {}\n", t.number, t.title);
    let section = |out: &mut String, head: &str, body: &str| {
        if !body.trim().is_empty() {
            out.push_str(&format!("\n## {head}\n\n{}\n", body.trim()));
        }
    };
    section(&mut out, "Description", &t.description);
    section(&mut out, "Done when (this ticket)", &t.done_when);
    section(&mut out, "Done when (the job)", &plan.spec.done_when);
    section(&mut out, "Rules (the job)", &plan.spec.rules);
    out
}

/// Make the ticket's folder and write its `ticket.md` if it has none yet.
pub fn make_folder(t: &TicketRecord, plan: &PlanRecord) -> Result<PathBuf, StoreError> {
    let dir = ticket_dir(&plan.folder, t);
    std::fs::create_dir_all(&dir).map_err(|e| {
        StoreError::Invalid(format!(
            "cannot create ticket #{:02}'s folder {}: {e}",
            t.number,
            dir.display()
        ))
    })?;
    let md = dir.join("ticket.md");
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&md)
    {
        Ok(mut f) => f
            .write_all(ticket_md(t, plan).as_bytes())
            .map_err(|e| StoreError::Invalid(format!("cannot write {}: {e}", md.display())))?,
        // Fixed at creation: one already there stays as it was.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(StoreError::Invalid(format!(
                "cannot write {}: {e}",
                md.display()
            )));
        }
    }
    Ok(dir)
}
