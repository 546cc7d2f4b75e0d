//! A folder the person names for a conversation's Bots to work in (their project's checkout,
//! say), checked before anything is written: it must already exist on the daemon's machine.

use std::path::{Path, PathBuf};

/// Longer than any path a file system takes; a longer one is a mistake, not a folder.
const MAX_PATH_CHARS: usize = 4096;

/// The person's home, for a `~/…` path.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The directory `raw` names, resolved (symbolic links and `..` followed), or why it cannot be
/// a workspace. `~` and `~/…` are read from `home`; anything else must be absolute, since the
/// daemon's own working directory means nothing to the person.
pub(crate) fn chosen_workspace(raw: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    let text = raw.trim();
    if text.is_empty() {
        return Err("is empty; leave it out for a folder of the conversation's own".into());
    }
    if text.chars().count() > MAX_PATH_CHARS {
        return Err(format!("is longer than {MAX_PATH_CHARS} characters"));
    }
    let path = match text.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let home = home.ok_or("cannot read `~`: the daemon has no HOME")?;
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(text),
    };
    if !path.is_absolute() {
        return Err(format!(
            "{text:?} is not an absolute path; name the folder from the root (/home/you/project) or from ~"
        ));
    }
    let meta = std::fs::metadata(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{} does not exist", path.display()),
        _ => format!("cannot read {}: {e}", path.display()),
    })?;
    if !meta.is_dir() {
        return Err(format!("{} is a file, not a folder", path.display()));
    }
    std::fs::canonicalize(&path).map_err(|e| format!("cannot resolve {}: {e}", path.display()))
}

/// Refuses a folder that holds the daemon's own data (its database and token) or lies inside it
/// but outside the conversations' folders: the Bots' file tools reach everything under their
/// folder, and a Bot that edits the database file breaks every conversation. (The shell is not
/// confined to the folder; this keeps a slip of the file tools away from the daemon's files.)
pub(crate) fn outside_daemon_data(chosen: &Path, workspaces: &Path) -> Result<(), String> {
    let Some(data) = workspaces.parent() else {
        return Ok(());
    };
    let (Ok(data), workspaces) = (
        std::fs::canonicalize(data),
        std::fs::canonicalize(workspaces).unwrap_or_else(|_| workspaces.to_path_buf()),
    ) else {
        return Ok(());
    };
    if chosen.starts_with(&workspaces) {
        return Ok(());
    }
    if data.starts_with(chosen) || chosen.starts_with(&data) {
        return Err(format!(
            "{} holds the daemon's own data ({}: its database and token); name a folder \
             outside it",
            chosen.display(),
            data.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_folder_is_taken_resolved() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("proj")).unwrap();
        let raw = format!("  {}/proj/../proj  ", dir.path().display());
        let got = chosen_workspace(&raw, None).unwrap();
        assert_eq!(got, std::fs::canonicalize(dir.path().join("proj")).unwrap());
    }

    #[test]
    fn a_tilde_path_is_read_from_home() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("proj")).unwrap();
        let want = std::fs::canonicalize(home.path().join("proj")).unwrap();
        assert_eq!(chosen_workspace("~/proj", Some(home.path())).unwrap(), want);
        let err = chosen_workspace("~/proj", None).unwrap_err();
        assert!(err.contains("no HOME"), "{err}");
    }

    #[test]
    fn a_folder_holding_the_daemon_data_is_refused_but_a_conversation_folder_is_not() {
        let home = tempfile::tempdir().unwrap();
        let data = home.path().join(".local/share/troupe");
        let workspaces = data.join("workspaces");
        std::fs::create_dir_all(workspaces.join("session-1")).unwrap();
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap();
        for held in [home.path().to_path_buf(), data.clone()] {
            let err = outside_daemon_data(&canon(&held), &workspaces).unwrap_err();
            assert!(err.contains("daemon's own data"), "{err}");
        }
        let inside = data.join("mcp");
        std::fs::create_dir_all(&inside).unwrap();
        assert!(outside_daemon_data(&canon(&inside), &workspaces).is_err());
        outside_daemon_data(&canon(&workspaces.join("session-1")), &workspaces).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        outside_daemon_data(&canon(elsewhere.path()), &workspaces).unwrap();
    }

    #[test]
    fn what_is_not_an_existing_absolute_folder_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let cases = [
            ("   ".to_string(), "is empty"),
            ("proj".to_string(), "not an absolute path"),
            ("~someone/proj".to_string(), "not an absolute path"),
            (
                format!("{}/missing", dir.path().display()),
                "does not exist",
            ),
            (file.display().to_string(), "is a file, not a folder"),
            (format!("/{}", "a".repeat(5000)), "longer than 4096"),
        ];
        for (raw, want) in cases {
            let err = chosen_workspace(&raw, None).unwrap_err();
            assert!(err.contains(want), "{raw:?}: {err}");
        }
    }
}
