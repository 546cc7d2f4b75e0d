//! `edit_file`: replace one exact piece of an existing text file, so a change to a large file
//! costs the model the changed lines, not the whole file written again.

use std::fs;
use std::io;

use crate::args::EditFileArgs;
use crate::error::ToolError;
use crate::fs_tools::replace_file;
use crate::workspace::Workspace;

/// Largest file `edit_file` changes; beyond it, `shell` (sed, a script) is the tool.
pub const MAX_EDIT_BYTES: u64 = 8 * 1024 * 1024;
/// Most line numbers a result or refusal lists.
const MAX_LINES_SHOWN: usize = 10;
/// Up to this size, a miss shows the file as it is.
const SHOWN_ON_MISS_BYTES: usize = 4 * 1024;

pub(crate) fn edit_file(ws: &Workspace, args: &EditFileArgs) -> Result<String, ToolError> {
    let shown = &args.path;
    if args.old_text.is_empty() {
        return Err(ToolError::Refused(
            "`old_text` is empty: give the exact text to replace (to write a whole file, use \
             write_file)"
                .to_string(),
        ));
    }
    let mut path = ws.resolve(shown)?;
    // As write_file: `resolve` checked a symlink's target; edit that target, keep the link.
    if let Ok(real) = fs::canonicalize(&path) {
        path = real;
    }
    let meta = match fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ToolError::Refused(format!(
                "'{shown}' does not exist; edit_file changes an existing file (write_file \
                 creates one)"
            )));
        }
        Err(e) => return Err(ToolError::io("edit", shown, e)),
    };
    if meta.is_dir() {
        return Err(ToolError::Refused(format!(
            "'{shown}' is a directory; give a file path"
        )));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::Refused(format!(
            "'{shown}' is {} bytes, more than edit_file changes ({MAX_EDIT_BYTES}); use shell",
            meta.len()
        )));
    }
    let bytes = fs::read(&path).map_err(|e| ToolError::io("read", shown, e))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::Refused(format!(
            "'{shown}' is not UTF-8 text; edit_file changes text files"
        ))
    })?;
    // Models write "\n"; a file with Windows line ends is matched and written in its own.
    let (old, new) = if text.contains("\r\n") && !args.old_text.contains("\r\n") {
        (
            args.old_text.replace('\n', "\r\n"),
            args.new_text.replace('\n', "\r\n"),
        )
    } else {
        (args.old_text.clone(), args.new_text.clone())
    };
    let lines = match_lines(&text, &old);
    match lines.len() {
        0 => {
            let elsewhere = crate::elsewhere::files_holding(ws, &path, &args.old_text, 3);
            return Err(match elsewhere.as_slice() {
                [] => not_found(&text, &args.old_text, shown),
                found => in_another_file(shown, found),
            });
        }
        // Checked once the text is found: a model that sends its new version twice has not
        // found the old one, and hears that first.
        _ if old == new => {
            return Err(ToolError::Refused(
                "`old_text` and `new_text` are the same: the edit would change nothing \
                 (`new_text` is what the found text becomes)"
                    .to_string(),
            ));
        }
        n if n > 1 && !args.replace_all => {
            return Err(ToolError::Refused(format!(
                "`old_text` occurs {n} times in '{shown}' (lines {}): include more of the text \
                 around the place to change so that it occurs once, or set replace_all to true \
                 to change every one",
                list_lines(&lines)
            )));
        }
        _ => {}
    }
    let edited = if args.replace_all {
        text.replace(&old, &new)
    } else {
        text.replacen(&old, &new, 1)
    };
    let parent = path
        .parent()
        .ok_or_else(|| ToolError::Refused(format!("'{shown}' has no parent directory")))?;
    replace_file(&path, parent, edited.as_bytes(), Some(&meta))
        .map_err(|e| ToolError::io("write", shown, e))?;
    let n = lines.len();
    let what = if n == 1 {
        format!("line {}", lines[0])
    } else {
        format!("{n} places, lines {}", list_lines(&lines))
    };
    Ok(format!(
        "edited {shown} at {what}; it now has {} lines",
        edited.lines().count()
    ))
}

/// The 1-based line on which each occurrence of `needle` starts.
fn match_lines(text: &str, needle: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut line, mut from) = (1, 0);
    for (at, _) in text.match_indices(needle) {
        line += text[from..at].matches('\n').count();
        from = at;
        out.push(line);
    }
    out
}

