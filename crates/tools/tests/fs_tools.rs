//! The file tools, driven the way the engine drives them: parse, execute.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use troupe_tools::{ToolContext, ToolOutput, Workspace, parse_call};

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    (dir, ws)
}

async fn run(ws: &Workspace, tool: &str, args: serde_json::Value) -> ToolOutput {
    let ctx = ToolContext::new(ws.clone());
    parse_call(tool, &args.to_string())
        .unwrap()
        .execute(&ctx)
        .await
}

#[tokio::test]
async fn write_then_read_round_trips() {
    let (_d, ws) = workspace();
    let text = "line one\nläne two ✓\n";
    let w = run(
        &ws,
        "write_file",
        serde_json::json!({"path": "notes/deep/a.md", "content": text}),
    )
    .await;
    assert!(!w.is_error, "{}", w.content);
    assert_eq!(
        w.content,
        format!("wrote {} bytes to notes/deep/a.md", text.len())
    );
    let r = run(
        &ws,
        "read_file",
        serde_json::json!({"path": "notes/deep/a.md"}),
    )
    .await;
    assert!(!r.is_error);
    assert_eq!(r.content, text);
}

#[tokio::test]
async fn write_without_create_dirs_needs_parent() {
    let (_d, ws) = workspace();
    let w = run(
        &ws,
        "write_file",
        serde_json::json!({"path": "missing/a.md", "content": "x", "create_dirs": false}),
    )
    .await;
    assert!(w.is_error);
    assert!(w.content.contains("create_dirs"), "{}", w.content);
    assert!(!ws.root().join("missing").exists());
}

#[tokio::test]
async fn atomic_write_leaves_no_temp_files_and_keeps_mode() {
    let (_d, ws) = workspace();
    let path = ws.root().join("run.sh");
    fs::write(&path, "old").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o750)).unwrap();
    for i in 0..5 {
        let content = format!("#!/bin/sh\necho {i}\n");
        let w = run(
            &ws,
            "write_file",
            serde_json::json!({"path": "run.sh", "content": content}),
        )
        .await;
        assert!(!w.is_error, "{}", w.content);
        assert_eq!(fs::read_to_string(&path).unwrap(), content);
    }
    let names: Vec<_> = fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec!["run.sh".to_string()]);
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
}

#[tokio::test]
async fn write_refuses_directory_and_root() {
    let (_d, ws) = workspace();
    fs::create_dir(ws.root().join("d")).unwrap();
    let w = run(
        &ws,
        "write_file",
        serde_json::json!({"path": "d", "content": "x"}),
    )
    .await;
    assert!(w.is_error);
    assert!(w.content.contains("is a directory"));
    let w = run(
        &ws,
        "write_file",
        serde_json::json!({"path": ".", "content": "x"}),
    )
    .await;
    assert!(w.is_error);
}

#[tokio::test]
async fn delete_removes_files_only() {
    let (_d, ws) = workspace();
    fs::create_dir(ws.root().join("dir")).unwrap();
    fs::write(ws.root().join("f.txt"), "x").unwrap();

    let d = run(&ws, "delete_file", serde_json::json!({"path": "dir"})).await;
    assert!(d.is_error);
    assert_eq!(
        d.content,
        "'dir' is a directory; delete_file only deletes files"
    );
    assert!(ws.root().join("dir").is_dir());

    let d = run(&ws, "delete_file", serde_json::json!({"path": "."})).await;
    assert!(d.is_error);
    assert!(d.content.contains("workspace root"));

    let d = run(&ws, "delete_file", serde_json::json!({"path": "f.txt"})).await;
    assert!(!d.is_error, "{}", d.content);
    assert!(!ws.root().join("f.txt").exists());

    let d = run(&ws, "delete_file", serde_json::json!({"path": "f.txt"})).await;
    assert!(d.is_error);
    assert!(
        d.content.starts_with("cannot delete 'f.txt'"),
        "{}",
        d.content
    );
}

#[tokio::test]
async fn list_dir_is_sorted_and_marks_directories() {
    let (_d, ws) = workspace();
    let root = ws.root();
    fs::write(root.join("b.txt"), "").unwrap();
    fs::create_dir(root.join("a")).unwrap();
    fs::write(root.join("C.md"), "").unwrap();
    fs::create_dir(root.join("z")).unwrap();
    fs::write(root.join("a/inner"), "").unwrap();
    let l = run(&ws, "list_dir", serde_json::json!({})).await;
    assert!(!l.is_error);
    assert_eq!(l.content, "C.md\na/\nb.txt\nz/\n");
    let l = run(&ws, "list_dir", serde_json::json!({"path": "z"})).await;
    assert_eq!(l.content, "(empty directory)");
    let l = run(&ws, "list_dir", serde_json::json!({"path": "b.txt"})).await;
    assert!(l.is_error);
}

#[tokio::test]
async fn list_dir_caps_entries() {
    let (_d, ws) = workspace();
    for i in 0..1003 {
        fs::write(ws.root().join(format!("f{i:04}")), "").unwrap();
    }
    let l = run(&ws, "list_dir", serde_json::json!({"path": "."})).await;
    let lines: Vec<_> = l.content.lines().collect();
    assert_eq!(lines.len(), 1001);
    assert_eq!(lines[0], "f0000");
    assert_eq!(lines[999], "f0999");
    assert!(lines[1000].contains("3 more not shown"), "{}", lines[1000]);
}

