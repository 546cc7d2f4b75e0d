//! An adopted checklist item is read in that Bot's situation (§10.2), at every model call;
//! `memories::KeptSituation` reads it with the Bot's memories.

use troupe_store::ChecklistItem;

/// The situation's checklist block, none for no item on.
pub(crate) fn checklist_block(on: Vec<ChecklistItem>) -> Option<String> {
    if on.is_empty() {
        return None;
    }
    let mut text =
        String::from("Your checklist (lessons the person adopted; hold yourself to them):");
    for i in on {
        text.push_str(&format!("\n- {}: {}", i.when.replace('_', " "), i.text));
    }
    Some(text)
}
