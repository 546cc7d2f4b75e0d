//! One kernel thread per Bot × conversation (interim: Collaboration II binds turns to work
//! items instead). A Bot's thread in a conversation is made when it joins, in the same
//! transaction; every Bot of a conversation works in the conversation's workspace.

use crate::bots::binding_for;
use std::path::{Path, PathBuf};
use troupe_core::conversation::{Bot, Session};
use troupe_core::thread::Interaction;
use troupe_core::{SessionId, ThreadId};
use troupe_store::{CONVERSATION, NewThread, StoreError, Tx};

/// The directory a conversation's Bots work in: the one its first Bot was given (a folder the
/// person named when opening it, or its own under the data dir), else its own; a Bot↔Bot direct
/// shares its origin's.
pub(crate) fn workspace_of(
    tx: &Tx<'_>,
    workspaces: &Path,
    session: &Session,
) -> Result<PathBuf, StoreError> {
    let home = session.origin_session_id.unwrap_or(session.id);
    let first = tx
        .session_threads_by_bot(home, CONVERSATION)?
        .into_values()
        .min();
    Ok(match first {
        Some(t) => PathBuf::from(tx.thread(t)?.workspace),
        None => own_workspace(workspaces, home),
    })
}

/// A conversation's own directory under the data dir's workspaces.
pub(crate) fn own_workspace(workspaces: &Path, home: SessionId) -> PathBuf {
    workspaces.join(format!("session-{}", home.0))
}

/// The Bot's thread in the conversation, made (in `dir`, or the conversation's workspace) if
/// it has none yet.
pub(crate) fn ensure_thread(
    tx: &mut Tx<'_>,
    workspaces: &Path,
    session: &Session,
    bot: &Bot,
    dir: Option<&Path>,
) -> Result<ThreadId, StoreError> {
    if let Some(t) = tx.session_thread(session.id, bot.id, CONVERSATION)? {
        return Ok(t);
    }
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => workspace_of(tx, workspaces, session)?,
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        StoreError::Invalid(format!("cannot create workspace {}: {e}", dir.display()))
    })?;
    let thread = tx.create_thread(&NewThread {
        workspace_root: None,
        parent_id: None,
        title: session.title.clone(),
        agent: binding_for(bot),
        workspace: dir.display().to_string(),
        interaction: Interaction::Interactive,
    })?;
    tx.bind_thread(session.id, bot.id, thread.id, CONVERSATION)?;
    Ok(thread.id)
}

/// A worker conversation's thread: the child of `parent`, unattended (no person watches it, so
/// it is never latched), working in `dir`.
pub(crate) fn create_child_thread(
    tx: &mut Tx<'_>,
    session: &Session,
    bot: &Bot,
    dir: &Path,
    parent: ThreadId,
) -> Result<ThreadId, StoreError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        StoreError::Invalid(format!("cannot create workspace {}: {e}", dir.display()))
    })?;
    let thread = tx.create_thread(&NewThread {
        workspace_root: None,
        parent_id: Some(parent),
        title: session.title.clone(),
        agent: binding_for(bot),
        workspace: dir.display().to_string(),
        interaction: Interaction::Unattended,
    })?;
    tx.bind_thread(session.id, bot.id, thread.id, CONVERSATION)?;
    Ok(thread.id)
}

/// The Bot's thread in the conversation, if it has one.
pub(crate) fn thread_of(
    tx: &Tx<'_>,
    session: SessionId,
    bot: troupe_core::BotId,
) -> Result<Option<ThreadId>, StoreError> {
    tx.session_thread(session, bot, CONVERSATION)
}
