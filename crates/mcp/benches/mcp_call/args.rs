//! The bench's command line. Run without `--bench` (as `cargo test --benches` does) the
//! defaults are a small smoke configuration.

use troupe_store::Durability;

#[derive(Clone, Debug)]
pub struct Args {
    /// Tool steps per run (one run per variant per round).
    pub steps: usize,
    /// Rounds; each runs every variant once, interleaved.
    pub repeat: usize,
    /// Steps of the one untimed run per variant before the first round.
    pub warmup: usize,
    pub durability: Durability,
}

const USAGE: &str =
    "usage: mcp_call [--steps M] [--repeat R] [--warmup W] [--durability full|normal]";

pub fn parse_args() -> Result<Args, String> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut args = if raw.iter().any(|a| a == "--bench") {
        Args {
            steps: 200,
            repeat: 3,
            warmup: 20,
            durability: Durability::Full,
        }
    } else {
        Args {
            steps: 3,
            repeat: 1,
            warmup: 2,
            durability: Durability::Full,
        }
    };
    let mut it = raw.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value; {USAGE}"))
        };
        let count = |v: &String| {
            v.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{flag} wants a count of at least 1, not {v:?}"))
        };
        match flag.as_str() {
            "--bench" => {}
            "--steps" => args.steps = count(value()?)?,
            "--repeat" => args.repeat = count(value()?)?,
            "--warmup" => args.warmup = count(value()?)?,
            "--durability" => {
                let v = value()?;
                args.durability = v
                    .parse()
                    .map_err(|_| format!("--durability wants full or normal, not {v:?}"))?;
            }
            other => return Err(format!("unknown argument {other:?}; {USAGE}")),
        }
    }
    Ok(args)
}
