//! Running ffmpeg for the checks' evidence: one call with a time limit, its process ended if
//! it runs over or its caller goes away. None when ffmpeg is missing, fails or runs too long.

use std::process::Stdio;
use std::time::Duration;

/// Which of ffmpeg's outputs the caller reads: a picture or raw frames on standard output, or
/// the log (scene detection's `showinfo`) on standard error.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    Stdout,
    Stderr,
}

pub(crate) async fn ffmpeg(args: &[&str], keep: Keep, limit: Duration) -> Option<Vec<u8>> {
    let piped = |k: Keep| {
        if k == keep {
            Stdio::piped()
        } else {
            Stdio::null()
        }
    };
    let child = tokio::process::Command::new("ffmpeg")
        .args(["-hide_banner", "-nostdin"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(piped(Keep::Stdout))
        .stderr(piped(Keep::Stderr))
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let out = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    out.status.success().then_some(match keep {
        Keep::Stdout => out.stdout,
        Keep::Stderr => out.stderr,
    })
}