fn list_lines(lines: &[usize]) -> String {
    let mut shown: Vec<String> = lines
        .iter()
        .take(MAX_LINES_SHOWN)
        .map(usize::to_string)
        .collect();
    if lines.len() > MAX_LINES_SHOWN {
        shown.push("…".to_string());
    }
    shown.join(", ")
}

/// Why `old_text` was not found, pointing at lines that match its first line but for the
/// spaces around it (the usual slip: indentation copied wrong), or else but for letter case,
/// `-` against `_` and runs of spaces (a name remembered rather than copied:
/// `free-shipping_threshold` for `FREE_SHIPPING_THRESHOLD`), or else held in it with words
/// added.
fn not_found(text: &str, old_text: &str, shown: &str) -> ToolError {
    let first = old_text.lines().map(str::trim).find(|l| !l.is_empty());
    let lines_where = |same: &dyn Fn(&str) -> bool| -> Vec<usize> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| same(l))
            .map(|(i, _)| i + 1)
            .collect()
    };
    let spaced = first.map_or_else(Vec::new, |f| lines_where(&|l| l.trim() == f));
    // Each looser comparison is tried only when the closer one found nothing.
    let first_loose = first.filter(|_| spaced.is_empty()).map(loosely);
    let loose = first_loose
        .as_ref()
        .map_or_else(Vec::new, |f| lines_where(&|l| loosely(l) == *f));
    let inside = match &first_loose {
        Some(f) if loose.is_empty() => lines_where(&|l| holds(f, &loosely(l))),
        _ => Vec::new(),
    };
    // What the file has at a line pointed at, to copy.
    let has = |n: usize| {
        let line = text.lines().nth(n - 1).unwrap_or_default().trim();
        crate::text::tail_chars(line, 200)
    };
    let small = text.len() <= SHOWN_ON_MISS_BYTES;
    let why = if !spaced.is_empty() {
        format!(
            "`old_text` was not found in '{shown}' as given, but its first line matches line {} \
             when the spaces around it are ignored: read there (read_file with offset_line) and \
             copy the text exactly, indentation included",
            list_lines(&spaced)
        )
    } else if let Some(&n) = loose.first() {
        format!(
            "`old_text` was not found in '{shown}' as given, but its first line is like line {} \
             but for letter case, - and _ or spaces: the file has `{}` there; copy the text \
             exactly as the file has it",
            list_lines(&loose),
            has(n)
        )
    } else if let Some(&n) = inside.first() {
        format!(
            "`old_text` was not found in '{shown}' as given, but its first line holds line {} \
             with other words around it: the file has only `{}` there; copy the text exactly \
             as the file has it",
            list_lines(&inside),
            has(n)
        )
    } else if small {
        format!(
            "`old_text` was not found in '{shown}': copy the text to replace exactly from the \
             file as it is now, below, spaces and line breaks included"
        )
    } else {
        format!(
            "`old_text` was not found in '{shown}': read the file (read_file) and copy the text \
             to replace exactly, spaces and line breaks included"
        )
    };
    ToolError::Refused(why + &as_it_is(text, shown))
}

/// `old_text` is not in the file named but is, exactly, in others: name them (the line each
/// has it on), since the file named holds nothing like it.
fn in_another_file(shown: &str, found: &[(String, usize)]) -> ToolError {
    let places: Vec<String> = found
        .iter()
        .map(|(file, line)| format!("'{file}' (line {line})"))
        .collect();
    ToolError::Refused(match found {
        [(file, _)] => format!(
            "`old_text` is not in '{shown}', but it is in {}: send the call again with \
             \"path\": \"{file}\" if that is the file to change",
            places[0]
        ),
        _ => format!(
            "`old_text` is not in '{shown}', but it is in {}: send the call again with the \
             path of the file to change",
            places.join(", ")
        ),
    })
}

/// A line as a name remembered rather than copied compares: case, `-`/`_` and space runs
/// folded.
fn loosely(line: &str) -> String {
    line.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .replace('-', "_")
}

/// `outer` (a line of `old_text`, [`loosely`]) holds the file's line `inner` (the same) with
/// words added around it (an instruction's verb put in front: `raise FREE_SHIPPING_THRESHOLD =
/// 50`). The line must be most of it, so a short line (`}`, `return x`) is not pointed at for
/// any text holding it.
fn holds(outer: &str, inner: &str) -> bool {
    inner.len() >= 12 && inner.len() * 3 >= outer.len() * 2 && outer.contains(inner)
}

