//! Path confinement: every escape route is refused, ordinary paths work.

use std::fs;
use std::os::unix::fs::symlink;

use troupe_tools::{ToolContext, ToolError, Workspace, parse_call};

struct Fixture {
    _inside: tempfile::TempDir,
    outside: tempfile::TempDir,
    ws: Workspace,
}

fn fixture() -> Fixture {
    let inside = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.txt"), "TOP SECRET").unwrap();
    let ws = Workspace::open(inside.path()).unwrap();
    Fixture {
        _inside: inside,
        outside,
        ws,
    }
}

async fn run(ws: &Workspace, tool: &str, args: &str) -> troupe_tools::ToolOutput {
    let ctx = ToolContext::new(ws.clone());
    parse_call(tool, args).unwrap().execute(&ctx).await
}

#[test]
fn open_requires_existing_directory() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Workspace::open(dir.path().join("missing")),
        Err(ToolError::RootUnavailable { .. })
    ));
    let file = dir.path().join("f");
    fs::write(&file, "x").unwrap();
    assert!(matches!(
        Workspace::open(&file),
        Err(ToolError::RootNotDirectory { .. })
    ));
    let ws = Workspace::open(dir.path()).unwrap();
    assert_eq!(ws.root(), fs::canonicalize(dir.path()).unwrap());
}

#[test]
fn dotdot_escapes_are_refused() {
    let f = fixture();
    let err = f.ws.resolve("../x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "path '../x' is outside the workspace (it must stay under the workspace root)"
    );
    assert!(matches!(
        f.ws.resolve("a/../../x"),
        Err(ToolError::OutsideWorkspace { .. })
    ));
    assert!(matches!(
        f.ws.resolve("./.."),
        Err(ToolError::OutsideWorkspace { .. })
    ));
}

#[test]
fn absolute_paths_outside_and_empty_paths_are_refused() {
    let f = fixture();
    let err = f.ws.resolve("/etc/passwd").unwrap_err();
    assert!(matches!(err, ToolError::AbsolutePath { .. }));
    assert!(
        err.to_string()
            .contains("'/etc/passwd' is absolute and not under the workspace"),
        "{err}"
    );
    let sneaky = format!("{}/../x", f.ws.root().display());
    assert!(matches!(
        f.ws.resolve(&sneaky),
        Err(ToolError::AbsolutePath { .. })
    ));
    assert!(matches!(f.ws.resolve(""), Err(ToolError::EmptyPath)));
    assert!(matches!(f.ws.resolve("  "), Err(ToolError::EmptyPath)));
}

#[test]
fn ordinary_paths_resolve_under_root() {
    let f = fixture();
    let root = f.ws.root().to_path_buf();
    assert_eq!(f.ws.resolve("a/b/c.txt").unwrap(), root.join("a/b/c.txt"));
    assert_eq!(f.ws.resolve("a/../b").unwrap(), root.join("b"));
    assert_eq!(f.ws.resolve(".").unwrap(), root);
    fs::create_dir_all(root.join("a/b")).unwrap();
    fs::write(root.join("a/b/c.txt"), "x").unwrap();
    assert_eq!(f.ws.resolve("a/b/c.txt").unwrap(), root.join("a/b/c.txt"));
    // A path through a regular file is not an escape; using it just fails.
    assert!(f.ws.resolve("a/b/c.txt/d").is_ok());
}

