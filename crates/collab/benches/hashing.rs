//! A submission's streamed SHA-256 (issue 15): `submissions::files::sha256_file` on a 1 GiB
//! file of pseudo-random bytes against `sha256sum` on the same file, and the memory the
//! hashing takes.
//!
//! The file is written once in a temp dir and read once before timing, so both hash it from
//! the page cache. Then three rounds, each timing `sha256_file` and then `sha256sum`; each
//! side's best is reported with their ratio. `sha256_file` runs in a child process (this bench
//! re-executed with `--child <path>`) that reads its own `VmRSS` and `VmHWM` from
//! /proc/self/status before and after hashing: the peak's growth over the resident size at the
//! start is what hashing 1 GiB cost in memory. `openssl dgst -sha256`, when installed, is
//! timed too, as a reference that uses the CPU's SHA instructions. All are timed from outside
//! (spawn to exit), so process start-up is in each. All must give the same digest.
//!
//! cargo bench -p troupe-collab --bench hashing -- [--mib 1024] [--rounds 3]
//!
//! Run without `--bench` (as `cargo test --benches` does) it hashes 8 MiB once.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use troupe_collab::submissions::files::sha256_file;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A `kB` field of /proc/self/status.
fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// The child: hash the file and print `digest size rss_before_kb hwm_before_kb hwm_after_kb`.
fn child(path: &Path) {
    let rss_before = status_kb("VmRSS");
    let hwm_before = status_kb("VmHWM");
    let (hex, size) = sha256_file(path).expect("hashing the file");
    let hwm_after = status_kb("VmHWM");
    println!("{hex} {size} {rss_before} {hwm_before} {hwm_after}");
}

/// `mib` MiB of xorshift64* bytes, written 1 MiB at a time.
fn write_random(path: &Path, mib: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut block = vec![0u8; 1 << 20];
    for _ in 0..mib {
        for chunk in block.chunks_exact_mut(8) {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            chunk.copy_from_slice(&state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        f.write_all(&block).unwrap();
    }
    f.flush().unwrap();
}

struct Ours {
    took: Duration,
    hex: String,
    size: u64,
    rss_before_kb: u64,
    growth_kb: u64,
}

fn time_ours(path: &Path) -> Ours {
    let exe = std::env::current_exe().unwrap();
    let t0 = Instant::now();
    let out = Command::new(exe).arg("--child").arg(path).output().unwrap();
    let took = t0.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).unwrap();
    let f: Vec<&str> = line.split_whitespace().collect();
    let n = |i: usize| f[i].parse::<u64>().unwrap();
    Ours {
        took,
        hex: f[0].to_string(),
        size: n(1),
        rss_before_kb: n(2),
        // The peak after hashing over the larger of the resident size and the peak at the start.
        growth_kb: n(4).saturating_sub(n(2).max(n(3))),
    }
}

fn time_sha256sum(path: &Path) -> (Duration, String) {
    let t0 = Instant::now();
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    let took = t0.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).unwrap();
    (took, line.split_whitespace().next().unwrap().to_string())
}

/// `openssl dgst -sha256` (SHA-NI where the CPU has it), as a second reference when installed:
/// coreutils' `sha256sum` may be built without it.
fn time_openssl(path: &Path) -> Option<(Duration, String)> {
    let t0 = Instant::now();
    let out = Command::new("openssl")
        .args(["dgst", "-sha256", "-r"])
        .arg(path)
        .output()
        .ok()?;
    let took = t0.elapsed();
    if !out.status.success() {
        return None;
    }
    let line = String::from_utf8(out.stdout).ok()?;
    Some((took, line.split_whitespace().next()?.to_string()))
}

fn load1() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(Path::new(&args[i + 1]));
        return;
    }
    let full = args.iter().any(|a| a == "--bench");
    let mib = arg("--mib", if full { 1024 } else { 8 }).max(1);
    let rounds = arg("--rounds", if full { 3 } else { 1 }).max(1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("submission.bin");
    let t0 = Instant::now();
    write_random(&path, mib);
    eprintln!(
        "hashing: wrote {mib} MiB in {:.1} s; {rounds} rounds, load1 {}",
        t0.elapsed().as_secs_f64(),
        load1()
    );
    // Read once so that both sides hash from the page cache.
    let (_, expected) = time_sha256sum(&path);
    let (mut best_ours, mut best_theirs) = (Duration::MAX, Duration::MAX);
    let mut best_openssl: Option<Duration> = None;
    let mut growth_kb = 0;
    let mut rss_kb = 0;
    for r in 0..rounds {
        let ours = time_ours(&path);
        assert_eq!(ours.hex, expected, "sha256_file and sha256sum agree");
        assert_eq!(ours.size, (mib as u64) << 20, "the size counted");
        let (theirs, hex) = time_sha256sum(&path);
        assert_eq!(hex, expected);
        let openssl = time_openssl(&path).map(|(took, hex)| {
            assert_eq!(hex, expected, "openssl agrees");
            took
        });
        eprintln!(
            "round {}: sha256_file {:.3} s (peak +{} KiB over {} KiB resident), sha256sum {:.3} s, openssl {}",
            r + 1,
            secs(ours.took),
            ours.growth_kb,
            ours.rss_before_kb,
            secs(theirs),
            openssl.map_or("-".into(), |d| format!("{:.3} s", secs(d)))
        );
        if let Some(d) = openssl {
            best_openssl = Some(best_openssl.map_or(d, |b| b.min(d)));
        }
        best_ours = best_ours.min(ours.took);
        best_theirs = best_theirs.min(theirs);
        growth_kb = growth_kb.max(ours.growth_kb);
        rss_kb = ours.rss_before_kb;
    }
    let mb_s = |d: Duration| mib as f64 / d.as_secs_f64();
    println!(
        "result bench=hashing mib={mib} rounds={rounds} load1={} sha256_file_best_s={:.3} \
         sha256sum_best_s={:.3} ratio={:.3} sha256_file_mib_s={:.0} sha256sum_mib_s={:.0} \
         rss_start_kib={rss_kb} peak_growth_kib={growth_kb} openssl_best_s={}",
        load1(),
        secs(best_ours),
        secs(best_theirs),
        secs(best_ours) / secs(best_theirs),
        mb_s(best_ours),
        mb_s(best_theirs),
        best_openssl.map_or("-".into(), |d| format!("{:.3}", secs(d))),
    );
}
