//! Seams (continuity) checks (digest 003-C §15 AC-13…AC-17; S-AC-4): parts from a glob in
//! natural order, from a list command, or from one file cut at its headings or scenes; each
//! seam's evidence (text either side, or both sides' frames side by side under the job
//! folder's `checks/<check>/`); the judge asked again once; pictures for reference only and
//! not judged under a stop; code refused. The judge is a double that reads the prompt the app
//! wrote; files, the list command and ffmpeg's frames are real.

mod support;

use async_trait::async_trait;
use std::path::Path;
use std::sync::{Arc, Mutex};
use support::check_rig::*;
use troupe_collab::checks::NewCheckRequest;
use troupe_collab::checks::sample::{JudgeCall, PictureJudge, evidence::Picture};
use troupe_collab::submissions::hooks::BoundChecks;
use troupe_core::hold::{HoldScope, HoldSource};
use troupe_core::submission::CheckResult;
use troupe_store::{CheckRunRecord, RunOutcome};

/// A judge answering from a list of answers (the last one repeats), keeping each prompt and
/// how many pictures came with it.
struct Judge {
    answers: Vec<String>,
    sees: bool,
    seen: Mutex<Vec<(String, Vec<Picture>)>>,
}

impl Judge {
    fn new(answers: &[&str]) -> Arc<Judge> {
        Arc::new(Judge {
            answers: answers.iter().map(|a| a.to_string()).collect(),
            sees: true,
            seen: Mutex::default(),
        })
    }

    fn prompts(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(p, _)| p.clone())
            .collect()
    }
}

#[async_trait]
impl PictureJudge for Judge {
    async fn judge(&self, prompt: String, pictures: Vec<Picture>) -> JudgeCall {
        let mut seen = self.seen.lock().unwrap();
        let n = pictures.len() as u32;
        seen.push((prompt, pictures));
        let raw = self.answers[(seen.len() - 1).min(self.answers.len() - 1)].clone();
        JudgeCall {
            raw: Ok(raw),
            model: Some("judge-model".into()),
            pictures_sent: n,
            input_tokens: 100,
            output_tokens: 10,
        }
    }

    fn sees_pictures(&self) -> bool {
        self.sees
    }
}

fn seams(path: &str) -> NewCheckRequest {
    NewCheckRequest {
        kind: "seams".into(),
        path: Some(path.into()),
        ..NewCheckRequest::default()
    }
}

fn put(r: &Rig, rel: &str, text: &str) {
    let p = r.ws.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn calls(r: &Rig, id: troupe_core::CheckId) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> =
        r.w.collab
            .store()
            .read(|tx| tx.acceptance_check_calls(id))
            .unwrap()
            .into_iter()
            .map(|c| (c.answer, c.pictures))
            .collect();
    v.reverse();
    v
}

const CHAPTERS: &str = "# Intro\nWe sell tea to offices in Lisbon.\n\n## Market\nThe market is worth \
                        $4 million a year.\n\n## Channels\nWe reach Porto through Acme Corp.\n";

