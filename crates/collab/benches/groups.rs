//! Routing a person's lines in a large group: see `troupe_collab::bench_groups` (also run as
//! `troupe bench groups`).
//!
//! cargo bench -p troupe-collab --bench groups -- [--lines 1000] [--bots 20] [--durability normal]

use troupe_collab::bench_groups::{GroupsBench, run};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn durability() -> troupe_store::Durability {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--durability") {
        Some(i) => args
            .get(i + 1)
            .map(String::as_str)
            .unwrap_or("")
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
        None => troupe_store::Durability::Full,
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let opts = GroupsBench {
        lines: arg("--lines", 1000),
        bots: arg("--bots", 20),
        durability: durability(),
    };
    let dir = tempfile::tempdir().unwrap();
    let report = run(dir.path(), opts).await.unwrap();
    println!("{}", report.result_line());
}
