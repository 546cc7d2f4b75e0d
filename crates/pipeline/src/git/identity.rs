//! Who Troupe's commits are by. The person's identity when their git configuration has one
//! (`user.name` and `user.email` both answer in the repository); otherwise a fixed Troupe
//! identity, given to that one git command with `-c` so nobody's configuration is written. A
//! fresh machine with no git identity can thus still run a pipeline.

use serde::{Deserialize, Serialize};

use super::{Git, GitError};

/// The name Troupe commits under when git has no identity.
pub const TROUPE_NAME: &str = "Troupe";
/// The email Troupe commits under when git has no identity (`.invalid` never resolves).
pub const TROUPE_EMAIL: &str = "troupe@localhost.invalid";

/// Whose identity a commit carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdentityOrigin {
    /// The person's git configuration.
    Person,
    /// Git had none: [`TROUPE_NAME`] and [`TROUPE_EMAIL`].
    Troupe,
}

/// The author of a commit Troupe made, as the commit records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Identity {
    pub name: String,
    pub email: String,
    pub origin: IdentityOrigin,
}

impl Git {
    /// This git, committing as the person when their configuration names them, else as
    /// Troupe (then `-c user.name=… -c user.email=…` go on every command it runs). Returns the
    /// origin chosen.
    pub fn committing(&self) -> Result<(Git, IdentityOrigin), GitError> {
        let name = self.config_value("user.name")?;
        let email = self.config_value("user.email")?;
        if name.is_some() && email.is_some() {
            return Ok((self.clone(), IdentityOrigin::Person));
        }
        // Both, even when one is set: a commit is by one identity, not half of each.
        let git = self
            .clone()
            .with_config("user.name", TROUPE_NAME)
            .with_config("user.email", TROUPE_EMAIL);
        Ok((git, IdentityOrigin::Troupe))
    }

    /// The author `commit` records, with the origin that was chosen for it.
    pub fn author_of(&self, commit: &str, origin: IdentityOrigin) -> Result<Identity, GitError> {
        let shown = self.run(&["show", "-s", "--format=%an%n%ae", commit])?;
        let mut lines = shown.lines();
        Ok(Identity {
            name: lines.next().unwrap_or_default().to_string(),
            email: lines.next().unwrap_or_default().to_string(),
            origin,
        })
    }

    /// A configuration value as git resolves it here (repository, global, system), or
    /// `None` when unset or empty.
    fn config_value(&self, key: &str) -> Result<Option<String>, GitError> {
        let out = self.output(&["config", "--get", key])?;
        match out.status.code() {
            Some(0) => {
                let value = String::from_utf8_lossy(&out.stdout).trim().to_string();
                Ok(Some(value).filter(|v| !v.is_empty()))
            }
            // Exit 1: the key is not set.
            Some(1) => Ok(None),
            code => Err(GitError::Failed {
                args: format!("config --get {key}"),
                code: code.unwrap_or(-1),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            }),
        }
    }
}
