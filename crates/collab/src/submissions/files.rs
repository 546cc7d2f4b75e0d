//! The files of a hand-over (§4.3): where a named path may lie, how it is recorded, and its
//! content hash, read in fixed chunks so a file of any size hashes in flat memory.

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use troupe_store::TicketRecord;

/// Bytes read at a time while hashing.
const CHUNK: usize = 1 << 20;

/// The SHA-256 (lower-case hex) and size of a file, streamed.
pub fn sha256_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut size = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    Ok((hex, size))
}

/// A ticket's folder as stored: absolute, or a name under the job's folder.
pub fn ticket_dir(plan_folder: &str, t: &TicketRecord) -> PathBuf {
    let f = Path::new(&t.folder);
    if f.is_absolute() {
        f.to_path_buf()
    } else {
        Path::new(plan_folder).join(f)
    }
}

/// A ticket's folder relative to the job's folder (`01-poster`), as paths are recorded.
pub fn ticket_folder_name(plan_folder: &str, t: &TicketRecord) -> String {
    let dir = ticket_dir(plan_folder, t);
    dir.strip_prefix(plan_folder)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| dir.to_string_lossy().into_owned())
}

fn real(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Where a hand-over's files may lie.
pub struct Allowed {
    job: PathBuf,
    job_real: PathBuf,
    assets_real: PathBuf,
    workspace: PathBuf,
    work_dir: PathBuf,
    /// Other tickets' folders (real path, `#NN`), files under which are not this ticket's.
    others: Vec<(PathBuf, String)>,
}

/// A named file, resolved and allowed: its real path and the path recorded for it (relative
/// to the job's folder; a shared asset keeps its full path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub real: PathBuf,
    pub recorded: String,
}

impl Allowed {
    pub fn new(
        plan_folder: &str,
        work_dir: &str,
        ticket: &TicketRecord,
        tickets: &[TicketRecord],
    ) -> Allowed {
        let job = PathBuf::from(plan_folder);
        let workspace = crate::checks::plan_workspace(plan_folder);
        Allowed {
            job_real: real(&job),
            assets_real: real(&workspace.join("assets")),
            others: tickets
                .iter()
                .filter(|t| t.id != ticket.id)
                .map(|t| {
                    (
                        real(&ticket_dir(plan_folder, t)),
                        format!("#{:02}", t.number),
                    )
                })
                .collect(),
            job,
            workspace,
            work_dir: PathBuf::from(work_dir),
        }
    }

    /// Resolve `raw` (relative to the Bot's work dir, else the workspace) and say whether it
    /// may be handed over: `outside_allowed_paths` names the path and why.
    pub fn resolve(&self, raw: &str) -> Result<Named, String> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err("artifacts: a path is empty".into());
        }
        let given = Path::new(trimmed);
        let candidates: Vec<PathBuf> = if given.is_absolute() {
            vec![given.to_path_buf()]
        } else {
            vec![
                self.work_dir.join(given),
                self.job.join(given),
                self.workspace.join(given),
            ]
        };
        let Some(found) = candidates.iter().find(|c| c.exists()) else {
            return Err(format!(
                "not_found: {trimmed} does not exist (paths are relative to your work folder \
                 or the workspace)"
            ));
        };
        let real = real(found);
        if real.is_dir() {
            return Err(format!(
                "not_a_file: {trimmed} is a folder; name the files in it you hand over"
            ));
        }
        if real.components().any(
            |c| matches!(c, Component::Normal(n) if n.to_string_lossy().starts_with(".troupe")),
        ) {
            return Err(format!(
                "outside_allowed_paths: {trimmed} is in one of the app's own folders; only \
                 your work can be handed over"
            ));
        }
        if let Ok(rel) = real.strip_prefix(&self.job_real) {
            if let Some((_, number)) = self.others.iter().find(|(dir, _)| real.starts_with(dir)) {
                return Err(format!(
                    "outside_allowed_paths: {trimmed} is in ticket {number}'s folder; a \
                     hand-over never takes another ticket's files"
                ));
            }
            return Ok(Named {
                recorded: rel.to_string_lossy().into_owned(),
                real,
            });
        }
        if real.starts_with(&self.assets_real) {
            return Ok(Named {
                recorded: real.to_string_lossy().into_owned(),
                real,
            });
        }
        Err(format!(
            "outside_allowed_paths: {trimmed} is outside this job's folder ({}) and the \
             workspace's shared assets/ folder",
            self.job.display()
        ))
    }
}

/// Whether `recorded` (a path relative to the job's folder) lies in the ticket folder `name`.
pub fn in_folder(recorded: &str, name: &str) -> bool {
    recorded == name || recorded.starts_with(&format!("{name}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_hash_matches_the_known_digest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "abc").unwrap();
        let (h, n) = sha256_file(&p).unwrap();
        assert_eq!(
            h,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(n, 3);
        // Past one chunk the digest is the one-shot digest.
        let big = vec![7u8; CHUNK * 2 + 5];
        std::fs::write(&p, &big).unwrap();
        let (h, n) = sha256_file(&p).unwrap();
        let whole: String = Sha256::digest(&big)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!((h, n), (whole, big.len() as u64));
    }
}
