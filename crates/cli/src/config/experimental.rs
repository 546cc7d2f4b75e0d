//! `[experimental]`: Runtime Boss Mode (see docs/workflows/runtime-boss.md). The values seed
//! the stored settings at startup only where nothing is stored yet: once a value is stored (an
//! earlier start, or `PATCH /v1/settings/runtime`), the stored value wins.
//!
//! ```toml
//! [experimental]
//! boss_mode = true
//! boss_briefing_interval_days = 7
//! boss_persona = { preset = "project_manager" }   # or ops_assistant, or
//! # boss_persona = { preset = "custom", formality = 0.3, conciseness = 0.8, proactiveness = 0.7, warmth = 0.5 }
//! # boss_identity_text = "…"                     # legacy: read only when no persona is set
//! ```

use serde::Deserialize;
use troupe_core::runtime_boss::{Persona, RuntimeSettings, RuntimeSettingsPatch};

#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experimental {
    #[serde(default)]
    pub boss_mode: Option<bool>,
    #[serde(default)]
    pub boss_briefing_interval_days: Option<u32>,
    /// Kept as written and read as a [`Persona`] by [`Experimental::runtime_boss`] (the traits
    /// are floats, which the config's equality cannot hold).
    #[serde(default)]
    pub boss_persona: Option<serde_json::Value>,
    #[serde(default)]
    pub boss_identity_text: Option<String>,
}

impl Experimental {
    /// The seed for the stored settings; an error names the key and what is wrong.
    pub fn runtime_boss(&self) -> Result<RuntimeSettingsPatch, String> {
        let persona = match &self.boss_persona {
            None => None,
            Some(v) => Some(Some(
                serde_json::from_value::<Persona>(v.clone())
                    .map_err(|e| format!("boss_persona: {e}"))?,
            )),
        };
        let patch = RuntimeSettingsPatch {
            boss_mode: self.boss_mode,
            briefing_interval_days: self.boss_briefing_interval_days.map(Some),
            persona,
            identity_text: self.boss_identity_text.clone().map(Some),
        };
        RuntimeSettings::default().apply(&patch).map_err(|e| {
            let key = match e.field {
                "briefing_interval_days" => "boss_briefing_interval_days".to_string(),
                "identity_text" => "boss_identity_text".to_string(),
                other => format!("boss_{other}"),
            };
            format!("{key}: {}", e.message)
        })?;
        Ok(patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Experimental {
        #[derive(Deserialize)]
        struct File {
            experimental: Experimental,
        }
        toml::from_str::<File>(text).unwrap().experimental
    }

    #[test]
    fn a_custom_persona_is_read_from_an_inline_table() {
        let e = parse(
            "[experimental]\nboss_mode = true\nboss_briefing_interval_days = 7\n\
             boss_persona = { preset = \"custom\", formality = 0.2, conciseness = 1, proactiveness = 0.5, warmth = 0.9 }\n",
        );
        let p = e.runtime_boss().unwrap();
        assert_eq!(p.boss_mode, Some(true));
        assert_eq!(p.briefing_interval_days, Some(Some(7)));
        assert!(matches!(p.persona, Some(Some(Persona::Custom(_)))));
        assert_eq!(p.identity_text, None);
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = parse("[experimental]\nboss_briefing_interval_days = 0\n");
        assert!(
            e.runtime_boss()
                .unwrap_err()
                .starts_with("boss_briefing_interval_days:")
        );
        let e = parse("[experimental]\nboss_persona = { preset = \"pirate\" }\n");
        assert!(e.runtime_boss().unwrap_err().starts_with("boss_persona:"));
        let e = parse(
            "[experimental]\nboss_persona = { preset = \"custom\", formality = 2, conciseness = 0, proactiveness = 0, warmth = 0 }\n",
        );
        assert!(
            e.runtime_boss()
                .unwrap_err()
                .starts_with("boss_persona.formality:")
        );
    }
}
