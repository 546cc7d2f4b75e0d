//! Small measures for the report: quantiles, times in readable units, the process's CPU time
//! and the machine's load.

use std::time::Duration;

/// The q-quantile (0..=1) of sorted values, nearest rank; 0 for none.
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Nanoseconds as µs (or ms past 10 ms).
pub fn show(ns: u64) -> String {
    if ns >= 10_000_000 {
        format!("{:.1}ms", ns as f64 / 1e6)
    } else {
        format!("{}us", ns / 1000)
    }
}

/// A signed difference of nanoseconds, in the units of [`show`].
pub fn show_diff(a: u64, b: u64) -> String {
    show_signed(a as i64 - b as i64)
}

/// A signed count of nanoseconds, in the units of [`show`].
pub fn show_signed(ns: i64) -> String {
    let sign = if ns >= 0 { "+" } else { "-" };
    format!("{sign}{}", show(ns.unsigned_abs()))
}

/// User plus system CPU time of this process so far (not the MCP server's: another process).
pub fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the `rusage` it is given; on failure the zeroed value stays,
    // which is a valid `rusage`.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The 1-minute load average, so a busy machine shows in the report.
pub fn load1() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// How many CPUs this process may run on.
pub fn cpus() -> usize {
    std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(0)
}
