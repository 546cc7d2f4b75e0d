//! Runtime Boss settings as pure values (digest §8.1): the master switch, the briefing
//! interval, the persona and the legacy identity text, with the rules a change must pass.
//! They are stored as `app_settings` rows under [`keys`]; a PATCH names the bad field.

pub mod persona;

pub use persona::{Persona, Traits};

use serde::{Deserialize, Serialize};

/// The `app_settings` keys the settings are stored under.
pub mod keys {
    pub const BOSS_MODE: &str = "experimental.boss_mode";
    pub const BRIEFING_INTERVAL_DAYS: &str = "experimental.boss_briefing_interval_days";
    pub const PERSONA: &str = "experimental.boss_persona";
    pub const IDENTITY_TEXT: &str = "experimental.boss_identity_text";
    pub const ALL: [&str; 4] = [BOSS_MODE, BRIEFING_INTERVAL_DAYS, PERSONA, IDENTITY_TEXT];
}

/// The scope key and sentinel chat of a runtime boss session's endpoint.
pub const SCOPE_KEY: &str = "boss";
pub const ENDPOINT_CHAT: &str = "boss";
/// The Bot every runtime boss session talks with, made once and reused.
pub const BOT_NAME: &str = "Runtime Boss";
/// The title of a channel-routed runtime boss session, and of a channel-less one.
pub const SESSION_TITLE: &str = "Runtime Boss";
pub const LOCAL_SESSION_TITLE: &str = "Runtime Boss (local)";
/// The shared-memory row that holds the boss's name.
pub const NAME_CATEGORY: &str = "self";
pub const NAME_TITLE: &str = "boss_name";

pub const MIN_INTERVAL_DAYS: u32 = 1;
pub const MAX_INTERVAL_DAYS: u32 = 365;
pub const MAX_IDENTITY_CHARS: usize = 4000;
pub const MAX_NAME_CHARS: usize = 64;

/// The Runtime-domain settings.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RuntimeSettings {
    /// The master switch: on, every enabled channel account has one runtime boss session and
    /// its messages go there.
    pub boss_mode: bool,
    /// Days between re-enumeration reminders (an Agenda item); unset: none.
    pub briefing_interval_days: Option<u32>,
    /// Unset: the legacy identity text, else the default colleague identity.
    pub persona: Option<Persona>,
    /// Legacy fallback identity, used only when no persona is set.
    pub identity_text: Option<String>,
}

/// A change to the settings: an absent field is kept, a `null` clears it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeSettingsPatch {
    #[serde(default)]
    pub boss_mode: Option<bool>,
    #[serde(default, with = "double_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<u32>))]
    pub briefing_interval_days: Option<Option<u32>>,
    #[serde(default, with = "double_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Persona>))]
    pub persona: Option<Option<Persona>>,
    #[serde(default, with = "double_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub identity_text: Option<Option<String>>,
}

/// A setting that fails its rule, named by its field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct SettingError {
    pub field: &'static str,
    pub message: String,
}

impl SettingError {
    fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}

impl RuntimeSettings {
    /// Every rule the settings hold to; the first failing field is named.
    pub fn validate(&self) -> Result<(), SettingError> {
        if let Some(days) = self.briefing_interval_days {
            validate_interval(days)?;
        }
        if let Some(persona) = &self.persona {
            persona.validate()?;
        }
        if let Some(text) = &self.identity_text {
            validate_identity_text(text)?;
        }
        Ok(())
    }

    /// The settings with `patch` applied, if they still hold to every rule.
    pub fn apply(&self, patch: &RuntimeSettingsPatch) -> Result<RuntimeSettings, SettingError> {
        let mut next = self.clone();
        if let Some(on) = patch.boss_mode {
            next.boss_mode = on;
        }
        if let Some(days) = patch.briefing_interval_days {
            next.briefing_interval_days = days;
        }
        if let Some(persona) = &patch.persona {
            next.persona = persona.clone();
        }
        if let Some(text) = &patch.identity_text {
            // An empty identity text means none, as an absent one does.
            next.identity_text = text.as_ref().filter(|t| !t.trim().is_empty()).cloned();
        }
        next.validate()?;
        Ok(next)
    }