#[tokio::test]
async fn read_refuses_binary_and_directories() {
    let (_d, ws) = workspace();
    fs::write(ws.root().join("bin"), b"ELF\0\x01\x02").unwrap();
    let r = run(&ws, "read_file", serde_json::json!({"path": "bin"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("binary"), "{}", r.content);
    let r = run(
        &ws,
        "read_file",
        serde_json::json!({"path": "bin", "limit_lines": 1}),
    )
    .await;
    assert!(r.is_error);
    let r = run(&ws, "read_file", serde_json::json!({"path": "."})).await;
    assert!(r.is_error);
    assert!(r.content.contains("list_dir"));
    let r = run(&ws, "read_file", serde_json::json!({"path": "nope"})).await;
    assert!(r.is_error);
    assert!(r.content.starts_with("cannot read 'nope'"), "{}", r.content);
}

#[tokio::test]
async fn large_files_need_a_range() {
    let (_d, ws) = workspace();
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef012345678\n"; // 58 bytes
    let n = (1024 * 1024 / line.len()) + 10;
    let big: String = (0..n).map(|i| format!("{i:06} {line}")).collect();
    fs::write(ws.root().join("big.txt"), &big).unwrap();

    let r = run(&ws, "read_file", serde_json::json!({"path": "big.txt"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("offset_line"), "{}", r.content);

    let r = run(
        &ws,
        "read_file",
        serde_json::json!({"path": "big.txt", "offset_line": 3, "limit_lines": 2}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(r.content, format!("000002 {line}000003 {line}"));

    let r = run(
        &ws,
        "read_file",
        serde_json::json!({"path": "big.txt", "offset_line": n + 5}),
    )
    .await;
    assert!(r.is_error);
    assert!(
        r.content.contains(&format!("has {n} lines")),
        "{}",
        r.content
    );

    // An open-ended range still stops at the 1 MiB output cap.
    let r = run(
        &ws,
        "read_file",
        serde_json::json!({"path": "big.txt", "offset_line": 1}),
    )
    .await;
    assert!(!r.is_error);
    assert!(r.content.len() <= 1024 * 1024 + 200);
    assert!(r.content.contains("continue with offset_line"));
}

/// A 1x1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f,
    0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47, 0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

async fn read_for(ws: &Workspace, path: &str, takes_pictures: bool) -> ToolOutput {
    let ctx = ToolContext::new(ws.clone());
    parse_call("read_file", &serde_json::json!({"path": path}).to_string())
        .unwrap()
        .execute_for(&ctx, takes_pictures)
        .await
}

#[tokio::test]
async fn a_picture_is_named_by_a_marker_for_a_model_that_takes_pictures() {
    let (_d, ws) = workspace();
    fs::write(ws.root().join("dot.png"), PNG).unwrap();
    let r = read_for(&ws, "dot.png", true).await;
    assert!(!r.is_error, "{}", r.content);
    let (first, rest) = r.content.split_once('\n').unwrap();
    let (path, sha) = troupe_tools::parse_picture_marker(first).unwrap();
    assert_eq!(path, "dot.png");
    assert_eq!(
        sha,
        troupe_tools::load_picture(&ws, "dot.png")
            .unwrap()
            .unwrap()
            .sha256
    );
    assert_eq!(
        rest,
        "dot.png: a PNG picture (image/png), 70 bytes, 1x1 pixels."
    );
    // `execute` is for a model that does not take pictures.
    let plain = run(&ws, "read_file", serde_json::json!({"path": "dot.png"})).await;
    assert_eq!(plain, read_for(&ws, "dot.png", false).await);
}

#[tokio::test]
async fn a_picture_is_described_without_its_bytes_for_a_model_that_cannot_see() {
    let (_d, ws) = workspace();
    // A GIF by its bytes, though named .jpg: the bytes decide the type.
    fs::write(
        ws.root().join("x.jpg"),
        b"GIF89a\x02\x00\x03\x00\x00\x00\x00;",
    )
    .unwrap();
    let r = read_for(&ws, "x.jpg", false).await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        r.content,
        "x.jpg: a GIF picture (image/gif), 14 bytes, 2x3 pixels. This model cannot see \
         pictures, so the picture is not shown (its bytes are not text)."
    );
    assert!(troupe_tools::parse_picture_marker(&r.content).is_none());
}

#[tokio::test]
async fn a_file_named_as_a_picture_that_is_not_one_is_read_as_text() {
    let (_d, ws) = workspace();
    fs::write(ws.root().join("notes.png"), "plain words\n").unwrap();
    let r = read_for(&ws, "notes.png", true).await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(r.content, "plain words\n");
}

#[tokio::test]
async fn a_picture_over_five_mib_is_refused_with_the_limit() {
    let (_d, ws) = workspace();
    let mut big = PNG.to_vec();
    big.resize(troupe_tools::MAX_PICTURE_BYTES as usize + 1, 0);
    fs::write(ws.root().join("big.png"), &big).unwrap();
    for takes_pictures in [true, false] {
        let r = read_for(&ws, "big.png", takes_pictures).await;
        assert!(r.is_error);
        assert_eq!(
            r.content,
            format!(
                "'big.png' is a picture of {} bytes, over the 5 MiB limit for pictures",
                big.len()
            )
        );
    }
}
