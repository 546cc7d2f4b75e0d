//! The runtime boss's persona, rendered deterministically (no model call, digest §8.4): a
//! preset character or custom traits, plus the default colleague identity and the name,
//! become the `<boss-persona>` and `<boss-report-style>` blocks; the discipline block (RB-8)
//! is the same whatever the persona. A custom trait counts as high at ≥ 0.6 and low at ≤ 0.4;
//! in between it adds nothing.

use super::SettingError;
use serde::{Deserialize, Serialize};

/// The preset characters and the custom traits (`{"preset": "..."}` in JSON).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "preset", rename_all = "snake_case")]
pub enum Persona {
    ProjectManager,
    OpsAssistant,
    Custom(Traits),
}

/// Custom traits, each in [0, 1].
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Traits {
    pub formality: f64,
    pub conciseness: f64,
    pub proactiveness: f64,
    pub warmth: f64,
}

pub const HIGH: f64 = 0.6;
pub const LOW: f64 = 0.4;

impl Persona {
    pub fn validate(&self) -> Result<(), SettingError> {
        let Persona::Custom(t) = self else {
            return Ok(());
        };
        for (field, value) in [
            ("persona.formality", t.formality),
            ("persona.conciseness", t.conciseness),
            ("persona.proactiveness", t.proactiveness),
            ("persona.warmth", t.warmth),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(SettingError {
                    field,
                    message: format!("must be in [0, 1], got {value}"),
                });
            }
        }
        Ok(())
    }
}

/// Everything the rendered identity depends on.
#[derive(Clone, Copy, Debug, Default)]
pub struct Identity<'a> {
    pub persona: Option<&'a Persona>,
    /// The legacy identity text, read only when no persona is set.
    pub identity_text: Option<&'a str>,
    pub name: Option<&'a str>,
}

const COLLEAGUE: &str = "You are the person's standing colleague in Troupe: one coordinator, reached \
from chat and from the app, who keeps track of the sessions, projects, agenda and notes, answers \
simple things directly and hands project work to the bosses of those projects.";

fn character(persona: &Persona) -> &'static str {
    match persona {
        Persona::ProjectManager => {
            "You work as a project manager: you keep the person's projects \
moving, know who is working on what, and turn loose requests into owned tasks with a next step."
        }
        Persona::OpsAssistant => {
            "You work as an operations assistant: you watch running work, \
notice what stalled or failed, and keep the person informed without being asked twice."
        }
        Persona::Custom(_) => "You work as a coordinator whose manner the person has tuned.",
    }
}

fn tone(persona: &Persona) -> String {
    match persona {
        Persona::ProjectManager => "organised and decisive".into(),
        Persona::OpsAssistant => "calm and precise".into(),
        Persona::Custom(t) => {
            let formal = level(t.formality, "formal", "casual");
            let warm = level(t.warmth, "warm", "matter-of-fact");
            match [formal, warm] {
                [None, None] => "even".into(),
                [Some(a), None] | [None, Some(a)] => a.into(),
                [Some(a), Some(b)] => format!("{a} and {b}"),
            }
        }
    }
}

fn level(value: f64, high: &'static str, low: &'static str) -> Option<&'static str> {
    if value >= HIGH {
        Some(high)
    } else if value <= LOW {
        Some(low)
    } else {
        None
    }
}

/// The `<boss-persona>` block: the name, the identity and the tone.
pub fn render_persona(id: &Identity<'_>) -> String {
    let mut out = String::from("<boss-persona>\n");
    match id.name {
        Some(name) => out.push_str(&format!("Your name is {name}.\n")),
        None => out.push_str(
            "You have no name yet. If the person gives you one, keep it with memory_write \
(category self, title boss_name).\n",
        ),
    }
    match (id.persona, id.identity_text) {
        (Some(p), _) => {
            out.push_str(character(p));
            out.push('\n');
        }
        (None, Some(text)) => {
            out.push_str(text.trim());
            out.push('\n');
        }
        (None, None) => {}
    }
    out.push_str(COLLEAGUE);
    out.push('\n');
    if let Some(p) = id.persona {
        out.push_str(&format!("Tone: {}.\n", tone(p)));
    }
    out.push_str("</boss-persona>");
    out
}

const BASE_STYLE: &str = "Lead with the conclusion. Keep it short. Do not narrate your process: \
give the result, what is blocked and what you need from the person.";

