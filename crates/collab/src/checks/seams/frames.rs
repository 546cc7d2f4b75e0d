//! AC-13/AC-14 with ffmpeg: where a video's scenes cut, a part's last and first frames, and
//! a seam's two sides put side by side in one picture.

use crate::checks::ffmpeg::Keep;
use std::path::Path;
use std::time::Duration;

/// One ffmpeg call's time limit (scene detection reads the whole video).
const LIMIT: Duration = Duration::from_secs(300);
/// How far apart two pictures of a scene must be to count as a cut (ffmpeg's scene score).
const SCENE_SCORE: f64 = 0.3;
/// The height both sides are scaled to in a seam's picture.
const SIDE_HEIGHT: u32 = 360;

/// Run ffmpeg, overwriting what it writes; answers its log when it succeeds, None when it is
/// missing, fails or runs too long.
async fn ffmpeg(args: &[&str]) -> Option<String> {
    let args: Vec<&str> = std::iter::once("-y").chain(args.iter().copied()).collect();
    let log = crate::checks::ffmpeg::ffmpeg(&args, Keep::Stderr, LIMIT).await?;
    Some(String::from_utf8_lossy(&log).into_owned())
}

/// The times (seconds) where scene detection finds a cut, in order; None without ffmpeg.
pub async fn scene_cuts(file: &Path) -> Option<Vec<f64>> {
    let path = file.to_str()?;
    let filter = format!("select='gt(scene,{SCENE_SCORE})',showinfo");
    let log = ffmpeg(&[
        "-v", "info", "-i", path, "-an", "-vf", &filter, "-f", "null", "-",
    ])
    .await?;
    let mut cuts: Vec<f64> = log
        .lines()
        .filter(|l| l.contains("Parsed_showinfo"))
        .filter_map(|l| {
            let at = l.split("pts_time:").nth(1)?;
            at.split_whitespace().next()?.parse::<f64>().ok()
        })
        .filter(|t| *t > 0.0)
        .collect();
    cuts.dedup_by(|a, b| (*a - *b).abs() < 0.001);
    Some(cuts)
}

/// The last frame of a stretch of `file` ending at `end` (its end when None), written to
/// `out` as a PNG.
pub async fn last_frame(file: &Path, start: f64, end: Option<f64>, out: &Path) -> bool {
    let (Some(path), Some(dest)) = (file.to_str(), out.to_str()) else {
        return false;
    };
    // Decode the stretch's last second, keeping each frame over the last: the newest stays.
    let ran = match end {
        Some(end) => {
            let from = format!("{:.3}", (end - 1.0).max(start));
            let to = format!("{end:.3}");
            ffmpeg(&[
                "-v", "error", "-ss", &from, "-to", &to, "-i", path, "-an", "-update", "1", dest,
            ])
            .await
        }
        None => {
            ffmpeg(&[
                "-v", "error", "-sseof", "-1", "-i", path, "-an", "-update", "1", dest,
            ])
            .await
        }
    };
    ran.is_some() && out.is_file()
}

/// The first frame of `file` at `start`, written to `out` as a PNG.
pub async fn first_frame(file: &Path, start: f64, out: &Path) -> bool {
    let (Some(path), Some(dest)) = (file.to_str(), out.to_str()) else {
        return false;
    };
    let at = format!("{start:.3}");
    let ran = ffmpeg(&[
        "-v",
        "error",
        "-ss",
        &at,
        "-i",
        path,
        "-an",
        "-frames:v",
        "1",
        dest,
    ])
    .await;
    ran.is_some() && out.is_file()
}

/// `left` and `right` side by side, both at the same height, written to `out` as a PNG.
pub async fn side_by_side(left: &Path, right: &Path, out: &Path) -> bool {
    let (Some(l), Some(r), Some(dest)) = (left.to_str(), right.to_str(), out.to_str()) else {
        return false;
    };
    let filter = format!(
        "[0:v]scale=-2:{SIDE_HEIGHT},setsar=1[l];[1:v]scale=-2:{SIDE_HEIGHT},setsar=1[r];\
         [l][r]hstack=inputs=2[v]"
    );
    let ran = ffmpeg(&[
        "-v",
        "error",
        "-i",
        l,
        "-i",
        r,
        "-filter_complex",
        &filter,
        "-map",
        "[v]",
        "-frames:v",
        "1",
        dest,
    ])
    .await;
    ran.is_some() && out.is_file()
}
