//! The same tool call failing the same way again. A model that sends a refused call unchanged
//! learns nothing from the error the second time (small models have sent one 40 times): the
//! result it reads then says so. Nothing is refused or stopped — the run's limits stay those of
//! TURN-6 — the model is only told, where it looks, that repeating will not help.

use serde_json::Value;

/// From how many identical failures in a row the result carries the note.
pub const NOTE_FROM: u32 = 2;

/// Tracks the run's last failed call: its tool, arguments and answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepeatedFailure {
    last: Option<(String, Value, String)>,
    count: u32,
}

impl RepeatedFailure {
    /// Feed one call's outcome; returns the note to append to its result when it is the same
    /// call (tool and arguments, whatever their key order or spacing) that failed with the
    /// same answer just before.
    pub fn observe(
        &mut self,
        tool: &str,
        arguments: &str,
        failed: bool,
        result: &str,
    ) -> Option<String> {
        if !failed {
            *self = Self::default();
            return None;
        }
        let args = serde_json::from_str(arguments).unwrap_or_else(|_| Value::from(arguments));
        let same = self
            .last
            .as_ref()
            .is_some_and(|(t, a, r)| t == tool && *a == args && r == result);
        self.count = if same { self.count + 1 } else { 1 };
        self.last = Some((tool.to_string(), args, result.to_string()));
        (self.count >= NOTE_FROM).then(|| note(tool, self.count))
    }
}

fn note(tool: &str, count: u32) -> String {
    format!(
        "(This is the same {tool} call, with the same arguments, failing the same way \
         {count} times in a row. Sending it again will not help: change what the error above \
         names, take another way, or end your turn and say what blocks you.)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_identical_failure_carries_the_note() {
        let mut r = RepeatedFailure::default();
        let err = "submit: bad arguments: unknown field `ticket`";
        assert_eq!(
            r.observe("submit", r#"{"a":1,"ticket":"1"}"#, true, err),
            None
        );
        let second = r
            .observe("submit", r#"{"ticket": "1", "a": 1}"#, true, err)
            .expect("same call, key order aside");
        assert!(second.contains("2 times in a row"), "{second}");
        let third = r.observe("submit", r#"{"a":1,"ticket":"1"}"#, true, err);
        assert!(third.unwrap().contains("3 times"));
    }

    #[test]
    fn other_arguments_another_answer_or_a_success_start_again() {
        let mut r = RepeatedFailure::default();
        r.observe("shell", r#"{"command":"make"}"#, true, "exit 2");
        assert_eq!(
            r.observe("shell", r#"{"command":"make all"}"#, true, "exit 2"),
            None,
            "the model changed its call"
        );
        assert_eq!(
            r.observe("shell", r#"{"command":"make all"}"#, true, "exit 1"),
            None,
            "a different answer is news"
        );
        r.observe("shell", r#"{"command":"make all"}"#, false, "ok");
        assert_eq!(
            r.observe("shell", r#"{"command":"make all"}"#, true, "exit 1"),
            None,
            "a success between starts again"
        );
        assert_eq!(
            r.observe("read_file", "not json", true, "x"),
            None,
            "another tool"
        );
        assert!(r.observe("read_file", "not json", true, "x").is_some());
    }
}