/// The `<boss-report-style>` block: the base style plus the preset's or the traits' sentences.
pub fn render_report_style(persona: Option<&Persona>) -> String {
    let mut lines = vec![BASE_STYLE.to_string()];
    match persona {
        Some(Persona::ProjectManager) => lines.push(
            "Report by project: its status, who owns it, the next step and any date at risk."
                .into(),
        ),
        Some(Persona::OpsAssistant) => lines.push(
            "Report by incident: what happened, the impact, what you did, what is left.".into(),
        ),
        Some(Persona::Custom(t)) => {
            let sentences: [(f64, &str, &str); 4] = [
                (
                    t.formality,
                    "Write formally, in full sentences.",
                    "Write casually, the way colleagues chat.",
                ),
                (
                    t.conciseness,
                    "Be brief: a few lines, a list over paragraphs.",
                    "Give enough detail that the person need not ask a follow-up.",
                ),
                (
                    t.proactiveness,
                    "Raise risks and propose next steps without being asked.",
                    "Answer what was asked; suggest more only when it matters.",
                ),
                (
                    t.warmth,
                    "Be warm: acknowledge the person and their effort.",
                    "Stay matter-of-fact and skip pleasantries.",
                ),
            ];
            for (value, high, low) in sentences {
                if let Some(s) = level(value, high, low) {
                    lines.push(s.into());
                }
            }
        }
        None => {}
    }
    format!(
        "<boss-report-style>\n{}\n</boss-report-style>",
        lines.join("\n")
    )
}

/// The discipline block (RB-8): present on every runtime boss turn whatever the persona.
pub const DISCIPLINE: &str = "<boss-discipline>
Dispatch: answer simple requests yourself. Project work goes to that project's boss with \
session_send; when the project has none, create it with boss_project.
Layered reporting: project bosses send you status changes with a one-line result and a session \
id, not their workers' raw reports. Read a session in depth with session_read only when the \
summary is not enough.
Memory: keep what you learn about the person, your relationships and yourself with memory_write; \
refine an existing row with memory_edit rather than writing a second one; keep each category lean.
History: you see chat messages as they arrive; for what came before, read your memory and the \
sessions (session_read), not a chat history tool.
Source headers: a line that starts with [chat · sender · time] came from an outside chat and names \
where and from whom; a line without one came from the person in the app.
</boss-discipline>";

/// A short stable fingerprint of what the briefing's identity depends on, so a persona or
/// name change is noticed and briefed once (FNV-1a, 64 bits, hex).
pub fn fingerprint(id: &Identity<'_>) -> String {
    let text = format!(
        "{}\n{}",
        render_persona(id),
        render_report_style(id.persona)
    );
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn custom(formality: f64, conciseness: f64, proactiveness: f64, warmth: f64) -> Persona {
        Persona::Custom(Traits {
            formality,
            conciseness,
            proactiveness,
            warmth,
        })
    }

    #[test]
    fn presets_parse_from_their_json() {
        let pm: Persona = serde_json::from_str(r#"{"preset":"project_manager"}"#).unwrap();
        assert_eq!(pm, Persona::ProjectManager);
        let c: Persona = serde_json::from_str(
            r#"{"preset":"custom","formality":1,"conciseness":0,"proactiveness":0.5,"warmth":0.5}"#,
        )
        .unwrap();
        assert_eq!(c, custom(1.0, 0.0, 0.5, 0.5));
        assert_eq!(
            serde_json::to_value(&Persona::OpsAssistant).unwrap(),
            serde_json::json!({"preset": "ops_assistant"})
        );
    }

    #[test]
    fn traits_count_at_the_thresholds_only() {
        let style = render_report_style(Some(&custom(0.6, 0.4, 0.5, 0.59)));
        assert!(style.contains("Write formally"));
        assert!(style.contains("need not ask a follow-up"));
        assert!(!style.contains("risks"), "0.5 adds nothing: {style}");
        assert!(!style.contains("warm"), "0.59 adds nothing: {style}");
        assert!(style.starts_with("<boss-report-style>\nLead with the conclusion."));
    }

    #[test]
    fn rendering_is_deterministic_and_names_the_boss() {
        let pm = Persona::ProjectManager;
        let id = Identity {
            persona: Some(&pm),
            identity_text: Some("ignored"),
            name: Some("Ada"),
        };
        assert_eq!(render_persona(&id), render_persona(&id));
        let text = render_persona(&id);
        assert!(text.contains("Your name is Ada."));
        assert!(text.contains("project manager"));
        assert!(
            !text.contains("ignored"),
            "the legacy text is read only without a persona"
        );
        let legacy = Identity {
            persona: None,
            identity_text: Some("A steady hand."),
            name: None,
        };
        assert!(render_persona(&legacy).contains("A steady hand."));
        assert!(render_persona(&legacy).contains("no name yet"));
    }

    #[test]
    fn fingerprint_moves_with_persona_and_name() {
        let pm = Persona::ProjectManager;
        let ops = Persona::OpsAssistant;
        let a = fingerprint(&Identity {
            persona: Some(&pm),
            ..Default::default()
        });
        let b = fingerprint(&Identity {
            persona: Some(&ops),
            ..Default::default()
        });
        let c = fingerprint(&Identity {
            persona: Some(&pm),
            name: Some("Ada"),
            ..Default::default()
        });
        assert_eq!(
            a,
            fingerprint(&Identity {
                persona: Some(&pm),
                ..Default::default()
            })
        );
        assert_ne!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn out_of_range_trait_is_named() {
        let err = custom(0.5, -0.1, 0.5, 0.5).validate().unwrap_err();
        assert_eq!(err.field, "persona.conciseness");
        assert!(custom(f64::NAN, 0.5, 0.5, 0.5).validate().is_err());
    }
}
