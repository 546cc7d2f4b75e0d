//! Confinement of model-given paths to a workspace directory.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::ToolError;

/// A directory the tools may touch, and the working folder inside it that
/// relative paths start from (the root itself unless a thread works in a
/// folder of its own, as a job's thread does in its job's folder). Every
/// model-given path is resolved and refused if it would leave the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// Canonical (symlink-free, absolute) root, so prefix checks against
    /// other canonical paths are meaningful.
    root: PathBuf,
    /// The working folder's components below the root (empty: the root).
    base: Vec<OsString>,
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
        Ok(Workspace {
            root,
            base: Vec::new(),
        })
    }

    /// Open `root` with `base`, an existing directory under it, as the working folder.
    pub fn open_in(root: impl AsRef<Path>, base: impl AsRef<Path>) -> Result<Workspace, ToolError> {
        let ws = Workspace::open(root)?;
        let given = base.as_ref();
        let real = fs::canonicalize(given).map_err(|source| ToolError::RootUnavailable {
            root: given.to_path_buf(),
            source,
        })?;
        if !real.is_dir() {
            return Err(ToolError::RootNotDirectory { root: real });
        }
        let Ok(below) = real.strip_prefix(&ws.root) else {
            return Err(ToolError::Refused(format!(
                "working folder '{}' is not inside the workspace root '{}'",
                real.display(),
                ws.root.display()
            )));
        };
        let base = below.iter().map(OsStr::to_os_string).collect();
        Ok(Workspace { base, ..ws })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The working folder: where relative paths start and a command runs by default.
    pub fn base(&self) -> PathBuf {
        let mut dir = self.root.clone();
        dir.extend(&self.base);
        dir
    }

    /// Resolve a model-given path to a path under the root: a relative path
    /// from the working folder (`..` may climb from it up to the root, not
    /// above), an absolute one only if it lies under the root.
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
        let parts = self.normalize(rel)?;
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

    /// `e`, with where to find the file when a relative path missed in a working folder below
    /// the root but names something at the root: a Bot working on a job, told to read the
    /// project's `stats.py`, asks for it where it works.
    pub(crate) fn hint_missing(&self, e: ToolError) -> ToolError {
        let ToolError::Io { path, source, .. } = &e else {
            return e;
        };
        if self.base.is_empty() || source.kind() != io::ErrorKind::NotFound {
            return e;
        }
        let at_root = Workspace {
            root: self.root.clone(),
            base: Vec::new(),
        };
        match at_root.resolve(path) {
            Ok(found) if Path::new(path).is_relative() && fs::symlink_metadata(&found).is_ok() => {
                let up = "../".repeat(self.base.len());
                ToolError::Refused(format!(
                    "{e}; your working folder is {}, and the workspace's top folder has \
                     '{path}': from here that is '{up}{path}'",
                    self.base().display()
                ))
            }
            _ => e,
        }
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
        if lexical(&base.join(target)).starts_with(&self.root) {
            Ok(())
        } else {
            Err(ToolError::SymlinkEscape {
                path: rel.to_string(),
            })
        }
    }

    /// Lexically normalize a model-given path into plain components below
    /// the root, refusing an absolute path outside the root and `..` that
    /// climbs above it.
    fn normalize(&self, rel: &str) -> Result<Vec<OsString>, ToolError> {
        let path = Path::new(rel);
        if path.is_absolute() {
            return match lexical(path).strip_prefix(&self.root) {
                Ok(below) => Ok(below.iter().map(OsStr::to_os_string).collect()),
                Err(_) => Err(ToolError::AbsolutePath {
                    path: rel.to_string(),
                    root: self.root.clone(),
                }),
            };
        }
        let mut parts = self.base.clone();
        for c in path.components() {
            match c {
                Component::Normal(name) => parts.push(name.to_os_string()),
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
                        root: self.root.clone(),
                    });
                }
            }
        }
        Ok(parts)
    }
}

/// `path` with `.` and `..` applied by name, without touching the disk.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
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
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        assert_eq!(ws.normalize("a/../b").unwrap(), vec![OsString::from("b")]);
        assert_eq!(ws.normalize("./a/./b/").unwrap().len(), 2);
        assert!(ws.normalize(".").unwrap().is_empty());
        assert!(matches!(
            ws.normalize("a/../../x"),
            Err(ToolError::OutsideWorkspace { .. })
        ));
        assert!(matches!(
            ws.normalize("/etc"),
            Err(ToolError::AbsolutePath { .. })
        ));
    }

    #[test]
    fn lexical_applies_dot_and_parent_steps_by_name() {
        assert_eq!(
            lexical(Path::new("/s/step-1/parallel-1/response/../../x")),
            PathBuf::from("/s/step-1/x")
        );
        assert_eq!(lexical(Path::new("/s/./a")), PathBuf::from("/s/a"));
    }

    #[test]
    fn normalize_starts_from_the_working_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("jobs/1-x")).unwrap();
        let ws = Workspace::open_in(dir.path(), dir.path().join("jobs/1-x")).unwrap();
        assert_eq!(
            ws.normalize("a").unwrap(),
            ["jobs", "1-x", "a"].map(OsString::from).to_vec()
        );
        assert_eq!(ws.normalize("../..").unwrap(), Vec::<OsString>::new());
        assert!(matches!(
            ws.normalize("../../.."),
            Err(ToolError::OutsideWorkspace { .. })
        ));
    }
}
