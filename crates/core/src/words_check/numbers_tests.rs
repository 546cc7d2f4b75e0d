//! `number_parser`: every example of CW-1…CW-10, RL-5 and S-RL-6, S-CW-3/4/7/8, one row each.
//! A row reads `(rule, line, expected)`; expected lists each reading as
//! `dimension bound value asked target|reading`, joined by "; ", or "" for nothing.

use super::*;
use crate::words_check::trim;

fn describe(readings: &[Reading]) -> String {
    readings
        .iter()
        .map(|r| {
            let value = match r.number.value {
                Value::Seconds { seconds } => format!("{}s", trim(seconds)),
                Value::ShortSide { pixels } => format!("{pixels}px"),
                Value::Ratio { width, height } => format!("{}:{}", trim(width), trim(height)),
                Value::Orientation { orientation } => format!("{orientation:?}").to_lowercase(),
                Value::FramesPerSecond { fps } => format!("{}fps", trim(fps)),
            };
            format!(
                "{} {} {} {} {}",
                r.dimension.as_str(),
                r.number.bound.as_str(),
                value,
                r.number.asked(),
                if r.target { "target" } else { "reading" }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn check(rows: &[(&str, &str, &str)]) {
    let mut failures = Vec::new();
    for (rule, line, expected) in rows {
        let got = describe(&read_numbers(line, LinePlace::Job));
        if got != *expected {
            failures.push(format!(
                "{rule}: {line:?}\n    expected: {expected:?}\n    got:      {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

const ABOUT_2_MIN: &str = "running_time about 120s 108–132 s reading";

#[test]
#[rustfmt::skip]
fn number_parser_cw1_bound_words_setting_verbs_and_running_time_words() {
    check(&[
        // CW-1 bound words
        ("CW-1 about", "about 2 minutes", "running_time about 120s 108–132 s reading"),
        ("CW-1 around", "around 90 seconds", "running_time about 90s 81–99 s reading"),
        ("CW-1 at least", "at least 2 minutes", "running_time at_least 120s at least 120 s reading"),
        ("CW-1 at most", "at most 3 minutes", "running_time at_most 180s at most 180 s reading"),
        ("CW-1 within", "within 90 seconds", "running_time at_most 90s at most 90 s reading"),
        ("CW-1 约", "约 2 分钟", "running_time about 120s 108–132 s reading"),
        ("CW-1 左右", "2 分钟左右", "running_time about 120s 108–132 s reading"),
        ("CW-1 以上", "2 分钟以上", "running_time at_least 120s at least 120 s reading"),
        ("CW-1 以内", "90 秒以内", "running_time at_most 90s at most 90 s reading"),
        // CW-1 setting verbs right before the number: targets (CW-7)
        ("CW-1 剪成", "剪成 90 秒", "running_time exact 90s 81–99 s target"),
        ("CW-1 做成", "做成 2 分钟", "running_time exact 120s 108–132 s target"),
        ("CW-1 改成", "改成 90 秒", "running_time exact 90s 81–99 s target"),
        ("CW-1 控制在", "控制在 90 秒", "running_time exact 90s 81–99 s target"),
        ("CW-1 压到", "压到 60 秒", "running_time exact 60s 54–66 s target"),
        ("CW-1 砍到", "砍到 90 秒", "running_time exact 90s 81–99 s target"),
        ("CW-1 make it", "make it 90 seconds", "running_time exact 90s 81–99 s target"),
        ("CW-1 cut it to", "cut it to 90 seconds", "running_time exact 90s 81–99 s target"),
        // CW-1 a running-time word earlier in the clause
        ("CW-1 片长", "片长 2 分钟", "running_time exact 120s 108–132 s target"),
        ("CW-1 时长", "时长 90 秒", "running_time exact 90s 81–99 s target"),
        ("CW-1 duration", "duration 90s", "running_time exact 90s 81–99 s target"),
        // CW-1 a bare running time counts for nothing
        ("CW-1 bare", "90 秒", ""),
        ("CW-1 bare en", "a 2 minute film", ""),
        // CW-1 at-most and at-least words
        ("CW-1 最长", "最长 3 分钟", "running_time at_most 180s at most 180 s reading"),
        ("CW-1 上限", "上限 3 分钟", "running_time at_most 180s at most 180 s reading"),
        ("CW-1 顶多", "顶多 3 分钟", "running_time at_most 180s at most 180 s reading"),
        ("CW-1 别超", "别超 3 分钟", "running_time at_most 180s at most 180 s reading"),
        ("CW-1 max", "max 3 minutes", "running_time at_most 180s at most 180 s reading"),
        ("CW-1 最低", "最低 2 分钟", "running_time at_least 120s at least 120 s reading"),
        ("CW-1 最短", "最短 2 分钟", "running_time at_least 120s at least 120 s reading"),
        ("CW-1 下限", "下限 2 分钟", "running_time at_least 120s at least 120 s reading"),
        ("CW-1 打底", "2 分钟打底", "running_time at_least 120s at least 120 s reading"),
        ("CW-1 起步", "2 分钟起步", "running_time at_least 120s at least 120 s reading"),
        ("CW-1 min", "min 2 minutes", "running_time at_least 120s at least 120 s reading"),
        ("CW-1 片长 with 最长", "片长最长 3 分钟", "running_time at_most 180s at most 180 s target"),
        // CW-1 resolution, aspect ratio, portrait, landscape count as they stand
        ("CW-1 1080p", "1080p", "resolution exact 1080px 1080 reading"),
        ("CW-1 4K", "4K", "resolution exact 2160px 2160 reading"),
        ("CW-1 720p", "720p", "resolution exact 720px 720 reading"),
        ("CW-1 2K", "2K", "resolution exact 1440px 1440 reading"),
        ("CW-1 WxH", "1920×1080", "resolution exact 1080px 1080 reading"),
        ("CW-1 HxW", "1080x1920", "resolution exact 1080px 1080 reading"),
        ("CW-1 分辨率", "分辨率 4K", "resolution exact 2160px 2160 target"),
        ("CW-1 at least 1080p", "至少 1080p", "resolution at_least 1080px at least 1080 reading"),
        ("CW-1 竖屏", "竖屏", "aspect exact portrait portrait reading"),
        ("CW-1 横屏", "横屏", "aspect exact landscape landscape reading"),
        ("CW-1 portrait", "portrait", "aspect exact portrait portrait reading"),
        ("CW-1 landscape", "landscape", "aspect exact landscape landscape reading"),
        // CW-1 a ratio only with a shape word
        ("CW-1 画幅", "画幅 16:9", "aspect exact 16:9 16:9 target"),
        ("CW-1 比例", "比例 9:16", "aspect exact 9:16 9:16 target"),
        ("CW-1 屏", "竖屏 9:16", "aspect exact 9:16 9:16 reading"),
        ("CW-1 aspect", "aspect 2.35:1", "aspect exact 2.35:1 2.35:1 target"),
        ("CW-1 no shape word", "16:9", ""),
        // CW-1 frame rate only as 帧率 / fps / 每秒 N 帧
        ("CW-1 帧率", "帧率 30", "frame_rate exact 30fps 27–33 fps target"),
        ("CW-1 fps", "30 fps", "frame_rate exact 30fps 27–33 fps reading"),
        ("CW-1 fps glued", "60fps", "frame_rate exact 60fps 54–66 fps reading"),
        ("CW-1 每秒 N 帧", "每秒 25 帧", "frame_rate exact 25fps 22.5–27.5 fps reading"),
        ("CW-1 淡出 24 帧", "淡出 24 帧", ""),
        // CW-1 budget, quote and bitrate "k" are no resolution
        ("CW-1 预算 2k", "预算 2k", ""),
        ("CW-1 报价 4k", "报价 4k", ""),
        ("CW-1 码率 8k", "码率 8k", ""),
    ]);
}

#[test]
#[rustfmt::skip]
fn number_parser_cw1_numerals_and_units() {
    check(&[
        // Chinese numerals and units
        ("units 两分钟", "约两分钟", ABOUT_2_MIN),
        ("units 一分半", "片长一分半", "running_time exact 90s 81–99 s target"),
        ("units 一分半钟", "约一分半钟", "running_time about 90s 81–99 s reading"),
        ("units 半分钟", "半分钟左右", "running_time about 30s 27–33 s reading"),
        ("units 九十秒", "剪成九十秒", "running_time exact 90s 81–99 s target"),
        ("units 一百二十秒", "片长一百二十秒", "running_time exact 120s 108–132 s target"),
        ("units 1.5 分钟", "约 1.5 分钟", "running_time about 90s 81–99 s reading"),
        ("units 一个半小时", "片长一个半小时", "running_time exact 5400s 4860–5940 s target"),
        // RL-5: bare 分 / m only right before seconds or after a running-time word
        ("RL-5 1分30秒", "约1分30秒", "running_time about 90s 81–99 s reading"),
        ("RL-5 2m30s", "about 2m30s", "running_time about 150s 135–165 s reading"),
        ("RL-5 片长 2 分", "片长 2 分", "running_time exact 120s 108–132 s target"),
        ("RL-5 约 2 分", "约 2 分", ""),
        ("RL-5 duration 2m", "duration 2m", "running_time exact 120s 108–132 s target"),
        ("RL-5 about 2m", "about 2m", ""),
        ("RL-5 十分重要", "片长十分重要", ""),
        // English forms
        ("units 90s", "make it 90s", "running_time exact 90s 81–99 s target"),
        ("units 1:30", "片长 1:30", "running_time exact 90s 81–99 s target"),
        ("units 1:30 beside a ratio", "画幅 16:9,片长 1:30", "aspect exact 16:9 16:9 target; running_time exact 90s 81–99 s target"),
        ("units 2 mins", "about 2 mins", ABOUT_2_MIN),
        ("units words", "about two minutes", ABOUT_2_MIN),
        ("units forty-five", "about forty-five seconds", "running_time about 45s 40.5–49.5 s reading"),
        ("units a minute", "about a minute", "running_time about 60s 54–66 s reading"),
        ("units half a minute", "about half a minute", "running_time about 30s 27–33 s reading"),
        ("units and a half", "about a minute and a half", "running_time about 90s 81–99 s reading"),
        ("units one and a half", "about one and a half minutes", "running_time about 90s 81–99 s reading"),
        ("units 1 min 30 s", "about 1 min 30 s", "running_time about 90s 81–99 s reading"),
    ]);
}

#[test]
#[rustfmt::skip]
fn number_parser_cw2_lines_that_read_no_number() {
    check(&[
        // CW-2 examples
        ("CW-2 complaint + setting", "太长了,改成 2 分钟", ""),
        ("CW-2 这版", "这版改成 90 秒", ""),
        ("CW-2 能不能 ?", "能不能改成 90 秒?", ""),
        // questions
        ("CW-2 吗", "片长约 2 分钟吗", ""),
        ("CW-2 ?", "片长约 2 分钟?", ""),
        ("CW-2 ？", "片长约 2 分钟？", ""),
        ("CW-2 能不能", "能不能改成 90 秒", ""),
        ("CW-2 怎么样", "片长约 2 分钟怎么样", ""),
        ("CW-2 你觉得", "你觉得片长约 2 分钟", ""),
        ("CW-2 试试", "试试剪成 90 秒", ""),
        ("CW-2 can you", "can you make it 90 seconds", ""),
        // suppositions
        ("CW-2 如果", "如果片长约 2 分钟", ""),
        ("CW-2 会不会", "会不会约 2 分钟更好", ""),
        ("CW-2 if", "if it runs about 2 minutes", ""),
        ("CW-2 would", "about 2 minutes would be good", ""),
        // complaints
        ("CW-2 短了", "约 107 秒,短了", ""),
        ("CW-2 有点短", "约 107 秒,有点短", ""),
        // reports on a cut
        ("CW-2 上一版", "上一版约 107 秒", ""),
        ("CW-2 这次", "这次约 107 秒", ""),
        ("CW-2 第一版", "第一版约 107 秒", ""),
        ("CW-2 之前", "之前约 107 秒", ""),
        ("CW-2 原来", "原来约 107 秒", ""),
        ("CW-2 现在", "现在约 107 秒", ""),
        ("CW-2 你交的", "你交的约 107 秒", ""),
        ("CW-2 只有", "只有约 107 秒", ""),
        ("CW-2 才", "才约 107 秒", ""),
        ("CW-2 已经", "已经剪成 107 秒", ""),
        ("CW-2 显示", "显示约 107 秒", ""),
        ("CW-2 为什么", "为什么约 107 秒", ""),
        ("CW-2 怎么", "怎么约 107 秒", ""),
        ("CW-2 粗剪", "粗剪约 107 秒", ""),
        ("CW-2 完整版", "完整版约 107 秒", ""),
        ("CW-2 was", "it was about 107 seconds", ""),
        ("CW-2 it's", "it's about 107 seconds", ""),
        ("CW-2 now", "now about 107 seconds", ""),
        ("CW-2 only", "only about 107 seconds", ""),
        ("CW-2 clause only 可以", "约 107 秒,可以", ""),
        ("CW-2 了 after the number", "剪成 107 秒了", ""),
        ("CW-2 了 after bound", "约 107 秒左右了", ""),
        // describing a file on hand
        ("CW-2 我拍的是", "我拍的是 4K", ""),
        ("CW-2 相机", "相机 4K 60fps", ""),
        ("CW-2 客户给的", "客户给的 1080p", ""),
        ("CW-2 显示器", "显示器 4K", ""),
        ("CW-2 ffprobe", "ffprobe 1920x1080", ""),
        // another version
        ("CW-2 横屏的也做一版", "横屏的也做一版", ""),
        ("CW-2 竖版的也要", "竖版的也要", ""),
        ("CW-2 抖音版", "抖音版 30 秒左右", ""),
        ("CW-2 横屏版", "横屏版", ""),
        ("CW-2 a landscape version too", "a landscape version too", ""),
        // still pictures and screens
        ("CW-2 photo", "a 4K photo", ""),
        ("CW-2 poster", "poster 竖屏", ""),
        ("CW-2 cover", "cover 1080p", ""),
        ("CW-2 wallpaper", "wallpaper 4K", ""),
        ("CW-2 KV", "KV 画幅 16:9", ""),
        ("CW-2 GIF", "GIF about 5 seconds", ""),
        ("CW-2 interface", "interface 1080p", ""),
        ("CW-2 海报", "海报竖屏", ""),
    ]);
}

#[test]
#[rustfmt::skip]
fn number_parser_cw3_to_cw6_parts_footage_negation_and_exclusions() {
    check(&[
        // CW-3 part-scoped numbers
        ("CW-3 / S-CW-4 shot", "C09 这个镜头,时长 8 秒", ""),
        ("CW-3 / S-CW-4 whole film", "加中英字幕,片长约 2 分钟", "running_time about 120s 108–132 s target"),
        ("CW-3 开头", "开头控制在 5 秒以内", ""),
        ("CW-3 logo", "logo 在 5 秒左右出现", ""),
        ("CW-3 shot code", "C09 做成竖屏", ""),
        ("CW-3 这段", "这段 30 秒左右", ""),
        ("CW-3 那段", "那段压到 10 秒", ""),
        ("CW-3 采访", "采访控制在 1 分钟以内", ""),
        ("CW-3 titles", "titles about 5 seconds", ""),
        ("CW-3 voice-over", "voice-over about 90 seconds", ""),
        ("CW-3 earlier clause, no whole-film word", "片尾字幕,约 10 秒", ""),
        // CW-4 footage, reference, music
        ("CW-4 set footage", "把素材剪成 90 秒", "running_time exact 90s 81–99 s reading"),
        ("CW-4 reference unset", "参考片约 2 分钟", ""),
        ("CW-4 music", "音乐 2 分钟左右", ""),
        ("CW-4 following clause", "配乐用这首歌,约 3 分钟", ""),
        ("CW-4 footage en", "cut the footage to 90 seconds", "running_time exact 90s 81–99 s reading"),
        // CW-5 negation before a setting word; only the new number; alternatives never
        ("CW-5 不要剪成", "不要剪成 90 秒", ""),
        ("CW-5 别压到", "别压到 60 秒以下", ""),
        ("CW-5 / S-CW-7 帧率 24 改成 60", "帧率 24 改成 60", "frame_rate exact 60fps 54–66 fps target"),
        ("CW-5 分辨率从 4K 降到 1080", "分辨率从 4K 降到 1080", "resolution exact 1080px 1080 target"),
        ("CW-5 24 或 30", "帧率 24 或 30", ""),
        ("CW-5 or", "24 or 30 fps", ""),
        // CW-6 / RL-5 excluded numbers
        ("CW-6 moment 切到", "1 分钟左右切到产品", ""),
        ("CW-6 decade 港风", "90s 港风", ""),
        ("CW-6 decade 感觉", "90s 那种感觉", ""),
        ("CW-6 done within", "done within 2 hours", ""),
        ("CW-6 takes about", "the task takes about 3 hours", ""),
        ("CW-6 not 4K", "not 4K", ""),
        ("CW-6 not 3 minutes", "not 3 minutes", ""),
        ("CW-6 not about", "not about 3 minutes", ""),
        ("CW-6 不要 4K", "不要 4K,1080p 就行", "resolution exact 1080px 1080 reading"),
    ]);
}

#[test]
#[rustfmt::skip]
fn number_parser_rl5_not_numbers() {
    check(&[
        // RL-5 moments and positions
        ("RL-5 at second 3", "at second 3", ""),
        ("RL-5 logo 放在 3 秒", "logo 放在 3 秒", ""),
        ("RL-5 字幕定在 5 秒", "字幕定在 5 秒", ""),
        ("RL-5 first 3 seconds", "first 3 seconds", ""),
        ("RL-5 at 12 s", "at 12 s", ""),
        ("RL-5 moment with bound", "at about 12 s", ""),
        ("RL-5 a minute in", "cut to the product about a minute in", ""),
        ("S-RL-2 after all", "about 2 minutes after all", "running_time about 120s 108–132 s reading"),
        ("RL-5 in total", "about 2 minutes in total", "running_time about 120s 108–132 s reading"),
        ("RL-5 第 N 秒", "约第 3 秒", ""),
        ("RL-5 放在 with bound", "放在约 3 秒", ""),
        // ranges
        ("RL-5 3-5 minutes", "3-5 minutes", ""),
        ("RL-5 片长 3-5 分钟", "片长 3-5 分钟", ""),
        ("RL-5 3 到 5 分钟", "片长 3 到 5 分钟", ""),
        ("RL-5 a minute or two", "about a minute or two", ""),
        ("RL-5 一两分钟", "约一两分钟", ""),
        // deadlines
        ("RL-5 reply within", "reply within 5 minutes", ""),
        ("RL-5 限你", "限你 3 分钟弄完", ""),
        ("RL-5 give you", "give you 10 minutes", ""),
        ("RL-5 give you within", "give you within 10 minutes", ""),
        // durations of other things
        ("RL-5 wait", "wait 5 minutes", ""),
        ("RL-5 wait about", "wait about 5 minutes", ""),
        ("RL-5 render takes", "render takes 20 minutes", ""),
        ("RL-5 render takes about", "render takes about 20 minutes", ""),
        ("RL-5 ago", "about 3 minutes ago", ""),
        ("RL-5 ETA", "ETA about 30 minutes", ""),
        ("RL-5 半小时左右能好吗", "半小时左右能好吗", ""),
        // word counts, negation, decades
        ("RL-5 2k words", "2k words", ""),
        ("RL-5 not 4K", "not 4K", ""),
        ("RL-5 not 3 minutes", "not 3 minutes", ""),
        ("RL-5 90s 港风", "90s 港风", ""),
        // a setting verb reads the number after it
        ("RL-5 剪成 90 秒发给我", "剪成 90 秒发给我", "running_time exact 90s 81–99 s target"),
        ("RL-5 压在 90 秒以内", "压在 90 秒以内", "running_time at_most 90s at most 90 s target"),
        ("RL-5 时长定在 90 秒", "时长定在 90 秒", "running_time exact 90s 81–99 s target"),
        // ratio only with a shape word; frame counts
        ("RL-5 比分 2:1", "比分 2:1", ""),
        ("RL-5 bare 24 帧", "24 帧", ""),
        ("RL-5 帧率 N", "帧率 25", "frame_rate exact 25fps 22.5–27.5 fps target"),
        ("RL-5 N fps", "25 fps", "frame_rate exact 25fps 22.5–27.5 fps reading"),
        ("RL-5 每秒 N 帧", "每秒 30 帧", "frame_rate exact 30fps 27–33 fps reading"),
        // at most, at least
        ("RL-5 don't go over", "Don't go over 3 minutes", "running_time at_most 180s at most 180 s reading"),
        ("RL-5 no less than", "no less than 2 minutes", "running_time at_least 120s at least 120 s reading"),
        ("RL-5 至少要", "至少要 2 分钟", "running_time at_least 120s at least 120 s reading"),
        // questions ask, not negate
        ("RL-5 能不能改成", "能不能改成 90 秒", ""),
        ("RL-5 要不要 4K", "要不要 4K", ""),
        // portrait and landscape; banners
        ("RL-5 竖屏", "要竖屏", "aspect exact portrait portrait reading"),
        ("RL-5 横屏", "横屏", "aspect exact landscape landscape reading"),
        ("RL-5 横幅", "横幅", ""),
        ("RL-5 竖幅", "竖幅", ""),
    ]);
}

#[test]
#[rustfmt::skip]
fn number_parser_cw7_targets_and_cw8_two_numbers() {
    check(&[
        // CW-7 targets
        ("CW-7 片长约 2 分钟", "片长约 2 分钟", "running_time about 120s 108–132 s target"),
        ("CW-7 画幅 9:16", "画幅 9:16", "aspect exact 9:16 9:16 target"),
        ("CW-7 帧率 30", "帧率 30", "frame_rate exact 30fps 27–33 fps target"),
        ("CW-7 剪成 90 秒发给我", "剪成 90 秒发给我", "running_time exact 90s 81–99 s target"),
        ("CW-7 做成竖屏", "做成竖屏", "aspect exact portrait portrait target"),
        ("CW-7 running time en", "running time about 2 minutes", "running_time about 120s 108–132 s target"),
        ("CW-7 resolution en", "resolution 1080p", "resolution exact 1080px 1080 target"),
        ("CW-7 frame rate en", "frame rate 60", "frame_rate exact 60fps 54–66 fps target"),
        ("CW-7 aspect ratio en", "aspect ratio 16:9", "aspect exact 16:9 16:9 target"),
        // CW-7 non-target readings
        ("CW-7 约 90 秒", "约 90 秒", "running_time about 90s 81–99 s reading"),
        ("CW-7 不要超过 2 分钟", "不要超过 2 分钟", "running_time at_most 120s at most 120 s reading"),
        ("CW-7 1080p 就行", "1080p 就行", "resolution exact 1080px 1080 reading"),
        ("CW-7 要竖屏", "要竖屏", "aspect exact portrait portrait reading"),
        ("CW-7 片子差不多 107 秒", "片子差不多 107 秒", "running_time about 107s 96.3–117.7 s reading"),
        // CW-8 one dimension, two different numbers: neither
        ("CW-8 two running times", "片长约 2 分钟,控制在 90 秒以内", ""),
        ("CW-8 two resolutions", "1080p 4K", ""),
        ("CW-8 same number twice", "片长约 2 分钟,大约两分钟", "running_time about 120s 108–132 s target"),
        ("CW-8 other dimensions stand", "1080p,竖屏,片长约 2 分钟", "resolution exact 1080px 1080 reading; aspect exact portrait portrait reading; running_time about 120s 108–132 s target"),
    ]);
}

#[test]
#[rustfmt::skip]
fn number_parser_cw9_same_number_forms() {
    check(&[
        // CW-9 the readings the offers compare
        ("CW-9 about 2 minutes", "about 2 minutes", ABOUT_2_MIN),
        ("CW-9 2 minutes or so", "2 minutes or so", "running_time about 120s 108–132 s reading"),
        ("CW-9 片长 120 秒", "片长 120 秒", "running_time exact 120s 108–132 s target"),
        ("CW-9 片长 115 秒", "片长 115 秒", "running_time exact 115s 103.5–126.5 s target"),
        ("CW-9 片长改成 130 秒", "片长改成 130 秒", "running_time exact 130s 117–143 s target"),
        // CW-10 a number the user turns down reads nothing itself
        ("CW-10 不要 3 分钟", "不要 3 分钟", ""),
    ]);
}

#[test]
#[rustfmt::skip]
fn number_parser_scenarios() {
    check(&[
        // S-CW-3
        ("S-CW-3 no offer", "太长了,改成 2 分钟", ""),
        ("S-CW-3 target", "片长改成 2 分钟", "running_time exact 120s 108–132 s target"),
        // S-CW-4
        ("S-CW-4 shot", "C09 这个镜头,时长 8 秒", ""),
        ("S-CW-4 film", "加中英字幕,片长约 2 分钟", "running_time about 120s 108–132 s target"),
        // S-CW-7
        ("S-CW-7", "帧率 24 改成 60", "frame_rate exact 60fps 54–66 fps target"),
        // S-CW-8 (the offers half is in offers_cw7_reading_with_target_makes_no_offer)
        ("S-CW-8 reading", "约 90 秒", "running_time about 90s 81–99 s reading"),
        ("S-CW-8 target", "片长 2 分钟", "running_time exact 120s 108–132 s target"),
        // S-RL-6
        ("S-RL-6 比分", "比分 2:1", ""),
        ("S-RL-6 剪成", "剪成 90 秒发给我", "running_time exact 90s 81–99 s target"),
        ("S-RL-6 淡出", "淡出 24 帧", ""),
        ("S-RL-6 90s 港风", "90s 港风", ""),
        ("S-RL-6 don't go over", "don't go over 3 minutes", "running_time at_most 180s at most 180 s reading"),
        ("S-RL-6 横幅", "横幅", ""),
        ("S-RL-6 竖屏", "竖屏", "aspect exact portrait portrait reading"),
    ]);
}

#[test]
fn number_parser_only_lines_about_the_whole_job() {
    // CW-3: a line filed under a shot's ticket, or an annotation, counts for none.
    assert!(read_numbers("片长约 2 分钟", LinePlace::PartTicket).is_empty());
    assert!(read_numbers("片长约 2 分钟", LinePlace::Annotation).is_empty());
    assert_eq!(read_numbers("片长约 2 分钟", LinePlace::Job).len(), 1);
}

#[test]
fn number_parser_span_points_into_the_words_as_written() {
    let line = "好的，片长约２分钟";
    let r = read_numbers(line, LinePlace::Job);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(&line[r[0].span.clone()], "２分钟");
}

#[test]
fn number_parser_odd_input_reads_without_panicking() {
    // a joiner followed by a wide character once sliced inside it
    for line in [
        "0~m。",
        "1~",
        "每秒 。",
        "3 到。",
        "9x",
        "1:",
        "两个半",
        "half a",
        "片长 1分",
        "¥4k",
    ] {
        let _ = read_numbers(line, LinePlace::Job);
    }
    assert!(read_numbers("", LinePlace::Job).is_empty());
}
