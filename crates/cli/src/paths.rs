//! Where troupe keeps its files, following the XDG base directory layout.
//!
//! Every function takes the environment as an explicit lookup so it can be tested without
//! touching the process environment; [`process_env`] is the lookup to use for real.
//!
//! | what        | first choice                           | fallback                             |
//! |-------------|----------------------------------------|--------------------------------------|
//! | config file | `$XDG_CONFIG_HOME/troupe/config.toml`  | `$HOME/.config/troupe/config.toml`   |
//! | data dir    | `$XDG_DATA_HOME/troupe`                | `$HOME/.local/share/troupe`          |
//!
//! As the XDG specification asks, an `XDG_*` variable that is empty or holds a relative path
//! is ignored. An empty `HOME` counts as unset.

use std::path::PathBuf;

/// Looks an environment variable up by name.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The lookup over the real process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error(
        "cannot locate the troupe {what}: neither {xdg_var} nor HOME is set \
         (set one of them, or pass the location explicitly)"
    )]
    NoHome {
        /// What was being located ("config file", "data directory").
        what: &'static str,
        /// The XDG variable that was consulted first.
        xdg_var: &'static str,
    },
}

/// `$XDG_CONFIG_HOME/troupe/config.toml`, else `$HOME/.config/troupe/config.toml`.
pub fn config_file(env: EnvLookup<'_>) -> Result<PathBuf, PathError> {
    Ok(config_dir(env)?.join("config.toml"))
}

/// `$XDG_CONFIG_HOME/troupe`, else `$HOME/.config/troupe`.
pub fn config_dir(env: EnvLookup<'_>) -> Result<PathBuf, PathError> {
    base_dir(env, "XDG_CONFIG_HOME", &[".config"], "config file").map(|d| d.join("troupe"))
}

/// `$XDG_DATA_HOME/troupe`, else `$HOME/.local/share/troupe`.
pub fn data_dir(env: EnvLookup<'_>) -> Result<PathBuf, PathError> {
    base_dir(env, "XDG_DATA_HOME", &[".local", "share"], "data directory").map(|d| d.join("troupe"))
}

fn base_dir(
    env: EnvLookup<'_>,
    xdg_var: &'static str,
    home_suffix: &[&str],
    what: &'static str,
) -> Result<PathBuf, PathError> {
    if let Some(dir) = env(xdg_var).filter(|v| !v.is_empty()).map(PathBuf::from)
        && dir.is_absolute()
    {
        return Ok(dir);
    }
    match env("HOME").filter(|v| !v.is_empty()) {
        Some(home) => {
            let mut dir = PathBuf::from(home);
            dir.extend(home_suffix);
            Ok(dir)
        }
        None => Err(PathError::NoHome { what, xdg_var }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name: &str| map.get(name).cloned()
    }

    #[test]
    fn config_file_prefers_xdg_config_home() {
        let env = env_of(&[("XDG_CONFIG_HOME", "/x/conf"), ("HOME", "/home/u")]);
        assert_eq!(
            config_file(&env).unwrap(),
            PathBuf::from("/x/conf/troupe/config.toml")
        );
    }

    #[test]
    fn config_file_falls_back_to_home() {
        let env = env_of(&[("HOME", "/home/u")]);
        assert_eq!(
            config_file(&env).unwrap(),
            PathBuf::from("/home/u/.config/troupe/config.toml")
        );
    }

    #[test]
    fn empty_or_relative_xdg_is_ignored() {
        for xdg in ["", "relative/conf"] {
            let env = env_of(&[("XDG_CONFIG_HOME", xdg), ("HOME", "/home/u")]);
            assert_eq!(
                config_file(&env).unwrap(),
                PathBuf::from("/home/u/.config/troupe/config.toml"),
                "XDG_CONFIG_HOME={xdg:?}"
            );
        }
    }

    #[test]
    fn data_dir_prefers_xdg_data_home() {
        let env = env_of(&[("XDG_DATA_HOME", "/x/data"), ("HOME", "/home/u")]);
        assert_eq!(data_dir(&env).unwrap(), PathBuf::from("/x/data/troupe"));
    }

    #[test]
    fn data_dir_falls_back_to_home() {
        let env = env_of(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "/x/conf")]);
        assert_eq!(
            data_dir(&env).unwrap(),
            PathBuf::from("/home/u/.local/share/troupe")
        );
    }

    #[test]
    fn xdg_alone_is_enough() {
        let env = env_of(&[("XDG_DATA_HOME", "/x/data"), ("XDG_CONFIG_HOME", "/x/conf")]);
        assert_eq!(data_dir(&env).unwrap(), PathBuf::from("/x/data/troupe"));
        assert_eq!(
            config_file(&env).unwrap(),
            PathBuf::from("/x/conf/troupe/config.toml")
        );
    }

    #[test]
    fn neither_home_nor_xdg_is_an_error() {
        let env = env_of(&[("HOME", "")]);
        let err = config_file(&env).unwrap_err().to_string();
        assert!(
            err.contains("XDG_CONFIG_HOME") && err.contains("HOME"),
            "{err}"
        );
        assert!(err.contains("config file"), "{err}");
        let err = data_dir(&env).unwrap_err().to_string();
        assert!(
            err.contains("XDG_DATA_HOME") && err.contains("data directory"),
            "{err}"
        );
    }
}
