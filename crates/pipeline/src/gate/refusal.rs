//! A gate's refusal: the field it refuses and why. A gate lists every refusal it finds.

use std::fmt;

/// One reason a gate refused a request, response or manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The field, as a dotted path (`inputs.plan`, `stop`), or the file for problems with the
    /// file as a whole (`response.json`).
    pub field: String,
    pub reason: String,
}

impl Refusal {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

/// Everything a gate refused; never empty when returned as an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Refusals(pub Vec<Refusal>);

impl Refusals {
    /// Whether some refusal names `field`.
    pub fn names(&self, field: &str) -> bool {
        self.0.iter().any(|r| r.field == field)
    }

    /// The refusal for `field`, when there is one.
    pub fn get(&self, field: &str) -> Option<&Refusal> {
        self.0.iter().find(|r| r.field == field)
    }
}

impl fmt::Display for Refusals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join("; "))
    }
}
