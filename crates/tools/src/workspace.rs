//! Confinement of model-given paths to a workspace directory.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::ToolError;

/// A directory the tools may touch. Every model-given path is resolved
/// against it and refused if it would leave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// Canonical (symlink-free, absolute) root, so prefix checks against
    /// other canonical paths are meaningful.
    root: PathBuf,
}

impl Workspace {
    /// Open an existing directory as a workspace.
    pub fn open(root: impl AsRef<Path>) -> Result<Workspace, ToolError> {
        let given = root.as_ref();
        let root = fs::canonicalize(given).map_err(|source| ToolError::RootUnavailable {
            root: given.to_path_buf(),
            source,
        })?;
        if !root.is_dir() {
            return Err(ToolError::RootNotDirectory { root });
        }
        Ok(Workspace { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolve a model-given relative path to a path under the root.
    ///
    /// `..` is applied lexically (so `a/../b` is `b` even if `a` is a
    /// symlink), then the deepest part of the result that exists on disk is
    /// canonicalized: if symlinks take it outside the root, the path is
    /// refused. A final component that is a symlink is checked through its
    /// target. The returned path is `root/<normalized>`; for a symlink that
    /// is the link itself, not its target.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, ToolError> {
        if rel.trim().is_empty() {
            return Err(ToolError::EmptyPath);
        }
        if rel.contains('\0') {
            return Err(ToolError::Refused(format!(
                "path '{}' contains a NUL byte",
                rel.escape_debug()
            )));
        }
        let parts = normalize(rel)?;
        let mut joined = self.root.clone();
        joined.extend(&parts);

        // Walk up from the full path to the deepest component that exists;
        // the root itself always exists, so the loop always decides.
        for depth in (0..=parts.len()).rev() {
            let mut candidate = self.root.clone();
            candidate.extend(&parts[..depth]);
            let meta = match fs::symlink_metadata(&candidate) {
                Ok(meta) => meta,
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(ToolError::io("access", rel, e)),
            };
            match fs::canonicalize(&candidate) {
                Ok(real) if real.starts_with(&self.root) => return Ok(joined),
                Ok(_) => {
                    return Err(ToolError::SymlinkEscape {
                        path: rel.to_string(),
                    });
                }
                Err(_) if meta.file_type().is_symlink() => {
                    self.check_dangling_link(&candidate, rel)?;
                    return Ok(joined);
                }
                Err(e) => return Err(ToolError::io("resolve", rel, e)),
            }
        }
        Ok(joined)
    }

    /// A symlink whose target does not exist cannot be canonicalized; judge
    /// it by where its target would be, so creating a file through it cannot
    /// land outside the root.
    fn check_dangling_link(&self, link: &Path, rel: &str) -> Result<(), ToolError> {
        let target = fs::read_link(link).map_err(|e| ToolError::io("read link", rel, e))?;
        // The link's parent exists (it holds the link) and was reached from
        // the root, so canonicalizing it is meaningful.
        let parent = link.parent().unwrap_or(&self.root);
        let base = fs::canonicalize(parent).map_err(|e| ToolError::io("resolve", rel, e))?;
        let mut lexical = PathBuf::new();
        for c in base.join(target).components() {
            match c {
                Component::ParentDir => {
                    lexical.pop();
                }
                Component::CurDir => {}
                other => lexical.push(other),
            }
        }
        if lexical.starts_with(&self.root) {
            Ok(())
        } else {
            Err(ToolError::SymlinkEscape {
                path: rel.to_string(),
            })
        }
    }
}

/// Lexically normalize a relative path into plain components, refusing
/// absolute paths and `..` that climbs above the root.
fn normalize(rel: &str) -> Result<Vec<&OsStr>, ToolError> {
    let path = Path::new(rel);
    if path.is_absolute() {
        return Err(ToolError::AbsolutePath {
            path: rel.to_string(),
        });
    }
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => parts.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(ToolError::OutsideWorkspace {
                        path: rel.to_string(),
                    });
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(ToolError::AbsolutePath {
                    path: rel.to_string(),
                });
            }
        }
    }
    Ok(parts)
}

/// "Does not exist" for the ancestor walk: missing, or a path through a
/// regular file (ENOTDIR).
fn is_missing(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_applies_dotdot_lexically() {
        assert_eq!(normalize("a/../b").unwrap(), vec![OsStr::new("b")]);
        assert_eq!(normalize("./a/./b/").unwrap().len(), 2);
        assert!(normalize(".").unwrap().is_empty());
        assert!(matches!(
            normalize("a/../../x"),
            Err(ToolError::OutsideWorkspace { .. })
        ));
        assert!(matches!(
            normalize("/etc"),
            Err(ToolError::AbsolutePath { .. })
        ));
    }
}
