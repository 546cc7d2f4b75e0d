//! Which delivered video a check from the user's words measures: the job's final cut
//! (CW-12…CW-14). Of the videos a Bot delivered under the job that still exist, place comes
//! first (a `deliverables/` folder or the job's own folder beats anywhere else, whatever the
//! names), then the name (whole-word MASTER or 母带, then final, 成片 or 终版, then any video
//! under `deliverables/`), then the newest first delivery. Names that also name a shot, another
//! version or format, titles, a preview or a proxy never count, nor anything in a footage or
//! reference folder: measuring a shot or a source clip as the film is the failure to avoid.

use std::cmp::Reverse;

/// Where the line that delivered the file was filed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Filing {
    /// The job itself, or the ticket named after the job.
    Job,
    /// A shot's or part's ticket, or another version's (抖音版, 竖版, 预告…): its files are not
    /// the job's final cut.
    PartOrVersionTicket,
}

/// One delivery of a file: the file attached to (or named by) a Bot's line.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    /// Workspace-relative, '/'-separated.
    pub path: String,
    /// When that line delivered it (epoch ms).
    pub delivered_at: i64,
    pub filing: Filing,
    /// Whether the file is still there.
    pub exists: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// Under a `deliverables/` folder, or the job's own folder (its tickets' included).
    JobsOwn,
    Elsewhere,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameKind {
    Master,
    Final,
    /// Any other video under `deliverables/`.
    Deliverable,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FinalCut {
    pub path: String,
    /// The earliest delivery counts: a reviewer sending the old master again does not make it
    /// the newest (CW-14).
    pub first_delivered_at: i64,
    pub place: Place,
    pub name: NameKind,
}

const VIDEO_EXTENSIONS: &[&str] = &[
    "mp4", "mov", "m4v", "mkv", "webm", "avi", "mxf", "mpg", "mpeg", "wmv", "flv",
];

/// Folders holding sources, never a cut (CW-13).
const SOURCE_FOLDERS: &[&str] = &["footage", "raw", "ref", "refs", "reference", "references"];
const SOURCE_FOLDERS_ZH: &[&str] = &["素材", "参考"];

/// Name words that make a file something other than the film (CW-13), with why.
const OTHER_THAN_FILM: &[(&str, &[&str])] = &[
    ("names a shot", &["shot", "shots", "scene", "镜头", "分镜"]),
    (
        "names another version or format",
        &[
            "vertical",
            "horizontal",
            "portrait",
            "landscape",
            "square",
            "douyin",
            "tiktok",
            "kuaishou",
            "reels",
            "shorts",
            "instagram",
            "ig",
            "youtube",
            "bilibili",
            "weibo",
            "trailer",
            "teaser",
            "promo",
            "cutdown",
            "竖版",
            "横版",
            "竖屏",
            "横屏",
            "抖音",
            "快手",
            "预告",
            "花絮",
        ],
    ),
    (
        "names titles",
        &[
            "title", "titles", "intro", "outro", "opening", "ending", "credits", "logo", "sting",
            "bumper", "片头", "片尾",
        ],
    ),
    (
        "is a preview or proxy",
        &[
            "preview", "proxy", "draft", "wip", "temp", "tmp", "lowres", "offline", "预览", "代理",
            "粗剪", "小样",
        ],
    ),
];

/// The file a check from the user's words measures, if any delivery is one.
pub fn final_cut(deliveries: &[Delivery], job_folders: &[&str]) -> Option<FinalCut> {
    let mut firsts: Vec<(&str, i64)> = Vec::new();
    for d in deliveries
        .iter()
        .filter(|d| d.exists && d.filing == Filing::Job)
    {
        let path = d.path.as_str();
        match firsts.iter_mut().find(|(p, _)| *p == path) {
            Some((_, at)) => *at = (*at).min(d.delivered_at),
            None => firsts.push((path, d.delivered_at)),
        }
    }
    firsts
        .into_iter()
        .filter_map(|(path, at)| {
            let (place, name) = rank(path, job_folders).ok()?;
            Some(FinalCut {
                path: path.to_string(),
                first_delivered_at: at,
                place,
                name,
            })
        })
        .min_by(|a, b| {
            (a.place, a.name, Reverse(a.first_delivered_at), &a.path).cmp(&(
                b.place,
                b.name,
                Reverse(b.first_delivered_at),
                &b.path,
            ))
        })
}

/// A path's place and name kind, or why it can never be the final cut.
pub fn rank(path: &str, job_folders: &[&str]) -> Result<(Place, NameKind), String> {
    let path = path.trim_start_matches("./");
    let (dirs, file) = match path.rsplit_once('/') {
        Some((d, f)) => (d, f),
        None => ("", path),
    };
    let (stem, ext) = file
        .rsplit_once('.')
        .ok_or_else(|| format!("{file} has no extension, so it is no video"))?;
    if !VIDEO_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()) {
        return Err(format!("{file} is not a video"));
    }
    let folders: Vec<String> = dirs
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_lowercase)
        .collect();
    if let Some(f) = folders.iter().find(|f| {
        SOURCE_FOLDERS.contains(&f.as_str()) || SOURCE_FOLDERS_ZH.iter().any(|z| f.contains(z))
    }) {
        return Err(format!("{path} is in a source folder ({f}/)"));
    }
    let lower = stem.to_lowercase();
    let words = name_words(&lower);
    for (why, list) in OTHER_THAN_FILM {
        if list.iter().any(|w| has_name_word(&lower, &words, w)) {
            return Err(format!("{file} {why}"));
        }
    }
    if let Some(w) = words.iter().find(|w| is_format_word(w)) {
        return Err(format!("{file} names another version or format ({w})"));
    }
    let in_deliverables = folders.iter().any(|f| f == "deliverables");
    let in_job = job_folders.iter().any(|j| {
        let j = j.trim_start_matches("./").trim_end_matches('/');
        !j.is_empty() && (dirs == j || dirs.starts_with(&format!("{j}/")))
    });
    let place = if in_deliverables || in_job {
        Place::JobsOwn
    } else {
        Place::Elsewhere
    };
    let name = if has_name_word(&lower, &words, "master") || lower.contains("母带") {
        NameKind::Master
    } else if has_name_word(&lower, &words, "final")
        || lower.contains("成片")
        || lower.contains("终版")
    {
        NameKind::Final
    } else if in_deliverables {
        NameKind::Deliverable
    } else {
        return Err(format!(
            "{file} is named neither MASTER nor final and is not under deliverables/"
        ));
    };
    Ok((place, name))
}

