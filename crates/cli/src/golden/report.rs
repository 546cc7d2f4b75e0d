//! The bench's results: `results.json` (one object per job and run), `results.md` (a table),
//! and the same table printed at the end.

use super::runner::RunResult;
use anyhow::{Context, Result};
use std::fmt::Write;
use std::path::Path;

pub fn write(out: &Path, header: &str, results: &[RunResult]) -> Result<String> {
    std::fs::create_dir_all(out)?;
    let json = serde_json::to_string_pretty(results)?;
    std::fs::write(out.join("results.json"), json + "\n")
        .with_context(|| format!("cannot write {}", out.join("results.json").display()))?;
    let table = markdown(header, results);
    std::fs::write(out.join("results.md"), &table)?;
    Ok(table)
}

fn tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

fn secs(ms: u64) -> String {
    format!("{:.1}", ms as f64 / 1000.0)
}

pub fn markdown(header: &str, results: &[RunResult]) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "{header}\n");
    let _ = writeln!(
        t,
        "| job | run | result | model calls | input tokens | cached | output tokens | prompt reuse | wall s | model s | tool calls | commands | cost |"
    );
    let _ = writeln!(t, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in results {
        let verdict = match &r.failure {
            None => "pass".to_string(),
            Some(why) => format!("FAIL: {}", why.replace('|', "\\|")),
        };
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.job,
            r.run,
            verdict,
            r.usage.model_calls,
            tokens(r.usage.input_tokens),
            tokens(r.usage.cached_input_tokens),
            tokens(r.usage.output_tokens),
            r.prompt_reuse
                .as_ref()
                .and_then(|p| p.share())
                .map_or("–".into(), |s| format!("{:.0}%", s * 100.0)),
            secs(r.wall_ms),
            secs(r.usage.model_ms),
            r.usage.tool_calls,
            r.usage.shell_commands,
            r.cost.map_or("–".into(), |c| format!("{c:.4}")),
        );
    }
    let passed = results.iter().filter(|r| r.passed).count();
    let sum = |f: fn(&RunResult) -> u64| results.iter().map(f).sum::<u64>();
    let (bytes, repeated) = results
        .iter()
        .filter_map(|r| r.prompt_reuse.as_ref())
        .fold((0, 0), |(b, p), r| {
            (b + r.request_bytes, p + r.repeated_prefix_bytes)
        });
    let _ = writeln!(
        t,
        "| **total** | | **{passed}/{} passed** | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        results.len(),
        sum(|r| r.usage.model_calls),
        tokens(sum(|r| r.usage.input_tokens)),
        tokens(sum(|r| r.usage.cached_input_tokens)),
        tokens(sum(|r| r.usage.output_tokens)),
        if bytes > 0 {
            format!("{:.0}%", repeated as f64 * 100.0 / bytes as f64)
        } else {
            "–".into()
        },
        secs(sum(|r| r.wall_ms)),
        secs(sum(|r| r.usage.model_ms)),
        sum(|r| r.usage.tool_calls),
        sum(|r| r.usage.shell_commands),
        if results.iter().all(|r| r.cost.is_some()) && !results.is_empty() {
            format!("{:.4}", results.iter().filter_map(|r| r.cost).sum::<f64>())
        } else {
            "–".into()
        },
    );
    t
}
