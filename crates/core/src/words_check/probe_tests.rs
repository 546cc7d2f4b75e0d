//! `ffprobe_geometry` and measuring on stored ffprobe JSON (testdata/, written in the shape
//! `ffprobe -v error -show_streams -show_format -of json` prints).

use super::*;
use crate::words_check::LinePlace;
use crate::words_check::numbers::read_numbers;

fn facts(name: &str) -> MediaFacts {
    let json = match name {
        "master_107s_1080p25.json" => include_str!("testdata/master_107s_1080p25.json"),
        "phone_portrait_display_matrix.json" => {
            include_str!("testdata/phone_portrait_display_matrix.json")
        }
        "phone_portrait_rotate_tag.json" => include_str!("testdata/phone_portrait_rotate_tag.json"),
        "rotate_tag_only_270.json" => include_str!("testdata/rotate_tag_only_270.json"),
        "anamorphic_1440x1080.json" => include_str!("testdata/anamorphic_1440x1080.json"),
        "mkv_no_format_duration_4k60.json" => {
            include_str!("testdata/mkv_no_format_duration_4k60.json")
        }
        "audio_with_cover_art.json" => include_str!("testdata/audio_with_cover_art.json"),
        other => panic!("no fixture {other}"),
    };
    parse_ffprobe(json).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The one number `line` gives.
fn asked(line: &str) -> Number {
    let mut r = read_numbers(line, LinePlace::Job);
    assert_eq!(r.len(), 1, "{line:?} should give one number: {r:?}");
    r.remove(0).number
}

fn run(line: &str, f: &MediaFacts) -> (Outcome, String) {
    let m = measure(&asked(line), f);
    (m.outcome, m.detail)
}

#[test]
fn ffprobe_geometry_landscape_master() {
    let f = facts("master_107s_1080p25.json");
    assert_eq!((f.width, f.height, f.rotation), (Some(1920), Some(1080), 0));
    assert_eq!(f.duration_secs, Some(107.0));
    assert_eq!(f.fps, Some(25.0));
    assert!(f.has_video && f.has_audio);
    assert_eq!(run("横屏", &f).0, Outcome::Passed);
    assert_eq!(run("竖屏", &f).0, Outcome::Failed);
    assert_eq!(run("画幅 16:9", &f).0, Outcome::Passed);
}

#[test]
fn ffprobe_geometry_s_cw6_rotated_phone_clip_is_portrait() {
    // S-CW-6: stored 1920×1080, flagged to turn 90° (newer ffprobe: Display Matrix -90).
    let f = facts("phone_portrait_display_matrix.json");
    assert_eq!((f.stored_width, f.stored_height), (Some(1920), Some(1080)));
    assert_eq!(
        (f.width, f.height, f.rotation),
        (Some(1080), Some(1920), 90)
    );
    assert_eq!(
        run("竖屏", &f),
        (
            Outcome::Passed,
            "1080×1920 (stored 1920×1080, turned 90°), portrait, asked portrait".into()
        )
    );
    assert_eq!(run("画幅 9:16", &f).0, Outcome::Passed);
    assert_eq!(run("横屏", &f).0, Outcome::Failed);
    assert_eq!(run("1080p", &f).0, Outcome::Passed);
    // 30000/1001 is 29.97 fps, inside 27–33
    assert_eq!(
        run("帧率 30", &f),
        (Outcome::Passed, "29.97 fps, asked 27–33 fps".into())
    );
}

#[test]
fn ffprobe_geometry_rotate_tag_90_and_270() {
    // older ffprobe: the rotate tag (and the matrix beside it, agreeing)
    let f = facts("phone_portrait_rotate_tag.json");
    assert_eq!(
        (f.width, f.height, f.rotation),
        (Some(1080), Some(1920), 90)
    );
    assert_eq!(run("portrait", &f).0, Outcome::Passed);
    // a rotate tag alone, 270°
    let f = facts("rotate_tag_only_270.json");
    assert_eq!(
        (f.width, f.height, f.rotation),
        (Some(720), Some(1280), 270)
    );
    assert_eq!(run("竖屏", &f).0, Outcome::Passed);
    assert_eq!(run("720p", &f).0, Outcome::Passed);
}

#[test]
fn ffprobe_geometry_sample_aspect_ratio_widens_the_picture() {
    let f = facts("anamorphic_1440x1080.json");
    assert_eq!((f.width, f.height), (Some(1920), Some(1080)));
    assert_eq!(run("画幅 16:9", &f).0, Outcome::Passed);
    assert_eq!(run("比例 4:3", &f).0, Outcome::Failed);
}

#[test]
fn ffprobe_duration_falls_back_to_the_longest_stream_and_rate_to_r_frame_rate() {
    let f = facts("mkv_no_format_duration_4k60.json");
    assert_eq!(f.duration_secs, Some(120.001));
    assert_eq!(f.fps, Some(60.0));
    assert_eq!(run("4K", &f).0, Outcome::Passed);
    assert_eq!(run("片长约 2 分钟", &f).0, Outcome::Passed);
    assert_eq!(run("60fps", &f).0, Outcome::Passed);
}

#[test]
fn ffprobe_cover_art_is_no_picture() {
    let f = facts("audio_with_cover_art.json");
    assert!(!f.has_video && f.has_audio);
    assert_eq!((f.width, f.fps), (None, None));
    assert_eq!(
        run("1080p", &f),
        (
            Outcome::Error,
            "the picture size could not be read, asked 1080".into()
        )
    );
    assert_eq!(run("帧率 30", &f).0, Outcome::Error);
    assert_eq!(f.duration_secs, Some(184.25));
}

#[test]
fn measure_cw11_tolerances_on_the_107_second_master() {
    let f = facts("master_107s_1080p25.json");
    // S-CW-1: the 107-s master fails "about 2 minutes"
    assert_eq!(
        run("片长约 2 分钟", &f),
        (Outcome::Failed, "107.00 s, asked 108–132 s".into())
    );
    assert_eq!(run("不要超过 2 分钟", &f).0, Outcome::Passed);
    assert_eq!(
        run("至少要 2 分钟", &f),
        (Outcome::Failed, "107.00 s, asked at least 120 s".into())
    );
    assert_eq!(run("片子差不多 107 秒", &f).0, Outcome::Passed);
    assert_eq!(run("约 100 秒", &f).0, Outcome::Passed);
    assert_eq!(run("约 97 秒", &f).0, Outcome::Failed);
    assert_eq!(
        run("分辨率 4K", &f),
        (
            Outcome::Failed,
            "1920×1080, short side 1080, asked 2160".into()
        )
    );
    assert_eq!(run("至少 720p", &f).0, Outcome::Passed);
    // S-CW-7: 60 fps asks 54–66; 25 fps fails
    assert_eq!(
        run("帧率 24 改成 60", &f),
        (Outcome::Failed, "25 fps, asked 54–66 fps".into())
    );
    assert_eq!(run("每秒 24 帧", &f).0, Outcome::Passed);
}

#[test]
fn ffprobe_output_that_is_not_ffprobe_is_a_clear_error() {
    assert!(parse_ffprobe("not json").unwrap_err().contains("not JSON"));
    assert!(
        parse_ffprobe("[1]")
            .unwrap_err()
            .contains("not a JSON object")
    );
    assert!(parse_ffprobe("{}").unwrap_err().contains("neither"));
    assert!(
        parse_ffprobe(r#"{"streams": 3}"#)
            .unwrap_err()
            .contains("not a list")
    );
    // no format and no duration anywhere: the running time is an error, not a guess
    let f = parse_ffprobe(r#"{"streams": [{"codec_type": "video", "width": 640, "height": 360}]}"#)
        .unwrap();
    assert_eq!(f.duration_secs, None);
    assert_eq!(run("片长约 2 分钟", &f).0, Outcome::Error);
}