    /// The settings as stored rows, one per key (`None`: the row is removed).
    pub fn to_rows(&self) -> [(&'static str, Option<String>); 4] {
        [
            (keys::BOSS_MODE, Some(self.boss_mode.to_string())),
            (
                keys::BRIEFING_INTERVAL_DAYS,
                self.briefing_interval_days.map(|d| d.to_string()),
            ),
            (
                keys::PERSONA,
                self.persona
                    .as_ref()
                    .map(|p| serde_json::to_string(p).expect("persona serialises")),
            ),
            (keys::IDENTITY_TEXT, self.identity_text.clone()),
        ]
    }

    /// Settings read back from stored rows (`get(key)`); a row that no longer parses is read
    /// as unset rather than failing every reader.
    pub fn from_rows(get: impl Fn(&str) -> Option<String>) -> RuntimeSettings {
        RuntimeSettings {
            boss_mode: get(keys::BOSS_MODE).is_some_and(|v| v.trim() == "true"),
            briefing_interval_days: get(keys::BRIEFING_INTERVAL_DAYS)
                .and_then(|v| v.trim().parse().ok())
                .filter(|d| validate_interval(*d).is_ok()),
            persona: get(keys::PERSONA)
                .and_then(|v| serde_json::from_str::<Persona>(&v).ok())
                .filter(|p| p.validate().is_ok()),
            identity_text: get(keys::IDENTITY_TEXT).filter(|t| !t.trim().is_empty()),
        }
    }
}

pub fn validate_interval(days: u32) -> Result<(), SettingError> {
    if (MIN_INTERVAL_DAYS..=MAX_INTERVAL_DAYS).contains(&days) {
        Ok(())
    } else {
        Err(SettingError::new(
            "briefing_interval_days",
            format!("must be {MIN_INTERVAL_DAYS}..={MAX_INTERVAL_DAYS} days, got {days}"),
        ))
    }
}

fn validate_identity_text(text: &str) -> Result<(), SettingError> {
    if text.chars().count() > MAX_IDENTITY_CHARS {
        return Err(SettingError::new(
            "identity_text",
            format!("must be at most {MAX_IDENTITY_CHARS} characters"),
        ));
    }
    Ok(())
}

/// The boss's name as a person sets it: 1..=64 characters after trimming, one line.
pub fn validate_name(name: &str) -> Result<String, SettingError> {
    let name = name.trim();
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS {
        return Err(SettingError::new(
            "name",
            format!("must be 1..={MAX_NAME_CHARS} characters, got {chars}"),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(SettingError::new(
            "name",
            "must be one line without control characters",
        ));
    }
    Ok(name.to_string())
}

/// `Option<Option<T>>` from JSON: absent → `None`, `null` → `Some(None)`.
mod double_option {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
    where
        T: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Option::<T>::deserialize(d).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_keeps_absent_and_clears_null() {
        let base = RuntimeSettings {
            boss_mode: true,
            briefing_interval_days: Some(7),
            persona: Some(Persona::OpsAssistant),
            identity_text: None,
        };
        let patch: RuntimeSettingsPatch =
            serde_json::from_str(r#"{"briefing_interval_days": null}"#).unwrap();
        let next = base.apply(&patch).unwrap();
        assert!(next.boss_mode);
        assert_eq!(next.briefing_interval_days, None);
        assert_eq!(next.persona, Some(Persona::OpsAssistant));
    }

    #[test]
    fn bad_values_name_their_field() {
        let base = RuntimeSettings::default();
        let zero: RuntimeSettingsPatch =
            serde_json::from_str(r#"{"briefing_interval_days": 0}"#).unwrap();
        assert_eq!(
            base.apply(&zero).unwrap_err().field,
            "briefing_interval_days"
        );
        let year: RuntimeSettingsPatch =
            serde_json::from_str(r#"{"briefing_interval_days": 366}"#).unwrap();
        assert_eq!(
            base.apply(&year).unwrap_err().field,
            "briefing_interval_days"
        );
        let warm: RuntimeSettingsPatch = serde_json::from_str(
            r#"{"persona": {"preset":"custom","formality":0.5,"conciseness":0.5,"proactiveness":0.5,"warmth":1.5}}"#,
        )
        .unwrap();
        assert_eq!(base.apply(&warm).unwrap_err().field, "persona.warmth");
        assert!(serde_json::from_str::<RuntimeSettingsPatch>(r#"{"boss": true}"#).is_err());
    }

    #[test]
    fn rows_round_trip() {
        let s = RuntimeSettings {
            boss_mode: true,
            briefing_interval_days: Some(3),
            persona: Some(Persona::Custom(Traits {
                formality: 0.1,
                conciseness: 0.9,
                proactiveness: 0.5,
                warmth: 0.7,
            })),
            identity_text: Some("a steady hand".into()),
        };
        let rows = s.to_rows();
        let back = RuntimeSettings::from_rows(|k| {
            rows.iter()
                .find(|(key, _)| *key == k)
                .and_then(|(_, v)| v.clone())
        });
        assert_eq!(back, s);
    }

    #[test]
    fn names_are_one_short_line() {
        assert_eq!(validate_name("  Ada ").unwrap(), "Ada");
        assert!(validate_name("   ").is_err());
        assert!(validate_name(&"x".repeat(65)).is_err());
        assert!(validate_name(&"é".repeat(64)).is_ok());
        assert!(validate_name("a\nb").is_err());
    }
}
