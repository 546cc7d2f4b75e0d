//! What a delivered video is, for checks from the user's words (CW-17): the real probe runs
//! `ffprobe -v error -show_streams -show_format -of json <file>` and reads it with core's
//! display geometry; tests put a double in its place. A missing ffprobe, a file it cannot
//! read or output that is not ffprobe's is an error: no evidence either way.

use async_trait::async_trait;
use std::path::Path;
use std::time::Duration;
use troupe_core::words_check::probe::{MediaFacts, parse_ffprobe};

/// Reads the facts a check from words measures out of a video file.
#[async_trait]
pub trait MediaProbe: Send + Sync {
    /// The file's facts, or one line saying why they could not be read.
    async fn probe(&self, file: &Path) -> Result<MediaFacts, String>;
}

/// The real probe: `ffprobe` on the PATH (or the program given).
#[derive(Clone, Debug)]
pub struct Ffprobe {
    pub program: String,
    /// A probe that hangs gives no evidence.
    pub timeout: Duration,
}

impl Default for Ffprobe {
    fn default() -> Self {
        Ffprobe {
            program: "ffprobe".into(),
            timeout: Duration::from_secs(60),
        }
    }
}

#[async_trait]
impl MediaProbe for Ffprobe {
    async fn probe(&self, file: &Path) -> Result<MediaFacts, String> {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args([
            "-v",
            "error",
            "-show_streams",
            "-show_format",
            "-of",
            "json",
        ])
        .arg(file)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
        let out = match tokio::time::timeout(self.timeout, cmd.output()).await {
            Err(_) => {
                return Err(format!(
                    "ffprobe did not finish within {} s",
                    self.timeout.as_secs()
                ));
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!("{} is not installed", self.program));
            }
            Ok(Err(e)) => return Err(format!("{} could not start: {e}", self.program)),
            Ok(Ok(out)) => out,
        };
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            return Err(format!(
                "ffprobe could not read {}: {}",
                file.display(),
                first.trim()
            ));
        }
        parse_ffprobe(&String::from_utf8_lossy(&out.stdout))
    }
}
