//! The same tool call made again, unchanged, with the same answer. A model that sends a
//! refused call unchanged learns nothing from the error the second time, and one that repeats
//! a call that worked gains nothing (small models have sent one 40 times either way): the
//! result it reads then says so. Nothing is refused or stopped — the run's limits stay those
//! of TURN-6, and an effect's own repeat rules stay the ledger's — the model is only told,
//! where it looks, that sending it again will not help.

use serde_json::Value;

/// From how many identical calls in a row the result carries the note.
pub const NOTE_FROM: u32 = 2;

/// Tracks the run's last call: its tool, arguments, answer and whether it failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepeatedCall {
    last: Option<(String, Value, String, bool)>,
    count: u32,
    /// Calls that changed nothing came between the repeats of a failing call.
    looked_between: bool,
}

impl RepeatedCall {
    /// Feed one call's outcome; returns the note to append to its result when it is the same
    /// call (tool and arguments, whatever their key order or spacing) as the one before,
    /// ending the same way with the same answer. A failing call stays "the one before" across
    /// calls that started no effect (a small model alternated `read_file` with the same
    /// refused `edit_file` a dozen times): a look changes nothing its answer depends on.
    pub fn observe(
        &mut self,
        tool: &str,
        arguments: &str,
        failed: bool,
        result: &str,
        started_effect: bool,
    ) -> Option<String> {
        let args = serde_json::from_str(arguments).unwrap_or_else(|_| Value::from(arguments));
        let same = self
            .last
            .as_ref()
            .is_some_and(|(t, a, r, f)| t == tool && *a == args && r == result && *f == failed);
        if same {
            self.count += 1;
            return (self.count >= NOTE_FROM)
                .then(|| note(tool, self.count, failed, self.looked_between));
        }
        let failing = self.last.as_ref().is_some_and(|(_, _, _, f)| *f);
        if failing && !failed && !started_effect {
            self.looked_between = true;
            return None;
        }
        self.count = 1;
        self.looked_between = false;
        self.last = Some((tool.to_string(), args, result.to_string(), failed));
        None
    }
}

fn note(tool: &str, count: u32, failed: bool, looked_between: bool) -> String {
    if failed {
        let how = if looked_between {
            "with only calls that changed nothing in between"
        } else {
            "in a row"
        };
        format!(
            "(This is the same {tool} call, with the same arguments, failing the same way \
             {count} times {how}. Sending it again will not help: change what the error \
             above names, take another way, or end your turn and say what blocks you.)"
        )
    } else {
        format!(
            "(This is the same {tool} call, with the same arguments and the same result, \
             {count} times in a row. Repeating it has changed nothing: go on with the next \
             step, or end your turn if the work is done or you are waiting on something.)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_identical_failure_carries_the_note() {
        let mut r = RepeatedCall::default();
        let err = "submit: bad arguments: unknown field `ticket`";
        assert_eq!(
            r.observe("submit", r#"{"a":1,"ticket":"1"}"#, true, err, false),
            None
        );
        let second = r
            .observe("submit", r#"{"ticket": "1", "a": 1}"#, true, err, false)
            .expect("same call, key order aside");
        assert!(second.contains("2 times in a row"), "{second}");
        let third = r.observe("submit", r#"{"a":1,"ticket":"1"}"#, true, err, false);
        assert!(third.unwrap().contains("3 times"));
    }

    #[test]
    fn other_arguments_another_answer_or_another_call_start_again() {
        let mut r = RepeatedCall::default();
        r.observe("shell", r#"{"command":"make"}"#, true, "exit 2", false);
        assert_eq!(
            r.observe("shell", r#"{"command":"make all"}"#, true, "exit 2", false),
            None,
            "the model changed its call"
        );
        assert_eq!(
            r.observe("shell", r#"{"command":"make all"}"#, true, "exit 1", false),
            None,
            "a different answer is news"
        );
        r.observe("write_file", r#"{"path":"a"}"#, false, "wrote 1 byte", true);
        assert_eq!(
            r.observe("shell", r#"{"command":"make all"}"#, true, "exit 1", false),
            None,
            "another call between starts again"
        );
        assert_eq!(
            r.observe("read_file", "not json", true, "x", false),
            None,
            "another tool"
        );
        assert!(
            r.observe("read_file", "not json", true, "x", false)
                .is_some()
        );
    }

    #[test]
    fn a_call_that_worked_sent_again_unchanged_is_told_it_changed_nothing() {
        let mut r = RepeatedCall::default();
        let args = r#"{"path":"poem.txt","content":"The sea"}"#;
        assert_eq!(
            r.observe("write_file", args, false, "wrote 7 bytes", true),
            None
        );
        let note = r
            .observe("write_file", args, false, "wrote 7 bytes", true)
            .unwrap();
        assert!(note.contains("2 times in a row. Repeating it"), "{note}");
        // The same call failing now is news, not a repeat.
        assert_eq!(r.observe("write_file", args, true, "disk full", true), None);
    }

    #[test]
    fn a_failing_call_sent_again_after_only_looks_carries_the_note() {
        let mut r = RepeatedCall::default();
        let edit = r#"{"path":"stats.py","old_text":"raise X","new_text":"y"}"#;
        let miss = "`old_text` was not found in 'stats.py'";
        assert_eq!(r.observe("edit_file", edit, true, miss, true), None);
        assert_eq!(
            r.observe(
                "read_file",
                r#"{"path":"stats.py"}"#,
                false,
                "def f(): ...",
                false
            ),
            None
        );
        let note = r
            .observe("edit_file", edit, true, miss, true)
            .expect("nothing changed between");
        assert!(
            note.contains("2 times with only calls that changed nothing in between"),
            "{note}"
        );
        // A write between is a change: the same miss afterwards is news again.
        r.observe(
            "write_file",
            r#"{"path":"stats.py"}"#,
            false,
            "wrote 9 bytes",
            true,
        );
        assert_eq!(r.observe("edit_file", edit, true, miss, true), None);
        // Another failing call takes its place: its own repeat is what counts next.
        assert_eq!(
            r.observe("shell", r#"{"command":"x"}"#, true, "exit 1", true),
            None
        );
        assert!(
            r.observe("shell", r#"{"command":"x"}"#, true, "exit 1", true)
                .is_some()
        );
    }
}
