//! `troupe bench golden`: the shipped jobs can fail and can pass (scripts that do nothing fail
//! every job, scripts that do the work pass every one), a real OpenAI-compatible endpoint is
//! measured through the bench's proxy, an unreachable one counts nothing, and the progress
//! display redraws in a terminal and prints plain lines otherwise.

mod common;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_troupe"))
        .args(["bench", "golden"])
        .args(args)
        .output()
        .expect("run troupe bench golden")
}

/// `bench` on a blocking thread, so the test's runtime keeps serving the fake model meanwhile.
async fn bench_off_runtime(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        bench(&a)
    })
    .await
    .unwrap()
}

fn results(out: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json written");
    serde_json::from_str(&text).expect("results.json is JSON")
}

fn shipped_jobs() -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(repo().join("bench/golden"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            p.join("job.toml")
                .is_file()
                .then(|| p.file_name().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn every_shipped_job_fails_with_scripts_that_do_nothing_and_passes_with_scripts_that_do_the_work() {
    let jobs = shipped_jobs();
    assert!(jobs.len() >= 6, "the shipped jobs: {jobs:?}");
    let dir = tempfile::tempdir().unwrap();
    let jobs_dir = repo().join("bench/golden");
    for (set, want) in [("noop", false), ("work", true)] {
        let out = dir.path().join(set);
        let o = bench(&[
            "--jobs-dir",
            jobs_dir.to_str().unwrap(),
            "--script-set",
            set,
            "--out",
            out.to_str().unwrap(),
        ]);
        let rs = results(&out);
        let ran: Vec<&str> = rs.iter().map(|r| r["job"].as_str().unwrap()).collect();
        assert_eq!(ran, jobs, "every job ran once");
        for r in &rs {
            assert_eq!(
                r["passed"].as_bool(),
                Some(want),
                "{set}: job {} {}: {}",
                r["job"],
                if want { "failed" } else { "passed" },
                r["failure"]
            );
            if !want {
                assert!(r["failure"].as_str().is_some_and(|f| !f.is_empty()));
            }
        }
        assert_eq!(o.status.code(), Some(if want { 0 } else { 1 }), "{set}");
        let md = std::fs::read_to_string(out.join("results.md")).unwrap();
        let passed = if want { jobs.len() } else { 0 };
        assert!(
            md.contains(&format!("**{passed}/{} passed**", jobs.len())),
            "{md}"
        );
    }
}

/// A one-line job: write hello into a.txt.
fn hello_job(root: &Path) -> PathBuf {
    let jobs = root.join("jobs");
    let job = jobs.join("hello");
    std::fs::create_dir_all(job.join("fixture")).unwrap();
    std::fs::create_dir_all(job.join("scripts")).unwrap();
    std::fs::write(job.join("fixture/a.txt"), "old\n").unwrap();
    std::fs::write(
        job.join("job.toml"),
        r#"title = "Say hello"
[limits]
wall_secs = 120
[[lines]]
body = "Write hello into a.txt"
[[checks]]
kind = "file_matches"
path = "a.txt"
regex = "^hello"
"#,
    )
    .unwrap();
    std::fs::write(
        job.join("scripts/work.json"),
        json!({"steps": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hello\n"}}]},
            {"text": "Done."}
        ]})
        .to_string(),
    )
    .unwrap();
    jobs
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({"id": "c", "object": "chat.completion.chunk", "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

/// The fake model's answer, from the request alone: write the file, then say it is done. Each
/// answer reports 100 prompt tokens (40 of them cached) and 10 completion tokens.
fn answer(req: &Value) -> String {
    let done = req["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    let mut s = if done {
        chunk(json!({"role": "assistant", "content": "Done."}), None)
            + &chunk(json!({}), Some("stop"))
    } else {
        let call = json!({"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "write_file", "arguments": "{\"path\":\"a.txt\",\"content\":\"hello\\n\"}"}});
        chunk(json!({"role": "assistant", "tool_calls": [call]}), None)
            + &chunk(json!({}), Some("tool_calls"))
    };
    let usage = json!({"id": "c", "object": "chat.completion.chunk", "model": "fake", "choices": [],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110,
                  "prompt_tokens_details": {"cached_tokens": 40}}});
    s += &format!("data: {usage}\n\ndata: [DONE]\n\n");
    s
}

async fn fake_model() -> String {
    fake_model_keeping(Default::default()).await
}

/// The fake model, keeping every request's body in `seen`.
async fn fake_model_keeping(seen: std::sync::Arc<std::sync::Mutex<Vec<Value>>>) -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(req): axum::Json<Value>| async move {
            seen.lock().unwrap().push(req.clone());
            ([("content-type", "text/event-stream")], answer(&req))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_is_measured_through_the_proxy_calls_tokens_cost_and_prompt_reuse() {
    let root = tempfile::tempdir().unwrap();
    let jobs = hello_job(root.path());
    let url = fake_model().await;
    let out = root.path().join("out");
    let args: Vec<String> = [
        "--jobs-dir",
        jobs.to_str().unwrap(),
        "--base-url",
        &url,
        "--model",
        "fake",
        "--price-in",
        "2",
        "--price-out",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = bench_off_runtime(args).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = &results(&out)[0];
    assert_eq!(r["passed"], true, "{r}");
    assert_eq!(r["model_calls"], 2);
    assert_eq!(r["input_tokens"], 200);
    assert_eq!(r["cached_input_tokens"], 80);
    assert_eq!(r["output_tokens"], 20);
    assert_eq!(r["tool_calls"], 1);
    // 200 input tokens at 2 per million, 20 output tokens at 10 per million.
    assert!((r["cost"].as_f64().unwrap() - 0.0006).abs() < 1e-12, "{r}");
    let reuse = &r["prompt_reuse"];
    // The endpoint sees the Bot's two calls and the line reader's one (the reading role falls
    // back to the default endpoint); only the Bot's are model calls of the turn.
    assert_eq!(reuse["requests"], 3);
    // The second request repeats the first one's system prompt, tools and first line.
    let repeated = reuse["repeated_prefix_bytes"].as_u64().unwrap();
    assert!(repeated > 200, "{reuse}");
    assert!(repeated < reuse["request_bytes"].as_u64().unwrap());
}

/// `--max-output-tokens` caps every request to the measured endpoint (a reading's own smaller
/// cap stays), the results say so, and it is refused where no endpoint is measured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_cap_reaches_every_request_to_the_measured_endpoint() {
    let root = tempfile::tempdir().unwrap();
    let jobs = hello_job(root.path());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let url = fake_model_keeping(seen.clone()).await;
    let out = root.path().join("out");
    let args: Vec<String> = [
        "--jobs-dir",
        jobs.to_str().unwrap(),
        "--base-url",
        &url,
        "--model",
        "fake",
        "--max-output-tokens",
        "300",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = bench_off_runtime(args).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(results(&out)[0]["passed"], true);
    let caps: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|r| r["max_tokens"].clone())
        .collect();
    assert_eq!(
        caps,
        vec![json!(300); 3],
        "the Bot's two calls and the line reading"
    );
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(md.contains("replies capped at 300 tokens"), "{md}");

    let o = bench(&[
        "--jobs-dir",
        jobs.to_str().unwrap(),
        "--script-set",
        "work",
        "--max-output-tokens",
        "300",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--max-output-tokens caps the measured endpoint"),
        "{err}"
    );
}

#[test]
fn an_unreachable_endpoint_is_named_and_nothing_is_counted() {
    let root = tempfile::tempdir().unwrap();
    let jobs = hello_job(root.path());
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = root.path().join("out");
    let o = bench(&[
        "--jobs-dir",
        jobs.to_str().unwrap(),
        "--base-url",
        &format!("http://127.0.0.1:{port}/v1"),
        "--model",
        "m",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("could not reach the endpoint"), "{err}");
    assert!(err.contains("nothing was counted"), "{err}");
    assert!(!out.join("results.json").exists());
}

#[test]
fn progress_redraws_its_line_in_a_terminal_and_prints_plain_lines_otherwise() {
    let root = tempfile::tempdir().unwrap();
    let jobs = hello_job(root.path());
    let out = root.path().join("out");
    let cmd = format!(
        "{} bench golden --jobs-dir {} --script-set work --out {}",
        env!("CARGO_BIN_EXE_troupe"),
        jobs.display(),
        out.display()
    );
    // `script` runs the command under a pseudo-terminal and copies what it wrote.
    let tty = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script(1) from util-linux");
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert!(tty.status.success(), "{shown}");
    assert!(
        shown.contains("\r\x1b[Khello"),
        "the line is redrawn in place: {shown:?}"
    );
    assert!(shown.contains("pass"), "{shown:?}");

    let plain = Command::new("sh").args(["-c", &cmd]).output().unwrap();
    let text = String::from_utf8_lossy(&plain.stdout);
    assert!(plain.status.success());
    assert!(
        !text.contains('\x1b'),
        "no escape codes when piped: {text:?}"
    );
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("hello ")).collect();
    assert!(lines[0].contains("running"), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("pass")), "{lines:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_of_the_users_config_file_is_measured_through_the_proxy() {
    let root = tempfile::tempdir().unwrap();
    let jobs = hello_job(root.path());
    let url = fake_model().await;
    let config = root.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[endpoints.mine]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake\"\n\n[roles]\ndefault = \"mine\"\n"
        ),
    )
    .unwrap();
    let out = root.path().join("out");
    let args: Vec<String> = [
        "--jobs-dir",
        jobs.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--role",
        "default",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = bench_off_runtime(args).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = &results(&out)[0];
    assert_eq!(r["passed"], true, "{r}");
    // Measured through the proxy: the Bot's two requests and the line reader's were seen.
    assert_eq!(r["prompt_reuse"]["requests"], 3, "{r}");

    // A role the file gives no endpoint to, with no default either, is named.
    std::fs::write(&config, "[endpoints.mine]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n").unwrap();
    let o = bench(&[
        "--jobs-dir",
        jobs.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--role",
        "review",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no endpoint to role \"review\""), "{err}");
}

#[test]
fn a_job_that_uses_more_model_calls_than_its_limit_fails_naming_the_limit() {
    let root = tempfile::tempdir().unwrap();
    let jobs = hello_job(root.path());
    // The hello job's work takes two model calls; allow one.
    let toml = jobs.join("hello/job.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replace("wall_secs = 120", "wall_secs = 120\nmodel_calls = 1"),
    )
    .unwrap();
    let out = root.path().join("out");
    let o = bench(&[
        "--jobs-dir",
        jobs.to_str().unwrap(),
        "--script-set",
        "work",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let r = &results(&out)[0];
    assert_eq!(r["passed"], false, "{r}");
    assert_eq!(r["failure"], "model-call limit of 1 reached", "{r}");
}
