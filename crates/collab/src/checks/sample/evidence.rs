//! SC3: the evidence the app gathers from a hand-over for the standard check — for video, the
//! longest file's facts (ffprobe), how many distinct pictures its keyframes show and five
//! evenly spaced frames (ffmpeg); for pictures, the first ones; for text, its opening, middle
//! and end. Without ffmpeg a video's facts still go; without ffprobe it is named only.

use crate::checks::MediaProbe;
use crate::checks::ffmpeg::Keep;
use std::path::{Path, PathBuf};
use std::time::Duration;
use troupe_core::sample_standard::{
    Evidence, FRAMES, PICTURES, TextExcerpts, VideoFacts, excerpts, keyframe_counts,
};
use troupe_store::SubmittedFile;
use troupe_tools::{MAX_PICTURE_BYTES, is_picture_path, sniff_media_type};

/// A picture to show the judge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    pub media_type: &'static str,
    pub bytes: Vec<u8>,
}

/// Text read for excerpts at most.
const TEXT_MAX_BYTES: u64 = 4 * 1024 * 1024;
/// Keyframes looked at at most.
const KEYFRAMES_MAX: u32 = 240;
/// One ffmpeg call's time limit.
const FFMPEG_LIMIT: Duration = Duration::from_secs(60);

fn extension(path: &str) -> String {
    Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

fn is_video(path: &str) -> bool {
    matches!(
        extension(path).as_str(),
        "mp4" | "mov" | "mkv" | "webm" | "avi" | "m4v"
    )
}

fn is_text(path: &str) -> bool {
    matches!(
        extension(path).as_str(),
        "md" | "txt" | "html" | "htm" | "srt" | "vtt" | "csv" | "json" | "rst" | "tex"
    )
}

/// Gather what one hand-over shows. `folder` is the job's folder its paths are relative to.
pub async fn gather(
    probe: &dyn MediaProbe,
    folder: &Path,
    files: &[SubmittedFile],
) -> (Evidence, Vec<Picture>) {
    let abs = |p: &str| -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            folder.join(p)
        }
    };
    let mut evidence = Evidence {
        files: files.iter().map(|f| f.path.clone()).collect(),
        ..Evidence::default()
    };
    let mut pictures = Vec::new();

    // The longest video.
    let mut longest: Option<(String, troupe_core::words_check::probe::MediaFacts)> = None;
    for f in files.iter().filter(|f| is_video(&f.path)) {
        if let Ok(facts) = probe.probe(&abs(&f.path)).await {
            let d = facts.duration_secs.unwrap_or(0.0);
            if longest
                .as_ref()
                .is_none_or(|(_, l)| l.duration_secs.unwrap_or(0.0) < d)
            {
                longest = Some((f.path.clone(), facts));
            }
        }
    }
    if let Some((path, facts)) = longest {
        let file = abs(&path);
        let prints = keyframe_prints(&file).await.unwrap_or_default();
        let (keyframes, distinct, most) = keyframe_counts(&prints);
        evidence.video = Some(VideoFacts {
            file: path,
            duration_secs: facts.duration_secs,
            width: facts.width,
            height: facts.height,
            has_sound: facts.has_audio,
            keyframes,
            distinct_keyframes: distinct,
            most_repeated: most,
        });
        if let Some(d) = facts.duration_secs.filter(|d| *d > 0.0) {
            for i in 0..FRAMES {
                let at = d * (i as f64 + 0.5) / FRAMES as f64;
                if let Some(png) = frame_at(&file, at).await {
                    pictures.push(Picture {
                        media_type: "image/png",
                        bytes: png,
                    });
                }
            }
        }
    }

    // The first pictures: named as pictures, and their bytes say which kind (as `read_file`'s).
    for f in files.iter().filter(|f| is_picture_path(&f.path)) {
        if evidence.picture_files.len() == PICTURES {
            break;
        }
        evidence.picture_files.push(f.path.clone());
        let path = abs(&f.path);
        let small = tokio::fs::metadata(&path)
            .await
            .is_ok_and(|m| m.len() <= MAX_PICTURE_BYTES);
        if small
            && let Ok(bytes) = tokio::fs::read(&path).await
            && let Some(media_type) = sniff_media_type(&bytes)
        {
            pictures.push(Picture { media_type, bytes });
        }
    }

    // The first text.
    if let Some(f) = files.iter().find(|f| is_text(&f.path)) {
        let path = abs(&f.path);
        let small = tokio::fs::metadata(&path)
            .await
            .is_ok_and(|m| m.len() <= TEXT_MAX_BYTES);
        if small && let Ok(bytes) = tokio::fs::read(&path).await {
            let text = String::from_utf8_lossy(&bytes);
            let (opening, middle, end) = excerpts(&text);
            evidence.text = Some(TextExcerpts {
                file: f.path.clone(),
                opening,
                middle,
                end,
            });
        }
    }
    evidence.pictures = pictures.len();
    (evidence, pictures)
}

/// Run ffmpeg with `args`, answering its standard output, or None (missing, failed, too slow).
async fn ffmpeg(args: &[&str]) -> Option<Vec<u8>> {
    crate::checks::ffmpeg::ffmpeg(args, Keep::Stdout, FFMPEG_LIMIT).await
}

/// One fingerprint per keyframe: the frame shrunk to 16×9 grey, each pixel cut to 16 levels,
/// so the same still picture shown again prints alike while real motion does not.
async fn keyframe_prints(file: &Path) -> Option<Vec<u64>> {
    let path = file.to_str()?;
    let limit = KEYFRAMES_MAX.to_string();
    let raw = ffmpeg(&[
        "-v",
        "error",
        "-skip_frame",
        "nokey",
        "-i",
        path,
        "-vf",
        "scale=16:9:flags=area,format=gray",
        "-fps_mode",
        "passthrough",
        "-frames:v",
        &limit,
        "-f",
        "rawvideo",
        "-",
    ])
    .await?;
    Some(
        raw.chunks_exact(16 * 9)
            .map(|frame| {
                // FNV-1a over the cut pixels: stable and dependency-free for a 144-byte key.
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for p in frame {
                    h ^= u64::from(p >> 4);
                    h = h.wrapping_mul(0x0000_0100_0000_01b3);
                }
                h
            })
            .collect(),
    )
}

/// The frame at `secs` as a PNG at most 480 pixels wide.
async fn frame_at(file: &Path, secs: f64) -> Option<Vec<u8>> {
    let path = file.to_str()?;
    let at = format!("{secs:.3}");
    let png = ffmpeg(&[
        "-v",
        "error",
        "-ss",
        &at,
        "-i",
        path,
        "-frames:v",
        "1",
        "-vf",
        "scale='min(480,iw)':-2",
        "-f",
        "image2pipe",
        "-c:v",
        "png",
        "-",
    ])
    .await?;
    (!png.is_empty()).then_some(png)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_by_kind() {
        assert!(is_video("01-Open/open.MP4") && !is_video("a.png"));
        assert!(is_text("script.md") && !is_text("clip.mov"));
    }
}
