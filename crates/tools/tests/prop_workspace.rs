//! Property tests for workspace path confinement (`Workspace::resolve`): for
//! any model-given path — `..`, absolute, through symlinks made in a temp
//! dir, NUL, very long or odd names — a path it yields, once every symlink on
//! it is followed the way the kernel would, lies inside the workspace.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use troupe_tools::Workspace;

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

/// A temp dir holding `outside/` and the workspace `ws/`, with links that
/// stay in, links that leave (relative, absolute, chained, dangling), and a
/// directory whose name is not UTF-8.
fn fixture() -> &'static (tempfile::TempDir, Workspace) {
    static FIXTURE: OnceLock<(tempfile::TempDir, Workspace)> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("tempdir");
        let outside = tmp.path().join("outside");
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        std::fs::write(outside.join("secret"), "x").unwrap();
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::write(ws.join("f"), "x").unwrap();
        symlink("a", ws.join("link_in")).unwrap();
        symlink("../outside", ws.join("link_out")).unwrap();
        symlink(&outside, ws.join("link_abs")).unwrap();
        symlink("link_out", ws.join("link_chain")).unwrap();
        symlink("../outside/new", ws.join("dangling_out")).unwrap();
        symlink("a/new", ws.join("dangling_in")).unwrap();
        symlink("../..", ws.join("a/up")).unwrap();
        symlink("../../outside/secret", ws.join("a/b/to_secret")).unwrap();
        symlink("loop", ws.join("loop")).unwrap();
        let odd = ws.join(OsStr::from_bytes(b"odd\xff\xfe"));
        std::fs::create_dir(&odd).unwrap();
        symlink("../../outside", odd.join("out")).unwrap();
        let workspace = Workspace::open(&ws).expect("workspace");
        (tmp, workspace)
    })
}

/// Where a path really lands: every existing symlink on it followed (target
/// taken relative to the link's directory), `..` applied to the real
/// directory, missing components appended as they are.
fn real_location(path: &Path, depth: u32) -> Option<PathBuf> {
    if depth > 40 {
        return None; // a loop: the kernel refuses it too (ELOOP), nothing lands
    }
    let mut cur = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                cur.pop();
            }
            Component::Normal(name) => {
                let next = cur.join(name);
                match std::fs::symlink_metadata(&next) {
                    Ok(m) if m.file_type().is_symlink() => {
                        let target = std::fs::read_link(&next).ok()?;
                        cur = real_location(&cur.join(target), depth + 1)?;
                    }
                    _ => cur = next,
                }
            }
        }
    }
    Some(cur)
}

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "a",
            "b",
            "f",
            "..",
            ".",
            "",
            "link_in",
            "link_out",
            "link_abs",
            "link_chain",
            "dangling_out",
            "dangling_in",
            "up",
            "to_secret",
            "loop",
            "outside",
            "ws",
            "secret",
            "new",
            "odd\u{FFFD}\u{FFFD}",
            "\0",
            "a\0b",
            "~",
        ])
        .prop_map(str::to_string),
        "[a-zé😀 .\\\\]{1,6}",
        (250usize..300).prop_map(|n| "x".repeat(n)),
    ]
}

fn model_path() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "/", "./", "//", "../"]),
        prop::collection::vec(component(), 0..7),
    )
        .prop_map(|(lead, parts)| format!("{lead}{}", parts.join("/")))
}

proptest! {
    #![proptest_config(cases())]

    /// Property: whatever path the model gives, a path `resolve` yields is
    /// under the workspace root as written, and where it really lands (all
    /// symlinks followed) is under the root too. Paths with NUL or absolute
    /// paths are never yielded.
    #[test]
    fn never_yields_a_path_outside_the_workspace(rel in model_path()) {
        let (_tmp, ws) = fixture();
        let root = ws.root();
        if let Ok(p) = ws.resolve(&rel) {
            prop_assert!(!rel.contains('\0'), "NUL path {rel:?} yielded {p:?}");
            prop_assert!(!rel.starts_with('/'), "absolute path {rel:?} yielded {p:?}");
            prop_assert!(p.starts_with(root), "{rel:?} -> {p:?} not under {root:?}");
            if let Some(real) = real_location(&p, 0) {
                prop_assert!(real.starts_with(root), "{rel:?} -> {p:?} lands at {real:?}");
            }
        }
    }

    /// Property: any string at all (arbitrary Unicode, control characters)
    /// either is refused or resolves under the root, even after following links.
    #[test]
    fn arbitrary_strings_stay_inside(rel in any::<String>()) {
        let (_tmp, ws) = fixture();
        if let Ok(p) = ws.resolve(&rel) {
            prop_assert!(p.starts_with(ws.root()));
            if let Some(real) = real_location(&p, 0) {
                prop_assert!(real.starts_with(ws.root()), "{rel:?} lands at {real:?}");
            }
        }
    }

    /// Property: a plain relative path of ordinary names, with no links and
    /// no `..`, is accepted and resolves to exactly `root/<path>`.
    #[test]
    fn plain_names_resolve_where_written(parts in prop::collection::vec("[a-z0-9_]{1,12}", 1..5)) {
        let (_tmp, ws) = fixture();
        let rel = parts.join("/");
        prop_assume!(!matches!(parts[0].as_str(), "f"));
        let p = ws.resolve(&rel).expect("plain path accepted");
        prop_assert_eq!(p, ws.root().join(&rel));
    }
}