/// The ASCII words of a name: split at anything not a letter or digit, so EP01finale is one
/// word and not "final" (CW-13: whole words only).
fn name_words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

/// A Chinese word anywhere (no spaces to stand between); an ASCII one as a whole word.
fn has_name_word(lower: &str, words: &[&str], w: &str) -> bool {
    if w.is_ascii() {
        words.contains(&w)
    } else {
        lower.contains(w)
    }
}

/// Shot codes (C09, SC12), ratios (9x16), durations (30s), picture sizes (720p, 4k).
fn is_format_word(w: &str) -> bool {
    let digits_after = |prefix: &str| {
        w.strip_prefix(prefix)
            .is_some_and(|d| !d.is_empty() && d.len() <= 3 && d.bytes().all(|b| b.is_ascii_digit()))
    };
    let digits_before = |suffix: &str| {
        w.strip_suffix(suffix)
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    let ratio = w.split_once('x').is_some_and(|(a, b)| {
        !a.is_empty()
            && !b.is_empty()
            && a.bytes().all(|c| c.is_ascii_digit())
            && b.bytes().all(|c| c.is_ascii_digit())
    });
    digits_after("c")
        || digits_after("sc")
        || digits_after("shot")
        || ratio
        || digits_before("s")
        || digits_before("sec")
        || digits_before("p")
        || digits_before("k")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(path: &str, at: i64) -> Delivery {
        Delivery {
            path: path.into(),
            delivered_at: at,
            filing: Filing::Job,
            exists: true,
        }
    }

    fn pick(ds: &[Delivery]) -> Option<String> {
        final_cut(ds, &["plans/ep01"]).map(|c| c.path)
    }

    #[test]
    fn final_cut_s_cw5_deliverables_master_over_final_elsewhere_and_proxy() {
        let ds = [
            d("deliverables/EP01_MASTER.mp4", 10),
            d("exports/EP01_final.mp4", 20),
            d("deliverables/EP01_MASTER_proxy.mp4", 30),
        ];
        assert_eq!(pick(&ds).as_deref(), Some("deliverables/EP01_MASTER.mp4"));
    }

    #[test]
    fn final_cut_cw13_every_example_name_is_excluded() {
        for name in [
            "C09_final.mp4",
            "EP01_MASTER_9x16.mp4",
            "EP01_30s_MASTER.mp4",
            "EP01_douyin_MASTER.mp4",
            "EP01_trailer_MASTER.mp4",
            "intro_MASTER.mp4",
            "logo_sting_final.mp4",
            "EP01_MASTER_720p_preview.mp4",
            "EP01_MASTER_proxy.mp4",
            "EP01_竖版_MASTER.mp4",
            "EP01_片头_final.mp4",
            "EP01_镜头03_成片.mp4",
            "master_shot_03.mp4",
        ] {
            let path = format!("deliverables/{name}");
            assert!(
                rank(&path, &[]).is_err(),
                "{name} should never be the final cut"
            );
            assert_eq!(pick(&[d(&path, 10)]), None, "{name}");
        }
    }

    #[test]
    fn final_cut_cw13_partial_words_are_not_master_or_final() {
        // EP01finale is not "final": elsewhere it is no candidate at all...
        assert_eq!(pick(&[d("exports/EP01finale.mp4", 10)]), None);
        assert!(rank("exports/masterpiece.mp4", &[]).is_err());
        // ...and under deliverables/ it is only "any video", below a real final.
        let ds = [
            d("deliverables/EP01_final.mp4", 10),
            d("deliverables/EP01finale.mp4", 20),
        ];
        assert_eq!(pick(&ds).as_deref(), Some("deliverables/EP01_final.mp4"));
        assert_eq!(
            rank("deliverables/EP01finale.mp4", &[]),
            Ok((Place::JobsOwn, NameKind::Deliverable))
        );
    }

    #[test]
    fn final_cut_cw13_nothing_from_source_folders() {
        for path in [
            "footage/EP01_MASTER.mp4",
            "raw/EP01_final.mov",
            "ref/EP01_MASTER.mp4",
            "deliverables/素材/EP01_MASTER.mp4",
            "参考/EP01_成片.mp4",
            "plans/ep01/footage/EP01_MASTER.mp4",
        ] {
            assert_eq!(pick(&[d(path, 10)]), None, "{path}");
        }
    }

    #[test]
    fn final_cut_cw12_name_order_master_final_deliverable() {
        let ds = [
            d("deliverables/EP01_cut.mp4", 30),
            d("deliverables/EP01_终版.mp4", 20),
            d("deliverables/EP01_母带.mov", 10),
        ];
        assert_eq!(pick(&ds).as_deref(), Some("deliverables/EP01_母带.mov"));
        assert_eq!(
            pick(&ds[..2]).as_deref(),
            Some("deliverables/EP01_终版.mp4")
        );
        assert_eq!(pick(&ds[..1]).as_deref(), Some("deliverables/EP01_cut.mp4"));
    }

    #[test]
    fn final_cut_cw12_place_beats_name() {
        let ds = [
            d("exports/EP01_MASTER.mp4", 30),
            d("deliverables/EP01_cut.mp4", 10),
        ];
        assert_eq!(pick(&ds).as_deref(), Some("deliverables/EP01_cut.mp4"));
        // the job's own folder, its tickets' included, counts as the job's place
        let ds = [
            d("exports/EP01_MASTER.mp4", 30),
            d("plans/ep01/03-Edit/EP01_final.mp4", 10),
        ];
        assert_eq!(
            pick(&ds).as_deref(),
            Some("plans/ep01/03-Edit/EP01_final.mp4")
        );
        // elsewhere, names decide again
        assert_eq!(
            pick(&[
                d("exports/EP01_final.mp4", 30),
                d("exports/EP01_MASTER.mp4", 10)
            ])
            .as_deref(),
            Some("exports/EP01_MASTER.mp4")
        );
    }

    #[test]
    fn final_cut_cw12_only_the_jobs_own_lines_and_files_still_there() {
        let mut shot = d("deliverables/EP01_MASTER_v2.mp4", 20);
        shot.filing = Filing::PartOrVersionTicket;
        let mut gone = d("deliverables/EP01_MASTER_v3.mp4", 30);
        gone.exists = false;
        let ds = [d("deliverables/EP01_MASTER_v1.mp4", 10), shot, gone];
        assert_eq!(
            pick(&ds).as_deref(),
            Some("deliverables/EP01_MASTER_v1.mp4")
        );
        assert!(rank("deliverables/notes.md", &[]).is_err());
    }

    #[test]
    fn final_cut_cw14_redelivering_an_older_file_does_not_move_the_check() {
        let mut ds = vec![
            d("deliverables/EP01_MASTER_v1.mp4", 10),
            d("deliverables/EP01_MASTER_v2.mp4", 20),
            // a reviewer compares the new master with the old one
            d("deliverables/EP01_MASTER_v1.mp4", 30),
        ];
        let cut = final_cut(&ds, &[]).unwrap();
        assert_eq!(cut.path, "deliverables/EP01_MASTER_v2.mp4");
        assert_eq!(cut.first_delivered_at, 20);
        // a newer delivery moves it
        ds.push(d("deliverables/EP01_MASTER_v3.mp4", 40));
        assert_eq!(
            pick(&ds).as_deref(),
            Some("deliverables/EP01_MASTER_v3.mp4")
        );
    }
}