/// A small file's whole text, to copy `old_text` from at once: a model that guessed the old
/// text (small ones do, and send the guess again) otherwise needs a read first.
fn as_it_is(text: &str, shown: &str) -> String {
    if text.len() > SHOWN_ON_MISS_BYTES {
        return String::new();
    }
    format!(
        "\n\n'{shown}' as it is now ({} lines), between the markers:\n-----\n{text}{}-----",
        text.lines().count(),
        if text.ends_with('\n') || text.is_empty() {
            ""
        } else {
            "\n"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(ws: &Workspace, path: &str, old: &str, new: &str, all: bool) -> Result<String, String> {
        let args = EditFileArgs {
            path: path.into(),
            old_text: old.into(),
            new_text: new.into(),
            replace_all: all,
        };
        edit_file(ws, &args).map_err(|e| e.to_string())
    }

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn text_in_another_file_is_pointed_at_and_nothing_is_changed() {
        let (dir, ws) = workspace();
        let code = "LIMIT = 50\n\n\ndef cost(total):\n    if total > LIMIT:\n        return 0\n";
        fs::write(dir.path().join("shop.py"), code).unwrap();
        let test = "from shop import cost\n\n\ndef test_at_limit():\n    assert cost(50) == 0\n";
        fs::write(dir.path().join("test_shop.py"), test).unwrap();
        let refused = edit(
            &ws,
            "test_shop.py",
            "if total > LIMIT:",
            "if total >= LIMIT:",
            false,
        )
        .unwrap_err();
        assert_eq!(
            refused,
            "`old_text` is not in 'test_shop.py', but it is in 'shop.py' (line 5): send the call \
             again with \"path\": \"shop.py\" if that is the file to change"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("shop.py")).unwrap(),
            code
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("test_shop.py")).unwrap(),
            test
        );
        // In more than one file (one a folder down), each is named; hidden folders are not
        // looked in.
        fs::create_dir_all(dir.path().join("old")).unwrap();
        fs::write(dir.path().join("old/shop.py"), code).unwrap();
        fs::create_dir_all(dir.path().join(".git")).unwrap();
        fs::write(dir.path().join(".git/shop.py"), code).unwrap();
        let refused = edit(&ws, "test_shop.py", "if total > LIMIT:", "x", false).unwrap_err();
        assert!(
            refused.starts_with(
                "`old_text` is not in 'test_shop.py', but it is in 'old/shop.py' (line 5), \
                 'shop.py' (line 5): send the call again with the path of the file to change"
            ),
            "{refused}"
        );
    }

    #[test]
    fn an_edit_replaces_the_one_place_and_keeps_the_rest() {
        let (dir, ws) = workspace();
        let f = dir.path().join("calc.py");
        fs::write(&f, "def average(xs):\n    return sum(xs) / len(xs)\n").unwrap();
        let out = edit(
            &ws,
            "calc.py",
            "    return sum(xs) / len(xs)",
            "    return sum(xs) / len(xs) if xs else 0",
            false,
        )
        .unwrap();
        assert_eq!(out, "edited calc.py at line 2; it now has 2 lines");
        assert_eq!(
            fs::read_to_string(&f).unwrap(),
            "def average(xs):\n    return sum(xs) / len(xs) if xs else 0\n"
        );
    }

    #[test]
    fn text_found_twice_is_refused_unless_every_one_is_asked_for() {
        let (dir, ws) = workspace();
        let f = dir.path().join("a.txt");
        fs::write(&f, "x = 1\ny = 2\nx = 1\n").unwrap();
        let refused = edit(&ws, "a.txt", "x = 1", "x = 3", false).unwrap_err();
        assert!(refused.contains("occurs 2 times"), "{refused}");
        assert!(refused.contains("lines 1, 3"), "{refused}");
        assert_eq!(fs::read_to_string(&f).unwrap(), "x = 1\ny = 2\nx = 1\n");
        let out = edit(&ws, "a.txt", "x = 1", "x = 3", true).unwrap();
        assert!(out.contains("2 places, lines 1, 3"), "{out}");
        assert_eq!(fs::read_to_string(&f).unwrap(), "x = 3\ny = 2\nx = 3\n");
    }

    #[test]
    fn a_miss_in_a_small_file_shows_its_text_and_a_large_one_does_not() {
        let (dir, ws) = workspace();
        let small = "def median(xs):\n    return xs[0]\n";
        fs::write(dir.path().join("s.py"), small).unwrap();
        // The model's new version sent as both texts: it was not found, and says so first.
        let fixed = "def median(xs):\n    return sorted(xs)[0]";
        let refused = edit(&ws, "s.py", fixed, fixed, false).unwrap_err();
        assert!(refused.contains("was not found"), "{refused}");
        assert!(
            refused.ends_with(&format!(
                "(2 lines), between the markers:\n-----\n{small}-----"
            )),
            "{refused}"
        );
        let big = "x = 1\n".repeat(1000);
        fs::write(dir.path().join("b.py"), &big).unwrap();
        let refused = edit(&ws, "b.py", "y = 2", "y = 3", false).unwrap_err();
        assert!(refused.contains("was not found"), "{refused}");
        assert!(!refused.contains("-----"), "{refused}");
    }

    #[test]
    fn text_not_found_points_at_a_line_that_differs_only_in_its_spaces() {
        let (dir, ws) = workspace();
        fs::write(dir.path().join("a.py"), "def f():\n    return 1\n").unwrap();
        let refused = edit(&ws, "a.py", "  def f():\n  return 1", "def g():", false).unwrap_err();
        assert!(refused.contains("matches line 1"), "{refused}");
        let refused = edit(&ws, "a.py", "return 3", "return 2", false).unwrap_err();
        assert!(
            refused.contains("was not found in 'a.py': copy the text to replace exactly from the file as it is now, below"),
            "{refused}"
        );
    }

    #[test]
    fn text_not_found_points_at_a_line_that_differs_in_case_or_dashes() {
        let (dir, ws) = workspace();
        let text = "\"\"\"Costs.\"\"\"\n\nFREE_SHIPPING_THRESHOLD = 50\n";
        fs::write(dir.path().join("shipping.py"), text).unwrap();
        let refused = edit(
            &ws,
            "shipping.py",
            "free-shipping_threshold  = 50",
            "free-shipping_threshold = 75",
            false,
        )
        .unwrap_err();
        assert!(
            refused.contains("is like line 3 but for letter case")
                && refused.contains("the file has `FREE_SHIPPING_THRESHOLD = 50` there"),
            "{refused}"
        );
    }

    #[test]
    fn text_not_found_points_at_a_line_its_first_line_holds_with_words_added() {
        let (dir, ws) = workspace();
        let text = "\"\"\"Costs.\"\"\"\n\nFREE_SHIPPING_THRESHOLD = 50\n\ndef f():\n    return x\n";
        fs::write(dir.path().join("shipping.py"), text).unwrap();
        let refused = edit(
            &ws,
            "shipping.py",
            "raise free_shipping_threshold = 50",
            "raise free_shipping_threshold = 75",
            false,
        )
        .unwrap_err();
        assert!(
            refused.contains("its first line holds line 3 with other words around it")
                && refused.contains("the file has only `FREE_SHIPPING_THRESHOLD = 50` there"),
            "{refused}"
        );
        // A short line is no pointer: much text holds `return x`.
        let refused = edit(&ws, "shipping.py", "return x + 1", "return y", false).unwrap_err();
        assert!(!refused.contains("holds line"), "{refused}");
    }

    #[test]
    fn a_file_with_windows_line_ends_is_edited_in_its_own() {
        let (dir, ws) = workspace();
        let f = dir.path().join("w.txt");
        fs::write(&f, "one\r\ntwo\r\nthree\r\n").unwrap();
        edit(&ws, "w.txt", "one\ntwo", "one\n2", false).unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "one\r\n2\r\nthree\r\n");
    }

    #[test]
    fn what_cannot_be_edited_is_refused_with_the_tool_to_use() {
        let (dir, ws) = workspace();
        fs::create_dir(dir.path().join("d")).unwrap();
        fs::write(dir.path().join("bin"), [0xff, 0xfe, 0x00]).unwrap();
        let missing = edit(&ws, "new.txt", "a", "b", false).unwrap_err();
        assert!(missing.contains("write_file creates one"), "{missing}");
        assert!(
            edit(&ws, "d", "a", "b", false)
                .unwrap_err()
                .contains("directory")
        );
        assert!(
            edit(&ws, "bin", "a", "b", false)
                .unwrap_err()
                .contains("not UTF-8")
        );
        assert!(
            edit(&ws, "bin", "", "b", false)
                .unwrap_err()
                .contains("is empty")
        );
        fs::write(dir.path().join("t.txt"), "a b\n").unwrap();
        assert!(
            edit(&ws, "t.txt", "a", "a", false)
                .unwrap_err()
                .contains("change nothing")
        );
        let outside = edit(&ws, "../x", "a", "b", false).unwrap_err();
        assert!(outside.contains("outside the workspace"), "{outside}");
    }
}