#[tokio::test]
async fn text_seams_are_cut_at_headings_and_judged_with_the_whole_set() {
    let r = rig("Write the report");
    let judge = Judge::new(&[r#"{"seams": [{"seam": 1, "holds": true},
        {"seam": 2, "holds": true}], "whole_set": {"holds": false,
        "problem": "the market is in Lisbon, the channels in Porto"}}"#]);
    r.checks.set_judge(judge.clone());
    put(&r, "report.md", CHAPTERS);
    let id = r.save(&NewCheckRequest {
        done_when_line: Some("The report reads as one".into()),
        ..seams("report.md")
    });
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Failed, "{}", run.detail);
    assert_eq!(
        run.detail,
        "the whole set: the market is in Lisbon, the channels in Porto"
    );
    assert_eq!(
        run.output_tail,
        "01 Intro→02 Market: holds\n02 Market→03 Channels: holds\nwhole set: the market is in \
         Lisbon, the channels in Porto\n"
    );
    // Text is no picture: the run counts in full.
    assert!(!run.for_reference);
    let p = &judge.prompts()[0];
    for want in [
        "troupe-seams",
        "What must hold (the job's acceptance line): The report reads as one",
        "Seam 1: 01 Intro→02 Market",
        "End of 01 Intro:\n<<<\n# Intro\nWe sell tea to offices in Lisbon.\n>>>",
        "Start of 02 Market:\n<<<\n## Market\nThe market is worth $4 million a year.\n>>>",
        "- 02 Market: Market; The market is worth $4 million a year.; numbers: $4 million",
        "names: Porto, Acme Corp",
        "the same style: tone, format and numbering",
    ] {
        assert!(p.contains(want), "{want:?} in {p}");
    }
    assert_eq!(calls(&r, id), [("read".to_string(), 0)]);
}

