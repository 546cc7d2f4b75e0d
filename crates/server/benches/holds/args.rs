//! The bench's flags: which part runs and how big, with the small smoke-run sizes when run
//! without `--bench` (as `cargo test --benches` does).

pub struct Opts {
    pub part: String,
    pub live: usize,
    pub samples: usize,
    pub term_ignored: usize,
    pub holds: usize,
    pub threads: usize,
    pub steps: usize,
    pub rounds: usize,
}

pub fn opts() -> Opts {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes --bench; without it (`cargo test --benches`) a smoke run.
    let mut o = if args.iter().any(|a| a == "--bench") {
        Opts {
            part: "both".into(),
            live: 100,
            samples: 30,
            term_ignored: 1,
            holds: 1000,
            threads: 30,
            steps: 10,
            rounds: 3,
        }
    } else {
        Opts {
            part: "both".into(),
            live: 3,
            samples: 2,
            term_ignored: 0,
            holds: 6,
            threads: 2,
            steps: 2,
            rounds: 1,
        }
    };
    let mut i = 0;
    while i < args.len() {
        let val = || -> usize {
            args.get(i + 1)
                .and_then(|v| v.parse().ok())
                .expect("a number after the flag")
        };
        match args[i].as_str() {
            "--part" => o.part = args.get(i + 1).expect("make, kernel or both").clone(),
            "--live" => o.live = val().max(1),
            "--samples" => o.samples = val().max(1),
            "--term-ignored" => o.term_ignored = val(),
            "--holds" => o.holds = val(),
            "--threads" => o.threads = val().max(1),
            "--steps" => o.steps = val().max(1),
            "--rounds" => o.rounds = val().max(1),
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    assert!(
        matches!(o.part.as_str(), "make" | "kernel" | "both"),
        "--part is make, kernel or both"
    );
    o
}