#[tokio::test]
async fn symlinked_file_pointing_outside_is_refused() {
    let f = fixture();
    let secret = f.outside.path().join("secret.txt");
    symlink(&secret, f.ws.root().join("link")).unwrap();
    assert!(matches!(
        f.ws.resolve("link"),
        Err(ToolError::SymlinkEscape { .. })
    ));

    let read = run(&f.ws, "read_file", r#"{"path":"link"}"#).await;
    assert!(read.is_error);
    assert!(
        read.content.contains("outside the workspace"),
        "{}",
        read.content
    );
    assert!(!read.content.contains("TOP SECRET"));

    let write = run(&f.ws, "write_file", r#"{"path":"link","content":"pwned"}"#).await;
    assert!(write.is_error, "{}", write.content);
    assert_eq!(fs::read_to_string(&secret).unwrap(), "TOP SECRET");

    let delete = run(&f.ws, "delete_file", r#"{"path":"link"}"#).await;
    assert!(delete.is_error);
    assert!(secret.exists());
}

#[tokio::test]
async fn symlinked_directory_pointing_outside_is_refused() {
    let f = fixture();
    symlink(f.outside.path(), f.ws.root().join("ldir")).unwrap();
    for p in [
        "ldir",
        "ldir/secret.txt",
        "ldir/new.txt",
        "ldir/deep/new.txt",
    ] {
        assert!(
            matches!(f.ws.resolve(p), Err(ToolError::SymlinkEscape { .. })),
            "{p}"
        );
    }
    let write = run(
        &f.ws,
        "write_file",
        r#"{"path":"ldir/new.txt","content":"pwned"}"#,
    )
    .await;
    assert!(write.is_error);
    assert!(!f.outside.path().join("new.txt").exists());
    let list = run(&f.ws, "list_dir", r#"{"path":"ldir"}"#).await;
    assert!(list.is_error);
    assert!(!list.content.contains("secret.txt"));
    let shell = run(&f.ws, "shell", r#"{"command":"pwd","workdir":"ldir"}"#).await;
    assert!(shell.is_error);
    assert!(shell.shell.is_none(), "must not start a process");
}

#[tokio::test]
async fn dangling_symlink_pointing_outside_is_refused() {
    let f = fixture();
    let target = f.outside.path().join("created.txt");
    symlink(&target, f.ws.root().join("dangling")).unwrap();
    assert!(matches!(
        f.ws.resolve("dangling"),
        Err(ToolError::SymlinkEscape { .. })
    ));
    let write = run(&f.ws, "write_file", r#"{"path":"dangling","content":"x"}"#).await;
    assert!(write.is_error);
    assert!(!target.exists());
}

#[tokio::test]
async fn symlinks_staying_inside_are_allowed() {
    let f = fixture();
    let root = f.ws.root();
    fs::create_dir(root.join("real")).unwrap();
    fs::write(root.join("real/a.txt"), "inside").unwrap();
    symlink("real/a.txt", root.join("alias")).unwrap();
    symlink("real", root.join("rdir")).unwrap();
    assert!(f.ws.resolve("alias").is_ok());
    assert!(f.ws.resolve("rdir/a.txt").is_ok());
    let read = run(&f.ws, "read_file", r#"{"path":"rdir/a.txt"}"#).await;
    assert_eq!(read.content, "inside");
    // Writing through an inside link updates its target, keeping the link.
    let write = run(&f.ws, "write_file", r#"{"path":"alias","content":"new"}"#).await;
    assert!(!write.is_error, "{}", write.content);
    assert_eq!(fs::read_to_string(root.join("real/a.txt")).unwrap(), "new");
    assert!(
        fs::symlink_metadata(root.join("alias"))
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn an_absolute_path_under_the_root_is_taken() {
    let f = fixture();
    let root = f.ws.root().to_path_buf();
    let given = format!("{}/src/./lib.rs", root.display());
    assert_eq!(f.ws.resolve(&given).unwrap(), root.join("src/lib.rs"));
}

/// A job's thread works in its job's folder but may reach the conversation's folder above it.
#[tokio::test]
async fn a_working_folder_starts_relative_paths_and_dotdot_reaches_up_to_the_root() {
    let root = tempfile::tempdir().unwrap();
    let job = root.path().join("jobs/1-fix");
    fs::create_dir_all(&job).unwrap();
    fs::write(root.path().join("stats.py"), "median").unwrap();
    let ws = Workspace::open_in(root.path(), &job).unwrap();
    let real = fs::canonicalize(root.path()).unwrap();
    assert_eq!(ws.root(), real);
    assert_eq!(ws.base(), real.join("jobs/1-fix"));
    assert_eq!(
        ws.resolve("out.md").unwrap(),
        real.join("jobs/1-fix/out.md")
    );
    assert_eq!(ws.resolve("../../stats.py").unwrap(), real.join("stats.py"));
    assert!(matches!(
        ws.resolve("../../../x"),
        Err(ToolError::OutsideWorkspace { .. })
    ));
    let read = run(&ws, "read_file", r#"{"path":"../../stats.py"}"#).await;
    assert!(!read.is_error, "{}", read.content);
    assert!(read.content.contains("median"), "{}", read.content);
    let shell = run(&ws, "shell", r#"{"command":"pwd"}"#).await;
    assert_eq!(
        shell.shell.unwrap().output_tail.trim(),
        real.join("jobs/1-fix").to_str().unwrap()
    );
}

/// A path that misses in the working folder but names a file at the top says where it is.
#[tokio::test]
async fn a_file_missing_in_the_working_folder_but_at_the_top_is_pointed_at() {
    let root = tempfile::tempdir().unwrap();
    let job = root.path().join("jobs/1-fix");
    fs::create_dir_all(&job).unwrap();
    fs::write(root.path().join("stats.py"), "median").unwrap();
    let ws = Workspace::open_in(root.path(), &job).unwrap();
    let read = run(&ws, "read_file", r#"{"path":"stats.py"}"#).await;
    assert!(read.is_error);
    assert!(
        read.content.contains("cannot read 'stats.py'")
            && read.content.contains("from here that is '../../stats.py'"),
        "{}",
        read.content
    );
    // Missing at the top as well: the plain error, no pointer.
    let neither = run(&ws, "read_file", r#"{"path":"nope.py"}"#).await;
    assert!(
        neither.is_error && !neither.content.contains("from here"),
        "{}",
        neither.content
    );
    // A thread working at the top gets no pointer either.
    let top = Workspace::open(root.path()).unwrap();
    let miss = run(&top, "read_file", r#"{"path":"jobs/stats.py"}"#).await;
    assert!(
        miss.is_error && !miss.content.contains("from here"),
        "{}",
        miss.content
    );
}

#[test]
fn a_working_folder_outside_the_root_is_refused() {
    let f = fixture();
    let err = Workspace::open_in(f.ws.root(), f.outside.path()).unwrap_err();
    assert!(
        err.to_string().contains("is not inside the workspace root"),
        "{err}"
    );
}