#[tokio::test]
async fn ac16_an_unreadable_answer_is_asked_again_once() {
    let r = rig("Write the report");
    put(&r, "parts/01-intro.md", "# Intro\nTea.\n");
    put(&r, "parts/02-market.md", "# Market\nOffices.\n");
    let judge = Judge::new(&[
        "I think it is fine",
        r#"{"seams": [{"holds": true}], "whole_set": {"holds": true}}"#,
    ]);
    r.checks.set_judge(judge.clone());
    let id = r.save(&seams("parts/*.md"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Passed, "{}", run.detail);
    assert_eq!(run.detail, "the seam holds, and so does the whole set");
    assert_eq!(judge.prompts().len(), 2);
    assert!(judge.prompts()[1].contains("Your last answer could not be read"));
    assert_eq!(
        calls(&r, id),
        [("unreadable".to_string(), 0), ("read".to_string(), 0)]
    );
}

#[tokio::test]
async fn ac16_twice_unreadable_is_not_judged() {
    let r = rig("Write the report");
    put(&r, "parts/01-intro.md", "# Intro\nTea.\n");
    put(&r, "parts/02-market.md", "# Market\nOffices.\n");
    let judge = Judge::new(&["fine", "still fine"]);
    r.checks.set_judge(judge.clone());
    let id = r.save(&seams("parts/*.md"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Error);
    assert!(
        run.detail
            .starts_with("not judged: the judge's answer could not be read twice"),
        "{}",
        run.detail
    );
    assert_eq!(calls(&r, id).len(), 2);
}

#[tokio::test]
async fn a_list_command_gives_the_parts_in_its_order() {
    let r = rig("Write the report");
    put(&r, "parts/a.md", "# A\nalpha\n");
    put(&r, "parts/b.md", "# B\nbeta\n");
    let judge = Judge::new(&[r#"{"seams": [{"holds": true}], "whole_set": {"holds": true}}"#]);
    r.checks.set_judge(judge.clone());
    let listed = |cmd: &str| NewCheckRequest {
        kind: "seams".into(),
        command: Some(cmd.into()),
        cwd: Some("parts".into()),
        ..NewCheckRequest::default()
    };
    let id = r.save(&listed("printf 'b.md\\na.md\\n'"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Passed, "{}", run.detail);
    assert!(judge.prompts()[0].contains("Seam 1: b→a"));
    // A part it names that is not there fails; one outside the workspace is not read.
    let id = r.save(&listed("printf 'b.md\\nc.md\\n'"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Failed);
    assert_eq!(run.detail, "parts/c.md does not exist");
    let id = r.save(&listed("printf 'b.md\\n../../x.md\\n'"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Blocked, "{}", run.detail);
    let id = r.save(&listed("exit 4"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Error);
    assert_eq!(run.detail, "the list command failed (exit 4)");
}

#[tokio::test]
async fn ac17_code_is_refused_when_saved_and_when_listed() {
    let r = rig("Build the app");
    let e = r.checks.create(r.plan, &seams("src/*.rs")).unwrap_err();
    assert!(e.to_string().contains("not for code"), "{e}");
    put(&r, "src/a.rs", "fn a() {}");
    put(&r, "src/b.rs", "fn b() {}");
    r.checks.set_judge(Judge::new(&["{}"]));
    let id = r.save(&NewCheckRequest {
        kind: "seams".into(),
        command: Some("ls src/*.rs".into()),
        ..NewCheckRequest::default()
    });
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Error);
    assert!(run.detail.contains("not for code"), "{}", run.detail);
    assert!(calls(&r, id).is_empty(), "no model is asked about code");
}

#[tokio::test]
async fn one_part_or_mixed_kinds_have_no_seams_to_judge() {
    let r = rig("Write the report");
    r.checks.set_judge(Judge::new(&["{}"]));
    put(&r, "one.md", "# Only\nOne part.\n");
    let run = r.run(r.save(&seams("one.md"))).await;
    assert_eq!(run.outcome, RunOutcome::Error);
    assert_eq!(run.detail, "only 1 part: there is no seam to judge");
    put(&r, "mix/01.md", "# A\n");
    std::fs::write(r.ws.join("mix/02.png"), b"\x89PNG\r\n\x1a\nx").unwrap();
    let run = r.run(r.save(&seams("mix/*"))).await;
    assert_eq!(run.outcome, RunOutcome::Error);
    assert!(
        run.detail.starts_with("the parts mix text"),
        "{}",
        run.detail
    );
    let run = r.run(r.save(&seams("none/*.md"))).await;
    assert_eq!(run.outcome, RunOutcome::Failed);
    assert_eq!(run.detail, "no file matches none/*.md");
}

#[tokio::test]
async fn ac17_a_seams_check_first_passes_on_its_second_pass_in_a_row() {
    let r = rig("Write the report");
    put(&r, "parts/01.md", "# A\nalpha\n");
    put(&r, "parts/02.md", "# B\nbeta\n");
    let pass = r#"{"seams": [{"holds": true}], "whole_set": {"holds": true}}"#;
    r.checks.set_judge(Judge::new(&[pass]));
    let id = r.save(&seams("parts/*.md"));
    assert_eq!(r.run(id).await.outcome, RunOutcome::Passed);
    assert!(r.events("check_first_passed").is_empty());
    assert_eq!(r.run(id).await.outcome, RunOutcome::Passed);
    assert_eq!(r.events("check_first_passed").len(), 1);
    assert_eq!(r.run(id).await.outcome, RunOutcome::Passed);
    assert_eq!(r.events("check_first_passed").len(), 1);
}

fn have_ffmpeg(test: &str) -> bool {
    let ok = std::process::Command::new("ffmpeg")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("TROUPE_REQUIRE_FFPROBE").as_deref() != Ok("1"),
            "TROUPE_REQUIRE_FFPROBE=1 but ffmpeg is missing"
        );
        eprintln!("{test} skipped: ffmpeg is not installed");
    }
    ok
}

/// A clip of plain colours, one second each, made by ffmpeg at `at`.
fn clip(at: &Path, colours: &[&str]) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    let mut args: Vec<String> = ["-v", "error", "-y"].map(String::from).to_vec();
    for c in colours {
        args.extend(["-f", "lavfi", "-i"].map(String::from));
        args.push(format!("color=c={c}:s=64x36:r=10:d=1"));
    }
    let inputs: String = (0..colours.len()).map(|i| format!("[{i}:v]")).collect();
    args.extend([
        "-filter_complex".to_string(),
        format!("{inputs}concat=n={}:v=1[v]", colours.len()),
        "-map".into(),
        "[v]".into(),
        "-c:v".into(),
        "libx264".into(),
        "-pix_fmt".into(),
        "yuv420p".into(),
    ]);
    args.push(at.to_string_lossy().into_owned());
    let st = std::process::Command::new("ffmpeg")
        .args(&args)
        .status()
        .unwrap();
    assert!(st.success(), "ffmpeg made {}", at.display());
}

/// The colour of a picture's left and right halves, as ffmpeg averages them.
fn halves(p: &Path) -> [(u8, u8, u8); 2] {
    let out = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(p)
        .args([
            "-vf",
            "scale=2:1:flags=area",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ])
        .output()
        .unwrap();
    let b = out.stdout;
    assert_eq!(b.len(), 6, "two pixels");
    [(b[0], b[1], b[2]), (b[3], b[4], b[5])]
}

#[tokio::test]
async fn s_ac_4_shots_in_natural_order_one_bad_seam_fails_for_reference() {
    if !have_ffmpeg("s_ac_4") {
        return;
    }
    let r = rig("Cut the episode");
    for (name, colour) in [("C10", "blue"), ("C2", "green"), ("C1", "red")] {
        clip(&r.ws.join(format!("shots/{name}.mp4")), &[colour]);
    }
    let judge = Judge::new(&[r#"{"seams": [{"seam": 1, "holds": true},
        {"seam": 2, "holds": false, "problem": "the car turns from green to blue"}]}"#]);
    r.checks.set_judge(judge.clone());
    let id = r.save(&seams("shots/C*.mp4"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Failed, "{}", run.detail);
    assert_eq!(
        run.detail,
        "1 of 2 seams have problems: C2→C10: the car turns from green to blue"
    );
    let folder = format!("checks/{id}");
    assert_eq!(
        run.output_tail,
        format!(
            "C1→C2: holds ({folder}/seam-01.png)\nC2→C10: the car turns from green to blue \
             ({folder}/seam-02.png)\n"
        )
    );
    // Both sides, side by side, kept under the job folder's reserved folder; nothing else.
    let kept = r.folder.join(&folder);
    let mut files: Vec<String> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["seam-01.png", "seam-02.png"]);
    // The end of C1 (red) on the left, the start of C2 (green) on the right.
    let [left, right] = halves(&kept.join("seam-01.png"));
    assert!(left.0 > 200 && left.1 < 60, "red: {left:?}");
    assert!(right.1 > 90 && right.0 < 60, "green: {right:?}");
    let (prompt, pictures) = judge.seen.lock().unwrap()[0].clone();
    assert_eq!(pictures.len(), 2);
    assert!(prompt.contains("Seam 2: C2→C10\n  Picture 2: on the left the end of C2"));
    assert!(!prompt.contains("whole_set"));
    // Judged on pictures: for reference only, it holds nothing back.
    assert!(run.for_reference);
    assert_eq!(calls(&r, id), [("read".to_string(), 2)]);
    let passed =
        r.w.collab
            .store()
            .read(|tx| troupe_collab::tickets::delivery::job_wide_gates_passed(tx, r.plan))
            .unwrap();
    assert!(
        passed,
        "a failing reference run does not hold the delivery back"
    );
    // On a hand-over it is shown, and neither holds it back nor backs it.
    let ticket = r.ticket();
    r.save(&NewCheckRequest {
        ticket_id: Some(ticket.id.0),
        ..seams("shots/C*.mp4")
    });
    let sub = r.submit(&ticket, "cut.mp4");
    let bound = r.checks.run_bound(sub).await.unwrap();
    assert_eq!(bound.len(), 1);
    assert_eq!(bound[0].result, CheckResult::Fail);
    assert!(bound[0].for_reference && !bound[0].gate);
    // The approval reads nothing of it.
    let weighed = BoundChecks::run(&r.checks, r.w.collab.store(), sub)
        .await
        .unwrap();
    assert!(weighed.is_empty(), "{weighed:?}");
}

#[tokio::test]
async fn a_glob_of_master_cuts_uses_the_newest_cut_at_its_scenes() {
    if !have_ffmpeg("master cuts") {
        return;
    }
    let r = rig("Cut the episode");
    let old = r.ws.join("out/master_v1.mp4");
    clip(&old, &["white", "black"]);
    clip(&r.ws.join("out/master_v2.mp4"), &["red", "blue", "yellow"]);
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let judge = Judge::new(&[r#"{"seams": [{"holds": true}, {"holds": true}]}"#]);
    r.checks.set_judge(judge.clone());
    let id = r.save(&seams("out/master_v*.mp4"));
    let run: CheckRunRecord = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Passed, "{}", run.detail);
    assert_eq!(run.detail, "all 2 seams hold");
    let prompt = judge.prompts()[0].clone();
    assert!(
        prompt.contains("Seam 1: master_v2 shot 1 (0.0–1.0 s)→master_v2 shot 2 (1.0–2.0 s)"),
        "{prompt}"
    );
    assert!(prompt.contains("Seam 2: master_v2 shot 2 (1.0–2.0 s)→master_v2 shot 3 (from 2.0 s)"));
    // Each side is the frame either side of the cut: blue's last, then yellow's first.
    let [left, right] = halves(&r.folder.join(format!("checks/{id}/seam-02.png")));
    assert!(left.2 > 200 && left.0 < 60, "blue: {left:?}");
    assert!(
        right.0 > 200 && right.1 > 200 && right.2 < 60,
        "yellow: {right:?}"
    );
}

#[tokio::test]
async fn pictures_are_not_judged_under_a_stop_or_by_a_model_that_cannot_see_them() {
    if !have_ffmpeg("pictures not judged") {
        return;
    }
    let r = rig("Cut the episode");
    for (name, colour) in [("C1", "red"), ("C2", "green")] {
        clip(&r.ws.join(format!("shots/{name}.mp4")), &[colour]);
    }
    let blind = Arc::new(Judge {
        answers: vec!["{}".into()],
        sees: false,
        seen: Mutex::default(),
    });
    r.checks.set_judge(blind.clone());
    let id = r.save(&seams("shots/C*.mp4"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Error);
    assert!(
        run.detail
            .starts_with("not judged: no model that reads pictures"),
        "{}",
        run.detail
    );
    assert!(blind.prompts().is_empty());
    r.w.collab
        .store()
        .write(|tx| {
            tx.insert_hold(&troupe_store::NewHold {
                scope: HoldScope::Plan { plan_id: r.plan },
                targets: Vec::new(),
                source: HoldSource::UserButton,
                source_message_id: None,
                session_id: None,
                lift_on_next_user_message: false,
                cancel: false,
                composer_stop: false,
                effect: Default::default(),
            })
        })
        .unwrap();
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Error);
    assert!(
        run.detail.starts_with("not judged: a stop holds the job"),
        "{}",
        run.detail
    );
}

#[tokio::test]
async fn picture_parts_are_shown_side_by_side() {
    if !have_ffmpeg("picture parts") {
        return;
    }
    let r = rig("Make the posters");
    for (name, colour) in [("P2", "blue"), ("P1", "red")] {
        let out = r.ws.join(format!("posters/{name}.png"));
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let st = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg(format!("color=c={colour}:s=40x60:d=1"))
            .args(["-frames:v", "1"])
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success());
    }
    let judge = Judge::new(&[r#"{"seams": [{"holds": true}]}"#]);
    r.checks.set_judge(judge.clone());
    let id = r.save(&seams("posters/*.png"));
    let run = r.run(id).await;
    assert_eq!(run.outcome, RunOutcome::Passed, "{}", run.detail);
    assert!(run.for_reference);
    let [left, right] = halves(&r.folder.join(format!("checks/{id}/seam-01.png")));
    assert!(left.0 > 200 && left.2 < 60, "red: {left:?}");
    assert!(right.2 > 200 && right.0 < 60, "blue: {right:?}");
    assert!(judge.prompts()[0].contains("Seam 1: P1→P2"));
}
