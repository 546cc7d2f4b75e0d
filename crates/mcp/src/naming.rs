//! The names a server's tools take in a turn: `<server>__<tool>`, in the characters and length
//! every provider accepts, refused when two tools would land on one name.

use std::collections::BTreeMap;

/// The longest tool name the providers accept.
pub const MAX_TOOL_NAME: usize = 64;

/// The name a model sees for `tool` of `server`: other characters become `_`, and a name past
/// the limit is clipped (its end kept distinct by a short hash of the whole).
pub fn exposed_name(server: &str, tool: &str) -> String {
    let full: String = format!("{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if full.len() <= MAX_TOOL_NAME {
        return full;
    }
    let hash = fnv(format!("{server}__{tool}").as_bytes());
    let tail = format!("_{:08x}", hash as u32);
    format!("{}{tail}", &full[..MAX_TOOL_NAME - tail.len()])
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

/// The server's tools by exposed name; a tool whose exposed name another already took is left
/// out, with the reason.
pub fn assign<'a>(
    server: &str,
    tools: impl IntoIterator<Item = &'a str>,
) -> (BTreeMap<String, String>, Vec<String>) {
    let mut names = BTreeMap::new();
    let mut refused = Vec::new();
    for tool in tools {
        let exposed = exposed_name(server, tool);
        match names.get(&exposed) {
            Some(first) => refused.push(format!(
                "tool '{tool}' is left out: its name {exposed} is taken by tool '{first}'"
            )),
            None => {
                names.insert(exposed, tool.to_string());
            }
        }
    }
    (names, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_cleaned() {
        assert_eq!(exposed_name("files", "read_file"), "files__read_file");
        assert_eq!(exposed_name("git", "log.show"), "git__log_show");
    }

    #[test]
    fn long_names_are_clipped_to_the_limit_and_stay_distinct() {
        let a = exposed_name("server", &"x".repeat(80));
        let b = exposed_name("server", &format!("{}y", "x".repeat(79)));
        assert_eq!(a.len(), MAX_TOOL_NAME);
        assert_eq!(b.len(), MAX_TOOL_NAME);
        assert_ne!(a, b);
    }

    #[test]
    fn a_collision_is_refused_with_a_reason() {
        let (names, refused) = assign("s", ["a.b", "a_b", "c"]);
        assert_eq!(names.len(), 2);
        assert_eq!(names["s__a_b"], "a.b");
        assert_eq!(refused.len(), 1);
        assert!(
            refused[0].contains("'a_b'") && refused[0].contains("'a.b'"),
            "{}",
            refused[0]
        );
    }
}
