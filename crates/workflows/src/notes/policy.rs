//! Who may write a Blueprint: only a session with Plan active. Ordinary notes are always
//! writable, and reading or searching is never refused. Blueprint intent is read from the
//! requested kind or, when no kind is given on an edit, from the note being edited.

use troupe_store::NoteKind;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WriteAction {
    Create,
    Update,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteDecision {
    Allowed,
    /// Nothing is written; the reason says what would make it allowed.
    Blocked(String),
}

/// The Blueprint write rule. `plan_active`: the calling session has Plan in its slot.
pub fn evaluate_write(
    plan_active: bool,
    action: WriteAction,
    existing: Option<NoteKind>,
    requested: Option<NoteKind>,
) -> WriteDecision {
    let touches_blueprint =
        existing == Some(NoteKind::Blueprint) || requested == Some(NoteKind::Blueprint);
    if !touches_blueprint || plan_active {
        return WriteDecision::Allowed;
    }
    let what = match (action, existing) {
        (WriteAction::Update, Some(NoteKind::Blueprint)) => "editing a Blueprint",
        (WriteAction::Update, _) => "turning a note into a Blueprint",
        (WriteAction::Create, _) => "creating a Blueprint",
    };
    WriteDecision::Blocked(format!(
        "{what} is allowed only while Plan or Lattice is active on the session; \
         Blueprints can still be read and searched, and ordinary notes written"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use NoteKind::*;

    #[test]
    fn blueprint_write_outside_plan_is_blocked() {
        assert!(matches!(
            evaluate_write(false, WriteAction::Create, None, Some(Blueprint)),
            WriteDecision::Blocked(_)
        ));
        assert!(matches!(
            evaluate_write(false, WriteAction::Update, Some(Blueprint), None),
            WriteDecision::Blocked(_)
        ));
        // Turning a Blueprint into a note is still a Blueprint edit.
        assert!(matches!(
            evaluate_write(false, WriteAction::Update, Some(Blueprint), Some(Note)),
            WriteDecision::Blocked(_)
        ));
    }

    #[test]
    fn ordinary_notes_stay_writable_outside_plan() {
        assert_eq!(
            evaluate_write(false, WriteAction::Create, None, Some(Note)),
            WriteDecision::Allowed
        );
        assert_eq!(
            evaluate_write(false, WriteAction::Update, Some(Note), None),
            WriteDecision::Allowed
        );
    }

    #[test]
    fn plan_may_write_blueprints() {
        assert_eq!(
            evaluate_write(true, WriteAction::Create, None, Some(Blueprint)),
            WriteDecision::Allowed
        );
        assert_eq!(
            evaluate_write(true, WriteAction::Update, Some(Note), Some(Blueprint)),
            WriteDecision::Allowed
        );
    }
}
